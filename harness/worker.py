"""Runs one (case, variant, backend) in the current process; ``isolate`` starts it.

Usage (by the harness, not by people)::

    TRITON_INTERPRET=1 python -m harness.worker '{"slug": ..., "variant": ..., ...}'

It writes one JSON object per line to ``events`` as it goes, so that a crash or a
hang part-way still leaves the trials that finished:

- ``{"event": "env", ...}``     device and versions
- ``{"event": "trial", ...}``   one call of one trial: comparison, guards, fingerprint
- ``{"event": "probe", ...}``   the re-run with finite padding that tells a poison read
- ``{"event": "error", "phase": "setup" | "launch", ...}``   and exit 2 / 3
- ``{"event": "done"}``
"""

from __future__ import annotations

import datetime
import inspect
import json
import os
import platform
import sys
import traceback
from pathlib import Path

EXIT_SETUP, EXIT_LAUNCH = 2, 3


class Events:
    def __init__(self, path: str):
        self.f = open(path, "a", buffering=1)

    def __call__(self, **event):
        self.f.write(json.dumps(event, default=str) + "\n")
        self.f.flush()
        os.fsync(self.f.fileno())


def environment(backend: str) -> dict:
    import torch
    import triton

    env = {
        "backend": backend, "torch": torch.__version__, "triton": triton.__version__,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    if backend == "gpu":
        env["device"] = torch.cuda.get_device_name(0)
        env["cuda"] = torch.version.cuda
    else:
        env["device"] = f"CPU ({platform.machine()}), TRITON_INTERPRET=1"
    return env


def _call_with(fn, inputs: dict):
    """Call ``fn`` with the inputs it names (the reference needs only some of them)."""
    params = inspect.signature(fn).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return fn(**inputs)
    return fn(**{k: v for k, v in inputs.items() if k in params})


def _snapshot(inputs: dict) -> dict:
    import torch

    return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}


def run(args: dict) -> int:
    emit = Events(args["events"])
    backend, variant = args["backend"], args["variant"]
    phase = "setup"
    try:
        import torch

        from harness import buffers, compare, interpreter_support, discovery
        from harness.spec import load_spec

        if backend == "interpreter":
            if os.environ.get("TRITON_INTERPRET") != "1":
                raise RuntimeError("the interpreter backend needs TRITON_INTERPRET=1 in the environment")
            interpreter_support.install()
            device = "cpu"
        else:
            if not torch.cuda.is_available():
                raise RuntimeError("no CUDA GPU is available")
            device = "cuda"
        interpreter_support.count_tuning_launches()
        emit(event="env", **environment(backend))

        spec = load_spec(Path(args["path"]))
        case = discovery.load_module(spec, "case")
        kernel = discovery.load_module(spec, variant)
        launcher = getattr(kernel, spec.launcher, None)
        if launcher is None:
            raise AttributeError(f"{variant}.py defines no launcher '{spec.launcher}' (named in case.toml)")
        sizes = args.get("sizes") or spec.sizes[backend]  # overrides: harness.detect's extra runs
        calls = args.get("calls") or spec.calls
        sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

        def fresh_inputs(finite_poison=False):
            buffers.reset(finite_poison=finite_poison, pad=args.get("pad"))
            interpreter_support.reset_autotune_caches(kernel)
            gen = torch.Generator().manual_seed(args["seed"])
            inputs = case.make_inputs(device=device, gen=gen, **sizes)
            buffers.name_guards(inputs)
            return inputs

        def one_call(inputs):
            nonlocal phase
            ref = _call_with(case.reference, _snapshot(inputs))
            ref = ref.detach().to("cpu") if isinstance(ref, torch.Tensor) else torch.tensor(ref)
            phase = "launch"
            out = launcher(**inputs)
            sync()
            phase = "compare"
            if not isinstance(out, torch.Tensor):
                out = torch.as_tensor(out)
            return out, ref

        probed = False
        for trial in range(args["trials"]):
            phase = "setup"
            inputs = fresh_inputs()
            for call in range(calls):
                interpreter_support.CALLS.clear()
                out, ref = one_call(inputs)
                cmp = compare.compare(out, ref, spec.rtol, spec.atol)
                guard = buffers.check()
                emit(event="trial", trial=trial, call=call, fingerprint=compare.fingerprint(out),
                     guard=guard, bench_calls=list(interpreter_support.CALLS), **cmp)
                if args.get("save") and trial == 0:
                    save = Path(args["save"])
                    save.mkdir(parents=True, exist_ok=True)
                    torch.save({"out": out.detach().cpu(), "ref": ref}, save / f"call{call}.pt")
                if cmp["nonfinite"] and not probed and any(g.kind == "input" for g in buffers.guards()):
                    # Non-finite output where the reference is finite: did it come from
                    # reading the NaN padding? Re-run with finite padding and see.
                    probed = True
                    phase = "setup"
                    again = fresh_inputs(finite_poison=True)
                    for _ in range(call + 1):
                        out2, ref2 = one_call(again)
                    cmp2 = compare.compare(out2, ref2, spec.rtol, spec.atol)
                    emit(event="probe", trial=trial, call=call, nonfinite_with_nan_padding=cmp["nonfinite"],
                         nonfinite_with_finite_padding=cmp2["nonfinite"])
                    buffers.reset()
        emit(event="done")
        return 0
    except BaseException as e:  # report everything: a crash must never pass silently
        tb = traceback.format_exc(limit=6)
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        phase = "launch" if phase == "launch" else "setup"  # a compare failure is the harness's
        emit(event="error", phase=phase, type=type(e).__name__, message=first[:300], traceback=tb[-3000:])
        return EXIT_LAUNCH if phase == "launch" else EXIT_SETUP


if __name__ == "__main__":
    sys.exit(run(json.loads(sys.argv[1])))
