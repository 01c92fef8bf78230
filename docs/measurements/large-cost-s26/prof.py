"""Where the large detector's run past 2**31 elements spends its time, step by step, on one entry's version.

Run on the GPU machine from the repository root (CASEBOOK_BUG_CACHE set), one process an entry (an illegal
address ends the CUDA context): ``python3 docs/measurements/large-cost-s26/prof.py ENTRY [VARIANT]``. It loads the
entry's glue as the probe does on a GPU, reads the launched kernels' int32 evidence (``large._skip``), then times
the pilot the probe makes to decide (``large._pilot``: what it predicts) and the run at the planned sizes made as
``--large`` makes it (``large.large`` with ``large`` asked for), each of its steps wrapped in a synchronized timer:
make_inputs (``_make``), the float64 reference, each launcher call, the sampled rows' comparison. Prints one JSON
line. A measurement script: nothing of the probe is changed by it."""

import json
import sys
import time

import torch

from harness.probe import execute as X
from harness.probe.context import Context
from harness.probe.detectors import large as L
from harness.probe.target import load
from harness.run import worker
from harness.run.triton_compat import patched

entry = sys.argv[1]
variant = sys.argv[2] if len(sys.argv) > 2 else "buggy"
steps = []


def timed(name, f):
    def g(*a, **k):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            torch.cuda.synchronize()
            steps.append((name, round(time.perf_counter() - t0, 2)))
    return g


L._make = timed("make_inputs", L._make)
X.reference = timed("reference", X.reference)
worker.call_with = timed("launcher", worker.call_with)
L._compare = timed("compare", L._compare)
out = {"entry": entry, "variant": variant, "device": torch.cuda.get_device_name(0)}
with patched(interpreter=False, bench_calls=3):
    target = load(f"bugs/{entry}/probe.py", None, f"launch_{variant}", "gpu", None)
    ctx = Context(target, "gpu", 0, "large", options={"large": True})
    t0 = time.perf_counter()
    worker.call_with(target.launcher, X.make(target, target.sizes, 0, "gpu"))  # the default launch (warm)
    out["skip"] = L._skip(ctx)
    out["evidence"] = [f"{e.get('kernel')}:{e.get('pointer')}" for e in ctx.board.int32_offsets or []][:4]
    tensors = L.profile(ctx)
    free, _ = torch.cuda.mem_get_info()
    ps = L.plans(target.sizes, tensors, free, "elements", L.targets(ctx))
    out["plan"] = ps[0]["sizes"] if ps else None
    steps.clear()
    if ps:
        t1 = time.perf_counter()
        out["pilot"] = L._pilot(ctx, ps[0])
        out["pilot_s"] = round(time.perf_counter() - t1, 2)
        out["pilot_steps"] = list(steps)
        steps.clear()
        t2 = time.perf_counter()
        try:
            found = L.large(ctx)
            out["found"] = [[f.code, f.severity, f.message[:200]] for f in found]
        except Exception as e:  # noqa: BLE001
            out["raised"] = repr(e)[:300]
        out["run_s"] = round(time.perf_counter() - t2, 2)
        out["run_steps"] = list(steps)
print("RESULT " + json.dumps(out))
