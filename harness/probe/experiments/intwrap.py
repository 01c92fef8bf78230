"""An integer that wraps? The failing sizes run once more under the interpreter with every signed
add, subtract and multiply of 32 bits or fewer in the kernel's own lines checked against the
same operation in 64 bits (what TRITON_DEBUG's overflow checks do on a GPU): a result that
differs wrapped, and an index, offset or random-number counter past 2**31 is the mechanism
("debug-assert", at its line, as the GPU's TRITON_DEBUG=1 run reports it), whatever the values
then do. Triton's own library code (Philox in
tl.rand wraps by design) is not checked."""

from __future__ import annotations

import contextlib
import os
import sys

from harness.probe import execute as X
from harness.probe.context import fmt
from harness.probe.experiments import Experiment, outcome

OPS = {"create_add": ("+", "add"), "create_sub": ("-", "subtract"), "create_mul": ("*", "multiply")}


def _kernel_line() -> str | None:
    """file:line of the kernel's own line doing the operation; None inside Triton's library (tl.rand's Philox)."""
    import numpy
    import triton

    from harness.run.interp_instrument import _short

    lang = os.path.join(os.path.dirname(triton.__file__), "language")
    skip = (os.path.dirname(triton.__file__), os.path.dirname(numpy.__file__), __file__)
    f = sys._getframe(2)
    while f is not None:
        name = f.f_code.co_filename
        if name.startswith(lang) and os.path.basename(name) not in ("core.py", "semantic.py"):
            return None
        if not name.startswith(skip):
            return f"{_short(name)}:{f.f_lineno}"
        f = f.f_back
    return None


@contextlib.contextmanager
def checked(hits: list):
    """Signed integer adds, subtracts and multiplies checked in 64 bits; the first wrap of each line in ``hits``."""
    import numpy as np
    from triton.runtime.interpreter import InterpreterBuilder

    from harness.run.patching import Patcher

    originals = {name: getattr(InterpreterBuilder, name) for name in OPS}

    def make(name):
        original, (sign, numpy_name) = originals[name], OPS[name]

        def create(self, lhs, rhs):
            res = original(self, lhs, rhs)
            dt = lhs.dtype.scalar
            if dt.is_int_signed() and dt.primitive_bitwidth <= 32 and len(hits) < 4:
                exact = getattr(np, numpy_name)(lhs.data.astype(np.int64), rhs.data.astype(np.int64))
                bad = exact != res.data
                if bad.any() and (line := _kernel_line()) and line not in {h[0] for h in hits}:
                    hits.append((line, f"{dt} {sign} gives {int(res.data[bad].flat[0])} for "
                                       f"{int(exact[bad].flat[0])}"))
            return res
        return create

    with Patcher() as patcher:
        for name in OPS:
            patcher.setattr(InterpreterBuilder, name, make(name))
        yield hits


def run(ctx, failing: dict) -> dict:
    if ctx.backend != "interpreter" or outcome(ctx, failing)[0] != "wrong" or ctx.late():
        return {}
    try:
        inputs = X.make(ctx.target, failing, ctx.seed, ctx.backend)
    except Exception:  # noqa: BLE001  make_inputs declined these sizes
        return {}
    hits = []
    with checked(hits), ctx.instrument(poison_masked=False, memcheck=True):
        X.call(ctx.target, inputs, backend=ctx.backend, watch=ctx.watch)
    if not hits:
        return {}
    line, what = hits[0]
    return {"debug-assert": f"at {fmt(failing)}: a signed integer wraps at {line} ({what}): an index, offset or "
                        f"counter past the type's range (TRITON_DEBUG's overflow check, emulated)"}


EXPERIMENT = Experiment("intwrap", "a signed integer add, subtract or multiply that wraps?", run, rank=2)
