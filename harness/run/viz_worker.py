"""Run the worker with triton-viz's sanitizer around every ``@triton.jit`` kernel.

The probe's triton-viz detector (``harness.probe.detectors.triton_viz``, a tool) runs it as a command prefix
of the probe's worker (``run_process(wrapper=...)``), which then runs its reference detector::

    python -m harness.run.viz_worker python -m harness.probe.worker '{...}'

triton-viz (``pip install triton-viz``, optional) traces each kernel launch on the CPU
and asks z3 whether any load or store can leave the tensors it was given. This module
wraps the kernels the way triton-viz's own ``triton-sanitizer`` command does (but not
``@triton.autotune``: triton-viz 3.0 wrapping an Autotuner fails under Triton 3.6 with
``'NoneType' object has no attribute 'warmup'``; the Autotuner then wraps a traced
kernel, which works), runs the worker, and prints one line that the detector
reads::

    TRITON-VIZ SANITIZER: 2 out-of-bounds accesses; first: load of x in add_kernel at broken.py:24

If triton-viz is missing or fails to wrap the kernels it prints
``TRITON-VIZ UNAVAILABLE: why`` and exits 97.

The detector runs it with guard padding off (the probe's ``pad`` 0, as for every tool): triton-viz 3.0
adds a padded view's storage offset twice, so a kernel reading a guarded tensor would be
reported out of bounds (or a real overrun hidden) by the padding alone.
"""

from __future__ import annotations

import json
import sys

MARK, UNAVAILABLE, EXIT_UNAVAILABLE = "TRITON-VIZ SANITIZER:", "TRITON-VIZ UNAVAILABLE:", 97
WORKERS = ("harness.probe.worker",)  # what it wraps (named by the command after it)


def _describe(record) -> str:
    op = getattr(getattr(record, "op_type", None), "__name__", "access").lower()
    name = getattr(record, "tensor_name", None) or "a tensor"
    where = ""
    tbs = getattr(record, "user_code_tracebacks", None) or []
    if tbs:
        tb = tbs[-1]
        fn, line = getattr(tb, "func_name", ""), getattr(tb, "lineno", "")
        fname = str(getattr(tb, "filename", "")).rsplit("/", 1)[-1]
        where = f" in {fn} at {fname}:{line}" if fn else f" at {fname}:{line}"
    return f"{op} of {name}{where}"


def main(argv: list[str]) -> int:
    clients = []
    try:
        import triton
        import triton.runtime.interpreter as interp
        import triton_viz
        from triton_viz.clients import Sanitizer
        from triton_viz.wrapper import create_patched_jit

        def wrap(kernel):
            client = Sanitizer(abort_on_error=False)
            clients.append(client)
            return triton_viz.trace(client=client)(kernel)

        from harness.run.patching import for_good

        jit = create_patched_jit(wrap)
        for module in (triton, triton.language, interp):  # for the rest of this worker process
            for_good().setattr(module, "jit", jit)
    except Exception as e:  # optional tool: say why, in one line
        from harness.errors import error_line

        print(f"{UNAVAILABLE} {error_line(e)}", flush=True)
        return EXIT_UNAVAILABLE

    import importlib

    module = argv[argv.index("-m") + 1] if "-m" in argv else ""
    if module not in WORKERS:
        print(f"{UNAVAILABLE} viz_worker wraps {', '.join(WORKERS)}, not {module or 'nothing'}", flush=True)
        return EXIT_UNAVAILABLE
    rc = importlib.import_module(module).run(json.loads(argv[-1]))
    records = [r for c in clients for r in getattr(c, "records", [])]
    first = f"; first: {_describe(records[0])}" if records else ""
    print(f"{MARK} {len(records)} out-of-bounds accesses{first}", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
