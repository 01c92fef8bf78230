"""``reference``: every result against a float64 reference, with the case's rtol/atol."""

from __future__ import annotations

from harness.detectors.base import FLAGGED, QUIET, Detector, Evidence, no_result


class Reference(Detector):
    name = label = "reference"
    what = "compares every result with a float64 reference (rtol/atol from case.toml)"
    yours = "torch.testing.assert_close(out, ref_in_float64) on sizes that are not multiples of the block"
    order = 10

    def check(self, ev: Evidence) -> tuple[str, str]:
        if (r := no_result(ev.run)) is not None:
            return r
        bad = [t for t in ev.run.trials if not t.close]
        if not bad:
            return QUIET, f"all {len(ev.run.trials)} results match the reference"
        worst = max(bad, key=lambda t: (t.max_abs, t.n_bad))
        runs = len({(t.trial, t.call) for t in bad})
        return FLAGGED, f"{runs} of {len(ev.run.trials)} results wrong; call {worst.call + 1}: " \
                        f"{worst.result} (reference {worst.reference})"


DETECTORS = (Reference(),)
