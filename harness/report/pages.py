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
that read the main run's events. Each run is labelled with its device, versions and
date, and with whether it ran now or was recorded.
"""

from __future__ import annotations

import base64
import datetime
import re
import sys
from pathlib import Path

from harness.detectors import base as D
from harness.core import table
from harness.core.spec import BACKENDS

IMG_DIR = "report-img"
GLYPH = {D.FLAGGED: "●", D.QUIET: "○", D.NA: "–", D.NOT_RUN: "?"}
ALARM = "⚠"
BACKEND_NAME = {"gpu": "GPU", "interpreter": "interpreter"}


# --- gathering runs ------------------------------------------------------------------------

def gather(specs, live: dict) -> dict:
    """{slug: {backend: record or None}}: this run's, else the recorded ones, each with a 'source'."""
    from harness.detectors.session import from_case_record, load_record

    out = {}
    for spec in specs:
        recs = {}
        for b in BACKENDS:
            rec = live.get(spec.slug, {}).get(b)
            if rec is not None:
                rec["source"] = "this run"
            elif (rec := load_record(spec, b)) is not None:
                rec["source"] = "recorded by python -m harness detect --record"
            elif (rec := from_case_record(spec, b)) is not None:
                rec["source"] = "recorded by python -m harness record (no detector runs)"
            recs[b] = rec
        out[spec.slug] = recs
    return out


def _findings(rec: dict | None, variant: str) -> dict:
    return ((rec or {}).get("variants", {}).get(variant) or {}).get("findings", {})


def _status(rec, variant: str, det: str) -> str:
    return _findings(rec, variant).get(det, {}).get("status", D.NOT_RUN)


# --- scoring -------------------------------------------------------------------------------

def score_rows(specs, runs: dict, cross: dict) -> list[tuple[str, str, dict]]:
    """(detector, backend, counts) for each detector on each backend where it runs."""
    rows = []
    for det in D.DETECTORS:
        where = ["across"] if det.where == "across" else [b for b in BACKENDS if D.applies(det, b)]
        for b in where:
            statuses = []
            for spec in specs:
                for variant in ("broken", "fixed"):
                    if b == "across":
                        statuses.append((variant, cross[spec.slug][variant]["status"]))
                    else:
                        statuses.append((variant, _status(runs[spec.slug][b], variant, det.name)))
            c = D.score(statuses)
            if c["tp"] + c["fn"] + c["fp"] + c["tn"]:  # a backend with no runs at all says nothing
                rows.append((det.name, b, c))
    return rows


def _pct(x) -> str:
    return "—" if x is None else f"{100 * x:.0f}%"


def _where(b: str) -> str:
    return "GPU vs interpreter" if b == "across" else BACKEND_NAME[b]


# --- pictures ------------------------------------------------------------------------------

def case_pictures(spec, backend: str, rec: dict | None, img: Path) -> list[tuple[str, str]]:
    """Draw the pictures that say more than the table: (file name, caption) for each."""
    from harness.report import plots

    broken = ((rec or {}).get("variants") or {}).get("broken") or {}
    out = []
    for v in broken.get("verdicts", []):
        call = v["call"]
        trials = [t for t in broken.get("trials", []) if t["call"] == call - 1]
        obs = v["observed"]
        if not trials or not ("wrong" in obs or "flaky" in obs):
            continue
        where = f"{spec.slug} · broken · {BACKEND_NAME[backend]}" + (f" · call {call}" if spec.calls > 1 else "")
        stem = f"{spec.slug}-{backend}-call{call}"
        todo = []
        if "flaky" in obs:
            todo.append(("spread", lambda p, t=trials: plots.draw_spread(t, where, p),
                         f"{BACKEND_NAME[backend]}: the broken kernel's result on each run"))
        if "wrong" in obs:
            prof = next((p for p in broken.get("profiles", []) if p.get("call") == call - 1), None)
            if prof is not None and prof["n_bad"]:
                todo.append(("errors", lambda p, pr=prof: plots.draw_error_map(pr, where, p),
                             f"{BACKEND_NAME[backend]}: where the output is wrong ({plots.describe_profile(prof)})"))
            elif prof is None and "flaky" not in obs and plots.scalar_values(trials)[0]:
                todo.append(("scalar", lambda p, t=trials: plots.draw_scalar(t, where, p),
                             f"{BACKEND_NAME[backend]}: the broken kernel's result against the reference"))
        for kind, draw, caption in todo:
            name = f"{stem}-{kind}.png"
            try:
                draw(img / name)
            except Exception as e:  # one picture never stops the report
                print(f"warning: {spec.slug}: no {kind} picture: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            out.append((name, caption))
    return out


# --- the Markdown ----------------------------------------------------------------------------

def _esc(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _glyph(rec, det: str) -> str:
    g = GLYPH.get(_status(rec, "broken", det), "?")
    return g + (ALARM if _status(rec, "fixed", det) == D.FLAGGED else "")


def _cross_glyph(c: dict) -> str:
    return GLYPH.get(c["broken"]["status"], "?") + (ALARM if c["fixed"]["status"] == D.FLAGGED else "")


def behaviour(spec, rec: dict | None) -> str:
    """What the broken kernel did on a backend, call by call, and whether the fixed one was ok."""
    if not rec:
        return "not run"
    b = (rec.get("variants") or {}).get("broken") or {}
    vs = b.get("verdicts", [])
    if not vs:
        return f"not run ({b.get('message', '')})" if b.get("status") == "error" else "not run"
    parts = []
    for v in vs:
        text = v["observed"] if v["as_declared"] else f"{v['observed']} (declared {v['expected']})"
        parts.append(text)
    text = " / ".join(parts)
    fixed = [v for v in ((rec.get("variants") or {}).get("fixed") or {}).get("verdicts", []) if not v["as_declared"]]
    if fixed:
        text += "; fixed: " + " / ".join(v["observed"] for v in fixed)
    return text


def run_lines(runs: dict) -> list[str]:
    """One line per backend and (device, versions, source): where and when the runs were made."""
    lines = []
    for b in BACKENDS:
        groups: dict = {}
        for recs in runs.values():
            rec = recs.get(b)
            if not rec or not rec.get("env"):
                continue
            e = rec["env"]
            key = (table.versions(e), rec.get("source", ""))
            groups.setdefault(key, []).append(str(e.get("date", "?")))
        if not groups:
            lines.append(f"- **{BACKEND_NAME[b]}**: no run here and none recorded")
        for (what, source), dates in groups.items():
            when = min(dates) if min(dates) == max(dates) else f"{min(dates)} to {max(dates)}"
            lines.append(f"- **{BACKEND_NAME[b]}**: {what}; {when}; {len(dates)} cases, {source}")
    return lines


def _fix_links(text: str, slug: str) -> str:
    """Relative links of a case's README, made relative to docs/."""
    def fix(m):
        label, url = m.group(1), m.group(2)
        if re.match(r"^([a-z]+:|#|/)", url):
            return m.group(0)
        parts = []
        for p in f"cases/{slug}/{url}".split("/"):
            if p == "..":
                parts.pop() if parts else None
            elif p not in (".", ""):
                parts.append(p)
        return f"[{label}](../{'/'.join(parts)})"

    return re.sub(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)", fix, text)


def writeup(spec) -> str:
    """The case's README without its title, headings moved three levels down."""
    try:
        text = (spec.path / "README.md").read_text()
    except OSError:
        return "_No write-up._"
    lines, out, fence = text.splitlines(), [], False
    for line in lines:
        if line.strip().startswith(("```", "~~~")):
            fence = not fence
        if not fence and (m := re.match(r"^(#{1,6})(\s.*)$", line)):
            if len(m.group(1)) == 1:
                continue
            line = "#" * min(6, len(m.group(1)) + 3) + m.group(2)
        out.append(line)
    return _fix_links("\n".join(out).strip(), spec.slug)


def recorded_gpu(spec) -> str:
    try:
        return (spec.path / "recorded" / "gpu.md").read_text().strip()
    except OSError:
        return f"No GPU run recorded yet (`python -m harness record {spec.slug} --backend gpu`)."


def case_section(spec, recs: dict, cross: dict, pics: list) -> list[str]:
    L = [f"### {spec.slug}", "", f"**{spec.title}**", "", spec.summary, "",
         f"Category `{spec.category}`, defect `{spec.defect}`. Broken on the GPU: "
         f"{behaviour(spec, recs.get('gpu'))}; under the interpreter: {behaviour(spec, recs.get('interpreter'))}. "
         f"[The write-up](../cases/{spec.slug}/README.md).", ""]
    L += ["| detector | GPU: broken | GPU: fixed | interpreter: broken | interpreter: fixed |",
          "|---|---|---|---|---|"]
    for det in D.DETECTORS:
        if det.check is None:
            continue
        cells = []
        for b in BACKENDS:
            for variant in ("broken", "fixed"):
                f = _findings(recs.get(b), variant).get(det.name)
                if not f:
                    cells.append("?")
                    continue
                mark = GLYPH.get(f["status"], "?") if variant == "broken" else (
                    ALARM if f["status"] == D.FLAGGED else "")
                src = f" _({f['source']})_" if f.get("source") else ""
                cells.append(_esc(f"{mark} {f['status']}: {f['reason']}{src}".strip()))
        L.append(f"| {det.label} | " + " | ".join(cells) + " |")
    L += ["", f"**GPU against the interpreter**: broken kernel {cross['broken']['status']}: "
              f"{cross['broken']['reason']}; fixed kernel {cross['fixed']['status']}: {cross['fixed']['reason']}.", ""]
    for name, caption in pics:
        L += [f"![{caption}]({IMG_DIR}/{name})", "", f"_{caption}_", ""]
    L += ["#### Recorded GPU results", "", recorded_gpu(spec), "",
          "<details>", f"<summary>The write-up: cases/{spec.slug}/README.md</summary>", "", writeup(spec), "",
          "</details>", ""]
    return L


def build_markdown(specs, runs: dict, errors: list, img: Path) -> str:
    from harness.detectors.session import across

    cross = {s.slug: across(runs[s.slug].get("gpu"), runs[s.slug].get("interpreter")) for s in specs}
    rows = score_rows(specs, runs, cross)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    L = ["# How would you have caught it? The casebook report", "",
         "<!-- written by python -m harness report; do not edit by hand -->", "",
         f"Generated {now} from {len(specs)} cases. Each case's broken and fixed kernel ran on each backend and "
         "went through every detector. A detector **catches** a case when it flags the broken kernel, and raises "
         "a **false alarm** when it flags the fixed one. [docs/detectors.md](detectors.md) says what each "
         "detector does and how to use it on your own kernels.", "", "Runs:", ""]
    L += run_lines(runs)
    L += ["", "## Summary: what each detector catches", "",
          "Scored the way race-detection benchmarks score their tools: a broken kernel flagged is a true "
          "positive (caught), a broken kernel not flagged a false negative (missed), a fixed kernel flagged a "
          "false positive (false alarm). Detectors that do not apply or could not run are counted apart.", "",
          "| detector | backend | caught | missed | n/a or not run | false alarms | quiet on fixed | recall | precision |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, b, c in rows:
        L.append(f"| {D.BY_NAME[name].label} | {_where(b)} | {c['tp']} | {c['fn']} | {c['na']} | {c['fp']} | "
                 f"{c['tn']} | {_pct(c['recall'])} | {_pct(c['precision'])} |")
    try:
        from harness.report import plots

        plots.draw_summary([(D.BY_NAME[n].label + ("" if b == "across" else f" ({_where(b)})"), c)
                            for n, b, c in rows], img / "summary.png")
        L += ["", f"![What each detector catches]({IMG_DIR}/summary.png)"]
    except Exception as e:
        print(f"warning: no summary chart: {type(e).__name__}: {e}", file=sys.stderr)

    L += ["", "## The matrix", "",
          f"{GLYPH[D.FLAGGED]} caught (flags the broken kernel) · {GLYPH[D.QUIET]} missed · {ALARM} false alarm "
          f"(flags the fixed kernel) · {GLYPH[D.NA]} does not apply · {GLYPH[D.NOT_RUN]} not run. Where a detector "
          "runs on both backends the cell reads GPU, then interpreter. The behaviour columns say what the broken "
          "kernel did, call by call.", ""]
    dets = D.DETECTORS
    head = ["case", "defect", "GPU", "interpreter"]
    for d in dets:
        head.append(d.label + {"both": "<br>GPU · interp.", "gpu": "<br>GPU", "interpreter": "<br>interp.",
                               "across": ""}[d.where])
    L += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in specs:
        recs = runs[s.slug]
        cells = [f"[{s.slug}](#{s.slug})", s.defect, _esc(behaviour(s, recs.get("gpu"))),
                 _esc(behaviour(s, recs.get("interpreter")))]
        for d in dets:
            if d.where == "across":
                cells.append(_cross_glyph(cross[s.slug]))
            elif d.where == "both":
                cells.append(f"{_glyph(recs.get('gpu'), d.name)} {_glyph(recs.get('interpreter'), d.name)}")
            else:
                cells.append(_glyph(recs.get(d.where), d.name))
        L.append("| " + " | ".join(cells) + " |")
    L += ["", "## The detectors", "", "| detector | runs on | what it checks | on your own kernel |", "|---|---|---|---|"]
    for d in dets:
        where = {"both": "both", "gpu": "GPU", "interpreter": "interpreter", "across": "both, compared"}[d.where]
        L.append(f"| {d.label} | {where} | {_esc(d.what)} | {_esc(d.yours)} |")
    if errors:
        L += ["", "Not in this report (the case folder is not well-formed yet):", ""] + [f"- {_esc(e)}" for e in errors]
    L += ["", "## Cases", ""]
    for s in specs:
        pics = []
        for b in BACKENDS:
            pics += case_pictures(s, b, runs[s.slug].get(b), img)
        L += case_section(s, runs[s.slug], cross[s.slug], pics)
    return "\n".join(L) + "\n"


# --- the HTML ----------------------------------------------------------------------------------

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1280px; margin: 2em auto;
       padding: 0 1.5em; color: #1c2833; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 12px; }
th, td { border: 1px solid #d5d8dc; padding: 3px 7px; vertical-align: top; }
th { background: #f2f4f4; }
pre { background: #f8f9f9; border: 1px solid #e5e8e8; padding: 0.6em; overflow-x: auto; font-size: 12px; }
code { font-size: 12px; } img { max-width: 100%; }
details { margin: 0.5em 0 1.5em; } summary { cursor: pointer; color: #2e86c1; }
h3 { border-top: 2px solid #d5d8dc; padding-top: 1em; margin-top: 2em; }
.add { color: #1e8449; } .del { color: #c0392b; }
.g { font-size: 15px; } .g-caught { color: #1e8449; } .g-missed { color: #aab7b8; } .g-alarm { color: #c0392b; }
.g-na { color: #d5d8dc; } .g-notrun { color: #b9770e; }
"""
_GLYPH_CLASS = {"●": "g-caught", "○": "g-missed", ALARM: "g-alarm", "–": "g-na", "?": "g-notrun"}


def _decorate(html: str) -> str:
    """Colour the matrix: cells made only of glyphs get one span per glyph."""
    def cell(m):
        spans = "".join(f'<span class="g {_GLYPH_CLASS[c]}">{c}</span>' if c in _GLYPH_CLASS else c
                        for c in m.group(1))
        return f"<td>{spans}</td>"

    return re.sub(r"<td>([●○⚠–? ]+)</td>", cell, html)


def write_html(md: str, out: Path) -> Path:
    from harness.report.mdhtml import to_html

    def inline_image(src: str) -> str:
        p = out / src
        if src.startswith(("http:", "https:", "data:")) or not p.is_file():
            return src
        return "data:image/png;base64," + base64.b64encode(p.read_bytes()).decode()

    page = to_html(md, title="The Triton Misadventures Casebook: report", css=CSS, image_src=inline_image)
    path = out / "report.html"
    path.write_text(_decorate(page))
    return path


def write_report(specs, runs: dict, errors: list, out: Path) -> list[Path]:
    img = out / IMG_DIR
    img.mkdir(parents=True, exist_ok=True)
    for old in img.glob("*.png"):
        old.unlink()
    md = build_markdown(specs, runs, errors, img)
    md_path = out / "report.md"
    md_path.write_text(md)
    try:
        html_path = write_html(md, out)
    except Exception as e:  # the Markdown is written; say why the page is not, in one line
        print(f"error: {out / 'report.html'} not written: {type(e).__name__}: {e}", file=sys.stderr)
        return [md_path, img]
    return [md_path, html_path, img]
