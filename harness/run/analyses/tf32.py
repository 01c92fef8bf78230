"""tf32: an fp32 ``tl.dot`` whose ``input_precision`` is TF32 (the default for fp32 on NVIDIA
GPUs) rounds its operands to TF32 (10-bit mantissa, round to nearest, ties away), as the tensor
cores do; "ieee" dots stay exact. ``Recorder.tf32_dots`` and ``dot_lines`` say where."""

from __future__ import annotations

from harness.run.analyses.base import Analysis, Options, note_line


class TF32(Analysis):
    name = __name__.rpartition(".")[2]  # the module's name

    def on(self, options: Options) -> bool:
        return options.tf32

    def dot(self, rec, a, b, input_precision):
        from triton._C.libtriton import ir
        from triton.runtime import interpreter as interp

        if (input_precision == ir.INPUT_PRECISION.TF32 and str(a.dtype.scalar) == "fp32"
                and str(b.dtype.scalar) == "fp32"):
            a = interp.TensorHandle(tf32_round(a.data), a.dtype.scalar)
            b = interp.TensorHandle(tf32_round(b.data), b.dtype.scalar)
            rec.tf32_dots += 1
            note_line(rec.dot_lines)
        return a, b


def tf32_round(a):
    """fp32 values rounded to TF32 (10 mantissa bits), to nearest with ties away from zero."""
    import numpy as np

    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isfinite(a), rounded, a).astype(np.float32)
