"""The report's Markdown, one function per section; each returns its lines.

``build_markdown`` puts them in order: the header and the runs, the summary (score table
and chart), the matrix, the detectors, the folders left out, and one section per case
(findings, pictures, recorded GPU results, the write-up).
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path

from harness.core import markdown, table
from harness.core.spec import BACKENDS
from harness.detectors import registry as D
from harness.report.pictures import BACKEND_NAME, all_case_pictures, summary_chart

IMG_DIR = "report-img"
GLYPH = {D.FLAGGED: "●", D.QUIET: "○", D.NA: "–", D.NOT_RUN: "?"}
ALARM = "⚠"
GLYPH_CLASS = {GLYPH[D.FLAGGED]: "g-caught", GLYPH[D.QUIET]: "g-missed", ALARM: "g-alarm",
               GLYPH[D.NA]: "g-na", GLYPH[D.NOT_RUN]: "g-notrun"}
VARIANTS = ("broken", "fixed")
WHERE_HEAD = {"both": "<br>GPU · interp.", "gpu": "<br>GPU", "interpreter": "<br>interp.", "across": ""}
WHERE_RUNS = {"both": "both", "gpu": "GPU", "interpreter": "interpreter", "across": "both, compared"}


# --- cells -------------------------------------------------------------------------------------

def _findings(rec: dict | None, variant: str) -> dict:
    return ((rec or {}).get("variants", {}).get(variant) or {}).get("findings", {})


def _status(rec, variant: str, det: str) -> str:
    return _findings(rec, variant).get(det, {}).get("status", D.NOT_RUN)


def _esc(text) -> str:
    """Text for one table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _pct(x) -> str:
    return "—" if x is None else f"{100 * x:.0f}%"


def _where(b: str) -> str:
    return "GPU vs interpreter" if b == "across" else BACKEND_NAME[b]


def _glyph(rec, det: str) -> str:
    return GLYPH.get(_status(rec, "broken", det), "?") + (ALARM if _status(rec, "fixed", det) == D.FLAGGED else "")


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
    text = " / ".join(v["observed"] if v["as_declared"] else f"{v['observed']} (declared {v['expected']})"
                      for v in vs)
    fixed = [v for v in ((rec.get("variants") or {}).get("fixed") or {}).get("verdicts", []) if not v["as_declared"]]
    if fixed:
        text += "; fixed: " + " / ".join(v["observed"] for v in fixed)
    return text


# --- scoring -----------------------------------------------------------------------------------

def score_rows(specs, runs: dict, cross: dict) -> list[tuple[str, str, dict]]:
    """(detector, backend, counts) for each detector on each backend where it runs."""
    rows = []
    for det in D.DETECTORS:
        where = ["across"] if det.where == "across" else [b for b in BACKENDS if D.applies(det, b)]
        for b in where:
            statuses = [(v, cross[s.slug][v]["status"] if b == "across" else _status(runs[s.slug][b], v, det.name))
                        for s in specs for v in VARIANTS]
            c = D.score(statuses)
            if c["tp"] + c["fn"] + c["fp"] + c["tn"]:  # a backend with no runs at all says nothing
                rows.append((det.name, b, c))
    return rows


# --- the sections ------------------------------------------------------------------------------

def header(n_cases: int, now: str) -> list[str]:
    return ["# How would you have caught it? The casebook report", "",
            "<!-- written by python -m harness report; do not edit by hand -->", "",
            f"Generated {now} from {n_cases} cases. Each case's broken and fixed kernel ran on each backend and "
            "went through every detector. A detector **catches** a case when it flags the broken kernel, and "
            "raises a **false alarm** when it flags the fixed one. [docs/detectors.md](detectors.md) says what "
            "each detector does and how to use it on your own kernels.", ""]


def run_lines(runs: dict) -> list[str]:
    """One line per backend and (device, versions, source): where and when the runs were made."""
    lines = []
    for b in BACKENDS:
        groups: dict = {}
        for recs in runs.values():
            rec = recs.get(b)
            if rec and rec.get("env"):
                key = (table.versions(rec["env"]), rec.get("source", ""))
                groups.setdefault(key, []).append(str(rec["env"].get("date", "?")))
        if not groups:
            lines.append(f"- **{BACKEND_NAME[b]}**: no run here and none recorded")
        for (what, source), dates in groups.items():
            when = min(dates) if min(dates) == max(dates) else f"{min(dates)} to {max(dates)}"
            lines.append(f"- **{BACKEND_NAME[b]}**: {what}; {when}; {len(dates)} cases, {source}")
    return ["Runs:", ""] + lines + [""]


def summary(rows: list, img: Path) -> list[str]:
    """The score table, and the chart of it when it can be drawn."""
    L = ["## Summary: what each detector catches", "",
         "Scored the way race-detection benchmarks score their tools: a broken kernel flagged is a true "
         "positive (caught), a broken kernel not flagged a false negative (missed), a fixed kernel flagged a "
         "false positive (false alarm). Detectors that do not apply or could not run are counted apart.", "",
         "| detector | backend | caught | missed | n/a or not run | false alarms | quiet on fixed | recall | precision |",
         "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    L += [_row([D.BY_NAME[n].label, _where(b), c["tp"], c["fn"], c["na"], c["fp"], c["tn"], _pct(c["recall"]),
                _pct(c["precision"])]) for n, b, c in rows]
    bars = [(D.BY_NAME[n].label + ("" if b == "across" else f" ({_where(b)})"), c) for n, b, c in rows]
    if (chart := summary_chart(bars, img)) is not None:
        L += ["", f"![What each detector catches]({IMG_DIR}/{chart})"]
    return L + [""]


def matrix(specs, runs: dict, cross: dict) -> list[str]:
    """One row per case: what the broken kernel did on each backend, and one glyph cell per detector."""
    L = ["## The matrix", "",
         f"{GLYPH[D.FLAGGED]} caught (flags the broken kernel) · {GLYPH[D.QUIET]} missed · {ALARM} false alarm "
         f"(flags the fixed kernel) · {GLYPH[D.NA]} does not apply · {GLYPH[D.NOT_RUN]} not run. Where a detector "
         "runs on both backends the cell reads GPU, then interpreter. The behaviour columns say what the broken "
         "kernel did, call by call.", ""]
    head = ["case", "defect", "GPU", "interpreter"] + [d.label + WHERE_HEAD[d.where] for d in D.DETECTORS]
    L += [_row(head), "|" + "---|" * len(head)]
    for s in specs:
        recs = runs[s.slug]
        cells = [f"[{s.slug}](#{s.slug})", s.defect, _esc(behaviour(s, recs.get("gpu"))),
                 _esc(behaviour(s, recs.get("interpreter")))]
        for d in D.DETECTORS:
            if d.where == "across":
                cells.append(_cross_glyph(cross[s.slug]))
            elif d.where == "both":
                cells.append(f"{_glyph(recs.get('gpu'), d.name)} {_glyph(recs.get('interpreter'), d.name)}")
            else:
                cells.append(_glyph(recs.get(d.where), d.name))
        L.append(_row(cells))
    return L + [""]


def detectors_table() -> list[str]:
    L = ["## The detectors", "", "| detector | runs on | what it checks | on your own kernel |", "|---|---|---|---|"]
    L += [_row([d.label, WHERE_RUNS[d.where], _esc(d.what), _esc(d.yours)]) for d in D.DETECTORS]
    return L + [""]


def left_out(errors: list) -> list[str]:
    """The case folders that are not well-formed yet, one line each."""
    if not errors:
        return []
    return ["Not in this report (the case folder is not well-formed yet):", ""] + [f"- {_esc(e)}" for e in errors] + [""]


# --- one case ----------------------------------------------------------------------------------

def case_intro(spec, recs: dict) -> list[str]:
    return [f"### {spec.slug}", "", f"**{spec.title}**", "", spec.summary, "",
            f"Category `{spec.category}`, defect `{spec.defect}`. Broken on the GPU: "
            f"{behaviour(spec, recs.get('gpu'))}; under the interpreter: {behaviour(spec, recs.get('interpreter'))}. "
            f"[The write-up](../cases/{spec.slug}/README.md).", ""]


def _finding_cell(f: dict | None, variant: str) -> str:
    if not f:
        return "?"
    mark = GLYPH.get(f["status"], "?") if variant == "broken" else (ALARM if f["status"] == D.FLAGGED else "")
    src = f" _({f['source']})_" if f.get("source") else ""
    return _esc(f"{mark} {f['status']}: {f['reason']}{src}".strip())


def case_findings(recs: dict, cross: dict) -> list[str]:
    """Each detector's finding on each backend and variant, then GPU against the interpreter."""
    L = ["| detector | GPU: broken | GPU: fixed | interpreter: broken | interpreter: fixed |", "|---|---|---|---|---|"]
    for det in D.DETECTORS:
        if det.where != "across":  # GPU against the interpreter: the line below
            L.append(_row([det.label] + [_finding_cell(_findings(recs.get(b), v).get(det.name), v)
                                         for b in BACKENDS for v in VARIANTS]))
    return L + ["", f"**GPU against the interpreter**: broken kernel {cross['broken']['status']}: "
                    f"{cross['broken']['reason']}; fixed kernel {cross['fixed']['status']}: {cross['fixed']['reason']}.",
                ""]


def case_pictures_md(pics: list[tuple[str, str]]) -> list[str]:
    return [line for name, caption in pics for line in (f"![{caption}]({IMG_DIR}/{name})", "", f"_{caption}_", "")]


def recorded_gpu(spec) -> str:
    try:
        return (spec.path / "recorded" / "gpu.md").read_text().strip()
    except (OSError, UnicodeDecodeError):
        return f"No GPU run recorded yet (`python -m harness record {spec.slug} --backend gpu`)."


def case_section(spec, recs: dict, cross: dict, pics: list) -> list[str]:
    return (case_intro(spec, recs) + case_findings(recs, cross) + case_pictures_md(pics)
            + ["#### Recorded GPU results", "", recorded_gpu(spec), "", "<details>",
               f"<summary>The write-up: cases/{spec.slug}/README.md</summary>", "", writeup(spec), "", "</details>", ""])


# --- the write-up ------------------------------------------------------------------------------

def _fix_link(url: str, slug: str) -> str:
    """A link of cases/<slug>/README.md, made relative to docs/ (absolute ones and anchors kept)."""
    if re.match(r"^([a-z][a-z0-9+.-]*:|#|/)", url, re.I):
        return url
    parts: list[str] = []
    for p in f"cases/{slug}/{url}".split("/"):
        if p == "..":
            parts = parts[:-1]
        elif p not in (".", ""):
            parts.append(p)
    return "../" + "/".join(parts)


def _fix_links(line: str, slug: str) -> str:
    return re.sub(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)", lambda m: f"[{m.group(1)}]({_fix_link(m.group(2), slug)})", line)


_ATX = re.compile(r"^([ >]*(?:(?:[-+*]|\d+[.)]) +)?)#{1,6}(?=\s|$)")  # maybe inside a quote or a list item
_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)\s*$")


def _shift_headings(lines: list[str], heads: list, by: int) -> list[str]:
    """``lines`` with the title (level 1) dropped and every other heading ``by`` levels down."""
    lines, drop = list(lines), set()
    for h in heads:
        i = h.line - 1
        if m := _ATX.match(lines[i]):
            lines[i] = m.group(1) + "#" * min(6, h.level + by) + lines[i][m.end():]
        else:  # a setext heading: its text (one line or more), then its underline
            j = next((k for k in range(i + 1, len(lines)) if _UNDERLINE.match(lines[k])), i)
            lines[i] = "#" * min(6, h.level + by) + " " + " ".join(x.strip() for x in lines[i:max(j, i + 1)])
            drop.update(range(i + 1, j + 1))
        if h.level == 1:
            drop.add(i)
    return [line for k, line in enumerate(lines) if k not in drop]


def writeup(spec) -> str:
    """The case's README without its title, headings moved three levels down, links made relative to docs/."""
    try:
        text = (spec.path / "README.md").read_text()
    except (OSError, UnicodeDecodeError):
        return "_No write-up._"
    code = markdown.code_lines(text)
    lines = [line if i in code else _fix_links(line, spec.slug) for i, line in enumerate(text.splitlines(), 1)]
    return "\n".join(_shift_headings(lines, markdown.headings(text), 3)).strip()


# --- the page ----------------------------------------------------------------------------------

def build_markdown(specs, runs: dict, errors: list, img: Path) -> str:
    """The whole report; its pictures are drawn into ``img``."""
    from harness.detectors.session import across

    cross = {s.slug: across(runs[s.slug].get("gpu"), runs[s.slug].get("interpreter")) for s in specs}
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    L = header(len(specs), now) + run_lines(runs) + summary(score_rows(specs, runs, cross), img)
    L += matrix(specs, runs, cross) + detectors_table() + left_out(errors) + ["## Cases", ""]
    for s in specs:
        L += case_section(s, runs[s.slug], cross[s.slug], all_case_pictures(s, runs[s.slug], img))
    return "\n".join(L) + "\n"
