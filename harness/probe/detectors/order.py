"""The grid run in program order, reversed and shuffled (interpreter): a result that depends on it.

Float atomics that add in another order give results that differ in their last bits, and so do
sums that programs add to memory one after another under a lock (a spin lock's load, add, store):
where every order's result agrees with the others within the output's tolerance, how much that
matters is the kernel's promise (``DETERMINISTIC``): declared True, an error; declared False,
information; not declared, a warning (a GPU gives a different order on each run). Orders whose
results differ beyond it: P302, an error.
"""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.budget import SCALED_S
from harness.probe.context import crash, fmt, int_sizes
from harness.probe.detectors import Detector
from harness.probe.findings import ERROR, NONDETERMINISM, WARNING, Code, nondeterminism_severity

ORDERS = ("reverse", 1, 2, 3, 4)
SCALE_FOR_ORDER = 8  # sizes multiplied by this when float atomics agree in every order at the defaults


def fits(ctx, seconds: float) -> bool:
    """Whether a run expected to take ``seconds`` (the default sizes' runs, scaled) ends before the
    detector's deadline: a larger size is the detector's own choice, and its slowness under the
    interpreter must not become a timeout that reads as a hang (P002)."""
    return ctx.budget.deadline is None or ctx.budget.now() + seconds < ctx.budget.deadline


def orders_differ(ctx, sizes: dict) -> tuple[str | None, object]:
    from harness.core.compare import fingerprint

    t = ctx.target
    inputs = X.make(t, sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)
    with ctx.instrument(order="forward", poison_masked=False) as rec:
        ctx.call(X.clone_inputs(inputs), ref=ref)  # autotune tunes here, not below
        base = ctx.call(X.clone_inputs(inputs), ref=ref)
    if base.error is not None:
        return None, base.error
    for order in ORDERS:
        if ctx.late():
            break
        with ctx.instrument(order=order, poison_masked=False):
            c = ctx.call(X.clone_inputs(inputs), ref=ref)
        if c.error is None and fingerprint(c.out) != fingerprint(base.out):
            diff = float((c.out.double() - base.out.double()).abs().nan_to_num(float("inf")).max())
            close = base.cmp["close"] and c.cmp["close"] or _within_rounding(t, base, c)
            return (f"program order {order!r} against in order at {fmt(sizes)}: results differ by up to "
                    f"{diff:.3g}{' (within tolerance of each other)' if close else ''}"), (rec, close)
    return None, rec


def _within_rounding(t, base, c) -> bool:
    """The two orders' results agree within the output's tolerance (to each other, whatever the
    reference says): float atomics' rounding, not a program reading what another writes."""
    import torch

    a, b = base.out, c.out
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.shape != b.shape:
        return False
    rtol, atol = t.tolerance_for(a.dtype, base.ref)
    return bool(torch.isclose(b.double(), a.double(), rtol=rtol, atol=atol, equal_nan=True).all())


def run(ctx) -> list:
    t = ctx.target
    t0 = ctx.budget.now()
    msg, info = orders_differ(ctx, t.sizes)
    if isinstance(info, BaseException):
        return [crash(ctx, info, t.sizes)]
    took = ctx.budget.now() - t0
    rec = info[0] if msg else info
    if msg is None and rec.float_atomics:
        with ctx.budget.until_deadline(SCALED_S.get(ctx.backend)):  # the larger sizes' runs
            for k, v in int_sizes(t.sizes).items():
                if v > 0 and fits(ctx, took * SCALE_FOR_ORDER):
                    got = orders_differ(ctx, {**t.sizes, k: v * SCALE_FOR_ORDER})
                    msg, info = got if got[0] or isinstance(got[1], BaseException) else (msg, info)
                    if msg or isinstance(info, BaseException):
                        break
    if not msg or isinstance(info, BaseException):
        return []
    rec, close = info
    if close:  # the orders agree within the output's tolerance: rounding in another order, not a wrong result
        sev, note = nondeterminism_severity(t)
        how = "float atomics" if rec.float_atomics else "sums in program order (a read-add-write under a lock)"
        return [ctx.finding("P303", f"{how}: {msg}{note}", severity=sev)]
    return [ctx.finding("P302", msg)]


def programs_share_writes(ctx) -> str | None:
    """A skip rule: under the interpreter the programs of a launch run one after another, so their
    order can change the result only through memory one of them writes and another touches (or
    atomics). The race detector, run before this one in its process at the same sizes, records
    those addresses: none, and no atomics, and every order gives the same result."""
    s = ctx.board
    if s.atomics or s.cross_program != 0:
        return None
    return ("no program writes an address that another program of its launch touches, and no atomics "
            "(the race detector's record at the default sizes): every program order gives the same result")


P302 = Code("P302", ERROR, "the result changes with the program order (the grid reversed or shuffled)",
            ("nrm2-race", "sum-reduction-store-race"), sanitize=ERROR, flag="--orders")
P303 = Code("P303", WARNING, "float atomics make the result's bits depend on the program order (not a bug in "
                             "itself)", ("nrm2-atomic-order",), otherwise=NONDETERMINISM, sanitize=WARNING,
            flag="--orders")

DETECTOR = Detector("order", "the grid in other program orders", run, backends=("interpreter",),
                    process={"interpreter": 1}, rank=4, skip=programs_share_writes, codes=(P302, P303))
