"""Which pictures the report draws, and drawing them (``plots`` does the matplotlib).

Every function draws into the folder it is given and returns the names of the files it
wrote; a picture that cannot be drawn is a warning on stderr, never the end of the report;
one that cannot be written (a full disk) stops it, and the old report stays.
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path

from harness.core.profile import describe_profile
from harness.core.spec import BACKENDS
from harness.core.verdict import Observed

WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EIO, errno.EFBIG}
BACKEND_NAME = {"gpu": "GPU", "interpreter": "interpreter"}


def _draw(draw, path: Path, what: str) -> bool:
    try:
        draw(path)
        return True
    except OSError as e:
        if e.errno in WRITE_ERRORS:  # the report could not be written whole: it is not written at all
            raise
        print(f"warning: {what}: no picture {path.name}: {type(e).__name__}: {e}", file=sys.stderr)
        return False
    except Exception as e:  # a record the picture cannot be drawn from: one picture never stops the report
        print(f"warning: {what}: no picture {path.name}: {type(e).__name__}: {e}", file=sys.stderr)
        return False


def _todo(spec, backend: str, broken: dict, v: dict) -> list[tuple[str, object, str]]:
    """(kind, draw(path), caption) for one wrong or flaky call of the broken kernel."""
    from harness.report import plots

    call, obs, name = v["call"], Observed.parse(v["observed"]), BACKEND_NAME[backend]
    trials = [t for t in broken.get("trials", []) if t["call"] == call - 1]
    if not trials or not (obs.wrong or obs.flaky):
        return []
    where = f"{spec.slug} · broken · {name}" + (f" · call {call}" if spec.calls > 1 else "")
    todo = []
    if obs.flaky:
        todo.append(("spread", lambda p: plots.draw_spread(trials, where, p),
                     f"{name}: the broken kernel's result on each run"))
    if obs.wrong:
        prof = next((p for p in broken.get("profiles", []) if p.get("call") == call - 1), None)
        if prof is not None and prof["n_bad"]:
            todo.append(("errors", lambda p: plots.draw_error_map(prof, where, p),
                         f"{name}: where the output is wrong ({describe_profile(prof)})"))
        elif prof is None and not obs.flaky and plots.scalar_values(trials)[0]:
            todo.append(("scalar", lambda p: plots.draw_scalar(trials, where, p),
                         f"{name}: the broken kernel's result against the reference"))
    return todo


def case_pictures(spec, backend: str, rec: dict | None, img: Path) -> list[tuple[str, str]]:
    """Draw the pictures that say more than the table: (file name, caption) for each."""
    broken = ((rec or {}).get("variants") or {}).get("broken") or {}
    out = []
    for v in broken.get("verdicts", []):
        for kind, draw, caption in _todo(spec, backend, broken, v):
            name = f"{spec.slug}-{backend}-call{v['call']}-{kind}.png"
            if _draw(draw, img / name, spec.slug):
                out.append((name, caption))
    return out


def all_case_pictures(spec, recs: dict, img: Path) -> list[tuple[str, str]]:
    """``case_pictures`` on every backend, in the order of BACKENDS."""
    return [p for b in BACKENDS for p in case_pictures(spec, b, recs.get(b), img)]


def summary_chart(bars: list[tuple[str, dict]], img: Path, name: str = "summary.png") -> str | None:
    """The chart of what each detector caught; its file name, or None when it could not be drawn."""
    from harness.report import plots

    return name if _draw(lambda p: plots.draw_summary(bars, p), img / name, "summary") else None
