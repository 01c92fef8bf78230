"""The first signed integer wrap of one launch: the launcher called once at the given inputs with the int wrap
check on (``harness.run.analyses.intwrap``: each signed add, subtract, multiply and shift of 32 bits or fewer in
the kernel's own lines against the same in 64 bits). Shared by the diagnosis's intwrap experiment and the scalars
detector (a wrong value of a launcher argument run once more), so it lives a layer below both."""

from __future__ import annotations

from harness.probe import execute as X


def first_wrap(ctx, inputs: dict) -> tuple | None:
    """(line, what) of the first wrap the launch at ``inputs`` makes, or None (none seen, or a backend that cannot
    watch the kernel's integers). What the launch raises is the caller's to judge."""
    with ctx.instrument(poison_masked=False, memcheck=True, int_wrap=True) as rec:
        X.call(ctx.target, inputs, backend=ctx.backend, watch=ctx.watch)
    return rec.wraps[0] if rec is not None and rec.wraps else None
