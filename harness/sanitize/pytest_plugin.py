"""The casebook's sanitizer as a pytest plugin: ``pytest --casebook-sanitize``.

Installed with the package (the ``pytest11`` entry point), so it is loaded into every pytest
run: until ``--casebook-sanitize`` is given it adds its options and does nothing else (no torch,
no Triton, no patch). With it, every launch of a ``@triton.jit`` kernel in the run goes through
the instrumented interpreter (``harness.sanitize.session``), tests written for
``device="cuda"`` run on a machine without a GPU (``harness.sanitize.fakecuda``), and the
findings are reported per test:

- ``--casebook-sanitize`` (or ``=fail``): a test whose launches made an error finding fails,
  its findings in the failure; warnings and notes are reported and fail nothing;
- ``--casebook-sanitize=report``: findings are reported, pass or fail is the test's own;
- ``--casebook-sanitize-tf32``: fp32 ``tl.dot`` rounded like TF32, as on an NVIDIA GPU;
- ``--casebook-sanitize-orders``: each launch re-run in reversed and shuffled program order;
- ``--casebook-sanitize-no-checks``: the baseline: CUDA faked and the interpreter's fixes, nothing
  checked (a test that fails so fails without the checks);
- ``--casebook-sanitize-backend gpu``: the run is ``python -m harness sanitize --backend gpu pytest
  ARGS`` (``harness.sanitize.gpu``): this process runs no test itself.

A summary of every finding closes the run. Findings made outside a test (a launch at import)
make the exit status 1 in ``fail`` mode.
"""

from __future__ import annotations

import argparse
import os

import pytest

MODES = ("fail", "report")
from harness.sanitize import RESULTS_ENV  # noqa: F401 (set by ``python -m harness sanitize``; re-exported)
OPTION = "--casebook-sanitize"


class _ModeAction(argparse.Action):
    """``--casebook-sanitize`` alone is ``fail``. A value that is no mode (``--casebook-sanitize
    tests/``: argparse hands the path to the option) is kept to give back to the positionals."""

    def __call__(self, parser, namespace, values, option_string=None):
        if values is None or values in MODES:
            setattr(namespace, self.dest, values or "fail")
            return
        setattr(namespace, self.dest, "fail")
        setattr(namespace, "casebook_sanitize_stray", list(getattr(namespace, "casebook_sanitize_stray", []) or [])
                + [values])


def pytest_addoption(parser):
    group = parser.getgroup("casebook-sanitize", "the Triton Misadventures casebook's sanitizer")
    group.addoption(OPTION, action=_ModeAction, nargs="?", default=None, dest="casebook_sanitize",
                    metavar="fail|report",
                    help="run every Triton launch under the casebook's instrumented interpreter (out-of-bounds "
                         "accesses, races between programs, masked lanes); 'fail' (the default) fails a test "
                         "whose launches made an error finding, 'report' only reports")
    group.addoption(f"{OPTION}-tf32", action="store_true", dest="casebook_sanitize_tf32",
                    help="with --casebook-sanitize: round fp32 tl.dot like TF32, as an NVIDIA GPU does")
    group.addoption(f"{OPTION}-orders", action="store_true", dest="casebook_sanitize_orders",
                    help="with --casebook-sanitize: re-run each launch in reversed and shuffled program order")
    group.addoption(f"{OPTION}-no-checks", action="store_true", dest="casebook_sanitize_no_checks",
                    help="with --casebook-sanitize: a baseline: the tests under the interpreter with CUDA faked and "
                         "the interpreter's fixes, no launch checked (a test failing so fails without the checks)")
    group.addoption(f"{OPTION}-backend", choices=("interpreter", "gpu"), default="interpreter",
                    dest="casebook_sanitize_backend",
                    help="with --casebook-sanitize: gpu runs this pytest command as 'python -m harness sanitize "
                         "--backend gpu pytest ...' does (on the GPU under compute-sanitizer, a fresh process "
                         "for the tests left where one loses its CUDA context, then the interpreter's checks)")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    ns = early_config.known_args_namespace
    if not getattr(ns, "casebook_sanitize", None):
        return
    for a in args:  # ``--casebook-sanitize=VALUE`` names a mode, never a path: one that is no mode is refused
        if a.startswith(f"{OPTION}=") and a.split("=", 1)[1] not in MODES:
            raise pytest.UsageError(f"{a}: no such mode (use {OPTION}=fail or {OPTION}=report)")
    stray = getattr(ns, "casebook_sanitize_stray", None)
    if stray:  # ``--casebook-sanitize PATH``: PATH is a positional again
        for i, a in enumerate(args):
            if a == OPTION:
                args[i] = f"{OPTION}=fail"
        ns.file_or_dir = list(ns.file_or_dir or []) + stray
    os.environ["TRITON_INTERPRET"] = "1"  # before the conftests import any kernel
    _fake_cuda_early(early_config)


def _fake_cuda_early(config) -> None:
    """Fake CUDA (where there is no GPU) before any conftest is imported: a conftest that asks
    ``torch.cuda`` at import, or makes its fixtures' tensors on "cuda", sees the fake as the tests do.
    The session's fake stays this one (it fakes only where torch sees no GPU); undone at the end."""
    import torch

    if torch.cuda.is_available():
        return
    from harness.sanitize import fakecuda

    config.add_cleanup(fakecuda.install())


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    if config.getoption("casebook_sanitize", None) and config.getoption("casebook_sanitize_backend", "") == "gpu":
        return _on_the_gpu(config)
    return None


def _on_the_gpu(config) -> int:
    """``--casebook-sanitize-backend gpu``: ``python -m harness sanitize --backend gpu pytest ARGS``,
    run from here (``harness.sanitize.gpu``); its summary, its exit status."""
    from harness.errors import EXIT_MISMATCH, UsageError
    from harness.sanitize import findings as F
    from harness.sanitize import gpu
    from harness.sanitize.runner import Job, run
    from harness.sanitize.session import Config

    if config.getoption("casebook_sanitize_no_checks"):
        raise pytest.UsageError(f"{OPTION}-no-checks is the interpreter's baseline; it has no {OPTION}-backend gpu")
    try:
        gpu.require()
    except UsageError as e:
        raise pytest.UsageError(str(e)) from None
    job = Job("pytest", "pytest", gpu.user_args(config.invocation_params.args),
              Config(tf32=config.getoption("casebook_sanitize_tf32"),
                     orders=config.getoption("casebook_sanitize_orders")),
              config.getoption("casebook_sanitize"))
    outcome = run(job, backend="gpu")
    print(F.summary(outcome.findings, outcome.launches), flush=True)
    return EXIT_MISMATCH if F.errors(outcome.findings) else outcome.returncode


def pytest_configure(config):
    if not config.getoption("casebook_sanitize", None):
        return
    from harness.sanitize.plugin_state import State

    state = State(config)
    config.pluginmanager.register(state, "casebook-sanitize-state")
