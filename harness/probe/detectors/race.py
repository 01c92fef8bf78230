"""Plain stores to an address another program of the same launch also touches, and what the lanes of
one program do to each other that the interpreter's lockstep hides: a store whose lanes write one
address with different values, a load of what other lanes stored with no barrier between (interpreter)."""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import crash
from harness.probe.diagnosis import LOST_RMW
from harness.probe.detectors import Detector
from harness.probe.findings import ERROR, INFO, WARNING, Code


def run(ctx) -> list:
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    with ctx.instrument(race=True) as rec:
        c = ctx.call(inputs)
    if c.error is None and rec is not None:  # the order detector's skip: programs that share nothing they write
        ctx.board.cross_program = None if rec.truncated else rec.cross_program
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
    out += lane_findings(ctx, rec)
    if rec.truncated:
        out.append(ctx.finding("P000", "race detector stopped recording: too many accesses in one launch",
                               severity=INFO))
    if c.error is not None:
        out.append(crash(ctx, c.error, t.sizes))
    return out


def lane_findings(ctx, rec) -> list:
    """P304 and P305, warnings: undefined on a GPU, hidden by the interpreter."""
    out = []
    for c in _first_per(rec.collisions, ("kernel", "store_line")):
        out.append(ctx.finding(
            "P304", f"{c['kernel']}: lanes of the tl.store at {c['store_line']} write different values to one "
                    f"address, at {c['addresses']:,} addresses (first {c['address']}, program {c['pid']}); "
                    f"which lane lands is unspecified on a GPU", severity=WARNING, line=c["store_line"],
            kernel=c["kernel"], programs=[c["pid"]]))
    for c in _first_per(rec.overwrites, ("kernel", "store_line", "other_line")):
        rmw = (f"; at {c['rmw']:,} of them the overwriting lane had loaded the address since the barrier: a "
               f"{LOST_RMW}, the other lane's update lost") if c.get("rmw") else ""
        out.append(ctx.finding(
            "P304", f"{c['kernel']}: lanes of the tl.store at {c['store_line']} overwrite, with other values, what "
                    f"other lanes of the program stored at {c['other_line']}, at {c['addresses']:,} addresses (first "
                    f"{c['address']}, program {c['pid']}), with no tl.debug_barrier() between: which lands is "
                    f"unspecified on a GPU{rmw}", severity=WARNING, line=c["store_line"], kernel=c["kernel"],
            programs=[c["pid"]]))
    for c in _first_per(rec.cross_lane, ("kernel", "load_line", "store_line")):
        out.append(ctx.finding(
            "P305", f"{c['kernel']}: the tl.load at {c['load_line']} reads {c['addresses']:,} addresses that other "
                    f"lanes of the program stored at {c['store_line']} (first {c['address']}, program {c['pid']}), "
                    f"with no tl.debug_barrier() between: on a GPU it may run before their stores",
            severity=WARNING, line=c["load_line"], kernel=c["kernel"], programs=[c["pid"]]))
    return out


def _first_per(hits: list, keys: tuple) -> list:
    """One hit per ``keys`` (the first launch's), its addresses (and read-modify-writes) summed over the launches."""
    out: dict = {}
    for h in hits:
        k = tuple(h[n] for n in keys)
        if k in out:
            out[k] = {**out[k], "addresses": out[k]["addresses"] + h["addresses"],
                      **({"rmw": out[k].get("rmw", 0) + h["rmw"]} if "rmw" in h else {})}
        else:
            out[k] = h
    return list(out.values())


P301 = Code("P301", ERROR, "two programs of one launch touch an address one of them stores to: the result depends "
                           "on which runs last", ("sum-reduction-store-race", "nrm2-race"), sanitize=ERROR,
            sanitize_otherwise="a warning where only stores meet there and the reversed and shuffled program orders "
                               "give the same result: the programs store the same value")
P304 = Code("P304", WARNING, "lanes of one `tl.store`, or of two with no `tl.debug_barrier()` between, write one "
                             "address with different values: which lane lands is unspecified on a GPU",
            ("duplicate-index-store",))
P305 = Code("P305", WARNING, "a `tl.load` reads what other lanes of its program stored since its last "
                             "`tl.debug_barrier()`", ("store-then-load-no-barrier",))

DETECTOR = Detector("race", "stores to addresses other programs touch", run, backends=("interpreter",),
                    process={"interpreter": 1}, rank=3, codes=(P301, P304, P305))
