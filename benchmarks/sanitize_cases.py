"""``python benchmarks/sanitize_cases.py``: ``python -m harness sanitize`` on every case, each
case's broken and fixed kernel launched on its case.py inputs from a plain script
(benchmarks/sanitize_case.py), and what the sanitizer costs against the plain interpreter.

Per case and variant, one after another (the timings share no CPU with each other):

1. ``python -m harness sanitize --json benchmarks/sanitize_case.py SLUG VARIANT``: the findings
   with the default checks; and again with the opt-in ones (``--tf32 --orders``) for the cases
   whose evidence is TF32 or atomic order (every case with ``SANITIZE_ALL_OPT_IN=1``);
2. ``python benchmarks/sanitize_case.py SLUG VARIANT --time``: the launcher's calls under the
   plain interpreter (the same CPU fixes and fake CUDA) and inside the sanitizer's session.

Writes docs/measurements/sanitize-cases.md (the table and the counts) and sanitize-cases.json;
``--render`` writes the .md again from the .json.
Cases without interpreter sizes (``skip`` there) are listed and not run. ``--only SLUG,...``
runs some; ``--timeout S`` (default 60) ends a run that takes longer (a hang).
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "docs" / "measurements"
SCRIPT = "benchmarks/sanitize_case.py"
# what a case's [diagnosis] evidence says the sanitizer can see: by default, and with --tf32 --orders
VISIBLE = {"oob-load", "oob-store", "race", "read-write-race", "grid-limit"}
OPT_IN = {"tf32", "atomic-order"}


def run(cmd: list, timeout: float) -> tuple:
    """(exit status or "timeout", stdout, seconds), the process group killed at the timeout."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out, time.perf_counter() - t0
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return "timeout", "", time.perf_counter() - t0
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)


def findings(slug: str, variant: str, extra: list, timeout: float) -> dict:
    code, out, secs = run([sys.executable, "-m", "harness", "sanitize", "--json", *extra, SCRIPT, slug, variant],
                          timeout)
    if code == "timeout":
        return {"status": "timeout", "codes": [], "seconds": secs}
    try:
        doc = json.loads(out)
    except ValueError:
        return {"status": f"exit {code}, no JSON", "codes": [], "seconds": secs}
    codes = [f"{f['code']} {f['severity']}" for f in doc["findings"]]
    return {"status": f"exit {code}", "codes": sorted(set(codes)), "lines": sorted({f["line"] for f in doc["findings"]}),
            "launches": doc["launches"], "seconds": secs}


def timing(slug: str, variant: str, timeout: float) -> dict:
    code, out, _ = run([sys.executable, SCRIPT, slug, variant, "--time"], timeout)
    try:
        return json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": "timeout" if code == "timeout" else f"exit {code}"}


def measure(spec, timeout: float) -> dict:
    row = {"case": spec.slug, "defect": spec.defect, "evidence": list(spec.diagnosis or []),
           "interpreter": spec.expect["interpreter"]}
    if "interpreter" not in spec.sizes or "skip" in spec.expect["interpreter"]:
        why = spec.skip_reason.get("interpreter") if isinstance(spec.skip_reason, dict) else spec.skip_reason
        return {**row, "skipped": why or "the case skips the interpreter"}
    for variant in ("broken", "fixed"):
        opt_in = set(row["evidence"]) & OPT_IN or os.environ.get("SANITIZE_ALL_OPT_IN")
        row[variant] = {"default": findings(spec.slug, variant, [], timeout),
                        "opt_in": findings(spec.slug, variant, ["--tf32", "--orders"], timeout) if opt_in
                        else {"status": "not run", "codes": []},
                        "time": timing(spec.slug, variant, timeout)}
        print(f"{spec.slug} {variant}: {row[variant]['default']['codes']} | opt-in "
              f"{row[variant]['opt_in']['codes']} | {row[variant]['time']}", flush=True)
    return row


def reported(result: dict, notes: bool = False) -> bool:
    """An error or warning (``notes``: any finding) in the run."""
    return any(c.endswith(("error", "warning")) or notes for c in result.get("codes", []))


def verdicts(row: dict) -> dict:
    """Whether the sanitizer should see the broken kernel, whether it did, and the fixed one's alarms."""
    if "skipped" in row:
        return {}
    ev = set(row["evidence"])
    should = bool(ev & VISIBLE) or bool(ev & OPT_IN)
    b, f = row["broken"], row["fixed"]
    caught = reported(b["default"]) or (bool(ev & OPT_IN) and reported(b["opt_in"], notes=True))
    return {"should": should, "caught": caught, "fixed_alarm": reported(f["default"]),
            "fixed_alarm_opt_in": reported(f["opt_in"])}


def cell(result: dict) -> str:
    if result.get("status") in ("timeout", "not run"):
        return result["status"]
    return ", ".join(result.get("codes", [])) or "none"


def ratio(t: dict) -> float | None:
    if "plain_s" not in t or t["plain_s"] <= 0:
        return None
    return t["sanitized_s"] / t["plain_s"]


def table(rows: list) -> list:
    lines = ["| case | evidence | interpreter (case.toml) | sanitizer should see it | broken: findings | broken: opt-in (--tf32 --orders) | "
             "fixed: findings | fixed: opt-in | plain s (broken/fixed) | sanitized / plain |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "skipped" in r:
            why = r["skipped"].get("interpreter", "") if isinstance(r["skipped"], dict) else r["skipped"]
            lines.append(f"| {r['case']} | {', '.join(r['evidence'])} | {', '.join(r['interpreter'])} | not run: "
                         f"{why[:90]} | | | | | | |")
            continue
        v, b, f = verdicts(r), r["broken"], r["fixed"]
        times = [x for x in (ratio(b["time"]), ratio(f["time"])) if x is not None]
        plain = "/".join(f"{t['plain_s']:.2f}" if "plain_s" in t else t.get("error", "?") for t in (b["time"], f["time"]))
        lines.append(f"| {r['case']} | {', '.join(r['evidence'])} | {', '.join(r['interpreter'])} | "
                     f"{'yes' if v['should'] else 'no'} | "
                     f"{cell(b['default'])} | {cell(b['opt_in'])} | {cell(f['default'])} | {cell(f['opt_in'])} | "
                     f"{plain} | {' / '.join(f'{x:.2f}x' for x in times) or '?'} |")
    return lines


def counts(rows: list) -> list:
    run_rows = [r for r in rows if "skipped" not in r]
    v = {r["case"]: verdicts(r) for r in run_rows}
    should = [c for c in v if v[c]["should"]]
    caught = [c for c in should if v[c]["caught"]]
    beyond = [c for c in v if not v[c]["should"] and reported(next(r for r in run_rows if r["case"] == c)["broken"]["default"])]
    alarms = [c for c in v if v[c]["fixed_alarm"]]
    alarms_opt = [c for c in v if v[c]["fixed_alarm_opt_in"]]
    timed = [(x, t["plain_s"], f"{r['case']} {v}") for r in run_rows for v in ("broken", "fixed")
             if (x := ratio(t := r[v]["time"])) is not None]
    ratios = [x for x, *_ in timed]
    over = [f"{name} ({x:.1f}x of {p * 1e3:.0f} ms)" for x, p, name in sorted(timed, reverse=True) if x > 3]
    big = [x for x, p, _ in timed if p >= 0.05]
    rows_by = {r["case"]: r for r in run_rows}
    shown = [c for c in should if set(rows_by[c]["interpreter"]) - {"hidden", "ok", "skip"}]
    out = [f"- cases run: {len(run_rows)} of {len(rows)} (the others skip the interpreter)",
           f"- broken kernels the sanitizer should see (their evidence is an out-of-bounds access, a race, a grid "
           f"past CUDA's limit, or with --tf32/--orders TF32 and atomic order): {len(should)}; reported: "
           f"{len(caught)}" + (f"; missed: {', '.join(sorted(set(should) - set(caught)))}" if set(should) - set(caught)
                                else ""),
           f"- of those, the ones whose case declares the interpreter shows the bug (not hidden there): {len(shown)}; "
           f"reported: {len([c for c in shown if c in caught])}",
           f"- other broken kernels with an error or warning all the same: {len(beyond)}"
           + (f" ({', '.join(beyond)})" if beyond else ""),
           f"- fixed kernels with an error or warning: {len(alarms)}" + (f" ({', '.join(alarms)})" if alarms else "")
           + f"; with --tf32 --orders: {len(alarms_opt)}" + (f" ({', '.join(alarms_opt)})" if alarms_opt else "")]
    if ratios:
        out.append(f"- sanitized launch time / plain interpreter: median {statistics.median(ratios):.2f}x, "
                   f"90th percentile {sorted(ratios)[int(0.9 * len(ratios))]:.2f}x, max {max(ratios):.2f}x over "
                   f"{len(ratios)} kernels (target <= 3x); over 3x: {len(over)}" + (f" ({', '.join(over)})" if over else ""))
        if big:
            out.append(f"- kernels whose plain launches take 50 ms or more: {len(big)}, median "
                       f"{statistics.median(big):.2f}x, max {max(big):.2f}x; in all, "
                       f"{sum(p for _, p, _ in timed):.1f} s plain against "
                       f"{sum(x * p for x, p, _ in timed):.1f} s sanitized")
    return out


def environment() -> str:
    import platform

    import torch
    import triton

    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, Python "
            f"{platform.python_version()}, torch {torch.__version__}, triton {triton.__version__}, "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


def write(rows: list, env: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "sanitize-cases.json").write_text(json.dumps({"environment": env, "rows": rows}, indent=1) + "\n")
    text = ["# `sanitize` on every case", "",
            "`python benchmarks/sanitize_cases.py`: each case's broken and fixed kernel launched on its case.py "
            "inputs (`device=\"cuda\"`, the interpreter sizes) from a plain script, benchmarks/sanitize_case.py, "
            "under `python -m harness sanitize` (the default checks; `--tf32 --orders` too where the case's "
            "evidence is TF32 or atomic order); the time of the launcher's calls inside the sanitizer against the "
            "plain interpreter with the same CPU fixes, fake CUDA and one-run autotune timing (four runs each way, "
            "taken by turns, each after a warm-up call, the fastest of each; the CPU is shared with other work, so single "
            "timings are noisy).",
            "", f"Measured on {env}.", ""]
    text += counts(rows) + [""] + table(rows)
    (OUT / "sanitize-cases.md").write_text("\n".join(text) + "\n")
    print("\n".join(counts(rows)))


def main() -> int:
    from harness.core import discovery
    from harness.core.spec import load_spec

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default="")
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--render", action="store_true", help="write the .md again from sanitize-cases.json, running nothing")
    a = p.parse_args()
    if a.render:
        doc = json.loads((OUT / "sanitize-cases.json").read_text())
        rows, env = (doc["rows"], doc["environment"]) if isinstance(doc, dict) else (doc, environment())
        write(rows, env)
        return 0
    only = {s for s in a.only.split(",") if s}
    specs = [load_spec(f) for f in discovery.case_folders()]
    rows = [measure(s, a.timeout) for s in specs if not only or s.slug in only]
    write(rows, environment())
    return 0


if __name__ == "__main__":
    sys.exit(main())
