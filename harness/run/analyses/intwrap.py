"""int_wrap: every signed add, subtract and multiply of 32 bits or fewer in the kernel's own lines
is checked against the same operation in 64 bits (what TRITON_DEBUG's overflow checks do on a
GPU): a result that differs wrapped. So is every integer shift by as many bits as its type has, or
more (an int32 program id shifted by 48: a poison value in LLVM, none of the value's bits where they
were meant to go): never meant, unlike a shift of bits into or past the sign bit, which packing code does on purpose and is
not checked. ``Recorder.wraps`` holds (line, what) of the first wrap at each line, four lines at
most. Triton's own library code (Philox in ``tl.rand`` wraps by design) is not checked."""

from __future__ import annotations

from harness.run.analyses.base import Analysis, Options, kernel_line

SIGNS = {"add": "+", "subtract": "-", "multiply": "*"}
MOST = 4  # lines recorded: the first one is the diagnosis's evidence


class IntWrap(Analysis):
    name = __name__.rpartition(".")[2]  # the module's name

    def on(self, options: Options) -> bool:
        return options.int_wrap

    def arith(self, rec, op, lhs, rhs, result) -> None:
        import numpy as np

        dt = lhs.dtype.scalar
        if op.endswith("_shift"):
            self._shift(rec, op, lhs, rhs)
            return
        if not (dt.is_int_signed() and dt.primitive_bitwidth <= 32 and len(rec.wraps) < MOST):
            return
        exact = getattr(np, op)(lhs.data.astype(np.int64), rhs.data.astype(np.int64))
        bad = exact != result.data
        if bad.any() and (line := kernel_line(library=False)) and line not in {w[0] for w in rec.wraps}:
            rec.wraps.append((line, f"{dt} {SIGNS[op]} gives {int(result.data[bad].flat[0])} for "
                                    f"{int(exact[bad].flat[0])}"))

    def _shift(self, rec, op, lhs, rhs) -> None:
        """A shift of an integer by its type's width or more: every bit of it shifted past where the type ends."""
        dt = lhs.dtype.scalar
        if not (dt.is_int() and len(rec.wraps) < MOST):
            return
        width = dt.primitive_bitwidth
        past = rhs.data.astype("int64") >= width
        if past.any() and (line := kernel_line(library=False)) and line not in {w[0] for w in rec.wraps}:
            rec.wraps.append((line, f"{dt} {'<<' if op == 'left_shift' else '>>'} {int(rhs.data[past].flat[0])}: "
                                    f"a shift past the {width} bits of its type"))
