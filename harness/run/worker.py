"""Runs one (case, variant, backend) in the current process; ``isolate`` starts it.

Usage (by the harness, not by people)::

    TRITON_INTERPRET=1 python -m harness.run.worker '{"path": ..., "variant": ..., ...}'

It writes one JSON object per line to ``events`` as it goes, so that a crash or a
hang part-way still leaves the trials that finished:

- ``{"event": "imported"}``   torch and Triton are imported (on a GPU, CUDA is not yet initialised)
- ``{"event": "env", ...}``     device and versions
- ``{"event": "start", "variant": ...}``   a variant begins (setting up: no hang clock yet)
- ``{"event": "launch", "variant": ...}``   the launcher is called (the case's timeout starts)
- ``{"event": "compiling"}``  a kernel compilation begins (the hang clock waits: compiling is not hanging)
- ``{"event": "compiled"}``   it ended (the timeout starts again)
- ``{"event": "trial", "variant": ...}``   one call of one trial: comparison, guards, fingerprint
- ``{"event": "padding-rerun", "variant": ...}``   the re-run with finite padding that tells a poison read
- ``{"event": "kernels", "variant": ...}``   on a GPU: the compiled kernels' shared memory and warps
- ``{"event": "finished", "variant": ...}``   every trial of that variant reported
- ``{"event": "error", "phase": "setup" | "launch", ...}``   and exit 2 / 3
- ``{"event": "error", "phase": "import", ...}``   numpy, torch or Triton cannot be imported (exit 2)
- ``{"event": "done"}``

Every event carries ``t``, the wall-clock time it was written: ``harness.run.isolate``
turns them into the run's timeline (where a worker's seconds go, for ``CASEBOOK_TIMINGS``).

One worker runs every variant of a case it is given (fixed first: a broken kernel that
corrupts memory or poisons the CUDA context then cannot touch the fixed one's result).
"""

from __future__ import annotations

import datetime
import inspect
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

EXIT_SETUP, EXIT_LAUNCH = 2, 3


PACKAGES = ("numpy", "torch", "triton")  # what every worker imports before it can run a kernel


def import_failure() -> str | None:
    """One line when a package a worker needs cannot be imported (missing, broken, out of memory
    under ``ulimit -v``): a broken environment, bad input before any kernel runs. Else None."""
    import importlib

    for name in PACKAGES:
        try:
            importlib.import_module(name)
        except BaseException as e:  # noqa: BLE001  whatever importing raised
            from harness.errors import error_line

            return f"{name} cannot be imported: {error_line(e)}"[:300]
    return None


def apply_memory_limit() -> None:
    """The address-space limit ``isolate`` asked for (an interpreter worker), before torch loads."""
    limit = os.environ.get("CASEBOOK_WORKER_RLIMIT_AS")
    if limit and limit.isdigit():
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = int(limit) if hard == resource.RLIM_INFINITY else min(int(limit), hard)  # ulimit -v is lower: keep it
        resource.setrlimit(resource.RLIMIT_AS, (want, want))


class Events:
    def __init__(self, path: str):
        self.f = open(path, "a", buffering=1)

    def __call__(self, **event):
        event["t"] = time.time()
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
        count = torch.cuda.device_count()
        env["device"] = torch.cuda.get_device_name(0) + (f" x{count}" if count > 1 else "")
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


def sync_all_gpus() -> None:
    """Wait for every GPU this process has used, not only the current one (a case may put tensors on
    cuda:1). A GPU without this process's context has none of its work to wait for, and synchronizing
    it would create one: seconds on a busy machine of several GPUs, inside a case's hang clock (the
    2 x H200 machine: 5 s, a correct kernel taken for hung at its 3 s timeout)."""
    import torch

    has_context = getattr(torch._C, "_cuda_hasPrimaryContext", None)
    for d in range(torch.cuda.device_count()):
        if has_context is None or has_context(d):
            torch.cuda.synchronize(d)


class CaseInputs:
    """One case's inputs in one worker: made once, restored before every trial of every variant.

    ``make_inputs`` runs once (with the case's seed); every tensor it returned, and the
    whole buffer (padding included) behind every guarded one, is copied aside and copied
    back before each trial, on the device. So each trial and each variant starts from
    the same bytes without generating them again on the CPU.
    """

    def __init__(self, case, device: str, seed: int, sizes: dict, pad):
        import torch

        from harness.core import guards

        with guards.collecting(pad=pad) as self.guards:
            self.inputs = case.make_inputs(device=device, gen=torch.Generator().manual_seed(seed), **sizes)
        self.guards.name(self.inputs)
        tensors = [g.base for g in self.guards.guards] + [v for v in self.inputs.values() if isinstance(v, torch.Tensor)]
        self._saved = [(t, t.clone()) for t in tensors]

    def restore(self) -> dict:
        for t, saved in self._saved:
            t.copy_(saved)
        return self.inputs


class CaseProcess:
    """What every variant of one case shares in a worker: the spec, case.py, the inputs."""

    def __init__(self, args: dict):
        from harness.core import discovery
        from harness.core.spec import load_spec

        self.args = args
        self.backend = args["backend"]
        self.device = "cpu" if self.backend == "interpreter" else "cuda"
        self.spec = load_spec(Path(args["path"]))
        self.case = discovery.load_module(self.spec, "case")
        self.sizes = args.get("sizes") or self.spec.sizes[self.backend]  # overrides: the detectors' extra runs
        self.calls = args.get("calls") or self.spec.calls
        self.sync = sync_all_gpus if self.device == "cuda" else (lambda: None)
        self._inputs = None
        self.first_reference = None  # call 1's reference: the same for every trial and variant

    def inputs(self) -> dict:
        if self._inputs is None:
            self._inputs = CaseInputs(self.case, self.device, self.args["seed"], self.sizes, self.args.get("pad"))
        return self._inputs.restore()

    @property
    def guards(self):
        return self._inputs.guards

    def reference(self, inputs: dict, call: int):
        """The float64-or-whatever reference of ``call``, from a copy of the inputs before it."""
        import torch

        if call == 0 and self.first_reference is not None:
            return self.first_reference
        snapshot = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
        ref = call_with(self.case.reference, snapshot)
        ref = ref.detach() if isinstance(ref, torch.Tensor) else torch.tensor(ref)
        if call == 0:
            self.first_reference = ref
        return ref


class VariantRun:
    """One variant of one case on one backend: its calls and its trials."""

    def __init__(self, cp: CaseProcess, variant: str, emit, counter):
        from harness.core import discovery

        self.cp, self.variant, self.emit, self.counter = cp, variant, emit, counter
        self.kernel = discovery.load_module(cp.spec, variant)
        self.launcher = getattr(self.kernel, cp.spec.launcher, None)
        if self.launcher is None:
            raise AttributeError(f"{variant}.py defines no launcher '{cp.spec.launcher}' (named in case.toml)")
        self.phase = "setup"
        self.padding_rerun_done = False

    def one_call(self, inputs: dict, call: int, ref=None):
        """The reference, then the launcher: (output, reference)."""
        import torch

        ref = self.cp.reference(inputs, call) if ref is None else ref
        self.phase = "launch"
        self.emit(event="launch", variant=self.variant)  # the hang clock runs from here
        out = self.launcher(**inputs)
        self.cp.sync()
        self.phase = "compare"
        return (out if isinstance(out, torch.Tensor) else torch.as_tensor(out)), ref

    def trial(self, trial: int) -> None:
        from harness.core import compare
        from harness.run.triton_compat import reset_autotune_caches

        self.phase = "setup"
        reset_autotune_caches(self.kernel)  # each trial's first call tunes again, as a fresh process would
        inputs = self.cp.inputs()
        for call in range(self.cp.calls):
            self.counter.clear()
            out, ref = self.one_call(inputs, call)
            cmp = compare.compare(out, ref, self.cp.spec.rtol, self.cp.spec.atol)
            self.emit(event="trial", variant=self.variant, trial=trial, call=call,
                      fingerprint=compare.fingerprint(out), guard=self.cp.guards.check(),
                      bench_calls=list(self.counter.calls), **cmp)
            if trial == 0 and (self.cp.args.get("save") or {}).get(self.variant):
                self.save(call, out, ref)
            if cmp["nonfinite"] and not self.padding_rerun_done and self.cp.guards.has_inputs():
                self.padding_rerun(trial, call, cmp["nonfinite"])

    def padding_rerun(self, trial: int, call: int, nonfinite: int) -> None:
        """Non-finite output where the reference is finite: did it come from reading the
        NaN padding? Re-run up to this call on fresh inputs in finite padding, in guards of their own."""
        import torch

        from harness.core import compare, guards
        from harness.run.triton_compat import reset_autotune_caches

        self.padding_rerun_done, self.phase = True, "setup"
        reset_autotune_caches(self.kernel)
        cp = self.cp
        with guards.collecting(finite_poison=True, pad=cp.args.get("pad")):
            again = cp.case.make_inputs(device=cp.device, gen=torch.Generator().manual_seed(cp.args["seed"]),
                                        **cp.sizes)
        for k in range(call + 1):
            out, ref = self.one_call(again, k, ref=cp.reference(again, k) if k else None)
        cmp = compare.compare(out, ref, cp.spec.rtol, cp.spec.atol)
        self.emit(event="padding-rerun", variant=self.variant, trial=trial, call=call, nonfinite_with_nan_padding=nonfinite,
                  nonfinite_with_finite_padding=cmp["nonfinite"])

    def save(self, call: int, out, ref) -> None:
        import torch

        folder = Path(self.cp.args["save"][self.variant])
        folder.mkdir(parents=True, exist_ok=True)
        import io

        from harness.core import fileio

        data = io.BytesIO()  # written whole or not at all, like every file the harness writes
        torch.save({"out": out.detach().cpu(), "ref": ref.detach().cpu()}, data)
        fileio.write_together({folder / f"call{call}.pt": data.getvalue()})


def check_backend(backend: str) -> None:
    import torch

    if backend == "interpreter" and os.environ.get("TRITON_INTERPRET") != "1":
        raise RuntimeError("the interpreter backend needs TRITON_INTERPRET=1 in the environment")
    if backend == "gpu" and not torch.cuda.is_available():
        raise RuntimeError("no CUDA GPU is available")


def run(args: dict) -> int:
    """Every variant in ``args["variants"]``, in order; the first failure ends the process
    (the harness starts a fresh one for the variants left)."""
    emit = Events(args["events"])
    session = None  # the VariantRun now going
    if (broken := import_failure()) is not None:  # here, so that the timeline shows what importing costs
        emit(event="error", phase="import", type="ImportError", message=broken)
        return EXIT_SETUP
    try:
        from harness.run.triton_compat import compiled_kernels, install_scratch_allocator, patched

        emit(event="imported")
        check_backend(args["backend"])
        if args["backend"] == "gpu" and os.environ.get("TRITON_INSTRUMENTATION_MODE"):
            install_scratch_allocator()  # Triton's sanitizers keep their state in global scratch memory
        with patched(interpreter=args["backend"] == "interpreter",
                     on_compile=lambda what: emit(event=what)) as counter:
            emit(event="env", **environment(args["backend"]))
            cp = CaseProcess(args)
            for variant in args["variants"]:
                emit(event="start", variant=variant)
                session = VariantRun(cp, variant, emit, counter)
                for trial in range(args["trials"]):
                    session.trial(trial)
                if cp.device == "cuda":
                    emit(event="kernels", variant=variant, kernels=compiled_kernels(session.kernel))
                emit(event="finished", variant=variant)
        emit(event="done", cpu=round(time.process_time(), 3))
        return 0
    except BaseException as e:  # report everything: a crash must never pass silently
        phase = "launch" if session is not None and session.phase == "launch" else "setup"
        return report_failure(emit, e, phase)  # a compare failure is the harness's: setup


if __name__ == "__main__":
    apply_memory_limit()
    sys.exit(run(json.loads(sys.argv[1])))
