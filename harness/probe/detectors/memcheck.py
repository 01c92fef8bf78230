"""Every load, store and atomic checked against its tensor's bounds, at the kernel's line
(the instrumented interpreter: an access is reported before it happens)."""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import crash
from harness.probe.detectors import Detector

CODES = {"store": "P101", "load": "P102", "atomic": "P103"}


def run(ctx) -> list:
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    with ctx.instrument(memcheck=True) as rec:  # poison in masked lanes: an address made from them is checked
        c = ctx.call(inputs)
    out = []
    for (kind, tensor, side, line), hit in sorted(rec.oob.items(), key=lambda kv: kv[0][3]):
        out.append(ctx.finding(CODES[kind], f"{hit['kernel']}: {kind} {side} of '{tensor}' by up to "
                                            f"{hit['elements']} elements ({hit['lanes']} lanes; first by program "
                                            f"{hit['pid']})", line=line, kernel=hit["kernel"], programs=[hit["pid"]]))
    if c.error is not None:
        out.append(crash(ctx, c.error, t.sizes))
    return out


DETECTOR = Detector("memcheck", "every load and store against its tensor's bounds", run, backends=("interpreter",),
                    process={"interpreter": 1}, rank=2)
