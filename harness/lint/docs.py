"""docs/lint-rules.md's generated part, from the registry: ``python -m harness.lint.rules`` prints it.

A test keeps the file equal to it (like docs/check-rules.md for ``check``).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from pathlib import Path

from harness.core.markdown import generated_markers
from harness.lint.registry import FAMILIES, Rule
from harness.lint.rules import all_rules

BEGIN, END = generated_markers("lint-rules")


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def case_links(r: Rule, prefix: str = "../") -> str:
    return ", ".join(f"[{c}]({prefix}cases/{c}/README.md)" for c in r.cases)


DOCS = Path(__file__).resolve().parents[2] / "docs"
PACKAGES, FIRST_RUN = DOCS / "lint-packages.md", DOCS / "lint-first-run.md"
# group of first-run sets -> (the page, the level of the sets' headings, how those headings start)
FIRST_RUNS = {"A to C": (PACKAGES, 2, ("Held-out set A", "Held-out set B", "Held-out set C")),
              "E to G": (PACKAGES, 2, ("First runs after issue 39",)),
              "H to J": (FIRST_RUN, 3, ("Set H", "Set I", "Set J")),
              "K": (FIRST_RUN, 3, ("Set K",)),
              "L": (FIRST_RUN, 3, ("Set L",)),
              "M": (FIRST_RUN, 3, ("Set M",)),
              "N": (FIRST_RUN, 3, ("Set N",)),
              "O": (FIRST_RUN, 3, ("Set O",)),
              "P": (FIRST_RUN, 3, ("Set P",)),
              "Q": (FIRST_RUN, 3, ("Set Q",)),
              "R": (FIRST_RUN, 3, ("Set R",)),
              "S": (FIRST_RUN, 3, ("Set S",)),
              "T": (FIRST_RUN, 3, ("Set T",)),
              "U": (FIRST_RUN, 3, ("Set U",)),
              "V": (FIRST_RUN, 3, ("Set V",)),
              "W": (FIRST_RUN, 3, ("Set W",)),
              "X": (FIRST_RUN, 3, ("Set X",)),
              "Y": (FIRST_RUN, 3, ("Set Y",)),
              "Z": (FIRST_RUN, 3, ("Set Z",))}


def first_runs(pages: dict[Path, str] | None = None) -> dict[str, dict[str, Counter]]:
    """Per group of first-run sets, per rule, the verdicts of its hits, read from the triage tables of
    docs/lint-packages.md and docs/lint-first-run.md (every table with a ``rule`` and a ``verdict`` column under a
    set's heading). ``pages``: a page's text in place of the file's."""
    pages = pages or {}
    out: dict[str, dict[str, Counter]] = {group: {} for group in FIRST_RUNS}
    for group, (page, level, heads) in FIRST_RUNS.items():
        text = pages[page] if page in pages else page.read_text() if page.is_file() else ""
        for section in re.split(rf"^#{{2,{level}}} ", text, flags=re.M):
            header = None
            for line in section.splitlines() if section.startswith(heads) else ():
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if not line.startswith("|"):
                    header = None
                elif "rule" in cells and "verdict" in cells:
                    header = cells
                elif header and len(cells) == len(header) and not set(line) <= set("|-: "):
                    rule = cells[header.index("rule")].split()[0].rstrip("*")
                    out[group].setdefault(rule, Counter())[cells[header.index("verdict")]] += 1
    return out


THRESHOLD, MIN_HITS = 0.70, 3  # issue 39: under 70 % first-run precision, with at least 3 first-run hits: preview


def first_run_totals(runs: dict[str, dict[str, Counter]]) -> dict[str, tuple[int, int]]:
    """Per rule, over every first-run set: (hits right, i.e. not false alarms; hits)."""
    out: dict[str, tuple[int, int]] = {}
    for rules in runs.values():
        for code, verdicts in rules.items():
            right, hits = out.get(code, (0, 0))
            out[code] = (right + sum(verdicts.values()) - verdicts["false alarm"], hits + sum(verdicts.values()))
    return out


def under_threshold(runs: dict[str, dict[str, Counter]]) -> set[str]:
    """The rules with at least MIN_HITS first-run hits and a first-run precision under THRESHOLD."""
    return {c for c, (right, hits) in first_run_totals(runs).items() if hits >= MIN_HITS and right < THRESHOLD * hits}


def needed_by_cases(candidates: set[str]) -> dict[str, list[str]]:
    """Of ``candidates`` (rules to move to preview), those that moving would leave a case's broken kernel flagged
    by no default rule, each with those cases: the casebook's own kernels are linted now (the default rules and
    the candidates), and the candidates are moved one at a time in code order."""
    from harness.core import discovery
    from harness.lint.engine import lint_file

    default = {r.code for r in all_rules() if not r.preview} | candidates
    flagged = {folder.name: {f.code for f in lint_file(folder / "broken.py", select=["ALL"])} & default
               for folder in discovery.case_folders() if (folder / "broken.py").is_file()}
    moved: set[str] = set()
    out: dict[str, list[str]] = {}
    for code in sorted(candidates):
        lost = sorted(case for case, codes in flagged.items() if code in codes and not codes - moved - {code})
        if lost:
            out[code] = lost
        else:
            moved.add(code)
    return out


def first_run_cell(runs: dict[str, dict[str, Counter]], code: str, kept: dict[str, list[str]]) -> str:
    """``E to G: 20 of 23; A to C: 13 of 35; all: 33 of 58 (57 %)``: the hits that were not false alarms, per
    group of sets and over all; for a rule under the threshold, whether it is preview or why it is not."""
    parts = []
    for group in reversed(list(FIRST_RUNS)):
        verdicts = runs.get(group, {}).get(code)
        if verdicts:
            hits = sum(verdicts.values())
            parts.append(f"{group}: {hits - verdicts['false alarm']} of {hits}")
    if not parts:
        return "no hit"
    right, hits = first_run_totals(runs)[code]
    parts.append(f"all: {right} of {hits} ({round(100 * right / hits)} %)")
    if code in under_threshold(runs):
        limit = f"under {round(100 * THRESHOLD)} %"
        kernels = "the broken kernels" if len(kept.get(code, ())) > 1 else "the broken kernel"
        parts.append(f"{limit}: kept at the default selection, the only default rule that flags {kernels} of "
                     f"{', '.join(kept[code])}" if code in kept else f"{limit}: preview until it is over")
    return "; ".join(parts)


def table() -> str:
    runs = first_runs()
    kept = needed_by_cases(under_threshold(runs))
    rows = ["| code | name | confidence | finds | cases | first runs: hits right (not false alarms) |",
            "|---|---|---|---|---|---|"]
    for r in all_rules():
        conf = f"{r.confidence} (preview)" if r.preview else r.confidence
        rows.append(f"| [{r.code}](#{r.code.lower()}-{r.name}) | `{r.name}` | {conf} | {cell(r.summary)} | "
                    f"{case_links(r)} | {first_run_cell(runs, r.code, kept)} |")
    return "\n".join(rows)


def by_case() -> str:
    """Each case with the rules that come from it."""
    cases: dict[str, list[Rule]] = {}
    for r in all_rules():
        for c in r.cases:
            cases.setdefault(c, []).append(r)
    rows = ["| case | rules |", "|---|---|"]
    rows += [f"| [{c}](../cases/{c}/README.md) | " + ", ".join(
        f"{r.code}{' (preview)' if r.preview else ''}" for r in rs) + " |" for c, rs in sorted(cases.items())]
    return "\n".join(rows)


def snippet_diff(r: Rule) -> str:
    lines = difflib.unified_diff(r.bad.strip("\n").splitlines(), r.good.strip("\n").splitlines(), "bad", "good",
                                 n=1, lineterm="")
    return "\n".join(list(lines)[2:])


def details() -> str:
    out = []
    family = None
    for r in all_rules():
        if r.code[:3] != family:
            family = r.code[:3]
            out.append(f"### {family}xx: {FAMILIES[family]}\n")
        preview = " Preview: runs only when selected (`--select " + r.code + "` or `--select ALL`)." \
            if r.preview else ""
        out.append(f"#### {r.code} {r.name}\n\n{r.summary}.\n\n{r.why}\n\nConfidence: {r.confidence}.{preview} "
                   f"From: {case_links(r)}.\n\nThe tests lint this pair: the rule fires on the first and not "
                   f"on the second.\n\n```python\n{r.bad.strip()}\n```\n\n```diff\n{snippet_diff(r)}\n```\n")
    return "\n".join(out)


def generated() -> str:
    return "\n".join([BEGIN, "", "## The rules", "", table(), "", "## Which rule comes from which case", "",
                      by_case(), "", "## Each rule", "", details(), END])


CASE_BEGIN, CASE_END = generated_markers("lint")


def case_block(folder) -> str:
    """The line each case's "How to catch it" ends with: which rules ``harness lint`` flags the
    case's broken kernel with (linted now, from the registry), and whether the fixed one is clean."""
    from pathlib import Path

    from harness.lint.engine import lint_file

    folder = Path(folder)
    anchor = {r.code: f"../../docs/lint-rules.md#{r.code.lower()}-{r.name}" for r in all_rules()}
    preview = {r.code for r in all_rules() if r.preview}
    broken = lint_file(folder / "broken.py", select=["ALL"])
    codes = sorted({f.code for f in broken})
    by_default = [c for c in codes if c not in preview]
    fixed_hits = sorted({f.code for f in lint_file(folder / "fixed.py")}) if (folder / "fixed.py").is_file() else []
    if by_default:
        lines = {c: min(f.line for f in broken if f.code == c) for c in by_default}
        what = ", ".join(f"[{c}]({anchor[c]}) (broken.py:{lines[c]})" for c in by_default)
        text = f"- **`harness lint`** (the source alone, no run) flags the broken kernel: {what}"
    elif codes:
        what = ", ".join(f"[{c}]({anchor[c]})" for c in codes)
        text = (f"- **`harness lint`** (the source alone) flags the broken kernel only with preview rules "
                f"({what}; `--select {','.join(codes)}`), which also fire on correct code")
    else:
        text = "- **`harness lint`** (the source alone) does not flag this kernel: the trap needs a run to show"
    text += "; the fixed kernel is clean." if not fixed_hits else f"; the fixed kernel too ({', '.join(fixed_hits)})."
    return f"{CASE_BEGIN}\n{text}\n{CASE_END}"


def with_case_block(readme: str, block: str) -> str:
    """``readme`` with its lint block replaced, or added at the end of "## How to catch it"."""
    if CASE_BEGIN in readme and CASE_END in readme:
        head, rest = readme.split(CASE_BEGIN, 1)
        return head + block + rest.split(CASE_END, 1)[1]
    start = readme.index("## How to catch it")
    nxt = readme.find("\n## ", start + 1)
    end = len(readme) if nxt < 0 else nxt
    return readme[:end].rstrip("\n") + "\n" + block + "\n" + readme[end:]
