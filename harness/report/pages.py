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
import os
import shutil
import sys
import tempfile
from pathlib import Path

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


def _replace(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all: a temporary file beside it, then one rename."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_report(specs, runs: dict, errors: list, out: Path) -> list[Path]:
    """report.md, report.html and report-img/ in ``out``.

    The new pictures are drawn aside, then moved in beside the old ones; report.md is
    replaced after them and the pictures it no longer names are removed last, so an
    interrupted report never leaves report.md naming a picture that is not there.
    """
    img = out / IMG_DIR
    try:
        img.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".report-img-", dir=out))
    except OSError as e:
        raise UsageError(f"cannot write the report into {out}: {error_line(e)}") from None
    try:
        md = build_markdown(specs, runs, errors, staging)
        new = {p.name for p in staging.glob("*.png")}
        for name in sorted(new):
            os.replace(staging / name, img / name)
        _replace(out / "report.md", md)
        written = [out / "report.md"]
        try:
            _replace(out / "report.html", render_html(md, img))
            written.append(out / "report.html")
        except Exception as e:  # the Markdown is written; say why the page is not, in one line
            print(f"error: {out / 'report.html'} not written: {error_line(e)}", file=sys.stderr)
        for old in img.glob("*.png"):
            if old.name not in new:
                old.unlink()
        return written + [img]
    except OSError as e:
        raise UsageError(f"cannot write the report into {out}: {error_line(e)}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
