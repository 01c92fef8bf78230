"""Two sets of a bugs board's rows compared row by row (entry, variant): what the probe's scored run said.

    python benchmarks/board_rows.py interpreter A B          # the rows at commit A against those at B
    python benchmarks/board_rows.py interpreter A /tmp/rows  # a folder of rows (bugs --record elsewhere)
    python benchmarks/board_rows.py gpu+interpreter --around bb8618d
        # each row's last version committed before bb8618d against its first version re-made after it

A set of rows is ``docs/bugs/rows/<backend>/*.json`` as a commit has them (read with ``git show``)
or a folder of such files. For every (entry, variant) in both sets it prints what differs in the
probe's scored run (the ``probe`` part of a row, the default run): caught (the buggy version) or
flagged (the fixed one), the finding codes, the first defect class of the diagnosis, the number of
error findings, a row that could not run (its error), and each detector's status (``done``,
``cut``, ``skipped``, a timeout: the word before the colon). Beside each differing row it gives
what says whether the budget had a hand in it: each side's seconds against its budget and the
detectors that did not run to their end (cut, spent, timed out, not run).

``--around COMMIT`` pairs the rows by their history instead of two commits: for each row file, the
version in the last commit that touched it and does not contain COMMIT (made before it), against the
version in the first commit that contains COMMIT where that variant was made again (its probe's date
differs: a ``--no-run`` remake that kept the row is not a new run). Each pair names its two commits.

Nothing here judges why a row changed: docs/measurements/ says that (the spine, a probe change
between the commits, the run's budget or load, or unexplained).
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROWS = "docs/bugs/rows"
VARIANTS = ("buggy", "fixed")
FIELDS = ("caught", "codes", "first class", "errors", "error", "status")
NOT_TO_THE_END = ("cut", "spent", "timeout", "timed out", "hang", "not run", "failed", "died", "killed")


# -- what a row says (pure) --------------------------------------------------------------------------------


def status_word(status: str) -> str:
    """``skipped: why`` -> ``skipped``; ``done`` -> ``done``."""
    return str(status).split(":", 1)[0].strip()


def facts(row: dict) -> dict:
    """The compared facts of one variant's row (its ``probe`` part, the scored run), and the budget's."""
    probe = row.get("probe") or {}
    diagnosis = probe.get("diagnosis") or []
    status = {}
    for r in probe.get("ran") or []:
        key = f"{r.get('backend', '?')}/{r.get('detector', '?')}"
        status[key] = status_word(r.get("status", ""))
    return {
        "caught": probe.get("caught"),
        "codes": sorted(set(probe.get("codes") or [])),
        "first class": diagnosis[0] if diagnosis else "",
        "errors": probe.get("errors"),
        "error": row.get("error") or probe.get("error") or "",
        "status": status,
        "seconds": probe.get("seconds"),
        "budget": probe.get("budget"),
        "date": (row.get("env") or {}).get("date", ""),
        "run": run_id(row),
    }


def run_id(row: dict) -> tuple:
    """What tells one probe run from another: its date (to the minute) and every second it measured (the
    whole probe's and each detector's). Two runs in one minute still differ in their seconds."""
    probe = row.get("probe") or {}
    return ((row.get("env") or {}).get("date", ""), probe.get("seconds"),
            tuple((r.get("backend"), r.get("detector"), r.get("seconds")) for r in probe.get("ran") or []))


def cut_short(f: dict) -> list[str]:
    """The detectors of a row that did not run to their end (cut at the budget, timed out, not run)."""
    return sorted(k for k, st in f["status"].items() if any(st.startswith(w) for w in NOT_TO_THE_END))


def status_changes(a: dict, b: dict) -> list[str]:
    """``backend/detector: before -> after`` for each detector whose status word differs (absent: ``-``)."""
    return [f"{k}: {a.get(k, '-')} -> {b.get(k, '-')}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def differences(a: dict, b: dict) -> dict:
    """{field: (before, after)} for each compared field of two facts that differs."""
    out = {}
    for field in FIELDS:
        if field == "status":
            if ch := status_changes(a["status"], b["status"]):
                out[field] = ch
        elif a[field] != b[field]:
            out[field] = (a[field], b[field])
    return out


def budget_note(f: dict) -> str:
    """``12.3 of 60 s; cut: interpreter/shapes`` (what says whether the budget had a hand)."""
    sec, budget = f.get("seconds"), f.get("budget")
    text = f"{sec} of {budget} s" if budget else f"{sec} s"
    if (sec is not None and budget) and sec >= 0.8 * budget:
        text += " (near the budget)"
    if cut := cut_short(f):
        text += f"; not to the end: {', '.join(cut)}"
    return text


def compare(before: dict, after: dict) -> dict:
    """Rows {slug: {variant: row}} of two sets compared: {"same": [...], "differ": [...], "only_before",
    "only_after", "one_run": the rows both sets hold from one run (``run_id``)}; each differing item is
    (slug, variant, differences, facts before, facts after)."""
    out = {"same": [], "differ": [], "only_before": [], "only_after": [], "one_run": []}
    for slug in sorted(set(before) | set(after)):
        for v in VARIANTS:
            a, b = (before.get(slug) or {}).get(v), (after.get(slug) or {}).get(v)
            if a is None and b is None:
                continue
            if b is None:
                out["only_before"].append((slug, v))
            elif a is None:
                out["only_after"].append((slug, v))
            else:
                fa, fb = facts(a), facts(b)
                d = differences(fa, fb)
                if fa["date"] and fa["run"] == fb["run"]:  # a row kept as it was: one run, not two
                    out["one_run"].append((slug, v))
                out["differ" if d else "same"].append((slug, v, d, fa, fb) if d else (slug, v))
    return out


def show(x) -> str:
    if isinstance(x, list):
        return ", ".join(map(str, x)) or "none"
    return "-" if x in (None, "") else str(x)


def table(result: dict, pairs: dict | None = None) -> str:
    """The differing rows as a markdown table; ``pairs``: {(slug, variant): (commit before, commit after)}."""
    head = ["entry", "variant"] + (["commits"] if pairs else []) + ["what differs", "before: seconds", "after: seconds"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for slug, v, d, fa, fb in result["differ"]:
        what = "; ".join(f"{k}: " + ("; ".join(x) if k == "status" else f"{show(x[0])} -> {show(x[1])}")
                         for k, x in d.items())
        cells = [slug, v] + ([" -> ".join(pairs[(slug, v)])] if pairs else []) + [what, budget_note(fa),
                                                                                  budget_note(fb)]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines)


def summary(result: dict) -> str:
    n = len(result["same"]) + len(result["differ"])
    rerun = f" ({len(result['one_run'])} of them one run, kept in both: no comparison)" \
        if result["one_run"] else ""
    return (f"{n} rows in both{rerun}: {len(result['same'])} the same, {len(result['differ'])} differ; "
            f"only before: {len(result['only_before'])}, only after: {len(result['only_after'])}")


# -- where rows come from (git) ------------------------------------------------------------------------------


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def rows_at(source: str, backend: str) -> dict:
    """{slug: {variant: row}} of a folder, or of ``docs/bugs/rows/<backend>`` at a commit."""
    folder = Path(source)
    if folder.is_dir():
        return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}
    listed = _git("ls-tree", "--name-only", f"{source}:{ROWS}/{backend}")
    if listed.returncode:
        raise ValueError(f"{source}: no folder, and no commit with {ROWS}/{backend}")
    out = {}
    for name in listed.stdout.split():
        if name.endswith(".json"):
            out[name[:-5]] = json.loads(_git("show", f"{source}:{ROWS}/{backend}/{name}").stdout)
    return out


@functools.lru_cache(maxsize=None)
def contains(commit: str, boundary: str) -> bool:
    return _git("merge-base", "--is-ancestor", boundary, commit).returncode == 0


def pick(versions: list) -> tuple:
    """From a row's versions, oldest first, as (commit, row, after: whether the commit contains the
    boundary): the last one before and, per variant, the first one after whose probe ran again (its date
    differs from the before's). Returns (before commit, before row, {variant: (after commit, row)})."""
    before = [(c, r) for c, r, after in versions if not after]
    if not before:
        return None, None, {}
    cb, rb = before[-1]
    out = {}
    for v in VARIANTS:
        was = facts(rb[v])["date"] if v in rb else None
        for c, r, after in versions:
            if after and v in r and facts(r[v])["date"] != was:
                out[v] = (c, r)
                break
    return cb, rb, out


def around(backend: str, boundary: str) -> tuple[dict, dict, dict, list]:
    """Rows paired by history around ``boundary``: (before rows, after rows, {(slug, variant): commits},
    [(slug, variant, why)] of the rows with no pair)."""
    before, after, pairs, unpaired = {}, {}, {}, []
    folder = f"{ROWS}/{backend}"
    names = set()
    for line in _git("log", "--format=", "--name-only", "--", folder).stdout.split():
        if line.startswith(folder + "/") and line.endswith(".json") and "/" not in line[len(folder) + 1:]:
            names.add(line)
    for path in sorted(names):
        commits = _git("log", "--reverse", "--format=%h", "--", path).stdout.split()
        versions = []
        for c in commits:
            shown = _git("show", f"{c}:{path}")
            if shown.returncode == 0:
                versions.append((c, json.loads(shown.stdout), contains(c, boundary)))
        cb, rb, firsts = pick(versions)
        slug = Path(path).stem
        if cb is None:
            unpaired += [(slug, v, "no row before") for v in VARIANTS]
            continue
        unpaired += [(slug, v, f"not made again after (last before: {cb})") for v in VARIANTS if v not in firsts]
        for v, (ca, ra) in firsts.items():
            before.setdefault(slug, {})[v] = rb[v]
            after.setdefault(slug, {})[v] = ra[v]
            pairs[(slug, v)] = (cb, ca)
    return before, after, pairs, unpaired


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("backend", help="interpreter, gpu or gpu+interpreter (the folder under docs/bugs/rows/)")
    p.add_argument("sets", nargs="*", help="two sets of rows: each a commit or a folder")
    p.add_argument("--around", metavar="COMMIT", help="each row's last version before COMMIT against its first "
                                                      "re-made after it")
    args = p.parse_args(argv)
    if (len(args.sets), bool(args.around)) not in ((2, False), (0, True)):
        print("error: give two sets of rows (commits or folders), or --around COMMIT", file=sys.stderr)
        return 2
    unpaired = []
    if args.around:
        if _git("rev-parse", "--verify", "--quiet", args.around + "^{commit}").returncode:
            print(f"error: {args.around}: no such commit", file=sys.stderr)
            return 2
        before, after, pairs, unpaired = around(args.backend, args.around)
    else:
        try:
            before, after = (rows_at(s, args.backend) for s in args.sets)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        pairs = None
    result = compare(before, after)
    print(summary(result))
    if result["differ"]:
        print(table(result, pairs))
    for key in ("only_before", "only_after"):
        if result[key]:
            print(f"{key.replace('_', ' ')}: " + ", ".join(f"{s} ({v})" for s, v in result[key]))
    for slug, v, why in unpaired:
        print(f"no pair: {slug} ({v}): {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
