"""``python -m harness report``: the casebook report, as Markdown and as one HTML page.

It runs every case on every backend this machine has, through every detector
(``harness.detect``), and writes

- ``docs/report.md``: the summary figures, the matrix of cases × (behaviour on each
  backend, detectors), and for each case its findings, pictures, recorded GPU
  results and write-up;
- ``docs/report.html``: the same page standing alone (pictures inlined as data URIs);
- ``docs/report-img/*.png``: the pictures (error maps, spreads, the summary chart).

A backend it cannot run here (the GPU, on a laptop) comes from the case's recorded
runs: ``recorded/detect-<backend>.json`` (``python -m harness detect --record``), else
``recorded/<backend>.json`` (``python -m harness record``), which gives the detectors
that read the main run's events; the probe's columns come from
``recorded/probe-<backend>.json`` (``python examples/probe_cases.py --record``). Each run is
labelled with its device, versions and date, and with whether it ran now or was recorded.
A record that is missing, or older than the case files it describes, is stale
(``harness.report.records``): the command stops and names the refresh, unless
``--allow-stale`` asks for a draft with those cells marked.
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

from harness.core import fileio
from harness.errors import UsageError, error_line
from harness.report import htmlpage
from harness.report.records import gather, stale_cases  # noqa: F401  (the command's entry points)
from harness.report.sections import GLYPH_CLASS, IMG_DIR, build_markdown

TITLE = "The Triton Misadventures Casebook: report"


def render_html(md: str, img: Path) -> str:
    """The page standing alone: each picture under ``img`` inlined as a data URI."""
    def inline_image(src: str) -> str:
        p = img / src.removeprefix(IMG_DIR + "/")
        if not src.startswith(IMG_DIR + "/") or not p.is_file():
            return src
        return "data:image/png;base64," + base64.b64encode(p.read_bytes()).decode()

    return htmlpage.page(md, title=TITLE, image_src=inline_image, glyph_class=GLYPH_CLASS)


def write_report(specs, runs: dict, errors: list, out: Path) -> list[Path]:
    """report.md, report.html and report-img/ in ``out``, as one set.

    All three are made in a temporary folder inside ``out`` (pictures, page, HTML), then
    renamed over the old ones together (``fileio.replace_together``): a full disk, an
    interrupt or a failure while drawing leaves the old set as it was, whole.
    """
    names = ("report.md", "report.html", IMG_DIR)
    try:
        out.mkdir(parents=True, exist_ok=True)
        staging = fileio.new_temp_folder(out, ".report-new-")
    except OSError as e:
        raise UsageError(f"cannot write the report into {out}: {error_line(e)}") from None
    try:
        (staging / IMG_DIR).mkdir()
        (staging / "old").mkdir()
        md = build_markdown(specs, runs, errors, staging / IMG_DIR)
        fileio.write_together({staging / "report.md": md, staging / "report.html": render_html(md, staging / IMG_DIR)})
        fileio.replace_together({staging / n: out / n for n in names}, staging / "old")
    except Exception as e:  # nothing of the new set is in place: the old report stays whole
        raise UsageError(f"report not written into {out} (the one there is unchanged): {error_line(e)}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / n for n in names]
