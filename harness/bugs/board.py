"""The real-bug benchmark run: each entry verified at its trigger, then scored.

- ``verify``: the probe's one named detector (the reference by default) at the entry's
  trigger sizes, on the buggy and on the fixed version; verified when the buggy version
  shows a problem and the fixed one none. For the reference, masked lanes read 0, as they
  do on today's GPUs (the probe's poison is a warning's business, not the bug's); another
  detector (memcheck, for a fix that changed no output) runs as the probe runs it.
- ``score``: the whole probe, as a user would run it (default sizes, every detector), on
  both versions; and the peers on the same launchers: a plain test at the default sizes,
  random-shape fuzzing (gpucheck-style), and any peer tool installed (``harness.bugs.peers``).

Each (entry, variant) is one task: ``run_tasks`` runs them in threads here, or as Ray tasks
(``--ray ADDRESS``), and both give the same rows. A task never raises: an entry that cannot
run (a bad manifest, a version that will not install, a module that will not import) is a
row saying "could not run: why".
"""

from __future__ import annotations

import os
import statistics
import time

from harness.bugs import manifest, source

PEERS = ("plain", "fuzz")
TIMEOUT = 120.0


def fetch_entry(entry) -> str:
    """Both versions into the cache; "" when done, else why not (one line)."""
    if entry.kind != "released":
        return ""
    try:
        for v in manifest.VARIANTS:
            side = entry.side(v)
            source.fetch(side["package"], side["version"], entry.module_of(v)[1], entry.pip_args, entry.pip_env)
    except source.SourceError as e:
        return str(e)
    return ""


def _summary(report, entry) -> dict:
    from harness.probe.findings import ERROR

    probs = sorted(report.problems, key=lambda f: f.severity != ERROR)  # errors first
    errors = [f for f in probs if f.severity == ERROR]
    diagnosis = []
    ranked = getattr(report, "diagnosis", None)  # a ranked diagnosis, best first, where the probe makes one
    evidence = []  # each diagnosis's evidence: scored past one that rests on the fixed version's defects
    if ranked:
        diagnosis = [d["defect"] for d in ranked if d.get("defect")]
        evidence = [[e[:300] for e in d.get("evidence", [])[:8]] for d in ranked if d.get("defect")]
    for f in sorted(probs, key=lambda f: f.severity != ERROR) if not ranked else ():
        if f.defect_class and f.defect_class not in diagnosis:  # else: the findings' classes, errors first
            diagnosis.append(f.defect_class)
    first = probs[0] if probs else None
    # caught: an error (a warning names undefined behaviour the kernel relies on: not a bug shown), or
    # where that reliance is the bug (the entry's [verify] severity = "warning"), its detector's warning
    relied = entry.verify.get("severity") == "warning" and any(
        f.severity != ERROR and f.detector == entry.verify["detector"] for f in probs)
    return {
        "caught": bool(errors) or relied, "errors": len(errors),
        "warnings": sum(f.severity != ERROR for f in probs),
        "detectors": sorted({f.detector for f in probs}), "codes": sorted({f.code for f in probs}),
        "first": {"code": first.code, "detector": first.detector, "message": first.message[:240],
                  "line": first.line} if first else None,
        "error_findings": [{"code": f.code, "detector": f.detector, "message": f.message[:400], "backend": f.backend}
                           for f in errors[:20]],  # matched against the entry's [[fixed_known]]
        "diagnosis": diagnosis,
        "diagnosis_evidence": evidence,
        "diagnosis_first_right": bool(diagnosis) and diagnosis[0] == entry.defect,
        "diagnosis_top3_right": entry.defect in diagnosis[:3],
        "seconds": round(report.seconds, 1),
        "budget": report.budget,  # the whole probe's --budget in seconds (0: none)
        "ran": [{"detector": d, "status": st, "seconds": round(s, 1), "backend": b} for b, d, s, st in report.ran],
        # what the diagnosis was made from, so another ranking can be tried on the rows alone
        "problems": [{k: v for k, v in f.to_json().items() if v not in (None, "", [], {})} for f in probs[:30]],
        "observed": {b: {k: str(v)[:240] for k, v in ((m.get("seen") or {}).get("evidence") or {}).items()}
                     for b, m in report.meta.items() if isinstance(m, dict)},
        # the probe's notes on what it did not check (the budget's cuts, the run past 2**31 elements not made and
        # why, an exception at a fuzzed size): what explains a miss, kept with the row
        "notes": [{"code": f.code, "detector": f.detector, "backend": f.backend, "message": f.message[:300]}
                  for f in report.findings if f.severity == "info" and f.code in NOTE_CODES][:20],
        # how far shape fuzzing got on each backend (sizes tried of those planned, in how long)
        "fuzz": {b: (m.get("seen") or {}).get("fuzz") for b, m in report.meta.items()
                 if isinstance(m, dict) and (m.get("seen") or {}).get("fuzz")},
    }


NOTE_CODES = ("P000", "P404", "P406")  # the notes a row keeps (``_summary``): what was not checked, and why

WITH_GPU = "gpu+interpreter"  # one probe of both backends at once: `probe`'s default on a machine with a GPU


def parts(backend: str) -> list:
    """The backends a scoreboard's backend runs: itself, or both for ``gpu+interpreter``."""
    return backend.split("+")


def probe_variant(entry, variant: str, backend: str, *, detectors=None, sizes=None, options=None,
                  jobs: int = 2, timeout: float = TIMEOUT, budget: float | None = None) -> dict:
    """One version probed as ``harness probe`` would (``budget`` None: the probe's default; 0: none)."""
    from harness.probe.runner import ProbeInputError, probe

    try:
        report = probe(str(entry.glue), launcher=entry.launcher(variant), backends=parts(backend), detectors=detectors,
                       sizes=sizes, jobs=jobs, timeout=timeout, options=options or {}, budget=budget)
    except ProbeInputError as e:
        return {"error": f"could not run: {' '.join(str(e).split())}"[:300]}
    if (why := report.meta.get(parts(backend)[0], {}).get("unavailable")) is not None:
        return {"error": f"could not run: {why}"[:300]}
    failed = {}  # backend -> why: the upstream module did not import there, nothing of the kernel ran
    for f in report.findings:
        if (at := f.message.find("UpstreamImportError")) >= 0:
            failed.setdefault(f.backend, f.message[at:])
    if failed and set(failed) >= set(parts(backend)):
        return {"error": f"could not run: {next(iter(failed.values()))}"[:300]}
    if why := _no_kernel(report, backend):  # the launcher ran and raised (or returned) without launching
        return {"error": why}
    if not failed and not report.checked:  # every detector failed, was killed or stopped: nothing about the kernel
        said = "; ".join([f"{d} on {b}: {st}" for b, d, _, st in report.ran if not st.startswith("skipped")][:3])
        first = next((f.message for f in report.findings if f.code in ("P000", "P001")), "")
        return {"error": f"could not run: no detector produced a result about the kernel ({said}){': ' if first else ''}"
                         f"{' '.join(first.split())}"[:300]}
    if failed:  # one backend of two: the other's findings stand alone, and the row says so
        from harness.probe.runner import rediagnose

        report.findings = [f for f in report.findings if f.backend not in failed]
        rediagnose(report)
    row = _summary(report, entry)
    if failed:
        row["not_run_on"] = {b: f"could not run: {why}"[:300] for b, why in failed.items()}
    return row


def _no_kernel(report, backend: str) -> str:
    """"could not run: ..." where the launcher launched no Triton kernel on any backend the probe ran
    (each worker records the files of the kernels launched): nothing of the kernel under test ran, as
    where a launcher refuses the device (torchao's mxfp8 kernels outside compute capability 10.0), so
    what the probe says is not about the kernel; "" otherwise."""
    launched = [(m.get("seen") or {}).get("kernel_files") for b, m in report.meta.items()
                if b in parts(backend) and isinstance(m, dict)]
    if not launched or any(k != [] for k in launched):
        return ""
    said = next((f.message for f in report.findings if f.code == "P001"), "")
    return f"could not run: the launcher launched no Triton kernel here{': ' + said if said else ''}"[:300]


def plain_variant(entry, variant: str, backend: str, *, sizes: list | None, trials: int = 16,
                  timeout: float = TIMEOUT, pinned=()) -> dict:
    """The plain test (``sizes=[{}]``: the defaults) or random shapes (``sizes=None``; ``pinned``
    keywords kept at their defaults), in a worker."""
    from harness.run.isolate import exit_message, run_process

    t0 = time.monotonic()
    proc = run_process("harness.bugs.plain", {"file": str(entry.glue), "launcher": entry.launcher(variant),
                                              "sizes": sizes, "trials": trials, "seed": 0, "backend": backend,
                                              "pinned": sorted(pinned)},
                       backend=backend, timeout=timeout)
    results = [e for e in proc.events if e.get("event") == "result"]
    if err := next((e for e in proc.events if e.get("event") == "error"), None):
        return {"error": f"could not run: {err['message']}"[:300]}
    if not results and not any(e.get("event") == "loaded" for e in proc.events) and not proc.hung:
        # the glue ended the worker (exited, was killed) before the launcher was known: nothing was tested
        return {"error": f"could not run: the worker ended as it loaded {entry.glue.name}: "
                         f"{exit_message(proc.returncode)}"[:300]}
    done = any(e.get("event") == "done" for e in proc.events)
    # At the default sizes an exception fails the test; a fuzzer skips a size the launcher refuses
    # (an assert, a size no config fits), as a fuzzing test's author would. A crash fails either.
    failed = [r for r in results if not r["close"] and (sizes is not None or not r["error"])]
    if proc.hung and not failed:  # slow (the interpreter at a large size) is not a finding: not run
        return {"error": f"could not run: no result in {timeout:.0f}s after {len(results)} sizes"}
    out = {"caught": bool(failed) or not done, "tried": len(results), "seconds": round(time.monotonic() - t0, 1),
           "refused": sum(bool(r["error"]) for r in results) if sizes is None else 0}
    if failed:
        r = failed[0]
        out["first"] = {"sizes": r["sizes"], "message": r["error"] or "differs from the reference"}
    elif not done:  # a crash fails a plain test too
        out["first"] = {"sizes": {}, "message": exit_message(proc.returncode)}
    return out


def verify(entry, backend: str, *, timeout: float = TIMEOUT) -> dict:
    """The buggy version fails at the trigger and the fixed one passes, by the entry's detector.
    ``could_not_run`` (and a ``why`` starting "could not run"): a version that could not be fetched,
    or a variant that gave no result; such a result is never recorded."""
    det = entry.verify["detector"]
    sizes = {k: v for k, v in entry.verify_sizes(backend).items() if isinstance(v, int) and not isinstance(v, bool)}
    # A wrong result is judged as today's GPUs compute it (masked lanes read 0); an access that
    # changes no output is judged by its detector as the probe runs it (masked lanes are undefined).
    options = {"poison_masked": False} if det == "reference" else {}
    out = {"slug": entry.slug, "backend": backend, "detector": det, "sizes": sizes}
    if why := fetch_entry(entry):  # a registry outage is not a failed verification
        return {**out, "verified": False, "could_not_run": True, "why": f"could not run: {why}"[:300]}
    for v in manifest.VARIANTS:  # whether the bug shows at its trigger, not how fast: no budget, each detector's timeout
        out[v] = probe_variant(entry, v, backend, detectors=[det], sizes=sizes, options=options, timeout=timeout,
                               budget=0)
    errs = [out[v]["error"] for v in manifest.VARIANTS if "error" in out[v]]
    if errs:  # a glue that exits or dies, a module that will not import, no result: not verified either way
        return {**out, "verified": False, "could_not_run": True, "why": errs[0]}
    ok = out["buggy"]["caught"] and not out["fixed"]["caught"]
    why = "" if ok else ("the buggy version passed" if not out["buggy"]["caught"] else "the fixed version failed")
    return {**out, "verified": ok, "why": why}


def profile_inputs(entry, variant: str, *, timeout: float = TIMEOUT) -> dict:
    """What the board reads from the entry's make_inputs before the probe runs (``plain.profile``:
    the author's input switches, the largest input at FUZZ's tops), in a worker on the CPU;
    ``{"error": "could not run: ..."}`` where it cannot."""
    from harness.run.isolate import exit_message, run_process

    proc = run_process("harness.bugs.plain", {"file": str(entry.glue), "launcher": entry.launcher(variant),
                                              "profile": True, "seed": 0, "backend": "interpreter"},
                       backend="interpreter", timeout=timeout)
    if err := next((e for e in proc.events if e.get("event") == "error"), None):
        return {"error": f"could not run: {err['message']}"[:300]}
    got = next((e for e in proc.events if e.get("event") == "profile"), None)
    if got is None:
        return {"error": f"could not run: make_inputs' profile gave no answer: {exit_message(proc.returncode)}"[:300]}
    return {k: v for k, v in got.items() if k not in ("event", "t")}


def trigger_sizes(entry, backend: str) -> dict:
    """The entry's trigger (``[verify]``) as make_inputs keywords: the interpreter's, which every
    backend can run at, as the defaults; the integer ones (a size, a switch)."""
    return {k: v for k, v in entry.verify_sizes("interpreter").items() if isinstance(v, int) and not isinstance(v, bool)}


def switches(entry, prof: dict) -> list:
    """The author's input switches (bugs/README.md): the keywords the trigger sets away from
    make_inputs' defaults that shape no tensor (``plain.profile``'s ``shapeless``)."""
    trigger, defaults = {}, prof.get("defaults") or {}
    for b in ("interpreter", "gpu"):
        trigger.update(entry.verify_sizes(b))
    return sorted(k for k in prof.get("shapeless") or () if k in trigger and trigger[k] != defaults.get(k))


def given(entry, backend: str, prof: dict, run: str) -> tuple[dict, dict, dict]:
    """(sizes, options, what was given) for one of the board's runs (bugs/README.md): ``"probe"``,
    the default run, as a user's probe file would hold it (the author's switches pinned, no
    GPU_SIZES, no ``--large``: the probe decides on the run past 2**31 elements itself, from the
    launched kernels' int32 offsets, as it does for a user); ``"trigger"``, given the trigger (its
    sizes as the defaults, the GPU's trigger as GPU_SIZES where it differs, the switches free,
    ``--large`` wherever there is a GPU)."""
    gpu = "gpu" in parts(backend)
    if run == "probe":
        options = {"pinned": switches(entry, prof), "gpu_sizes": False}
        return {}, options, {"run": "default", "pinned": options["pinned"], "gpu_sizes": False,
                             "large": "decided by the probe", "largest": prof.get("largest")}
    sizes = trigger_sizes(entry, backend)
    options = {"large": gpu}
    on_gpu = {k: v for k, v in entry.verify_sizes("gpu").items() if isinstance(v, int) and not isinstance(v, bool)}
    if on_gpu and on_gpu != sizes:
        options["gpu_sizes"] = on_gpu
    return sizes, options, {"run": "trigger", "sizes": sizes, "gpu_sizes": options.get("gpu_sizes", "declared"),
                            "large": gpu}


RUNS = ("probe", "trigger")  # the default run (scored) and the given-the-trigger run, each a key of a row


def score_task(slug: str, variant: str, backend: str, peers: tuple = PEERS, jobs: int = 2,
               timeout: float = TIMEOUT, probe: bool = True, runs: tuple = RUNS) -> dict:
    """One (entry, variant): the probe's runs (``runs``: the default one, ``"probe"``, and the one
    given the trigger; none unless ``probe``: peer columns added to an earlier run) and the peers.
    Never raises; a row either way."""
    row = {"slug": slug, "variant": variant, "backend": backend}
    try:
        entry = manifest.read(manifest.root() / slug)
    except manifest.ManifestError as e:
        return {**row, "error": f"could not run: {e}"}
    if why := fetch_entry(entry):
        return {**row, "error": f"could not run: {why}"}
    prof = profile_inputs(entry, variant, timeout=timeout)
    if "error" in prof:
        return {**row, "error": prof["error"]}
    for run in (runs if probe else ()):
        sizes, options, said = given(entry, backend, prof, run)
        row[run] = {**probe_variant(entry, variant, backend, jobs=jobs, timeout=timeout, sizes=sizes,
                                    options=options), "given": said}
        if "error" in row[run] and run == RUNS[0]:  # the scored run could not run: the row says why
            return {**row, "error": row[run]["error"]}
    from harness.bugs import peers as peer_tools

    for name in peers:
        if name == "plain":
            row["plain"] = plain_variant(entry, variant, parts(backend)[0], sizes=[{}], timeout=timeout)
        elif name == "fuzz":
            row["fuzz"] = plain_variant(entry, variant, parts(backend)[0], sizes=None, timeout=timeout,
                                        pinned=switches(entry, prof))
        else:
            row[name] = peer_tools.run(name, entry, variant, parts(backend)[0], timeout=timeout)
    return row


def run_tasks(tasks: list[tuple], *, jobs: int, ray_address: str | None = None, gpus: int = 0, progress=None,
              on_row=None) -> list:
    """``score_task`` over ``tasks`` (slug, variant, backend, peers): threads here, or Ray tasks.
    ``on_row(row)`` is called as each ends (the caller records it)."""
    say = progress or (lambda _m: None)
    if ray_address:
        from harness.bugs import distributed

        return distributed.run(score_task, tasks, ray_address, gpus=gpus, progress=say, on_row=on_row)
    from concurrent.futures import ThreadPoolExecutor

    def one(t):
        r = score_task(*t)
        say(_progress_line(r))
        if on_row is not None:
            on_row(r)
        return r

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, tasks))


def _progress_line(r: dict) -> str:
    if "error" in r:
        return f"{r['slug']} {r['variant']}: {r['error']}"
    said = [f"{k} {'flagged' if v.get('caught') else 'quiet' if 'error' not in v else v['error']} "
            f"({v.get('seconds', '?')}s)" for k, v in r.items() if isinstance(v, dict) and k != "env"]
    return f"{r['slug']} {r['variant']}: {'; '.join(said)}"


def combine(entries: dict, rows: list, backend: str, verified: dict) -> list:
    """One line per entry: its buggy and fixed rows side by side, with what counts, and (where
    bugs/ is split, ``bugs/split.toml``) which split the entry is in: dev, test or first-run."""
    from harness.bugs import split

    halves = split.read(next(iter(entries.values())).path.parent) if entries else None
    by = {(r["slug"], r["variant"]): r for r in rows}
    out = []
    for slug in sorted({r["slug"] for r in rows}):
        e = entries.get(slug)
        b, f = by.get((slug, "buggy"), {}), by.get((slug, "fixed"), {})
        line = {"slug": slug, "backend": backend, "verified": verified.get(slug)}
        if halves is not None:
            line["split"] = halves.of(slug)
        probes = [r.get("probe") for r in (b, f)]
        if e is None or "error" in b or "error" in f or not all(probes) or any("error" in p for p in probes):
            line["error"] = (b.get("error") or f.get("error")
                             or next((p["error"] for p in probes if p and "error" in p), None)
                             or ("could not run: no manifest" if e is None else "not run: no probe row recorded"))
            out.append(line)
            continue
        line.update(project=e.project, kind=e.kind, defect=e.defect, case=e.case, shows_on=e.shows_on,
                    visible=visible(e, backend), buggy=b, fixed=f,
                    fixed_known=known_on_fixed(e, f["probe"], backend),
                    buggy_known_only=known_on_fixed(e, b["probe"], backend))
        rescore_diagnosis(e, b["probe"], backend)
        trig = [r.get("trigger") for r in (b, f)]
        if all(trig) and not any("error" in p for p in trig):  # the given-the-trigger run, where it ran
            line["trigger"] = {"fixed_known": known_on_fixed(e, f["trigger"], backend),
                               "buggy_known_only": known_on_fixed(e, b["trigger"], backend)}
            rescore_diagnosis(e, b["trigger"], backend)
        elif any(trig):
            line["trigger"] = {"error": next((p["error"] for p in trig if p and "error" in p),
                                             "not run: one version's run given the trigger is not recorded")}
        out.append(line)
    return out


def _explained(known: list, evidence: str) -> bool:
    """Whether one line of a diagnosis's evidence ("name: detector: message") is a finding the
    entry's ``[[fixed_known]]`` records: a defect the fixed version has too."""
    from harness.probe.diagnosis import CODE_EVIDENCE, P401_EVIDENCE

    name, _, rest = evidence.partition(": ")
    detector, _, message = rest.partition(": ")
    for k in known:
        names = P401_EVIDENCE if k["code"] == "P401" else {CODE_EVIDENCE.get(k["code"])}
        if (name in names and (not k.get("detector") or k["detector"] == detector)
                and (not k.get("match") or k["match"] in message)):
            return True
    return False


SOURCE_FACTS = ("autotuned-atomics", "atomics")  # read from the kernels' source: evidence of their own


def _rests_on(known: list, evidence: list) -> bool:
    """Whether a diagnosis's findings are all ones ``[[fixed_known]]`` records. Its other lines are
    the experiments' (``interpreter: ...``, ``gpu: ...``: what the failing sizes showed, and those
    are the first finding's) and lint's; they say how, not which defect. What the source shows
    (autotuned atomics) is a defect's own evidence, wherever it is listed."""
    found = [x for x in evidence if not x.startswith("lint agrees") and (
        x.partition(": ")[0] in SOURCE_FACTS or x.partition(": ")[2].partition(": ")[0] not in ("interpreter", "gpu"))]
    return bool(found) and all(_explained(known, x) for x in found)


def rescore_diagnosis(entry, probe_row: dict, backend: str) -> None:
    """Score the buggy version's diagnosis past the entries that rest only on what the fixed
    version gets wrong too (its ``[[fixed_known]]``): those name another bug, rightly. The
    first diagnosis left is the one scored; rows recorded without evidence keep their score."""
    known = _known(entry, backend)
    evidence = probe_row.get("diagnosis_evidence")
    if not known or not evidence or len(evidence) != len(probe_row["diagnosis"]):
        return
    left = [d for d, ev in zip(probe_row["diagnosis"], evidence) if not _rests_on(known, ev)]
    probe_row["diagnosis_scored"] = left
    probe_row["diagnosis_first_right"] = bool(left) and left[0] == entry.defect
    probe_row["diagnosis_top3_right"] = entry.defect in left[:3]


def _known(entry, backend: str) -> list:
    """The entry's ``[[fixed_known]]`` recorded for (one of) this scoreboard's backends."""
    return [k for k in getattr(entry, "fixed_known", []) if set(parts(backend)) & set(k.get("backends", parts(backend)))]


def _matches(known: dict, finding: dict) -> bool:
    detectors = [d.strip() for d in str(finding.get("detector", "")).split(",")]
    return (finding.get("code") == known["code"]
            and ("backend" not in finding or finding["backend"] in known.get("backends", (finding["backend"],)))
            and (not known.get("detector") or known["detector"] in detectors)
            and (not known.get("match") or known["match"] in str(finding.get("message", ""))))


def known_on_fixed(entry, probe_row: dict, backend: str) -> str | None:
    """Why the probe's errors on the fixed version are true (the entry's ``[[fixed_known]]``), when
    every one of them is a finding recorded there for this backend; None otherwise (no error, or
    one that is not recorded: a false alarm)."""
    known = _known(entry, backend)
    if not known or not probe_row or not probe_row.get("errors"):
        return None
    found = probe_row.get("error_findings")
    if found is None:  # a row recorded before the findings were kept: its first finding, if the only one
        found = [probe_row["first"]] if probe_row.get("errors") == 1 and probe_row.get("first") else None
    if not found or not all(any(_matches(k, f) for k in known) for f in found):
        return None
    used = [k for k in known if any(_matches(k, f) for f in found)]
    return "; ".join(f"{k['code']}: {k['why']}" for k in used)


def _known_of(line: dict, run: str) -> dict:
    return line if run == "probe" else line.get(run) or {}


def caught(line: dict, run: str = "probe") -> bool:
    """The probe caught this entry's bug (in ``run``: the default run, or ``"trigger"``): an error on
    the buggy version that is not only the fixed version's recorded true finding (which both
    versions share: not this bug)."""
    return bool(line["buggy"][run]["caught"]) and not _known_of(line, run).get("buggy_known_only")


def false_alarm(line: dict, run: str = "probe") -> bool:
    """The probe reported an error on the fixed version that is not a recorded true finding."""
    return bool(line["fixed"][run]["errors"]) and not _known_of(line, run).get("fixed_known")


def legacy(line: dict) -> bool:
    """A line whose default run was recorded before the board's runs said what they were given
    (bugs/README.md: switches free, GPU_SIZES used): counted, and marked on the board."""
    return "error" not in line and "given" not in line["buggy"]["probe"]


def visible(entry, backend: str) -> bool:
    """Whether the bug can show on this backend: it gives a wrong result there, or (a fix that
    changed no output) the access it makes can be seen there. With a GPU (``gpu+interpreter``):
    on either."""
    if len(parts(backend)) > 1:
        return any(visible(entry, b) for b in parts(backend))
    if entry.shows_on:
        return backend in entry.shows_on
    return backend == "interpreter" or entry.verify["detector"] in ("compute-sanitizer", "reference", "guards")


def split_totals(lines: list, run: str = "probe") -> dict:
    """Caught (of the bugs visible here), false alarms and the right class first, for the lines
    of one split (``totals`` makes one per split), in one of the board's runs."""
    ran = [x for x in lines if "error" not in x and (run == "probe" or ("error" not in x.get(run, {"error": 1})))]
    vis = [x for x in ran if x["visible"]]
    flagged = [x for x in ran if caught(x, run)]
    return {"entries": len(lines), "ran": len(ran), "visible": len(vis),
            "caught_visible": sum(caught(x, run) for x in vis),
            "caught_all": len(flagged), "false_alarms": sum(false_alarm(x, run) for x in ran),
            "diagnosis_first": sum(x["buggy"][run]["diagnosis_first_right"] for x in flagged),
            **({"legacy": sum(legacy(x) for x in ran)} if run == "probe" else {})}


def totals(lines: list, peers: tuple = PEERS, first_run: list | None = None) -> dict:
    """The board's numbers. Where the lines carry their split (``combine``), ``splits`` gives dev,
    test and first-run apart; first-run from ``first_run``, the entries' rows as first scored
    (``record.read_first_rows``), where given, else from their lines here."""
    ran = [x for x in lines if "error" not in x]
    vis = [x for x in ran if x["visible"]]
    flagged = [x for x in ran if caught(x)]
    seconds = [x[v]["probe"]["seconds"] for x in ran for v in ("buggy", "fixed")]
    t = {
        "entries": len(lines), "could_not_run": len(lines) - len(ran),
        "visible": len(vis), "caught_visible": sum(caught(x) for x in vis),
        "caught_all": len(flagged), "ran": len(ran),
        "false_alarms": sum(false_alarm(x) for x in ran),
        "fixed_true_findings": sum(bool(x.get("fixed_known")) for x in ran),
        "fixed_warnings": sum(x["fixed"]["probe"]["warnings"] > 0 and not x["fixed"]["probe"]["errors"] for x in ran),
        "diagnosis_first": sum(x["buggy"]["probe"]["diagnosis_first_right"] for x in flagged),
        "diagnosis_top3": sum(x["buggy"]["probe"]["diagnosis_top3_right"] for x in flagged),
        "median_s": round(statistics.median(seconds), 1) if seconds else None,
        "max_s": max(seconds) if seconds else None,
        "peers": {},
    }
    if any("split" in x for x in lines):
        from harness.bugs.split import SPLITS

        kept = {x["slug"]: x for x in first_run or []}
        t["splits"] = {s: split_totals([kept.get(x["slug"], x) if s == "first-run" else x
                                        for x in lines if x.get("split") == s]) for s in SPLITS}
        if first_run:  # the same entries' newest rows beside their first scores (not blind: the probe changed since)
            t["splits"]["first-run-now"] = split_totals([x for x in lines if x.get("split") == "first-run"])
        # given the trigger: the newest rows of every split (a first-run entry's first score had no such run)
        t["trigger"] = {s: split_totals([x for x in lines if x.get("split") == s], "trigger") for s in SPLITS}
    for p in peers:
        have = [x for x in ran if "error" not in x["buggy"].get(p, {"error": 1})
                and "error" not in x["fixed"].get(p, {"error": 1})]
        t["peers"][p] = {"ran": len(have), "caught_visible": sum(x["buggy"][p]["caught"] for x in have if x["visible"]),
                         "visible": sum(x["visible"] for x in have),
                         "false_alarms": sum(x["fixed"][p]["caught"] for x in have)}
    return t


def default_jobs() -> int:
    return max(1, (os.cpu_count() or 2) // 2)
