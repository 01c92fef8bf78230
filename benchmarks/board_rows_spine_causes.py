"""One-off: the cause of each difference between a board's rows before the spine (bb8618d) and the first made
again after it, as docs/measurements/boards-around-spine.md gives them (its "why" column).

    python benchmarks/board_rows_spine_causes.py interpreter > rows.md 2> tally.txt
    python benchmarks/board_rows_spine_causes.py gpu+interpreter

The rows are paired by ``board_rows.py --around bb8618d``. Each field that differs is matched to a cause by
rules written from reading the rows and the commits between them (``CAUSES``): a detector new in the after row
(its commit), a status that says the budget cut or spent it, a code found by a detector the row before did not
run to its end, the default run's pinned switches or sizes (d0c7524), an entry's erratum, the run's own
options. A difference no rule explains is printed UNEXPLAINED. The rules know this history (the commits named
are those between the rows compared): a record of how that file was made, not a general tool.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import board_rows as br  # noqa: E402

BOUNDARY = "bb8618d"
CAUSES = {
    "layout": "layout detector added (4b4620a, GPU side e1edc89)",
    "special": "special detector added (e044246, GPU side 24b71e3)",
    "scalars": "scalars detector added (92bdc37)",
    "sentinel": "sentinel detector added (c700767)",
    "sanitizers": "racecheck and Triton's sanitizers made opt-in probe tools, listed as skipped (263556d)",
    "viz": "triton-viz made an opt-in probe tool, listed as skipped (a21cbea)",
    "large": "large detector on the interpreter too, and the run past 2**31 decided by the probe (1f28c4e)",
    "facts": "kernel facts from the launched kernels only (551e2c8): repeat/first-call skipped where those have "
             "no atomics or autotune",
    "default": "default run as a user's probe file holds it (d0c7524): the author's switches pinned, no GPU_SIZES, "
               "--large by the sizes' rule",
    "nolarge": "the run's options: 33cf8ad's run gave the int32 entries --large, f6e32a7's did not (its message: "
               "'the four int32 overflows need sizes past 2**31, no longer given'; its code c9e962b has no d0c7524)",
    "tf32": "TF32-only failures set aside by shape fuzzing, TF32 rounding the P204 warning (abb5888)",
    "order42": "order: differences within tolerance are P303 (42fe462)",
    "budget": "budget/load: a detector cut, skipped as the budget was spent, or killed at its end",
    "rest": "budget/load: shapes-rest runs only where shape fuzzing was cut short",
    "fuzzreach": "budget/load: shape fuzzing reached other sizes within the 20 s budget (both runs near it)",
    "diag": "diagnose runs only where something is wrong (follows the catch)",
    "erratum": "entry erratum 8fe7196 (make_inputs drew sequence lengths <= 0; re-run 186b80c)",
    "orderfix": "entry erratum (its glue takes reduction codes modulo 5: 727c044, said in bug.toml by 1baed99); "
                "the order detector's IndexError in the glue (P000) gone",
    "gpunondet": "GPU atomics' order: three identical runs differed bitwise in one run and not in the other "
                 "(H100, H200; repeat ran in both)",
    "largefail": "the probe-decided large run failed to compile at its size (P000)",
    "segv": "a SIGSEGV at a fuzzed size (P001) no longer reached: the switch pinned (d0c7524)",
}
NEW_DETECTORS = {"layout": "layout", "special": "special", "scalars": "scalars", "sentinel": "sentinel",
                 "consan": "sanitizers", "gsan": "sanitizers", "fpsan": "sanitizers", "iisan": "sanitizers",
                 "racecheck": "sanitizers", "triton-viz": "viz"}


def raw(row: dict, key: str) -> str:
    """A detector's whole status in a row (``backend/detector``), or ``-`` where it did not run."""
    bk, det = key.split("/")
    for r in (row.get("probe") or {}).get("ran") or []:
        if r.get("backend") == bk and r.get("detector") == det:
            return r.get("status", "")
    return "-"


def short_of_time(status: str) -> bool:
    """Cut at the budget's end, skipped as the budget was spent, not run, hung (or absent)."""
    return status.startswith("cut") or "budget" in status or status in ("not run", "hang", "-") or \
        status.startswith("skipped: the kernel did not return")


def status_cause(key: str, a: str, b: str) -> str:
    """The cause of one detector's status change ``a`` -> ``b`` (whole statuses), or ``?...``."""
    bk, det = key.split("/")
    if a == "-" and det in NEW_DETECTORS:
        return NEW_DETECTORS[det]
    if det == "large":
        return "default" if (bk == "gpu" and a == "done" and b.startswith("skipped")) else "large"
    if short_of_time(a) or short_of_time(b):
        return "budget"
    simple = {"shapes-rest": "rest", "diagnose": "diag"}
    if det in simple:
        return simple[det]
    if det in ("repeat", "first-call") and a == "done" and "no atomics" in b:
        return "facts"
    if det == "order" and a == "error":
        return "orderfix"
    if det == "shapes" and a == "crash":
        return "segv"
    return f"?status {key} [{a[:50]} -> {b[:50]}]"


def findings(row: dict) -> list:
    return (row.get("probe") or {}).get("error_findings") or []


def code_causes(ra: dict, rb: dict, fa: dict, fb: dict, out: list) -> tuple[set, set]:
    """Match the codes gone and the codes new to causes (added to ``out``); what is left unmatched."""
    gone, new = set(fa["codes"]) - set(fb["codes"]), set(fb["codes"]) - set(fa["codes"])
    add = lambda k: out.append(k) if k not in out else None  # noqa: E731
    pinned = ((rb.get("probe") or {}).get("given") or {}).get("pinned") or []
    at_gpu_sizes = {f["code"] for f in findings(ra) if "(GPU_SIZES" in f.get("message", "")}
    died = {f["code"] for f in findings(ra) if f.get("code") == "P001" and "died at sizes" in f.get("message", "")}
    rules = [
        (pinned and gone & {"P401", "P403", "P001"}, "default", {"P401", "P403", "P001"}, set()),
        (gone & at_gpu_sizes, "default", at_gpu_sizes, set()),
        (gone & died and "near the budget" in br.budget_note(fa) and "near the budget" in br.budget_note(fb),
         "fuzzreach", died, set()),
        (gone & {"P404", "P403"}, "default", {"P404", "P403"}, set()),
        ("P206" in new, "layout", set(), {"P206"}),
        ("P207" in new, "special", set(), {"P207"}),
        ("P302" in gone and "P303" in fb["codes"], "order42", {"P302"}, set()),
        (gone & {"P401", "P201"} and "P204" in fb["codes"], "tf32", {"P401", "P201"}, set()),
        ("P501" in gone | new and fa["status"].get("gpu/repeat") == fb["status"].get("gpu/repeat") == "done",
         "gpunondet", {"P501"}, {"P501"}),
        ("P501" in gone and short_of_time(raw(rb, "gpu/repeat")), "budget", {"P501"}, set()),
        ("P501" in gone, "facts", {"P501"}, set()),
        ("P000" in gone, "orderfix", {"P000"}, set()),
        ("P000" in new and fb["status"].get("gpu/large") == "error", "largefail", set(), {"P000"}),
        ("P002" in new and fb["status"].get("gpu/reference") == "hang", "budget", set(), {"P002"}),
        ("P203" in gone and fb["status"].get("gpu/diagnose") != "done", "diag", {"P203"}, set()),
    ]
    for hit, cause, took_gone, took_new in rules:
        if hit:
            add(cause)
            gone -= took_gone
            new -= took_new
    for code in sorted(new):  # found by a detector the run before did not run to its end
        dets = {(f.get("backend"), f.get("detector")) for f in findings(rb) if f.get("code") == code}
        if dets and all(short_of_time(raw(ra, f"{b}/{d}")) or (d == "shapes" and raw(ra, f"{b}/shapes-rest").startswith("cut"))
                        for b, d in dets):
            add("budget")
            new.discard(code)
    return gone, new


def causes(before: dict, after: dict, pairs: dict, slug: str, v: str, d: dict, fa: dict, fb: dict) -> list:
    out = []
    ra, rb = before[slug][v], after[slug][v]
    for ch in d.get("status", []):
        key = ch.split(": ", 1)[0]
        c = status_cause(key, raw(ra, key), raw(rb, key))
        if c not in out:
            out.append(c)
    gone, new = code_causes(ra, rb, fa, fb, out)
    if gone or new:
        out.append(f"?codes -{sorted(gone)} +{sorted(new)}")
    if "error" in d:
        out.append("budget" if "budget" in d["error"][1] else "?error")
    if pairs[(slug, v)][1] == "f6e32a7":  # its code, c9e962b, is older than d0c7524
        out = [{"default": "nolarge", "segv": "fuzzreach"}.get(c, c) for c in out]
    if (slug, v) == ("vllm-decode-attention-page-offset-int32", "fixed") and "?" in "".join(out):
        out = [c for c in out if not c.startswith("?")] + ["erratum"]
    return list(dict.fromkeys(out))


def main(backend: str) -> None:
    before, after, pairs, _ = br.around(backend, BOUNDARY)
    res = br.compare(before, after)
    tally = collections.Counter()
    print(br.summary(res) + "\n")
    print("| entry | variant | commits | what differs | why | seconds before | seconds after |\n" + "|" + "---|" * 7)
    for slug, v, d, fa, fb in res["differ"]:
        cs = causes(before, after, pairs, slug, v, d, fa, fb)
        tally.update(cs)
        what = [f"{k}: {br.show(d[k][0])} -> {br.show(d[k][1])}" for k in ("caught", "codes", "first class",
                                                                              "errors", "error") if k in d]
        what += [f"status of {len(d['status'])} detectors"] if "status" in d else []
        why = "; ".join(CAUSES.get(c, c) if not c.startswith("?") else "UNEXPLAINED " + c[1:] for c in cs)
        cells = [slug, v, " -> ".join(pairs[(slug, v)]), "; ".join(what), why, br.budget_note(fa), br.budget_note(fb)]
        print("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    for c, n in tally.most_common():
        print(n, CAUSES.get(c, c), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "interpreter")
