"""The plain test a kernel's author usually writes, as a peer column of the scoreboard: call the
launcher on fresh inputs, compare with ``torch.allclose``-style tolerances, nothing else (no
guard bands, no poison, no instrumentation). At the default sizes it is "a plain test"; at
random sizes drawn from the entry's ranges it is shape fuzzing in the style of gpucheck.

Usage (by ``harness.bugs.board``, not by people)::

    TRITON_INTERPRET=1 python -m harness.bugs.plain '{"file": ..., "launcher": ..., "sizes": [{...}, ...]}'

``{"event": "loaded"}`` once the glue imported, then one event per size: ``{"event": "result",
"sizes": ..., "close": bool, "error": str}``. With ``"profile": true``, no kernel runs: one
``{"event": "profile", ...}`` (``profile``: the keywords that shape no tensor and the largest
input at FUZZ's tops, what the board's default run and its ``--large`` rule read).
"""

from __future__ import annotations

import json
import random
import sys

from harness.run.worker import Events


def random_sizes(defaults: dict, ranges: dict, seed: int, trials: int, pinned=()) -> list[dict]:
    """``trials`` size dicts drawn uniformly: each integer size from its FUZZ range, else from
    1 to twice its default; other keywords (and those ``pinned``) keep their defaults."""
    rng = random.Random(seed)
    out = []
    for _ in range(trials):
        s = {}
        for k, v in defaults.items():
            if isinstance(v, bool) or not isinstance(v, int) or k in pinned:
                continue
            lo, hi = ranges.get(k, (1, max(2, 2 * v)))
            s[k] = rng.randint(int(lo), int(hi))
        out.append(s)
    return out


LARGE = 2 ** 31  # elements: where an int32 offset wraps (``--large``'s limit)


def other_value(v: int, lo, hi) -> int | None:
    """The value a keyword at its default ``v`` is changed to, to see what it changes: twice it
    (1 from 0), kept inside its FUZZ range [lo, hi] (None: open); the range's other end where that
    is ``v`` itself; None where the range holds ``v`` alone."""
    w = 2 * v if v > 0 else 1
    if hi is not None:
        w = min(w, hi)
    if lo is not None:
        w = max(w, lo)
    if w == v:
        w = next((x for x in (lo, hi) if x is not None and x != v), v)
    return None if w == v else w


def _shapes(inputs: dict) -> dict:
    """{name: (shape, numel)} of every tensor make_inputs returned (in a list or tuple too)."""
    import torch

    out = {}
    for k, v in inputs.items():
        for i, t in enumerate(v if isinstance(v, (list, tuple)) else [v]):
            if isinstance(t, torch.Tensor):
                out[f"{k}[{i}]" if isinstance(v, (list, tuple)) else k] = (tuple(t.shape), t.numel())
    return out


def profile(target, seed: int = 0) -> dict:
    """What the board reads from make_inputs, on the CPU, before the probe runs (bugs/README.md):

    - ``shapeless``: the keywords that change no tensor's shape (each changed alone, ``other_value``:
      every tensor keeps its shape): they choose what the inputs hold, not how large they are;
    - ``defaults``: make_inputs' integer keywords at their defaults;
    - ``largest``: the largest input tensor at the tops of the FUZZ ranges (every size at its top at
      once, a size without a top at its default), estimated from how each tensor grows with each
      size (its numel with that size alone changed), never made: ``{"tensor", "numel", "sizes"}``.
    A keyword make_inputs refuses to change is neither a switch nor a size that grows."""
    import math

    from harness.probe import execute as X
    from harness.probe.detectors.large import growth

    defaults = {k: v for k, v in target.sizes.items() if isinstance(v, int) and not isinstance(v, bool)}
    base = _shapes(X.make(target, target.sizes, seed, "interpreter"))
    shapeless, at, factors, tops = [], {}, {}, {}
    for k, v in defaults.items():
        lo, hi = (target.ranges.get(k) or (None, None))
        tops[k] = hi if hi is not None and hi > v else v
        w = other_value(v, lo, hi)
        if w is None:
            continue
        try:
            changed = _shapes(X.make(target, {**target.sizes, k: w}, seed, "interpreter"))
        except Exception:  # noqa: BLE001  make_inputs refuses the value: not known to be either
            continue
        if {n: s for n, (s, _) in changed.items()} == {n: s for n, (s, _) in base.items()}:
            shapeless.append(k)
        elif w > v > 0:
            factors[k] = w / v
            for n, (_, numel) in changed.items():
                at.setdefault(n, {})[k] = numel
    largest = {"tensor": "", "numel": 0, "sizes": {k: tops[k] for k in defaults if k not in shapeless}}
    for n, (_, numel) in base.items():
        est = numel * math.prod((tops[k] / defaults[k]) ** e
                                for k, e in growth(at.get(n, {}), numel, factors).items())
        if est > largest["numel"]:
            largest.update(tensor=n, numel=int(est))
    return {"shapeless": shapeless, "defaults": defaults, "largest": largest, "large": largest["numel"] >= LARGE}


def _one(target, sizes: dict, seed: int, backend: str) -> dict:
    import torch

    from harness.probe import execute as X
    from harness.run.worker import call_with

    target.sizes = {**target.sizes, **sizes}
    try:
        inputs = X.make(target, target.sizes, seed, backend)
        ref = X.reference(target, inputs)
        out = call_with(target.launcher, X.clone_inputs(inputs))
        if backend == "gpu":
            torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001  (the user's kernel: an exception fails the test)
        from harness.errors import error_line

        return {"sizes": sizes, "close": False, "error": error_line(e)[:200]}
    try:
        return {"sizes": sizes, "close": _close(target, out, ref), "error": ""}
    except Exception as e:  # noqa: BLE001  a result the reference cannot be compared with fails the test
        from harness.errors import error_line

        return {"sizes": sizes, "close": False, "error": f"its result against the reference: {error_line(e)}"[:200]}


def _close(target, out, ref) -> bool:
    """The launcher's result against the reference, each output with its dtype's tolerance (a tuple
    or list of outputs against the reference's parts, as ``execute.reference`` flattens them)."""
    import math

    import torch

    from harness.core import compare

    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    parts = getattr(ref, "parts", None) or [("", tuple(ref.shape))]
    if len(outs) != len(parts):
        return False
    at = 0
    for o, (_, shape) in zip(outs, parts):
        size = math.prod(shape)
        r = ref[at:at + size].reshape(shape) if len(parts) > 1 else ref
        at += size
        o = o if isinstance(o, torch.Tensor) else torch.as_tensor(o)
        rtol, atol = target.tolerance_for(o.dtype)
        if not compare.compare(o.detach().to("cpu"), r, rtol, atol)["close"]:
            return False
    return True


def run(args: dict) -> int:
    emit = Events(args["events"])
    from harness.probe.target import TargetError, load
    from harness.run.triton_compat import patched

    with patched(interpreter=args["backend"] == "interpreter"):
        try:
            target = load(args["file"], None, args["launcher"], args["backend"])
        except TargetError as e:
            emit(event="error", phase="load", message=str(e))
            return 2
        emit(event="loaded")  # the glue imported: from here on, what ends the worker is the kernel's
        if args.get("profile"):  # what the board reads from make_inputs (no kernel runs)
            try:
                emit(event="profile", **profile(target, int(args.get("seed", 0))))
            except Exception as e:  # noqa: BLE001  make_inputs raises at its own defaults: said, not guessed
                from harness.errors import error_line

                emit(event="error", phase="profile", message=f"make_inputs at its defaults: {error_line(e)}"[:300])
                return 2
            emit(event="done")
            return 0
        sizes = args.get("sizes")
        if sizes is None:  # the fuzzing peer: sizes drawn here, where the defaults and ranges are known
            sizes = random_sizes(target.sizes, target.ranges, int(args.get("seed", 0)), int(args.get("trials", 16)),
                                 pinned=set(args.get("pinned") or ()))
        for s in sizes:
            emit(event="result", **_one(target, s, int(args.get("seed", 0)), args["backend"]))
    emit(event="done")
    return 0


if __name__ == "__main__":
    sys.exit(run(json.loads(sys.argv[1])))
