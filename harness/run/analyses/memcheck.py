"""memcheck: every active lane of a ``tl.load``, ``tl.store`` and atomic is checked against the
bounds of the tensor argument its pointer was computed from (the pointer's tag, ``TAG``; an
untagged pointer must fall inside some tensor argument). An out-of-bounds lane is recorded
(``Recorder.oob``: tensor, side, distance in elements, program id, kernel source line) and not
performed: a load gets poison (``Options.oob_poison``) or the interpreter's other/0, a store is
dropped."""

from __future__ import annotations

from harness.run.analyses.base import (KIND_NAMES, TAG, Analysis, Options, Recorder, kernel_line, mask_data,
                                       pid_text, poison_for)


class Memcheck(Analysis):
    name = __name__.rpartition(".")[2]  # the module's name

    def on(self, options: Options) -> bool:
        return options.memcheck

    def access(self, rec, ptrs, addrs, mask, kind):
        return check_lanes(rec, ptrs, addrs, mask, kind)

    def loaded(self, rec, asked, mask, got):
        import numpy as np

        if rec.options.oob_poison:  # the lanes memcheck took out of the mask read poison
            outside = np.broadcast_to(np.asarray(mask_data(asked), dtype=bool), mask.shape) & ~mask
            if outside.any():
                got.data[outside] = poison_for(got.data.dtype)
        return got


def check_lanes(rec: Recorder, ptrs, addrs, m, kind: int):
    """The active lanes ``m`` at ``addrs`` with the out-of-bounds ones removed (and recorded)."""
    import numpy as np

    launch = rec.current
    if launch is None or not launch.spans:
        return m
    size = max(1, ptrs.get_element_ty().primitive_bitwidth // 8)
    name = ptrs.attr.get(TAG)
    a = addrs.astype(np.int64)
    if name in launch.spans:
        s = launch.spans[name]
        bad = m & ((a < s.lo) | (a + size > s.hi))
    else:
        inside = np.zeros(a.shape, dtype=bool)
        for s in launch.spans.values():
            inside |= (a >= s.lo) & (a + size <= s.hi)
        bad = m & ~inside
    if bad.any():
        _record_oob(rec, a[bad], name, kind)
        m = m & ~bad
    return m


def _record_oob(rec: Recorder, bad_addrs, name, kind: int) -> None:
    spans = rec.current.spans
    s = spans.get(name) or min(spans.values(), key=lambda sp: min(abs(int(bad_addrs[0]) - sp.lo),
                                                                 abs(int(bad_addrs[0]) - sp.hi)))
    before = bad_addrs < s.lo
    line = kernel_line()
    for side, sel in (("before the start", before), ("past the end", ~before)):
        if not sel.any():
            continue
        far = int((s.lo - bad_addrs[sel].min()) if side == "before the start" else (bad_addrs[sel].max() - s.hi))
        key = (KIND_NAMES[kind], s.name if name in spans else f"{s.name}?", side, line)
        hit = rec.oob.setdefault(key, {"lanes": 0, "elements": 0, "pid": pid_text(rec.pid()),
                                       "kernel": rec.current.kernel, "itemsize": s.itemsize, "span": (s.lo, s.hi)})
        hit["lanes"] += int(sel.sum())
        hit["elements"] = max(hit["elements"], far // s.itemsize + (1 if side == "past the end" else 0))
