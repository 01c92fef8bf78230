"""Runs one (case, variant, backend) in the current process; ``isolate`` starts it.

Usage (by the harness, not by people)::

    TRITON_INTERPRET=1 python -m harness.run.worker '{"path": ..., "variant": ..., ...}'

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


def apply_memory_limit() -> None:
    """The address-space limit ``isolate`` asked for (an interpreter worker), before torch loads."""
    limit = os.environ.get("CASEBOOK_WORKER_RLIMIT_AS")
    if limit and limit.isdigit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))


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


def call_with(fn, inputs: dict):
    """Call ``fn`` with the inputs it names (the reference needs only some of them)."""
    params = inspect.signature(fn).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return fn(**inputs)
    return fn(**{k: v for k, v in inputs.items() if k in params})


def report_failure(emit, e: BaseException, phase: str) -> int:
    """The error event for ``e`` (setup or launch) and the exit status that goes with it."""
    tb = traceback.format_exc(limit=6)
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    emit(event="error", phase=phase, type=type(e).__name__, message=first[:300], traceback=tb[-3000:])
    return EXIT_LAUNCH if phase == "launch" else EXIT_SETUP


class Session:
    """One variant of one case on one backend: its inputs, its calls, its trials."""

    def __init__(self, args: dict, emit, counter):
        import torch

        from harness.core import discovery
        from harness.core.spec import load_spec

        self.args, self.emit, self.counter = args, emit, counter
        self.backend, self.variant = args["backend"], args["variant"]
        self.device = "cpu" if self.backend == "interpreter" else "cuda"
        self.spec = spec = load_spec(Path(args["path"]))
        self.case = discovery.load_module(spec, "case")
        self.kernel = discovery.load_module(spec, self.variant)
        self.launcher = getattr(self.kernel, spec.launcher, None)
        if self.launcher is None:
            raise AttributeError(f"{self.variant}.py defines no launcher '{spec.launcher}' (named in case.toml)")
        self.sizes = args.get("sizes") or spec.sizes[self.backend]  # overrides: the detectors' extra runs
        self.calls = args.get("calls") or spec.calls
        self.sync = torch.cuda.synchronize if self.device == "cuda" else (lambda: None)
        self.phase = "setup"
        self.probed = False

    def fresh_inputs(self, guards) -> dict:
        """New inputs (a fresh first call: tuned configs forgotten), their guards named."""
        import torch

        from harness.run.triton_compat import reset_autotune_caches

        reset_autotune_caches(self.kernel)
        gen = torch.Generator().manual_seed(self.args["seed"])
        inputs = self.case.make_inputs(device=self.device, gen=gen, **self.sizes)
        guards.name(inputs)
        return inputs

    def one_call(self, inputs: dict):
        """The reference (on a copy of the inputs), then the launcher: (output, reference)."""
        import torch

        snapshot = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
        ref = call_with(self.case.reference, snapshot)
        ref = ref.detach().to("cpu") if isinstance(ref, torch.Tensor) else torch.tensor(ref)
        self.phase = "launch"
        out = self.launcher(**inputs)
        self.sync()
        self.phase = "compare"
        return (out if isinstance(out, torch.Tensor) else torch.as_tensor(out)), ref

    def trial(self, trial: int) -> None:
        from harness.core import compare, guards

        self.phase = "setup"
        with guards.collecting(pad=self.args.get("pad")) as gs:
            inputs = self.fresh_inputs(gs)
            for call in range(self.calls):
                self.counter.clear()
                out, ref = self.one_call(inputs)
                cmp = compare.compare(out, ref, self.spec.rtol, self.spec.atol)
                self.emit(event="trial", trial=trial, call=call, fingerprint=compare.fingerprint(out),
                          guard=gs.check(), bench_calls=list(self.counter.calls), **cmp)
                if self.args.get("save") and trial == 0:
                    self.save(call, out, ref)
                if cmp["nonfinite"] and not self.probed and gs.has_inputs():
                    self.probe(trial, call, cmp["nonfinite"])

    def probe(self, trial: int, call: int, nonfinite: int) -> None:
        """Non-finite output where the reference is finite: did it come from reading the
        NaN padding? Re-run up to this call with finite padding, in guards of its own."""
        from harness.core import compare, guards

        self.probed, self.phase = True, "setup"
        with guards.collecting(finite_poison=True, pad=self.args.get("pad")) as gs:
            again = self.fresh_inputs(gs)
            for _ in range(call + 1):
                out, ref = self.one_call(again)
        cmp = compare.compare(out, ref, self.spec.rtol, self.spec.atol)
        self.emit(event="probe", trial=trial, call=call, nonfinite_with_nan_padding=nonfinite,
                  nonfinite_with_finite_padding=cmp["nonfinite"])

    def save(self, call: int, out, ref) -> None:
        import torch

        folder = Path(self.args["save"])
        folder.mkdir(parents=True, exist_ok=True)
        torch.save({"out": out.detach().cpu(), "ref": ref}, folder / f"call{call}.pt")


def check_backend(backend: str) -> None:
    import torch

    if backend == "interpreter" and os.environ.get("TRITON_INTERPRET") != "1":
        raise RuntimeError("the interpreter backend needs TRITON_INTERPRET=1 in the environment")
    if backend == "gpu" and not torch.cuda.is_available():
        raise RuntimeError("no CUDA GPU is available")


def run(args: dict) -> int:
    emit = Events(args["events"])
    session = None
    try:
        from harness.run.triton_compat import patched

        check_backend(args["backend"])
        with patched(interpreter=args["backend"] == "interpreter") as counter:
            emit(event="env", **environment(args["backend"]))
            session = Session(args, emit, counter)
            for trial in range(args["trials"]):
                session.trial(trial)
        emit(event="done")
        return 0
    except BaseException as e:  # report everything: a crash must never pass silently
        phase = "launch" if session is not None and session.phase == "launch" else "setup"
        return report_failure(emit, e, phase)  # a compare failure is the harness's: setup


if __name__ == "__main__":
    apply_memory_limit()
    sys.exit(run(json.loads(sys.argv[1])))
