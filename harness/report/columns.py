"""The report's detector columns: the detectors' case checks (``harness.probe.cases``), then the probe's findings,
grouped by what they look for.

Every cell is one finding ``{"status", "reason"}`` for one (case, column, backend,
variant): flagged, quiet, n/a (the reason says why), not run (a tool that failed: the
reason says why) or stale (the record is older than the kernel, or missing).

The probe (``harness.probe``, recorded by ``examples/probe_cases.py --record``) reports
findings with stable codes; a column is a family of codes (P0xx, "the detector crashed or
hung or failed", goes to the column of the detector it names). A problem (error or
warning) in the column flags the variant; information-only findings are noted, not
counted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from harness.probe import cases as D
from harness.report.records import PROBE, STALE, probe_skip


@dataclass(frozen=True)
class Column:
    name: str
    label: str
    where: str  # "both", "gpu", "interpreter" or "across"
    what: str
    yours: str
    codes: tuple = ()  # a probe column: the finding codes it shows
    probe_detectors: str = ""  # and the probe's detectors (harness.probe.runner's names, space-separated;
    # some are spelled like the harness's own detectors) whose crashes (P0xx) are its own
    since: tuple = ()  # ((backend, "YYYY-MM-DD HH:MM" UTC), ...): when its detector began to run there; a
    # probe record that keeps no list of what ran ("ran", older than that list) and is older than this did
    # not run it: its cell is "not in this record", never a quiet it did not measure

    @property
    def is_probe(self) -> bool:
        return bool(self.codes)


YOURS = "python -m harness probe your_kernel.py"
from harness.probe.detectors import memcheck as _probe_memcheck_module  # noqa: E402

_probe_memcheck = _probe_memcheck_module.DETECTOR.name  # the probe's line-level memcheck (not compute-sanitizer's)
PROBE_COLUMNS = (
    Column("probe-result", "probe: wrong result", "both", "the default sizes against a float64 reference "
           "(P201 wrong, P202 NaN/Inf)", YOURS, ("P201", "P202"), "reference"),
    Column("probe-layout", "probe: layout", "both", "the default sizes with each input the reference reads given, "
           "same values, row-padded, transposed or strided (P206)", YOURS, ("P206",), "layout",
           (("interpreter", "2026-11-29 07:30"), ("gpu", "2026-11-29 09:35"))),  # 4b4620a; its GPU side e1edc89
    Column("probe-special", "probe: special values", "both", "the default sizes with a row of zeros, a row of large "
           "finite values, +inf, -inf and NaN in the float inputs the reference reads, against what IEEE arithmetic "
           "of the reference gives (P207)", YOURS, ("P207",), "special",
           (("interpreter", "2026-11-29 09:32"), ("gpu", "2026-11-29 18:53"))),  # e044246; its GPU side 24b71e3
    Column("probe-scalars", "probe: launcher's arguments", "interpreter", "the launcher's own integer and bool "
           "arguments (flags, tiles) at other values, against the reference (P208)", YOURS, ("P208",), "scalars",
           (("interpreter", "2026-11-29 09:31"),)),  # 92bdc37
    Column("probe-sentinel", "probe: sentinel", "interpreter", "the contract's sentinel (a torch loss's "
           "ignore_index, -1) in the integer index inputs the reference reads (P209)", YOURS, ("P209",), "sentinel",
           (("interpreter", "2026-11-29 18:50"),)),  # c700767
    Column("probe-lanes", "probe: masked lanes / TF32", "interpreter", "re-runs a wrong result with masked lanes "
           "poisoned (P203) or tl.dot rounded like TF32 (P204) turned off", YOURS, ("P203", "P204")),
    Column("probe-memory", "probe: memory (line-level)", "interpreter", "every load, store and atomic against its "
           "tensor's bounds, at the kernel's line (P101-P103)", YOURS, ("P101", "P102", "P103"), _probe_memcheck),
    Column("probe-guards", "probe: guard bands", "both", "guard bands around every tensor, poison in torch.empty "
           "(P111-P114)", YOURS, ("P111", "P112", "P113", "P114"), "guards"),
    Column("probe-race", "probe: race", "interpreter", "stores to addresses that other programs touch (P301); "
           "lanes of one store colliding (P304), loads of other lanes' stores with no barrier (P305)",
           YOURS, ("P301", "P304", "P305"), "race"),
    Column("probe-order", "probe: order", "interpreter", "the grid run in other program orders (P302; P303 float "
           "atomics)", YOURS, ("P302", "P303"), "order"),
    Column("probe-shapes", "probe: shape fuzz", "both", "seeded shape fuzzing, shrunk to the smallest failure "
           "(P401; P402 empty input; P403 a grid past CUDA's limit; P404 past 2**31 elements, where an int32 offset "
           "(P406, a note) or --large asks; P405 the launcher raised at a fuzzed size)", YOURS,
           ("P401", "P402", "P403", "P404", "P405", "P406"),
           "shapes shapes-rest large"),
    Column("probe-calls", "probe: repeat / first call", "both", "identical runs bitwise (P501), the first call "
           "against the second (P502)", YOURS, ("P501", "P502"), "repeat first-call"),
    Column("probe-gpu-tools", "probe: GPU tools", "gpu", "compute-sanitizer memcheck (P601), TRITON_DEBUG "
           "asserts (P602)", YOURS, ("P601", "P602"), "compute-sanitizer triton-debug"),
)


# the probe's codes no column shows: P0xx go to the column of the detector they name; P205 (the GPU against the
# interpreter, from both backends' runs) is the "GPU vs interpreter" column's question; P603 (triton-viz, an
# optional tool the case records of the probe do not run) is the question of the triton-viz case check's column,
# which reads it from detect's probe runs, and P604-P608 (racecheck and Triton's four sanitizers, GPU tools the
# case records of the probe do not run) the questions of their case checks' columns, read the same way
NOT_A_COLUMN = ("P205", "P603", "P604", "P605", "P606", "P607", "P608")


def columns(probe_backends: list[str]) -> list[Column]:
    """The case checks in their order, then the probe's columns on the backends probed."""
    out = [Column(d.name, d.label, d.where, d.what, d.yours) for d in D.DETECTORS]
    for c in PROBE_COLUMNS:
        shown = [b for b in probe_backends if c.where in ("both", b)]
        if shown:
            out.append(c if len(shown) == 2 or c.where != "both" else replace(c, where=shown[0]))
    return out


def backends_of(col: Column) -> list[str]:
    return {"both": ["gpu", "interpreter"], "across": []}.get(col.where, [col.where])


def elsewhere(col: Column, backend: str) -> dict:
    """The n/a finding of a column on a backend it does not run on."""
    if not col.is_probe and col.name in D.BY_NAME and (why := D.BY_NAME[col.name].not_applicable(backend)):
        return {"status": D.NA, "reason": why}
    where = "a GPU" if col.where == "gpu" else "the CPU interpreter"
    if col.is_probe and next(c for c in PROBE_COLUMNS if c.name == col.name).where == "both":
        return {"status": D.NA, "reason": f"no case has a probe record on {'a GPU' if backend == 'gpu' else 'the CPU'}"
                                          " yet, so the report shows the probe on the other backend only"}
    return {"status": D.NA, "reason": f"the probe runs it on {where} only" if col.is_probe else f"runs on {where} only"}


def _stale(rec: dict | None, what: str) -> dict | None:
    if rec is None:
        return {"status": STALE, "reason": f"no {what} record"}
    if rec.get("stale"):
        return {"status": STALE, "reason": rec["stale"]}
    return None


def cell(spec, recs: dict, col: Column, backend: str, variant: str) -> dict:
    """The finding of one column for one variant on one backend."""
    if col.is_probe:
        return probe_cell(spec, recs.get(PROBE + backend), col, backend, variant)
    rec = recs.get(backend)
    if (st := _stale(rec, f"detect-{backend}")) is not None:
        return st
    f = ((rec.get("variants") or {}).get(variant) or {}).get("findings", {}).get(col.name)
    if f is None:  # records.gather calls such a record stale; kept for a record given some other way
        return {"status": STALE, "reason": "not in this record (the detector is newer than the record)"}
    return f


def _in_column(f: dict, col: Column) -> bool:
    """A finding of the column's codes, or a P0xx (crash, hang, failure) of one of its detectors: one such
    finding may name several ("reference, guards, memcheck": the launcher raised in each the same way)."""
    code = f.get("code", "")
    named = {d.strip() for d in str(f.get("detector", "")).split(",")}
    return code in col.codes or (code.startswith("P0") and bool(named & set(col.probe_detectors.split())))


REMAKE = {"interpreter": "python examples/probe_cases.py --record",
          "gpu": "python examples/probe_cases.py --record --backend gpu"}


def _not_measured(rec: dict, col: Column, backend: str, variant: str) -> dict | None:
    """A column with no finding whose detectors did not look: not in the record (stale) or skipped (n/a), or None.

    A record lists each detector's status (``ran``, from examples/probe_cases.py since the special, scalars
    and sentinel columns); an older one is judged by its date against the column's ``since``."""
    names = col.probe_detectors.split()
    ran = rec.get("ran")
    if not names:  # a column of experiments' codes (masked lanes, TF32): no detector of its own to look for
        return None
    if ran is None:
        date, since = (rec.get("env") or {}).get("date", ""), dict(col.since).get(backend)
        if since and date[:16] < since:
            return {"status": STALE, "reason": D.short(f"not in this record (made {date[:10] or 'undated'}; "
                                                      f"{'/'.join(names)} runs on the {backend} since {since[:10]}): "
                                                      f"{REMAKE[backend]}")}
        return None
    status = {d: st for d, st in (ran.get(variant) or {}).items() if d in names}
    if not status:
        return {"status": STALE, "reason": D.short(f"not in this record ({'/'.join(names)} did not run): "
                                                  f"{REMAKE[backend]}")}
    if all(st.startswith(("skipped", "not run")) for st in status.values()):
        first = next(iter(status.values()))
        if any("budget" in st or st.startswith("not run") for st in status.values()):  # out of time, or a crash
            return {"status": D.NOT_RUN, "reason": D.short(f"the probe did not run it: {first}")}
        why = first.removeprefix("skipped").lstrip(": ")
        return {"status": D.NA, "reason": D.short(f"the probe skipped it: {why or 'skipped'}")}
    return None


def probe_cell(spec, rec: dict | None, col: Column, backend: str, variant: str) -> dict:
    if (why := probe_skip(spec, backend)) is not None:
        return {"status": D.NA, "reason": f"the probe does not run this case: {why}"}
    if (st := _stale(rec, f"probe-{backend}")) is not None:
        return st
    if rec.get("unavailable"):  # the recording machine lacked what the case needs (a second GPU)
        return {"status": D.NA, "reason": D.short(f"the probe could not run it where it was recorded: "
                                                  f"{rec['unavailable']}")}
    found = [f for f in rec.get(variant, []) if _in_column(f, col)]
    if not found and (why := _not_measured(rec, col, backend, variant)) is not None:
        return why
    failed = [f for f in found if f.get("code") == "P000" and f.get("severity") != "info"]
    problems = [f for f in found if f.get("severity") != "info" and f not in failed]
    notes = [f for f in found if f.get("severity") == "info"]
    if problems:
        f = problems[0]
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        at = f" at {f['line']}" if f.get("line") else ""
        return {"status": D.FLAGGED, "reason": D.short(f"{f['code']} {f.get('detector', '')}{at}: "
                                                        f"{f.get('message', '')}{more}")}
    if failed:
        return {"status": D.NOT_RUN, "reason": D.short(f"the probe's detector failed: {failed[0].get('message', '')}")}
    info = f"; information only: {notes[0]['code']} {notes[0].get('message', '')}" if notes else ""
    return {"status": D.QUIET, "reason": D.short(f"no {'/'.join(col.codes)} finding{info}")}


def across_cell(cross: dict, recs: dict, variant: str) -> dict:
    """GPU against the interpreter: stale when either side is."""
    for b in ("gpu", "interpreter"):
        if (st := _stale(recs.get(b), f"detect-{b}")) is not None:
            return st
    return cross[variant]
