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
from harness.probe import cases as D
from harness.report.columns import Column, across_cell, backends_of, cell, columns, elsewhere
from harness.report.pictures import BACKEND_NAME, all_case_pictures, summary_chart
from harness.report.records import PROBE, STALE, probe_backends, stale_cases, unreadable

IMG_DIR = "report-img"
GLYPH = {D.FLAGGED: "●", D.QUIET: "○", D.NA: "–", D.NOT_RUN: "✗", STALE: "↻"}
ALARM = "⚠"
GLYPH_CLASS = {GLYPH[D.FLAGGED]: "g-caught", GLYPH[D.QUIET]: "g-missed", ALARM: "g-alarm",
               GLYPH[D.NA]: "g-na", GLYPH[D.NOT_RUN]: "g-notrun", GLYPH[STALE]: "g-stale"}
VARIANTS = ("broken", "fixed")
WHERE_HEAD = {"both": "<br>GPU · interp.", "gpu": "<br>GPU", "interpreter": "<br>interp.", "across": ""}
WHERE_RUNS = {"both": "both", "gpu": "GPU", "interpreter": "interpreter", "across": "both, compared"}


# --- cells -------------------------------------------------------------------------------------

def _cell(spec, recs: dict, cross: dict, col: Column, backend: str, variant: str) -> dict:
    """One finding: the column's on ``backend`` ("across": GPU against the interpreter)."""
    if col.where == "across":
        return across_cell(cross, recs, variant)
    return cell(spec, recs, col, backend, variant)


def _esc(text) -> str:
    """Text for one table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _pct(x) -> str:
    return "—" if x is None else f"{100 * x:.0f}%"


def _where(b: str) -> str:
    return "GPU vs interpreter" if b == "across" else BACKEND_NAME[b]


def _glyph(broken: dict, fixed: dict) -> str:
    if STALE in (broken["status"], fixed["status"]):
        return GLYPH[STALE]
    return GLYPH.get(broken["status"], "?") + (ALARM if fixed["status"] == D.FLAGGED else "")


def _glyphs(spec, recs: dict, cross: dict, col: Column) -> str:
    """The matrix cell: one glyph per backend the column runs on (GPU first)."""
    where = backends_of(col) or ["across"]
    return " ".join(_glyph(*(_cell(spec, recs, cross, col, b, v) for v in VARIANTS)) for b in where)


def behaviour(spec, rec: dict | None) -> str:
    """What the broken kernel did on a backend, call by call, and whether the fixed one was ok."""
    if not rec:
        return f"{GLYPH[STALE]} no record"
    if rec.get("unreadable"):
        return f"{GLYPH[STALE]} {rec['stale']}"
    text = _behaviour(rec)
    return f"{GLYPH[STALE]} stale (recorded: {text})" if rec.get("stale") else text


def _behaviour(rec: dict) -> str:
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

def score_rows(specs, runs: dict, cross: dict, cols: list) -> list[tuple[Column, str, dict]]:
    """(column, backend, counts) for each column on each backend where it runs; the broken kernels
    that give no verdict are counted by why: n/a, not run (a tool failed) or stale."""
    rows = []
    for col in cols:
        for b in backends_of(col) or ["across"]:
            statuses = [(v, _cell(s, runs[s.slug], cross[s.slug], col, b, v)["status"]) for s in specs for v in VARIANTS]
            c = D.score(statuses)
            for st in (D.NA, D.NOT_RUN, STALE):
                c[st] = sum(1 for v, x in statuses if v == "broken" and x == st)
            rows.append((col, b, c))
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
    keys = list(BACKENDS) + sorted({k for recs in runs.values() for k in recs if k.startswith(PROBE)})
    for b in keys:
        name = BACKEND_NAME[b] if b in BACKEND_NAME else f"probe, {BACKEND_NAME[b.removeprefix(PROBE)]}"
        groups: dict = {}
        for recs in runs.values():
            rec = recs.get(b)
            if rec and rec.get("env"):
                key = (table.versions(rec["env"]), rec.get("source", ""), "stale" if rec.get("stale") else "")
                groups.setdefault(key, []).append(str(rec["env"].get("date", "?")))
        if not groups:
            lines.append(f"- **{name}**: no run here and none recorded")
        for (what, source, stale), dates in groups.items():
            when = min(dates) if min(dates) == max(dates) else f"{min(dates)} to {max(dates)}"
            lines.append(f"- **{name}**: {what}; {when}; {len(dates)} cases, {source}"
                         + (" (**stale**: the case files changed since, or the record keeps no hashes)" if stale else ""))
    return ["Runs:", ""] + lines + [""]


def stale_note(specs, runs: dict) -> list[str]:
    """A draft's warning: which records are stale, and how to refresh them."""
    from harness.report.records import refresh_line

    stale = stale_cases(specs, runs)
    if not stale:
        return []
    return [f"> **Draft**, its stale cells marked: {_esc(refresh_line(stale, specs))}.", ""]


def summary(rows: list, img: Path) -> list[str]:
    """The score table, and the chart of it when it can be drawn."""
    L = ["## Summary: what each detector catches", "",
         "Scored the way race-detection benchmarks score their tools: a broken kernel flagged is a true "
         "positive (caught), a broken kernel not flagged a false negative (missed), a fixed kernel flagged a "
         "false positive (false alarm). Broken kernels a detector does not apply to (n/a), could not run on (a "
         "tool failed) or whose record is stale or older than the detector are counted apart; each case's "
         "findings say why.", ""]
    stale = any(c[STALE] for _, _, c in rows)
    head = ["detector", "backend", "caught", "missed", "n/a", "not run"] + (["stale"] if stale else []) + [
        "false alarms", "quiet on fixed", "recall", "precision"]
    L += [_row(head), "|---|---|" + "---:|" * (len(head) - 2)]
    L += [_row([col.label, _where(b), c["tp"], c["fn"], c[D.NA], c[D.NOT_RUN]] + ([c[STALE]] if stale else [])
               + [c["fp"], c["tn"], _pct(c["recall"]), _pct(c["precision"])])
          for col, b, c in rows if c["tp"] + c["fn"] + c["fp"] + c["tn"] + c[D.NOT_RUN] + c[STALE]]
    bars = [(col.label + ("" if b == "across" else f" ({_where(b)})"), c) for col, b, c in rows
            if c["tp"] + c["fn"] + c["fp"] + c["tn"]]
    if bars and (chart := summary_chart(bars, img)) is not None:
        L += ["", f"![What each detector catches]({IMG_DIR}/{chart})"]
    return L + [""]


def legend(rows: list) -> str:
    """The glyphs, each named only where some cell shows it."""
    seen = {st for _, _, c in rows for st in (D.NOT_RUN, STALE) if c[st]}
    text = (f"{GLYPH[D.FLAGGED]} caught (flags the broken kernel) · {GLYPH[D.QUIET]} missed · {ALARM} false alarm "
            f"(flags the fixed kernel) · {GLYPH[D.NA]} does not apply (the case's findings say why)")
    if D.NOT_RUN in seen:
        text += (f" · {GLYPH[D.NOT_RUN]} the tool itself failed on this kernel: it crashed or ran out of time "
                 "(the case's findings quote its error)")
    if STALE in seen:
        text += (f" · {GLYPH[STALE]} stale: the record is missing or older than the kernel (a draft: "
                 "`report --allow-stale`), or older than the detector (not in this record: the cell says the "
                 "command that remakes it)")
    return text + "."


def applies_somewhere(specs, runs: dict, cross: dict, col: Column) -> bool:
    """Whether some case has a cell in ``col`` that is not n/a (a column of n/a only says nothing)."""
    return any(_cell(s, runs[s.slug], cross[s.slug], col, b, v)["status"] != D.NA
               for s in specs for b in backends_of(col) or ["across"] for v in VARIANTS)


def matrix(specs, runs: dict, cross: dict, cols: list, rows: list) -> list[str]:
    """One row per case: what the broken kernel did on each backend, and one glyph cell per column that
    applies to some case (the others are named under the table)."""
    shown = [c for c in cols if applies_somewhere(specs, runs, cross, c)]
    idle = [c.label for c in cols if c not in shown]
    L = ["## The matrix", "",
         legend(rows) + " Where a detector runs on both backends the cell reads GPU, then interpreter. The "
         "behaviour columns say what the broken kernel did, call by call. The probe's columns come from "
         "`python examples/probe_cases.py --record` (`harness.probe` on each case's broken and fixed kernel).", ""]
    cols = shown
    head = ["case", "defect", "GPU", "interpreter"] + [c.label + WHERE_HEAD[c.where] for c in cols]
    L += [_row(head), "|" + "---|" * len(head)]
    for s in specs:
        recs = runs[s.slug]
        cells = [f"[{s.slug}](#{s.slug})", s.defect, _esc(behaviour(s, recs.get("gpu"))),
                 _esc(behaviour(s, recs.get("interpreter")))]
        L.append(_row(cells + [_glyphs(s, recs, cross[s.slug], c) for c in cols]))
    if idle:
        L += ["", f"Not in the matrix, as they apply to no case here (the case sections say why): {', '.join(idle)}."]
    return L + [""]


def detectors_table(cols: list) -> list[str]:
    L = ["## The detectors", "", "| detector | runs on | what it checks | on your own kernel |", "|---|---|---|---|"]
    L += [_row([c.label, WHERE_RUNS[c.where], _esc(c.what), _esc(c.yours)]) for c in cols]
    return L + [""]


def left_out(errors: list, runs: dict) -> list[str]:
    """The case folders that are not well-formed yet, and the records that cannot be read, one line each."""
    L = ["Not in this report (the case folder is not well-formed yet):", ""] + [f"- {_esc(e)}" for e in errors] + [""]
    bad = unreadable(runs)
    L2 = ["Records that cannot be read (their cells say why; the command that wrote them writes them anew):", ""]
    return (L if errors else []) + (L2 + [f"- {_esc(e)}" for e in bad] + [""] if bad else [])


# --- one case ----------------------------------------------------------------------------------

def case_intro(spec, recs: dict) -> list[str]:
    return [f"### {spec.slug}", "", f"**{spec.title}**", "", spec.summary, "",
            f"Category `{spec.category}`, defect `{spec.defect}`. Broken on the GPU: "
            f"{behaviour(spec, recs.get('gpu'))}; under the interpreter: {behaviour(spec, recs.get('interpreter'))}. "
            f"[The write-up](../cases/{spec.slug}/README.md).", ""] + stale_lines(spec, recs)


def stale_lines(spec, recs: dict) -> list[str]:
    """Each stale or missing record of the case, and why (a draft only: the command refuses otherwise)."""
    from harness.report.records import probe_skip

    why = [f"{k}: {r['stale'] if r else 'no record'}" for k, r in recs.items()
           if (not r or r.get("stale")) and not (k.startswith(PROBE) and probe_skip(spec, k.removeprefix(PROBE)))]
    return [f"**Stale records** ({GLYPH[STALE]}, not shown as results): {_esc('; '.join(why))}.", ""] if why else []


def _finding_cell(f: dict | None, variant: str) -> str:
    if not f:
        return "?"
    mark = GLYPH.get(f["status"], "?") if variant == "broken" else (ALARM if f["status"] == D.FLAGGED else "")
    src = f" _({f['source']})_" if f.get("source") else ""
    return _esc(f"{mark} {f['status']}: {f['reason']}{src}".strip())


def case_findings(spec, recs: dict, cross: dict, cols: list) -> list[str]:
    """Each column's finding on each backend and variant (n/a where it does not run there), then
    GPU against the interpreter."""
    L = ["| detector | GPU: broken | GPU: fixed | interpreter: broken | interpreter: fixed |", "|---|---|---|---|---|"]
    for col in cols:
        if col.where == "across":  # GPU against the interpreter: the line below
            continue
        where = backends_of(col)
        L.append(_row([col.label] + [_finding_cell(cell(spec, recs, col, b, v) if b in where else elsewhere(col, b), v)
                                     for b in BACKENDS for v in VARIANTS]))
    c = {v: across_cell(cross, recs, v) for v in VARIANTS}
    return L + ["", f"**GPU against the interpreter**: broken kernel {c['broken']['status']}: "
                    f"{c['broken']['reason']}; fixed kernel {c['fixed']['status']}: {c['fixed']['reason']}.", ""]


def case_pictures_md(pics: list[tuple[str, str]]) -> list[str]:
    return [line for name, caption in pics for line in (f"![{caption}]({IMG_DIR}/{name})", "", f"_{caption}_", "")]


def recorded_gpu(spec) -> str:
    try:
        return (spec.path / "recorded" / "gpu.md").read_text().strip()
    except (OSError, UnicodeDecodeError):
        return f"No GPU run recorded yet (`python -m harness record {spec.slug} --backend gpu`)."


def case_section(spec, recs: dict, cross: dict, pics: list, cols: list) -> list[str]:
    return (case_intro(spec, recs) + case_findings(spec, recs, cross, cols) + case_pictures_md(pics)
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
    from harness.probe.case_runs import across

    cross = {s.slug: across(runs[s.slug].get("gpu"), runs[s.slug].get("interpreter")) for s in specs}
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cols = columns(probe_backends(specs))
    rows = score_rows(specs, runs, cross, cols)
    L = header(len(specs), now) + run_lines(runs) + stale_note(specs, runs) + summary(rows, img)
    L += matrix(specs, runs, cross, cols, rows) + detectors_table(cols) + left_out(errors, runs) + ["## Cases", ""]
    for s in specs:
        fresh = {b: r for b, r in runs[s.slug].items() if r and not r.get("stale")}  # no pictures of stale runs
        L += case_section(s, runs[s.slug], cross[s.slug], all_case_pictures(s, fresh, img), cols)
    return "\n".join(L) + "\n"
