"""``nan-scan``: NaN or Inf where the reference is finite, not counting the harness's own NaN padding."""

from __future__ import annotations

from harness.detectors.base import FLAGGED, QUIET, Detector, Evidence, no_result


class NanScan(Detector):
    name = "nan-scan"
    label = "NaN/Inf scan"
    what = "looks for NaN or Inf where the reference is finite (not counting the harness's own NaN padding)"
    yours = "assert torch.isfinite(out).all()"
    order = 60

    def check(self, ev: Evidence) -> tuple[str, str]:
        if (r := no_result(ev.run)) is not None:
            return r
        nf = max(t.nonfinite for t in ev.run.trials)
        if not nf:
            return QUIET, "no NaN or Inf where the reference is finite"
        probes = ev.run.probes
        if probes and all(p.nonfinite_with_finite_padding == 0 for p in probes):
            return QUIET, f"{nf} NaN outputs, all from the harness's NaN padding (see poison reads)"
        own = max((p.nonfinite_with_finite_padding for p in probes), default=nf)
        return FLAGGED, f"{own} NaN/Inf outputs where the reference is finite"


DETECTORS = (NanScan(),)
