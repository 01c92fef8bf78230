"""``python -m harness.sanitize.child``: the user's command, in the process that
``python -m harness sanitize`` starts for it (``harness.sanitize.runner``).

The job comes in ``CASEBOOK_SANITIZE_JOB`` (JSON: ``kind`` script, module or pytest, ``target``,
``args``, ``config``, ``mode``); hits go to the file named by ``CASEBOOK_SANITIZE_RESULTS`` as
they are made. A script or module runs as ``python SCRIPT ARGS`` or ``python -m MODULE ARGS``
would, inside the sanitizer's session; pytest runs with the plugin (``--casebook-sanitize``).
The exit status is the command's own: 0, its ``sys.exit``, 1 for an exception (its traceback, as
Python prints it), 2 with one line for a module that does not exist.
"""

from __future__ import annotations

import json
import os
import sys

from harness.sanitize import GPU_PLUGIN, JOB_ENV, PLUGIN, RESULTS_ENV


def _exit_code(e: SystemExit) -> int:
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=sys.stderr)
    return 1


def _user_traceback(e: BaseException) -> None:
    """The exception as Python prints it, without this module's and runpy's frames on top."""
    import traceback

    tb = e.__traceback__
    here = os.path.dirname(os.path.abspath(__file__))
    while tb is not None and (tb.tb_frame.f_code.co_filename.startswith(here)
                              or "runpy" in tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    traceback.print_exception(type(e), e, tb)


def _run_python(job: dict) -> int:
    from harness.sanitize.session import Config, Session, Sink

    kind, target = job["kind"], job["target"]
    if kind == "module":
        import importlib.util

        sys.path.insert(0, os.getcwd())
        try:
            found = importlib.util.find_spec(target)
        except (ImportError, ValueError):
            found = None
        if found is None:
            print(f"error: sanitize: no module named {target!r}", file=sys.stderr)
            return 2
        sys.argv = [target, *job["args"]]
        root = found.origin
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
        sys.argv = [target, *job["args"]]
        root = target
    if job.get("backend") == "gpu":  # compute-sanitizer watches from outside
        _gpu_setup()
        return _run_target(kind, target)
    session = Session(Config(**job["config"]), root=root, sink=Sink(os.environ[RESULTS_ENV]))
    try:
        session.__enter__()
    except RuntimeError as e:  # this Triton's interpreter lacks what the instrumentation needs
        print(f"error: sanitize: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2
    try:
        return _run_target(kind, target)
    finally:
        session.close_sink()
        session.__exit__(None, None, None)


def _run_target(kind: str, target: str) -> int:
    """``python SCRIPT`` or ``python -m MODULE`` in this process: its exit status."""
    import runpy

    try:
        if kind == "module":
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
        return 0
    except SystemExit as e:
        return _exit_code(e)
    except Exception as e:  # noqa: BLE001: the user's program raised: as Python reports it
        _user_traceback(e)
        return 1


def _gpu_setup() -> None:
    """Triton's instrumented kernels (TRITON_INSTRUMENTATION_MODE) need a scratch allocator."""
    if os.environ.get("TRITON_INSTRUMENTATION_MODE"):
        from harness.run.triton_compat import install_scratch_allocator

        install_scratch_allocator()


def _plugin_registered() -> bool:
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    from importlib.metadata import entry_points

    return any(ep.value == PLUGIN for ep in entry_points(group="pytest11"))


def _run_pytest(job: dict) -> int:
    import pytest

    if job.get("backend") == "gpu":  # where each test got to, for a run that loses its CUDA context
        _gpu_setup()
        return int(pytest.main(["-p", GPU_PLUGIN] + list(job["args"])))
    config = job["config"]
    args = [] if _plugin_registered() else ["-p", PLUGIN]
    args += [f"--casebook-sanitize={job['mode']}"]
    args += ["--casebook-sanitize-tf32"] if config.get("tf32") else []
    args += ["--casebook-sanitize-orders"] if config.get("orders") else []
    args += ["--casebook-sanitize-no-checks"] if not config.get("checks", True) else []
    return int(pytest.main(args + list(job["args"])))


def main() -> int:
    from harness.run.parent import die_with_parent

    die_with_parent()  # the harness killed with SIGKILL must not leave the user's command running
    job = json.loads(os.environ.pop(JOB_ENV))
    if job["kind"] == "pytest":
        return _run_pytest(job)
    return _run_python(job)


if __name__ == "__main__":
    sys.exit(main())
