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

``buffers`` is the name cases import (``guarded``, ``output``).
"""

__version__ = "0.1.0"
