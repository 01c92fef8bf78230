"""The plain test a kernel's author usually writes, as a peer column of the scoreboard: call the
launcher on fresh inputs, compare with ``torch.allclose``-style tolerances, nothing else (no
guard bands, no poison, no instrumentation). At the default sizes it is "a plain test"; at
random sizes drawn from the entry's ranges it is shape fuzzing in the style of gpucheck.

Usage (by ``harness.bugs.board``, not by people)::

    TRITON_INTERPRET=1 python -m harness.bugs.plain '{"file": ..., "launcher": ..., "sizes": [{...}, ...]}'

``{"event": "loaded"}`` once the glue imported, then one event per size: ``{"event": "result",
"sizes": ..., "close": bool, "error": str}``.
"""

from __future__ import annotations

import json
import random
import sys

from harness.run.worker import Events


def random_sizes(defaults: dict, ranges: dict, seed: int, trials: int) -> list[dict]:
    """``trials`` size dicts drawn uniformly: each integer size from its FUZZ range, else from
    1 to twice its default; other keywords keep their defaults."""
    rng = random.Random(seed)
    out = []
    for _ in range(trials):
        s = {}
        for k, v in defaults.items():
            if isinstance(v, bool) or not isinstance(v, int):
                continue
            lo, hi = ranges.get(k, (1, max(2, 2 * v)))
            s[k] = rng.randint(int(lo), int(hi))
        out.append(s)
    return out


def _one(target, sizes: dict, seed: int, backend: str) -> dict:
    import torch

    from harness.core import compare
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
    out = out if isinstance(out, torch.Tensor) else torch.as_tensor(out)
    rtol, atol = target.tolerance_for(out.dtype)
    cmp = compare.compare(out.detach().to("cpu"), ref, rtol, atol)
    return {"sizes": sizes, "close": bool(cmp["close"]), "error": ""}


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
        sizes = args.get("sizes")
        if sizes is None:  # the fuzzing peer: sizes drawn here, where the defaults and ranges are known
            sizes = random_sizes(target.sizes, target.ranges, int(args.get("seed", 0)), int(args.get("trials", 16)))
        for s in sizes:
            emit(event="result", **_one(target, s, int(args.get("seed", 0)), args["backend"]))
    emit(event="done")
    return 0


if __name__ == "__main__":
    sys.exit(run(json.loads(sys.argv[1])))
