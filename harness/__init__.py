"""The Triton Misadventures harness.

One package per layer, lowest first (CONTRIBUTING.md, "How the harness is built"):

- ``errors``      exit codes and the one-line error type; imports nothing
- ``core``        the case contract and pure helpers: spec, discovery, guards, compare,
                  events, verdict, table, recorded, markdown, fileio
- ``run``         running kernels in isolated processes: isolate, worker, scheduler,
                  backends, triton_compat (the one place that touches Triton internals)
- ``detectors``   one module per detector, and their registry; ``checks`` the validator
- ``report``      the casebook report: sections, pictures, the HTML page
- ``commands``    one module per command; ``options`` the options they share
- ``cli``         the command line and its error boundary

``buffers`` is the name cases import (``guarded``, ``output``); ``probe`` (``from harness
import probe``) runs every detector on a kernel of your own (``harness.probe``), loaded
only when first asked for, so ``import harness`` stays light.

PYTEST_DONT_REWRITE: ``python -m harness sanitize pytest`` imports this package before pytest
starts; pytest, which marks an installed plugin's top-level package for assertion rewriting,
would warn that it is already imported (an error under ``filterwarnings = error``). Nothing
here asserts; the modules under it are rewritten as usual.
"""

import importlib

__version__ = "0.1.0"


def __getattr__(name: str):
    """``harness.probe``: the ``harness.probe`` package, imported on first use; calling it calls
    ``harness.probe.probe`` (the package is callable)."""
    if name == "probe":
        return importlib.import_module(f"{__name__}.probe")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
