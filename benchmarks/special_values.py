"""The special-value detector (P207) measured: on every case's kernels, and on the benchmark's dev entries.

    python benchmarks/special_values.py cases [--variants fixed,fast,broken] [--backend gpu]   # special alone
    python benchmarks/special_values.py dev --rows ROWS.jsonl    # the default probe on the 22 dev entries
    python benchmarks/special_values.py dev --rows ROWS.jsonl --no-run   # the table from rows already run
    python benchmarks/special_values.py devspecial [--rows ROWS.jsonl] [--budget 0]   # special alone, dev entries
    python benchmarks/special_values.py devboard --before A.jsonl --after B.jsonl   # the board's rows, special swapped

``cases``: ``harness.probe`` with the special detector alone on each case's kernels (the interpreter, or a GPU
once the detector declares that backend); one line per kernel with its P207 findings, then the counts
(errors on fixed and fast kernels are false alarms).

``dev``: the default probe (every detector) on both versions of each dev entry of ``bugs/split.toml`` under
the interpreter, as ``harness bugs`` runs one (``board.probe_variant``), each row kept in ROWS (one JSON line
each, appended as they come); the table compares each row with itself less the special detector's findings,
re-diagnosed from the rest and the experiments' evidence (special runs in a process of its own, after the
others of that process: it changes no other detector's findings), for caught, false alarms (an error on the
fixed version not recorded in its ``[[fixed_known]]``) and the right class first. The bug cache must hold the
entries (``CASEBOOK_BUG_CACHE``). Only dev entries: the test half is frozen and blind (bugs/README.md).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]



def _caught(x) -> str:
    """A buggy version's cell: caught, with its codes, or missed."""
    return f"caught ({', '.join(x['codes'])})" if x["caught"] else "missed"


def _fixed(x) -> str:
    """A fixed version's cell: quiet (with any warnings), a known true finding, or a false alarm."""
    if not x["errors"]:
        return "quiet" + (f" (warnings: {', '.join(x['codes'])})" if x["codes"] else "")
    return f"{'known true' if x['known'] else 'FALSE ALARM'} ({', '.join(x['codes'])})"

def _header(command: str, backend: str = "interpreter") -> list[str]:
    import torch
    import triton

    where = torch.cuda.get_device_name(0) if backend == "gpu" else "CPU only (the interpreter)"
    return [f"machine: {platform.machine()} {platform.processor() or ''}, {where}; torch "
            f"{torch.__version__}, triton {triton.__version__}, python {platform.python_version()}",
            f"command: {command}", ""]


def cases(variants: list[str], backend: str = "interpreter", budget: float | None = None) -> int:
    from harness import probe

    said_budget = "" if budget is None else f" --budget {budget:g}"
    print("\n".join(_header(f"python benchmarks/special_values.py cases --variants {','.join(variants)} "
                            f"--backend {backend}{said_budget}", backend)))
    print("| case | kernel | P207 findings (severity: start of the message) |")
    print("|---|---|---|")
    counts = {}
    for folder in sorted(p for p in (ROOT / "cases").iterdir() if (p / "case.toml").is_file()):
        spec = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8"))
        for v in variants:
            if not (folder / f"{v}.py").is_file():
                continue
            r = probe(str(folder / f"{v}.py"), inputs=str(folder / "case.py"), launcher=spec["launcher"],
                      backends=[backend], detectors=["special"], jobs=1, budget=budget)
            found = r.by_code("P207")
            ran = next((st for _, d, _, st in r.ran if d == "special"), "not run")
            said = "; ".join(f"{f.severity}: {f.message[:160]}" for f in found) or f"none ({ran[:80]})"
            print(f"| {folder.name} | {v} | {said} |", flush=True)
            c = counts.setdefault(v, {"kernels": 0, "error": 0, "warning": 0, "info": 0})
            c["kernels"] += 1
            for sev in {f.severity for f in found}:
                c[sev] += 1
    print()
    for v, c in counts.items():
        print(f"{v}: {c['kernels']} kernels; with a P207 error {c['error']}, a warning {c['warning']}, a note "
              f"{c['info']}")
    return 0


def _run_dev(rows: Path) -> None:
    from harness.bugs import board, manifest

    done = {(d["entry"], d["v"]) for d in _read(rows)}
    for name in tomllib.loads((ROOT / "bugs" / "split.toml").read_text())["dev"]:
        entry = manifest.read(ROOT / "bugs" / name)
        for v in ("buggy", "fixed"):
            if (name, v) in done:
                continue
            try:
                row = board.probe_variant(entry, v, "interpreter", jobs=board.default_jobs())
            except Exception as e:  # noqa: BLE001  one entry failing leaves the others
                row = {"error": repr(e)[:300]}
            with rows.open("a") as f:
                f.write(json.dumps({"entry": name, "v": v, **row}) + "\n")


def _special_alone(entry, v: str, budget: float | None) -> dict:
    """The special detector alone on one version of a dev entry (the interpreter), with ``budget`` (None: the
    default), as a row: its findings, notes included (a budget's end is one), and its status."""
    from harness.probe.runner import ProbeInputError, probe

    try:
        r = probe(str(entry.glue), launcher=entry.launcher(v), backends=["interpreter"], detectors=["special"],
                  jobs=1, budget=budget)
    except ProbeInputError as e:
        return {"error": f"could not run: {' '.join(str(e).split())}"[:300]}
    return {"problems": [{"code": f.code, "severity": f.severity, "message": f.message} for f in r.findings],
            "ran": [{"detector": d, "status": st} for _, d, _, st in r.ran], "seconds": round(r.seconds, 1)}


def devspecial(rows: Path | None, budget: float | None = None) -> int:
    """The special detector alone on both versions of each dev entry (the interpreter): one line each with its
    P207 findings; an error on a buggy version counts as caught, on a fixed version as a false alarm. Rows
    already in ROWS are not run again (a sweep stopped part way goes on). ``budget``: the probe's --budget
    (0: none, every special value tried whatever the machine's load)."""
    from harness.bugs import manifest

    done = {(d["entry"], d["v"]): d for d in _read(rows)} if rows else {}
    said_budget = "" if budget is None else f" --budget {budget:g}"
    print("\n".join(_header(f"python benchmarks/special_values.py devspecial{said_budget}")))
    print("| entry | version | P207 findings (severity: start of the message) | seconds |")
    print("|---|---|---|---|")
    tot = {"buggy": [0, 0], "fixed": [0, 0]}  # [ran, with a P207 error]
    for name in tomllib.loads((ROOT / "bugs" / "split.toml").read_text())["dev"]:
        entry = manifest.read(ROOT / "bugs" / name)
        for v in ("buggy", "fixed"):
            row = done.get((name, v))
            if row is None:
                try:
                    row = _special_alone(entry, v, budget)
                except Exception as e:  # noqa: BLE001  one entry failing leaves the others
                    row = {"error": repr(e)[:300]}
                row = {"entry": name, "v": v, **row}
                if rows:
                    with rows.open("a") as f:
                        f.write(json.dumps(row) + "\n")
            if row.get("error"):
                print(f"| {name} | {v} | {row['error'][:120]} | |", flush=True)
                continue
            mine = [p for p in row["problems"] if p["code"] == "P207" and p["severity"] != "info"]
            ran = next((r["status"][:60] for r in row.get("ran", []) if r["detector"] == "special"), "not run")
            said = "; ".join(f"{p['severity']}: {p['message'][:150]}" for p in mine) or f"none ({ran})"
            if any(p["code"] == "P000" and "budget" in p["message"] for p in row["problems"]):
                said += " (stopped at the budget's end)"
            print(f"| {name} | {v} | {said} | {row.get('seconds')} |", flush=True)
            tot[v][0] += 1
            tot[v][1] += any(p["severity"] == "error" for p in mine)
    print()
    print(f"buggy versions with a P207 error: {tot['buggy'][1]} of {tot['buggy'][0]}; fixed versions with a P207 "
          f"error (false alarms): {tot['fixed'][1]} of {tot['fixed'][0]}")
    return 0


def devboard(board_dir: Path, before: Path, after: Path) -> int:
    """The default probe's verdicts on the dev entries with the special detector's findings swapped: each dev
    row of the interpreter board (``board_dir``: docs/bugs/rows/interpreter, every detector as it ran there)
    less its special findings, plus the special detector alone as ``devspecial`` ran it before and after a
    change (ROWS files), re-diagnosed from the findings and the experiments' evidence (special runs in a
    process of its own and changes no other detector's findings). Caught, false alarms (an error on the fixed
    version not in its ``[[fixed_known]]``) and the right class first, before and after."""
    from harness.bugs import manifest

    runs = {k: {(d["entry"], d["v"]): d for d in _read(p)} for k, p in (("before", before), ("after", after))}
    print("\n".join(_header(f"python benchmarks/special_values.py devboard --board {board_dir} --before "
                            f"{before.name} --after {after.name}")))
    print("Each board row's other detectors' findings, with the special detector's from the run named. Class "
          "first: the diagnosis's first defect class.\n")
    print("| entry | defect | buggy before | buggy after | class first before | after | fixed before | fixed after |")
    print("|---|---|---|---|---|---|---|---|")
    tot = dict.fromkeys(("n", "b_caught", "a_caught", "b_fa", "a_fa", "b_first", "a_first"), 0)
    for name in tomllib.loads((ROOT / "bugs" / "split.toml").read_text())["dev"]:
        entry = manifest.read(ROOT / "bugs" / name)
        path = board_dir / f"{name}.json"
        line = json.loads(path.read_text()) if path.is_file() else {}
        got = {}
        for k in ("before", "after"):
            for v in ("buggy", "fixed"):
                row = (line.get(v) or {}).get("probe") or {}
                mine = runs[k].get((name, v)) or {}
                if not row or row.get("error") or mine.get("error") or "problems" not in mine:
                    got[k, v] = None
                    continue
                special = [{**p, "detector": "special", "backend": "interpreter"} for p in mine["problems"]
                           if p["code"] == "P207" and p["severity"] != "info"]
                merged = {**row, "problems": [p for p in row["problems"] if p["detector"] != "special"] + special}
                got[k, v] = _judged(entry, merged, lambda p: True)
        if any(x is None for x in got.values()):
            print(f"| {name} | {entry.defect} | not run on both sides | | | | | |")
            continue
        tot["n"] += 1
        for k, s in (("b", "before"), ("a", "after")):
            tot[f"{k}_caught"] += got[s, "buggy"]["caught"]
            tot[f"{k}_fa"] += bool(got[s, "fixed"]["errors"] and not got[s, "fixed"]["known"])
            tot[f"{k}_first"] += bool(got[s, "buggy"]["caught"] and got[s, "buggy"]["first"] == entry.defect)

        print(f"| {name} | {entry.defect} | {_caught(got['before', 'buggy'])} | {_caught(got['after', 'buggy'])} | "
              f"{got['before', 'buggy']['first']} | {got['after', 'buggy']['first']} | "
              f"{_fixed(got['before', 'fixed'])} | {_fixed(got['after', 'fixed'])} |")
    print()
    print(f"entries: {tot['n']}; caught before {tot['b_caught']}, after {tot['a_caught']}; false alarms (fixed "
          f"versions) before {tot['b_fa']}, after {tot['a_fa']}; right class first before {tot['b_first']}, after "
          f"{tot['a_first']}")
    return 0


def _read(rows: Path) -> list[dict]:
    return [json.loads(line) for line in rows.read_text().splitlines() if line.strip()] if rows.exists() else []


def _judged(entry, row: dict, keep) -> dict | None:
    from harness.bugs import board
    from harness.probe.diagnosis import diagnose
    from harness.probe.findings import Finding

    if row.get("error"):
        return None
    probs = [p for p in row["problems"] if keep(p)]
    observed = {}
    for b, ev in (row.get("observed") or {}).items():
        for k, v in ev.items():
            observed.setdefault(k, f"{b}: {v}")
    ranked = [d["defect"] for d in diagnose([Finding.from_json(p) for p in probs], observed) if d.get("defect")]
    errs = [p for p in probs if p["severity"] == "error"]
    relied = entry.verify.get("severity") == "warning" and any(
        p["severity"] != "error" and p["detector"] == entry.verify["detector"] for p in probs)
    as_row = {**row, "errors": len(errs),
              "error_findings": [{k: p.get(k) for k in ("code", "detector", "message", "backend")} for p in errs]}
    return {"caught": bool(errs) or relied, "errors": len(errs), "first": ranked[0] if ranked else None,
            "known": board.known_on_fixed(entry, as_row, "interpreter"),
            "codes": sorted({p["code"] for p in probs if p["severity"] != "info"})}


def dev(rows: Path, run: bool) -> int:
    from harness.bugs import manifest

    if run:
        _run_dev(rows)
    order = tomllib.loads((ROOT / "bugs" / "split.toml").read_text())["dev"]
    by = {}
    for d in sorted(_read(rows), key=lambda d: order.index(d["entry"]) if d["entry"] in order else len(order)):
        by.setdefault(d["entry"], {})[d["v"]] = d
    print("\n".join(_header(f"python benchmarks/special_values.py dev --rows {rows.name}")))
    print("Before: each row less the special detector's findings, re-diagnosed; after: the row as it ran. "
          "Class first: the diagnosis's first defect class, from the findings and the experiments' evidence.\n")
    print("| entry | defect | buggy before | buggy after | class first before | after | fixed before | fixed after | "
          "seconds (buggy, fixed) | special's findings |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    tot = dict.fromkeys(("n", "b_caught", "a_caught", "b_fa", "a_fa", "b_first", "a_first"), 0)

    for name, vs in by.items():
        entry = manifest.read(ROOT / "bugs" / name)
        before = {v: _judged(entry, vs[v], lambda p: p["detector"] != "special") for v in vs}
        after = {v: _judged(entry, vs[v], lambda p: True) for v in vs}
        if not all(before.get(v) for v in ("buggy", "fixed")):
            why = next((vs[v].get("error") for v in vs if vs[v].get("error")), "")
            print(f"| {name} | {entry.defect} | {why[:90]} | | | | | | | |")
            continue
        tot["n"] += 1
        for k, s in (("b", before), ("a", after)):
            tot[f"{k}_caught"] += s["buggy"]["caught"]
            tot[f"{k}_fa"] += bool(s["fixed"]["errors"] and not s["fixed"]["known"])
            tot[f"{k}_first"] += bool(s["buggy"]["caught"] and s["buggy"]["first"] == entry.defect)
        mine = "; ".join(f"{v} {p['severity']}: {p['message'][:110]}" for v in ("buggy", "fixed")
                         for p in vs[v]["problems"] if p["detector"] == "special") or "none"
        ran = {v: next((f"{r['status'][:40]}" for r in vs[v].get("ran", []) if r["detector"] == "special"), "-")
               for v in vs}
        if any(not s.startswith("done") for s in ran.values()):
            mine += f" (special: buggy {ran['buggy']}; fixed {ran['fixed']})"
        print(f"| {name} | {entry.defect} | {_caught(before['buggy'])} | {_caught(after['buggy'])} | "
              f"{before['buggy']['first']} | {after['buggy']['first']} | {_fixed(before['fixed'])} | "
              f"{_fixed(after['fixed'])} | {vs['buggy'].get('seconds')}, {vs['fixed'].get('seconds')} | {mine} |")
    print()
    print(f"entries that ran: {tot['n']}; caught before {tot['b_caught']}, after {tot['a_caught']}; false alarms "
          f"(fixed versions) before {tot['b_fa']}, after {tot['a_fa']}; right class first before {tot['b_first']}, "
          f"after {tot['a_first']}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    c = sub.add_parser("cases")
    c.add_argument("--variants", default="fixed,fast")
    c.add_argument("--backend", choices=("interpreter", "gpu"), default="interpreter")
    c.add_argument("--budget", type=float, help="the probe's --budget in seconds (0: none); default: its default")
    d = sub.add_parser("dev")
    d.add_argument("--rows", type=Path, required=True)
    d.add_argument("--no-run", action="store_true")
    ds = sub.add_parser("devspecial")
    ds.add_argument("--rows", type=Path)
    ds.add_argument("--budget", type=float, help="the probe's --budget in seconds (0: none); default: its default")
    db = sub.add_parser("devboard")
    db.add_argument("--board", type=Path, default=ROOT / "docs" / "bugs" / "rows" / "interpreter")
    db.add_argument("--before", type=Path, required=True)
    db.add_argument("--after", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.what == "devboard":
        return devboard(args.board, args.before, args.after)
    if args.what == "devspecial":
        return devspecial(args.rows, args.budget)
    if args.what == "cases":
        return cases(args.variants.split(","), args.backend, args.budget)
    return dev(args.rows, not args.no_run)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
