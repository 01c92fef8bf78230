"""The ``gpucheck`` peer: gpucheck's shape fuzzing (PyPI ``gpucheck`` 0.1.0, "pytest for GPU
kernels") on the entry's launcher against its reference, on the CPU under ``TRITON_INTERPRET=1``
(gpucheck itself needs no GPU: ``fuzz_shapes`` is plain Python and ``assert_close`` compares
CPU tensors too).

The sizes are drawn the way gpucheck draws shapes: ``gpucheck.fuzz_shapes(ndim, min_size,
max_size, n, seed)``, whose list comes in its order of bug-finding likelihood (degenerate 0 and
1, off-tile 31/33/35/63/..., primes, powers of two and their neighbours, large, mixed). ``ndim``
is the number of integer size keywords of ``make_inputs``: those the glue's ``FUZZ`` names where
it declares one (a block size or a mode keeps its default), else every integer keyword of its
defaults (or ``SIZES``). ``max_size`` is the largest upper bound among them (the ``FUZZ`` range,
else twice the default, as our fuzzing peer takes them) and ``n`` the trials. A shape's i-th
dimension is the i-th keyword, brought into that keyword's own range (a 0 stays 0 only where the
range allows it). Each shape: fresh inputs, the reference in float64, the launcher, then
``gpucheck.assert_close`` at gpucheck's dtype tolerances (the glue's ``TOLERANCE`` where it
declares one).

caught: a shape whose output gpucheck calls not close, or whose launcher raised; a process killed
by a signal (the interpreter meeting a wild access) counts as a failure, as for the plain test, at
the shape it was running. A run that meets the timeout before any failure is "could not run"
(``hung``: under the interpreter that is mostly a large shape being slow, not the kernel hanging). A shape whose inputs or
reference cannot be made (our glue, not the kernel) is skipped and counted. The interpreter gets
the casebook's compatibility patches (``harness.run.triton_compat.patched``: a CPU benchmarker
for the autotuner), as our own fuzzing peer does: environment fixes, not checks.

Usage (by ``run``, in gpucheck's environment)::

    python -m harness.bugs.peer_gpucheck '{"file": ..., "launcher": ..., "trials": 16, "seed": 0}'

The environment: ``benchmarks/peers/setup.sh gpucheck``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.bugs import peer_common as C

TOOL, DIST = "gpucheck", "gpucheck"
MARK = "GPUCHECK-PEER "
TRIALS = 16  # as many shapes as our fuzzing peer draws (gpucheck's own default is 50)


def version() -> str:
    v = C.dist_version(TOOL, DIST)
    return f"gpucheck {v}" if v else ""


def run(entry, variant: str, backend: str, *, timeout: float, trials: int = TRIALS) -> dict:
    if (err := C.missing(TOOL, DIST)) is not None:
        return err
    if backend != "interpreter":
        return {"error": "could not run: the gpucheck peer runs on the interpreter (CPU) only"}
    if why := C.fetch(entry):
        return {"error": f"could not run: {why}"[:300]}
    args = {"file": str(Path(entry.glue).resolve()), "launcher": entry.launcher(variant), "trials": trials, "seed": 0}
    done = C.run([C.venv_python(TOOL), "-m", "harness.bugs.peer_gpucheck", json.dumps(args)],
                 env=C.environment({"TRITON_INTERPRET": "1"}), timeout=timeout, cwd=str(C.REPO))
    events = [json.loads(x[len(MARK):]) for x in done.stdout.splitlines() if x.startswith(MARK)]
    res = {"seconds": round(done.seconds, 1), "version": version()}
    if err := next((e for e in events if e["event"] == "error"), None):
        return {**res, "error": f"could not run: {err['message']}"[:300]}
    shapes = [e for e in events if e["event"] == "shape"]
    if nosrc := next((e for e in shapes if e["status"] == "no source"), None):
        return {**res, "error": f"could not run: {nosrc['message']}"[:300]}
    ran = [e for e in shapes if e["status"] != "skipped"]
    failed = [e for e in ran if e["status"] != "close"]
    finished = any(e["event"] == "done" for e in events)
    res.update(tried=len(ran), skipped=len(shapes) - len(ran))
    if failed:
        f = failed[0]
        return {**res, "caught": True, "first": {"sizes": f["sizes"], "message": f["message"][:400]}}
    starts = [e for e in events if e["event"] == "start"]
    at = starts[-1]["sizes"] if len(starts) > len(shapes) else {}
    if done.timed_out:  # under the interpreter, mostly a large shape that is slow, not a hang
        return {**res, "hung": True, "error": f"could not run: gpucheck's shapes did not finish in {timeout:.0f}s "
                                              f"({len(ran)} ran, all close; at {at or 'the start'})"[:300]}
    if not finished:  # a crash fails a test too (as for the plain peer)
        from harness.run.isolate import exit_message

        why = f"the process died: {exit_message(done.returncode)}"
        return {**res, "caught": True, "first": {"sizes": at, "message": f"{why} ({len(shapes)} shapes done before)"}}
    if not ran:
        return {**res, "error": "could not run: no shape could be set up (the inputs or the reference raised at every one)"}
    return {**res, "caught": False}


# --- the worker, in gpucheck's environment --------------------------------------------------------

def _emit(**event) -> None:
    print(MARK + json.dumps(event, default=str), flush=True)


def shapes_for(defaults: dict, ranges: dict, trials: int, seed: int) -> list[dict]:
    """gpucheck's shapes as size dicts over the integer keywords of ``defaults``."""
    from gpucheck.fuzzing import fuzz_shapes

    keys = [k for k, v in defaults.items() if isinstance(v, int) and not isinstance(v, bool)]
    if ranges:  # the glue names its shape keywords: the others (a block size, a flag) keep their defaults
        keys = [k for k in keys if k in ranges]
    if not keys:
        return [{}]
    bounds = {k: tuple(int(x) for x in ranges.get(k, (1, max(2, 2 * defaults[k])))) for k in keys}
    lo = max(1, min(b[0] for b in bounds.values()))
    hi = max(b[1] for b in bounds.values())
    out, seen = [], set()
    for shape in fuzz_shapes(len(keys), min_size=lo, max_size=hi, n=trials, seed=seed):
        s = {k: min(max(d, bounds[k][0]), bounds[k][1]) for k, d in zip(keys, shape)}
        if tuple(s.values()) not in seen:  # two shapes may meet once brought into range
            seen.add(tuple(s.values()))
            out.append(s)
    return out


def _mismatch(text: str) -> str:
    """gpucheck's assertion in one line: its first sentence and the rows of its mismatch report
    that say how much (the report is a rich panel, in colour)."""
    import re

    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    head = text.split("\n", 1)[0].split("╭", 1)[0].strip()
    head = re.sub(r";? ?override with .*?\)", ")", head)
    rows = dict((k.strip().lower(), v.strip()) for k, v in
                re.findall(r"│ (Mismatch count|Max absolute error|Location of max error)\s*│\s*([^│]+?)\s*│", text))
    more = ", ".join(f"{k} {v}" for k, v in rows.items())
    return (f"{head}: {more}" if more else head)[:300]


def _one(target, sizes: dict, seed: int) -> dict:
    import torch
    from gpucheck import assert_close

    from harness.bugs.source import SourceError
    from harness.errors import error_line
    from harness.probe import execute as X
    from harness.run.worker import call_with

    full = {**target.sizes, **sizes}
    try:
        inputs = X.make(target, full, seed, "interpreter")
        ref = X.reference(target, inputs)
    except Exception as e:  # noqa: BLE001  (our glue at a size it does not take: not the kernel's)
        return {"sizes": sizes, "status": "skipped", "message": error_line(e)[:200]}
    try:
        out = call_with(target.launcher, X.clone_inputs(inputs))
        out = out if isinstance(out, torch.Tensor) else torch.as_tensor(out)
    except SourceError as e:  # the glue could not load the project's module: not the kernel
        return {"sizes": sizes, "status": "no source", "message": str(e)[:300]}
    except Exception as e:  # noqa: BLE001  (the launcher raised, a bare assert of its own too: the test fails)
        return {"sizes": sizes, "status": "raised", "message": error_line(e)[:300]}
    kw = {"rtol": target.tolerance[0], "atol": target.tolerance[1]} if target.tolerance else {}
    try:
        assert_close(out.detach().cpu(), ref.reshape(out.shape) if ref.numel() == out.numel() else ref,
                     nan_equal=True, **kw)
    except AssertionError as e:
        return {"sizes": sizes, "status": "not close", "message": _mismatch(str(e))}
    return {"sizes": sizes, "status": "close", "message": ""}


def main(args: dict) -> int:
    from harness.probe.target import TargetError, load
    from harness.run.triton_compat import patched

    with patched(interpreter=True):
        try:
            target = load(args["file"], None, args["launcher"], "interpreter")
        except TargetError as e:
            _emit(event="error", message=str(e))
            return 2
        try:
            shapes = shapes_for(target.sizes, target.ranges, int(args.get("trials", TRIALS)), int(args.get("seed", 0)))
        except Exception as e:  # noqa: BLE001
            _emit(event="error", message=f"gpucheck.fuzz_shapes: {type(e).__name__}: {e}")
            return 2
        for s in shapes:
            _emit(event="start", sizes=s)  # a shape that kills the process is known by this
            _emit(event="shape", **_one(target, s, int(args.get("seed", 0))))
    _emit(event="done")
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
