"""poison_masked: the masked-off lanes of a ``tl.load`` with no ``other=`` hold poison (NaN, or
the integer type's maximum) instead of the interpreter's 0; ``Recorder.poisoned_loads`` and
``poison_lines`` say where."""

from __future__ import annotations

from harness.run.analyses.base import Analysis, Options, note_line, poison_for


class Poison(Analysis):
    name = __name__.rpartition(".")[2]  # the module's name

    def on(self, options: Options) -> bool:
        return options.poison_masked

    def load(self, rec, ptrs, addrs, mask, other):
        import numpy as np
        from triton.runtime import interpreter as interp

        if other is None and not mask.all():
            dtype_np = interp._get_np_dtype(ptrs.get_element_ty())
            other = interp.TensorHandle(np.full(addrs.shape, poison_for(dtype_np), dtype=dtype_np),
                                        ptrs.get_element_ty())
            rec.poisoned_loads += 1
            note_line(rec.poison_lines)
        return other
