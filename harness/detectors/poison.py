"""``poison``: inputs sit in NaN padding; a NaN output that goes away with finite padding read past the end."""

from __future__ import annotations

from harness.detectors.base import FLAGGED, QUIET, Detector, Evidence, no_result


class Poison(Detector):
    name = "poison"
    label = "poison reads"
    what = "inputs sit in NaN padding; a NaN output that disappears with finite padding was read past the end"
    yours = "allocate inputs inside a NaN-filled buffer and hand the kernel a view"
    order = 40

    def check(self, ev: Evidence) -> tuple[str, str]:
        if (r := no_result(ev.run)) is not None:
            return r
        for p in ev.run.probes:
            if p.nonfinite_with_finite_padding < p.nonfinite_with_nan_padding:
                return FLAGGED, f"{p.nonfinite_with_nan_padding} NaN outputs came from reading the NaN " \
                                f"padding (call {p.call + 1})"
        if ev.run.probes:
            return QUIET, "non-finite outputs, but not from the padding"
        return QUIET, "no output traced to the padding"


DETECTORS = (Poison(),)
