"""Plain stores to an address another program of the same launch also touches (interpreter)."""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import crash
from harness.probe.detectors import Detector
from harness.probe.findings import INFO


def run(ctx) -> list:
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    with ctx.instrument(race=True) as rec:
        c = ctx.call(inputs)
    if c.error is None and rec is not None:  # the order detector's skip: programs that share nothing they write
        ctx.seen["cross_program"] = None if rec.truncated else rec.cross_program
    out, seen = [], set()
    for r in rec.races:
        key = (r["kernel"], r["store_line"], r["other_line"])
        if key in seen:
            continue
        seen.add(key)
        out.append(ctx.finding(
            "P301", f"{r['kernel']}: programs {r['store_pid']} and {r['other_pid']} both access {r['address']}: "
                    f"a store at {r['store_line']}, a {r['other_kind']} at {r['other_line']} "
                    f"({r['addresses']} such addresses)", line=r["store_line"], kernel=r["kernel"],
            programs=[r["store_pid"], r["other_pid"]]))
    if rec.truncated:
        out.append(ctx.finding("P000", "race detector stopped recording: too many accesses in one launch",
                               severity=INFO))
    if c.error is not None:
        out.append(crash(ctx, c.error, t.sizes))
    return out


DETECTOR = Detector("race", "stores to addresses other programs touch", run, backends=("interpreter",),
                    process={"interpreter": 1}, rank=3)
