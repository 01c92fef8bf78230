"""The detectors' case checks: each flags the event stream it should and stays quiet on the others.

Most tests feed synthetic worker events (no process, no kernel). One runs the worker
under a fake compute-sanitizer, to check the wrapper, the overrides and the parsing.
The registry tests check that the case checks are found (from the one registry of detectors),
ordered and validated, and that nothing outside a detector's own module names them.
"""

import json
import os
import re
import sys
from pathlib import Path

import pytest

from harness.core import discovery
from harness.core.events import RunResult
from harness.core.spec import parse_spec
from harness.probe import case_runs as detect, cases as D
from harness.probe.casecheck import AcrossCheck, CaseCheck, ProbeCheck
from harness.probe.detectors import compute_sanitizer as sanitizer, registry, triton_viz


def trial(trial=0, call=0, close=True, fp="a", nonfinite=0, past=None, unwritten=None, result="1", tuned=0, n=1):
    return {"trial": trial, "call": call, "close": close, "n": n, "n_bad": 0 if close else n,
            "max_abs": 0.0 if close else 1.0, "max_rel": 0.0, "nonfinite": nonfinite, "result": result,
            "reference": "1", "fingerprint": fp, "guard": {"wrote_past_end": past or {}, "unwritten": unwritten or {}},
            "bench_calls": [tuned] if tuned else []}


SPEC_TABLE = {"title": "t", "category": "bounds", "defect": "out-of-bounds-write", "summary": "s", "launcher": "f",
              "expect": {"gpu": "wrong", "interpreter": "wrong"}}
SPEC = parse_spec("synthetic", None, SPEC_TABLE)


def ev(trials, probes=(), status="done", backend="interpreter", message=""):
    run = RunResult("synthetic", "broken", backend, status, message=message, trials=list(trials),
                    probes=list(probes), requested_trials=max(1, len(trials)))
    return D.Evidence(SPEC, backend, "broken", run)


def check(name, evidence):
    return D.BY_NAME[name].check(evidence)


def test_reference_flags_a_wrong_result_only():
    assert check("reference", ev([trial(close=False, result="3")]))[0] == D.FLAGGED
    assert check("reference", ev([trial(), trial(trial=1)]))[0] == D.QUIET


def test_repeat_reads_the_probes_p501():
    assert check("repeat", probed([("P501", "repeat", "warning")]))[0] == D.FLAGGED
    assert check("repeat", probed([("P501", "repeat", "error")]))[0] == D.FLAGGED
    # a case that allows its results to vary (deterministic = false): the probe's P501 is information
    assert check("repeat", probed([("P501", "repeat", "info")])) == \
        (D.QUIET, "no P501 finding (information only: P501 P501 said so)")
    why = "skipped: no atomics and no autotune in the kernels: identical runs give identical results"
    assert check("repeat", probed(ran={"repeat": why})) == \
        (D.QUIET, f"no P501 finding (the probe's repeat detector {why})")
    # skipped, where the launcher raised in another detector: no result, not quiet
    raised = probed([("P001", "reference", "error")], ran={"reference": "done", "repeat": why})
    assert check("repeat", raised)[0] == D.NA and "P001" in check("repeat", raised)[1]
    # raised under a tool only (triton-viz 3.0 failing on the kernel): nothing said of the kernel without it
    viz = probed([("P003", "triton-viz", "error")], ran={"reference": "done", "repeat": why, "triton-viz": "done"})
    assert check("repeat", viz) == (D.QUIET, f"no P501 finding (the probe's repeat detector {why})")


def test_first_call_reads_the_probes_p502():
    assert check("first-call", probed([("P502", "first-call", "error")]))[0] == D.FLAGGED
    assert check("first-call", probed([("P501", "first-call", "error")]))[0] == D.QUIET
    why = "skipped: no atomics and no autotune in the kernels: identical runs give identical results"
    assert check("first-call", probed(ran={"first-call": why}))[0] == D.QUIET


def probed(findings=(), ran=None, backend="interpreter"):
    """Evidence whose probe run (``case_runs.probe_run``'s record) found ``findings``: (code, detector, severity)."""
    fs = [{"code": c, "detector": d, "severity": sev, "message": f"{c} said so"} for c, d, sev in findings]
    e = ev([trial()], backend=backend)
    ran = dict.fromkeys(("reference", "guards", "repeat", "first-call"), "done") if ran is None else ran
    e.probe = {"detectors": list(ran), "ran": ran, "findings": fs, "seconds": 1.0}
    return e


def test_canary_reads_the_probes_guard_bands():
    assert check("canary", probed([("P111", "guards", "error")])) == \
        (D.FLAGGED, "P111 (the probe's guards): P111 said so")
    assert check("canary", probed([("P113", "guards", "error"), ("P111", "guards", "error")]))[1].endswith("(+1 more)")
    # scratch the launcher need not fill (P113 as information) and another detector's code do not flag it
    quiet = check("canary", probed([("P113", "guards", "info"), ("P111", "shapes", "error")]))
    assert quiet == (D.QUIET, "no P111/P113 finding (information only: P113 P113 said so)")
    assert check("canary", probed([("P201", "guards", "error")]))[0] == D.QUIET
    # the main run's canaries are no longer its evidence: only the probe's are
    assert check("canary", ev([trial(past={"out": 7})])) == (D.NOT_RUN, "no probe run")


def test_poison_reads_the_probes_p112_from_the_reference_and_the_guard_bands():
    for det in ("reference", "guards"):
        assert check("poison", probed([("P112", det, "error")]))[0] == D.FLAGGED
    assert check("poison", probed([("P112", "shapes", "error"), ("P202", "reference", "error")])) == \
        (D.QUIET, "no P112 finding")
    # no result from the reference: n/a, even where the guard bands ran
    assert check("poison", probed([("P001", "reference", "error")]))[0] == D.NA


def test_a_probe_check_without_a_result():
    raised = check("canary", probed([("P001", "guards, reference", "error")]))
    assert raised == (D.NA, "no result to check: the probe's guards detector: P001 P001 said so")
    assert check("canary", probed(ran={"guards": "hang"}))[0] == D.NA
    assert check("canary", probed(ran={"guards": "crash"}))[0] == D.NA
    failed = check("canary", probed([("P000", "guards", "warning")], ran={"guards": "error"}))
    assert failed == (D.NOT_RUN, "the probe's guards detector: error: P000 said so")
    assert check("canary", probed(ran={})) == (D.NOT_RUN, "the probe did not run its guards detector")
    skipped = check("canary", probed(ran={"guards": "skipped: nothing to guard"}))
    assert skipped == (D.QUIET, "no P111/P113 finding (the probe's guards detector skipped: nothing to guard)")
    e = probed()
    e.probe = "n/a: the kernel hangs (its main run timed out), so there is no probe run to make"
    assert check("canary", e)[0] == D.NA
    e.probe = "not run: the probe could not load the case: boom"
    assert check("canary", e) == (D.NOT_RUN, "the probe could not load the case: boom")


def test_the_probe_runs_the_detectors_the_checks_read():
    assert "guards" in detect.probe_detectors("interpreter") and "guards" in detect.probe_detectors("gpu")
    assert "guards" in detect.probe_detectors("interpreter", skip=frozenset({"canary"}))  # poison reads it too
    assert "guards" not in detect.probe_detectors("interpreter", skip=frozenset({"canary", "poison"}))
    readers = [c for c in D.DETECTORS if isinstance(c, ProbeCheck)]
    assert detect.probe_detectors("gpu", skip=frozenset(c.name for c in readers)) == []


def test_nan_scan_reads_the_probes_p202():
    assert check("nan-scan", probed([("P202", "reference", "error")]))[0] == D.FLAGGED
    # NaN from the guard bands is the reference's P112 (poison), not P202: nan-scan stays quiet
    assert check("nan-scan", probed([("P112", "reference", "error")])) == (D.QUIET, "no P202 finding")
    assert check("nan-scan", probed([("P202", "shapes", "error")]))[0] == D.QUIET


def test_no_result_is_not_a_quiet_detector():
    for name in ("reference",):
        assert check(name, ev([], status="hang", message="timed out"))[0] == D.NA
        assert check(name, ev([], status="error", message="boom"))[0] == D.NOT_RUN
        assert check(name, ev([], status="skip", message="why"))[0] == D.NA


MEMCHECK = """========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at add_kernel+0x1d0 in /work/cases/add-missing-mask/broken.py:24
=========     by thread (2,0,0) in block (9,0,0)
========= ERROR SUMMARY: 1024 errors
========= ERROR SUMMARY: 1014 errors were not printed. Use --print-limit option to adjust the number of printed errors
"""


def tool_run(output, status="done", message=""):
    return RunResult("synthetic", "broken", "gpu", status, message=message, output_tail=output)


def test_sanitizer_summary_parsing():
    s = sanitizer.sanitizer_summary(MEMCHECK)
    assert s["errors"] == 1024
    assert s["first"] == "Invalid __global__ write of size 4 bytes at add_kernel+0x1d0 in broken.py:24"
    r = sanitizer.sanitizer_summary("========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)\n"
                                    "========= ERROR SUMMARY: 0 errors\n")
    assert r["errors"] == 0 and r["warnings"] == 1
    assert sanitizer.sanitizer_summary("Traceback ...") is None


def test_a_report_in_pytorchs_own_kernel_is_not_the_kernels():
    """racecheck on fp16-accumulation (H100) reported a race in at::native::reduce_kernel, the
    reference's reduction: not the Triton kernel's (a note, which leaves the racecheck check quiet)."""
    from harness.probe.detectors import racecheck

    log = ("========= Error: Race reported between Read access at void at::native::reduce_kernel<(int)512, "
           "(int)1>(T3)+0x1c0\n=========     and Write access at void at::native::reduce_kernel<(int)512>+0x2a0\n"
           "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n")
    (note,) = racecheck.findings("racecheck", "gpu", log)
    assert (note.code, note.severity) == ("P604", "info")
    assert note.message.startswith("0 hazards in the kernel's own (1 error in PyTorch's: Error: Race reported")
    (ours,) = racecheck.findings("racecheck", "gpu", log.replace("at::native::reduce_kernel", "sum_kernel"))
    assert (ours.code, ours.severity) == ("P604", "error") and ours.message.startswith("1 error; first: Error: Race")
    ran = {"racecheck": "done"}
    quiet = check("racecheck", probed([("P604", "racecheck", "info")], ran=ran, backend="gpu"))
    assert quiet == (D.QUIET, "no P604 finding (information only: P604 P604 said so)")


def test_memcheck_reads_the_probes_p601(monkeypatch):
    ran = {"compute-sanitizer": "done"}
    got = check("memcheck", probed([("P601", "compute-sanitizer", "error")], ran=ran, backend="gpu"))
    assert got == (D.FLAGGED, "P601 (the probe's compute-sanitizer): P601 said so")
    assert check("memcheck", probed(ran=ran, backend="gpu")) == (D.QUIET, "no P601 finding")
    # the interpreter's memcheck detector (P102) is another idea: it does not flag this check
    assert check("memcheck", probed([("P102", "memcheck", "error")], ran=ran, backend="gpu"))[0] == D.QUIET
    missing = {"compute-sanitizer": "not run: compute-sanitizer not found (put it on PATH or set CUDA_HOME)"}
    assert check("memcheck", probed(ran=missing, backend="gpu"))[0] == D.NOT_RUN
    # the probe's tool checks only the kernels detect names (the case's, from its main run)
    from harness.probe import runner
    from harness.probe.request import ProbeRequest
    from harness.run import gpu_tools

    monkeypatch.setattr(gpu_tools, "compute_sanitizer", lambda: "/x/compute-sanitizer")
    monkeypatch.setattr(gpu_tools, "filters_kernels", lambda cs: True)
    req = ProbeRequest("k.py", options={"tool_kernels": ["add_kernel", "?"]})
    worker, how = runner._worker_request(req, ["compute-sanitizer"], "gpu", 10.0)
    assert how["wrapper"][:5] == ["/x/compute-sanitizer", "--kernel-name", "kne=add_kernel", "--tool", "memcheck"]
    assert worker.detectors == ["reference"] and worker.options["pad"] == 0
    assert runner._worker_request(ProbeRequest("k.py"), ["compute-sanitizer"], "gpu", 10.0)[1]["wrapper"][1] == "--tool"


def test_racecheck_reads_the_probes_p604():
    from harness.probe.detectors import racecheck

    (f,) = racecheck.findings("racecheck", "gpu", MEMCHECK)
    assert f.code == "P604" and f.message.startswith("1024 errors; first: Invalid __global__ write")
    assert racecheck.findings("racecheck", "gpu", "========= ERROR SUMMARY: 0 errors") == []
    assert racecheck.findings("racecheck", "gpu", "Segmentation fault") == []
    ran = {"racecheck": "done"}
    shared = RunResult("synthetic", "broken", "gpu", "done", kernels=[{"name": "sum_kernel", "shared": 64}])
    e = probed([("P604", "racecheck", "error")], ran=ran, backend="gpu")
    e.run = shared
    assert check("racecheck", e) == (D.FLAGGED, "P604 (the probe's racecheck): P604 said so")
    e = probed(ran=ran, backend="gpu")
    e.run = shared
    assert check("racecheck", e) == (D.QUIET, "no P604 finding")
    # a crash under racecheck (empty-input's broken launcher raising) has no result to check
    assert check("racecheck", probed([("P001", "racecheck", "error")], ran={"racecheck": "crash"}, backend="gpu"))[0] \
        == D.NA
    missing = {"racecheck": "not run"}
    assert check("racecheck", probed(ran=missing, backend="gpu"))[0] == D.NOT_RUN


def test_racecheck_runs_at_the_interpreters_sizes(monkeypatch):
    """racecheck tracks every shared access: the probe's tool asks for the smallest sizes (the case's interpreter
    sizes before [sizes.sanitizer], which memcheck's small sizes take first), the case's kernels only."""
    from harness.probe import runner
    from harness.probe.request import ProbeRequest
    from harness.run import gpu_tools

    monkeypatch.setattr(gpu_tools, "compute_sanitizer", lambda: "/x/compute-sanitizer")
    monkeypatch.setattr(gpu_tools, "filters_kernels", lambda cs: True)
    req = ProbeRequest("k.py", options={"tool_kernels": ["sum_kernel"]})
    worker, how = runner._worker_request(req, ["racecheck"], "gpu", 10.0)
    assert how["wrapper"][:5] == ["/x/compute-sanitizer", "--kernel-name", "kne=sum_kernel", "--tool", "racecheck"]
    assert how["extra_env"] == {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"} and how["log_file"]
    assert worker.detectors == ["reference"] and worker.options["pad"] == 0
    assert worker.options["small"] == "interpreter"
    monkeypatch.setattr(gpu_tools, "compute_sanitizer", lambda: None)
    assert runner._worker_request(req, ["racecheck"], "gpu", 10.0)[1] is None  # not here: not run


def test_the_smallest_sizes_take_the_interpreters_first(tmp_path, make_case):
    """racecheck's run (the worker's option small="interpreter") at the case's [sizes.interpreter]; memcheck's and
    the sanitizers' (small=True) at its [sizes.sanitizer]; the backend's own sizes otherwise."""
    from harness.probe import worker
    from harness.probe.request import ProbeRequest
    from harness.probe.target import load

    folder = make_case(fields={"sizes": {"sanitizer": {"rows": 5}}})
    t = load(str(folder / "fixed.py"), str(folder / "case.py"), "row_mean", "interpreter")
    assert t.small_sizes == {"rows": 5, "cols": 100} and t.smallest_sizes == {"rows": 8, "cols": 100}
    for small, rows in (("interpreter", 8), (True, 5), (False, 8)):
        req = ProbeRequest(str(folder / "fixed.py"), inputs=str(folder / "case.py"), launcher="row_mean",
                           options={"small": small})
        loaded = worker._load(req, lambda **e: None, req.budget())
        assert loaded.sizes["rows"] == rows, (small, loaded.sizes)


CONSAN = "x.py:3: block: [0,0,0] Assertion `ConSan: buffer overlap between TMA load and wgmma` failed.\n"


def test_triton_sanitizers_are_probe_tools(monkeypatch):
    """Each of Triton's sanitizers runs the reference detector at the small sizes with its mode set; a report (a
    device-side assertion, which ends the process) is its code beside the crash; a mode this Triton lacks is a
    skip, with no process started."""
    from harness.probe import runner
    from harness.probe.detectors import consan, gsan
    from harness.probe.request import ProbeRequest
    from harness.run import isolate, triton_compat

    monkeypatch.setattr(triton_compat, "instrumentation_modes", lambda: ("consan",))
    started = []

    def fake(module, args, *, backend, timeout, extra_env=None, **kw):
        started.append((args["detectors"], args["options"]["small"], extra_env))
        events = [{"event": "start", "detector": "reference"}]
        return isolate.Process(returncode=1, events=events, output_tail=CONSAN)

    monkeypatch.setattr(runner, "run_process", fake)
    results, _ = runner.Batch(ProbeRequest("k.py"), ["consan", "gsan"], "gpu", 10.0, say=lambda _m: None).run()
    assert started == [(["reference"], True, {"TRITON_INSTRUMENTATION_MODE": "consan"})]  # gsan: no process
    assert [(f.code, f.severity) for f in results["consan"].findings] == [("P605", "error"), ("P001", "error")]
    assert results["consan"].findings[0].message == \
        "ConSan reported: ConSan: buffer overlap between TMA load and wgmma"
    assert results["gsan"].label == "skipped: " + gsan.DETECTOR.tool.how({}) and not results["gsan"].findings
    assert gsan.DETECTOR.tool.how({}).startswith("not available with triton ")
    assert [f.severity for f in gsan.DETECTOR.tool.findings("gsan", "gpu", CONSAN)] == ["warning"]
    assert consan.DETECTOR.tool.findings("consan", "gpu", "all good") == []


def test_triton_sanitizer_checks_read_the_probe():
    shared = RunResult("synthetic", "broken", "gpu", "done", kernels=[{"name": "k", "shared": 1024}])
    for mode, code in (("consan", "P605"), ("gsan", "P606"), ("fpsan", "P607"), ("iisan", "P608")):
        e = probed([(code, mode, "warning")], ran={mode: "crash"}, backend="gpu")
        e.run = shared
        assert check(mode, e)[0] == D.FLAGGED, mode
        e = probed(ran={mode: "done"}, backend="gpu")
        e.run = shared
        assert check(mode, e) == (D.QUIET, f"no {code} finding")
        # a mode this Triton lacks: n/a, not "not run"
        why = f"not available with triton 3.6.0 (its NVIDIA backend has no {mode})"
        e = probed(ran={mode: f"skipped: {why}"}, backend="gpu")
        assert check(mode, e) == (D.NA, why)
        # the launcher raised under the sanitizer without a report: no result to check
        assert check(mode, probed([("P001", mode, "error")], ran={mode: "crash"}, backend="gpu"))[0] == D.NA
    # ConSan, as racecheck, checks shared memory only: n/a where the main run's kernels use none
    none = RunResult("synthetic", "broken", "gpu", "done", kernels=[{"name": "k", "shared": 0}])
    e = probed(ran={}, backend="gpu")
    e.run = none
    for mode in ("consan", "racecheck"):
        assert check(mode, e) == (D.NA, f"the kernel uses no shared memory (0 bytes in 1 compiled kernel), the only "
                                        f"memory {mode} checks")
    e.probe = {"detectors": ["gsan"], "ran": {"gsan": "done"}, "findings": [], "seconds": 1.0}
    assert check("gsan", e) == (D.QUIET, "no P606 finding")  # GSan checks global memory


def test_triton_debug_reads_the_probes_p602():
    out = "broken.py:12: block: [3,0,0], thread: [0,0,0] Assertion `int32 overflow detected for operation mul` failed."
    from harness.probe.detectors import triton_debug

    found = triton_debug.findings("triton-debug", "gpu", out)
    assert [(f.code, f.message) for f in found] == [
        ("P602", "device_assert fired: int32 overflow detected for operation mul")]
    ran = {"triton-debug": "done"}
    fired = [("P602", "triton-debug", "error")]
    assert check("triton-debug", probed(fired, ran=ran, backend="gpu"))[0] == D.FLAGGED
    assert check("triton-debug", probed(ran=ran, backend="gpu")) == (D.QUIET, "no P602 finding")
    # the launcher raised under TRITON_DEBUG=1 without an assertion: no result to check
    raised = probed([("P001", "triton-debug", "error")], ran=ran, backend="gpu")
    assert check("triton-debug", raised)[0] == D.NA
    assert triton_debug.how({}) == {"extra_env": {"TRITON_DEBUG": "1"}, "small": False}  # the GPU sizes


def test_triton_viz_reads_the_probes_p603():
    line = f"{triton_viz.MARK} 3 out-of-bounds accesses; first: load of x_ptr in add_kernel at broken.py:22"
    found = triton_viz.findings("triton-viz", "interpreter", line)
    assert [(f.code, f.severity, f.message) for f in found] == [
        ("P603", "warning", "3 out-of-bounds accesses; first: load of x_ptr in add_kernel at broken.py:22")]
    assert triton_viz.findings("triton-viz", "interpreter", f"{triton_viz.MARK} 0 out-of-bounds accesses") == []
    ran = {"triton-viz": "done"}
    assert check("triton-viz", probed([("P603", "triton-viz", "warning")], ran=ran))[0] == D.FLAGGED
    assert check("triton-viz", probed(ran=ran)) == (D.QUIET, "no P603 finding")
    # triton-viz that cannot wrap the kernels is not run, not quiet and not n/a
    gone = triton_viz.findings("triton-viz", "interpreter", f"{triton_viz.UNAVAILABLE} ImportError: z3")
    e = probed(ran={"triton-viz": "crash"})
    e.probe["findings"] = [dict(gone[0].to_json(), detector="triton-viz")]
    assert check("triton-viz", e) == (D.NOT_RUN, "triton-viz unavailable: ImportError: z3")
    # a launcher that raises on its own (empty-input's broken one) is not triton-viz failing: no result
    raised = probed([("P001", "triton-viz", "error")], ran=ran)
    raised.run.status = "crash"
    assert check("triton-viz", raised)[0] == D.NA
    # raised under triton-viz only (its 3.0 fails on some ops): triton-viz failed, the kernel did not
    raised.run.status = "done"
    assert check("triton-viz", raised) == (D.NOT_RUN, "triton-viz failed (the case's main run did not): P001 said so")
    # a kernel triton-viz's loop rewriting leaves uncompilable (dropout-repeated-mask): kept from the tool's run
    from harness.probe import runner
    from harness.probe.findings import Finding

    p003 = Finding("P003", "reference", "interpreter", "Triton could not compile the kernel: NameError")
    assert runner._kept("triton-viz", [p003, Finding("P201", "reference", "interpreter", "wrong")]) == [p003]
    uncompiled = probed([("P003", "triton-viz", "error")], ran=ran)
    assert check("triton-viz", uncompiled)[0] == D.NOT_RUN


def test_triton_viz_wraps_the_probes_worker_with_padding_off(monkeypatch):
    """triton-viz 3.0 counts a padded view's storage offset twice: the tool's run has guard padding off."""
    import importlib.util

    from harness.probe import runner
    from harness.probe.request import ProbeRequest

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "triton_viz" else real(name, *a))
    worker, how = runner._worker_request(ProbeRequest("k.py"), ["triton-viz"], "interpreter", 10.0)
    assert how["wrapper"][1:] == ["-m", "harness.run.viz_worker"] and worker.options["pad"] == 0
    assert worker.detectors == ["reference"] and not worker.options["small"]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "triton_viz" else real(name, *a))
    assert runner._worker_request(ProbeRequest("k.py"), ["triton-viz"], "interpreter", 10.0)[1] is None
    assert triton_viz.DETECTOR.tool.missing.startswith("triton-viz is not installed")


def test_divergence_compares_behaviour_classes():
    v = lambda obs, call=1: {"observed": obs, "call": call}  # noqa: E731
    assert D.compare_backends([v("flaky")], [v("wrong")])[0] == D.FLAGGED
    assert D.compare_backends([v("ok")], [v("hidden")])[0] == D.QUIET
    assert D.compare_backends([v("wrong, flaky")], [v("flaky")])[0] == D.QUIET
    assert D.compare_backends(None, [v("wrong")])[0] == D.NOT_RUN
    assert D.compare_backends([v("skip")], [v("wrong")])[0] == D.NA


class Boom(CaseCheck):
    name = label = "boom"
    order = 1000

    def check(self, ev):
        raise ValueError("bad")


def test_evaluate_covers_every_detector_and_survives_a_broken_one(monkeypatch):
    found = D.evaluate(ev([trial(close=False)]))
    assert list(found) == [d.name for d in D.DETECTORS if d.check is not None]
    assert found["memcheck"] == D.DetectorResult(D.NA, "runs on a GPU only")
    assert found["triton-debug"].status == D.NA and "ignores TRITON_DEBUG" in found["triton-debug"].reason
    assert D.evaluate(ev([trial()], backend="gpu"))["triton-viz"] == D.DetectorResult(D.NA, "runs on the CPU interpreter only")
    assert D.evaluate(ev([trial()]), skip=frozenset({"canary"}))["canary"] == D.DetectorResult(D.NOT_RUN, "skipped (--skip)")
    monkeypatch.setattr(D, "DETECTORS", D.DETECTORS + [Boom()])
    assert D.evaluate(ev([trial()]))["boom"] == D.DetectorResult(D.NOT_RUN, "detector failed: ValueError: bad")


def test_score_counts_like_a_benchmark():
    c = D.score([("broken", D.FLAGGED), ("fixed", D.QUIET), ("broken", D.QUIET), ("fixed", D.FLAGGED),
                 ("broken", D.NA), ("fixed", D.NA)])
    assert (c["tp"], c["fn"], c["fp"], c["tn"], c["na"]) == (1, 1, 1, 1, 1)
    assert c["recall"] == 0.5 and c["precision"] == 0.5
    assert D.outcome(D.FLAGGED, D.QUIET) == "caught" and D.outcome(D.QUIET, D.FLAGGED) == "false alarm"


def test_merge_keeps_old_findings_for_detectors_that_could_not_run():
    new = {"variants": {"broken": {"findings": {"triton-viz": {"status": D.NOT_RUN, "reason": "not installed"},
                                                "reference": {"status": D.QUIET, "reason": "ok"}}}}}
    old = {"env": {"date": "2026-01-01", "device": "CPU"},
           "variants": {"broken": {"findings": {"triton-viz": {"status": D.FLAGGED, "reason": "3 accesses"},
                                                "reference": {"status": D.FLAGGED, "reason": "old"}}}}}
    got = detect.merge_recorded(new, old)["variants"]["broken"]["findings"]
    assert got["triton-viz"]["status"] == D.FLAGGED and "2026-01-01" in got["triton-viz"]["source"]
    assert got["reference"] == {"status": D.QUIET, "reason": "ok"}


# ------------------------------------------------ the probe's tools: a fake compute-sanitizer

FAKE_SANITIZER = """#!/bin/sh
# read compute-sanitizer's --log-file, drop its other options, run the command, log a report
log=/dev/stdout
while [ "$1" != "{python}" ]; do
    if [ "$1" = "--log-file" ]; then log="$2"; shift; fi
    shift
done
"$@"
printf '========= Invalid __global__ read of size 4 bytes\\n=========     at k+0x10 in /a/b/broken.py:3\\n' >> "$log"
echo "========= ERROR SUMMARY: 1 error" >> "$log"
"""


def test_the_probes_racecheck_runs_the_worker_under_the_tool(tmp_path, monkeypatch, make_case):
    """make_case's row mean (its fixed kernel) probed under the interpreter inside a fake compute-sanitizer: the
    probe's racecheck tool wraps the real worker, reads the tool's log file and reports P604 from it."""
    from harness.probe import runner
    from harness.probe.request import ProbeRequest
    from harness.run import gpu_tools

    folder = make_case()
    fake = tmp_path / "compute-sanitizer"
    fake.write_text(FAKE_SANITIZER.replace("{python}", sys.executable))
    fake.chmod(0o755)
    monkeypatch.setattr(gpu_tools, "compute_sanitizer", lambda: str(fake))
    req = ProbeRequest(str(folder / "fixed.py"), inputs=str(folder / "case.py"), launcher="row_mean")
    results, _ = runner.Batch(req, ["racecheck"], "interpreter", 60.0, say=lambda _m: None).run()
    run = results["racecheck"]
    assert run.status is runner.Status.DONE, run.findings
    assert [(f.code, f.message) for f in run.findings] == [
        ("P604", "1 error; first: Invalid __global__ read of size 4 bytes at k+0x10 in broken.py:3")]


@pytest.mark.skipif(not os.path.isdir(discovery.cases_dir() / "add-missing-mask"), reason="case not present")
def test_small_sizes_default_to_the_interpreters():
    spec = discovery.load("add-missing-mask")
    assert spec.small_sizes() == spec.sizes["interpreter"]


# ------------------------------------------------ the registry


def test_every_case_check_comes_from_the_one_registry_in_order():
    """The case checks are the detectors' (``Detector.case``), each defined in its detector's module; a detector
    with no backends is a case check only, which ``harness probe`` never runs."""
    from harness.probe.detectors import names

    owners = {type(c).__module__: det for det in registry().values() for c in det.case}
    assert {type(c).__module__ for c in D.DETECTORS} == set(owners)
    assert all(m == f"harness.probe.detectors.{d.name.replace('-', '_')}" for m, d in owners.items())
    case_only = sorted(d.name for d in registry().values() if not d.probes)
    assert case_only == ["divergence"] and not set(case_only) & set(names())
    assert [d.name for d in D.DETECTORS] == ["reference", "repeat", "first-call", "poison", "canary", "nan-scan",
                                             "divergence", "memcheck", "racecheck", "triton-debug", "consan", "gsan",
                                             "fpsan", "iisan", "triton-viz"]
    assert D.BY_NAME["divergence"] is D.ACROSS and D.ACROSS.check is None
    assert all(d.what and d.yours for d in D.DETECTORS)
    assert [c.name for c in registry()["guards"].case] == ["poison", "canary"]  # the same idea as the guard bands


class NoCheck(CaseCheck):
    name = label = "no-check"


class Across(AcrossCheck):
    name = label = "across-2"

    def compare(self, gpu_verdicts, interp_verdicts):
        return D.QUIET, ""


def test_the_registry_refuses_malformed_detectors():
    ok = list(D.DETECTORS)
    with pytest.raises(TypeError, match="no-check has no check"):
        D.collect(ok + [NoCheck()])
    with pytest.raises(ValueError, match="more than one case check named reference"):
        D.collect(ok + [D.BY_NAME["reference"]])
    with pytest.raises(ValueError, match="exactly one check runs 'across'"):
        D.collect(ok + [Across()])
    wrong_where = Boom()
    wrong_where.where = "tpu"
    with pytest.raises(TypeError, match="where = 'tpu'"):
        D.collect(ok + [wrong_where])
    with pytest.raises(TypeError, match="is not a CaseCheck"):
        D.collect(ok + [registry()["race"]])
    assert D.collect(list(reversed(D.DETECTORS))) == D.DETECTORS


def test_no_module_outside_a_detectors_own_names_it():
    """The registry, the session, the commands and the report iterate; only a detector's module names it.

    A name that is also a field of the worker's events (``reference``) cannot be told
    apart by a search, so it is left out.
    """
    root = Path(D.__file__).parents[1]
    # harness/probe has detectors of its own (on a user's kernel), some with the same names, and
    # harness/bugs names those (the detector that verifies an entry) and peer tools (triton-viz);
    # harness/sanitize runs the tools themselves (compute-sanitizer's memcheck, Triton's gsan mode)
    sources = {p: p.read_text() for p in root.rglob("*.py")
               if p.relative_to(root).parts[0] not in ("probe", "bugs", "sanitize") and p.name != "probe.py"}
    found = []
    for det in D.DETECTORS:
        if det.name in detect.TRIAL_KEYS:
            continue
        own = Path(sys.modules[type(det).__module__].__file__)
        pattern = re.compile(rf"[\"']{re.escape(det.name)}[\"']")
        found += [f"{p.relative_to(root)}: {det.name}" for p, text in sources.items()
                  if p != own and pattern.search(text)]
    assert not found, found


def test_a_recorded_run_lists_the_detectors_it_lacks(tmp_path):
    run = RunResult("synthetic", "broken", "gpu", "done", trials=[trial(close=False)])
    rec = detect.variant_record(SPEC, run, [], probe="not run: not recorded")
    assert rec["findings"]["racecheck"] == {"status": D.NOT_RUN, "reason": "not recorded"}
    assert rec["findings"]["reference"]["status"] == D.FLAGGED
    assert rec["findings"]["triton-viz"] == {"status": D.NA, "reason": "runs on the CPU interpreter only"}
    assert set(detect.failed_record("boom")["findings"]) == {d.name for d in D.DETECTORS if d.check is not None}


def test_shared_memory_tools_are_na_without_a_run_where_the_kernels_use_none(monkeypatch):
    """racecheck and ConSan only see shared memory: when every kernel the main run compiled
    uses none (the worker reports Triton's metadata), detect leaves them out of its probe run
    (``ProbeCheck.drop``) and their checks are n/a with that reason."""
    probed_with = []
    monkeypatch.setattr(detect, "probe_run", lambda spec, variant, backend, names, **kw: probed_with.append(names)
                        or "not run: test")
    keep = {"racecheck", "consan"}
    skip = frozenset(d.name for d in D.DETECTORS if d.name not in keep)
    run = RunResult("synthetic", "broken", "gpu", "done", trials=[trial()], requested_trials=1,
                    kernels=[{"name": "add_kernel", "shared": 0, "num_warps": 4}])
    rec = detect.finish(SPEC, "gpu", run, [], seed=0, skip=skip)
    for name in keep:
        assert rec["findings"][name]["status"] == D.NA
        assert rec["findings"][name]["reason"].startswith("the kernel uses no shared memory (0 bytes in 1 compiled")
    assert not probed_with and rec["kernels"] == run.kernels
    run.kernels = [{"name": "sum_kernel", "shared": 1024, "num_warps": 4}]  # some shared memory: both run
    rec = detect.finish(SPEC, "gpu", run, [], seed=0, skip=skip)
    assert probed_with == [["racecheck", "consan"]] and rec["findings"]["consan"]["status"] == D.NOT_RUN


@pytest.mark.skipif(not os.path.isdir(discovery.cases_dir() / "add-missing-mask"), reason="case not present")
def test_detect_runs_the_probe_on_the_case_folder():
    """detect probes each variant's file with case.py as its inputs; the record keeps what the probe found."""
    spec = discovery.load("add-missing-mask")
    skip = frozenset(d.name for d in D.DETECTORS if d.name not in ("canary", "reference"))
    recs = detect.detect_cases([spec], ["interpreter"], trials=1, skip=skip)["add-missing-mask"]["interpreter"]
    broken, fixed = recs["variants"]["broken"], recs["variants"]["fixed"]
    assert broken["probe"]["detectors"] == ["guards"] and broken["probe"]["ran"] == {"guards": "done"}
    assert [f["code"] for f in broken["probe"]["findings"]] == ["P111"]
    assert broken["findings"]["canary"]["status"] == D.FLAGGED
    assert broken["findings"]["canary"]["reason"].startswith("P111 (the probe's guards): ")
    assert fixed["findings"]["canary"] == {"status": D.QUIET, "reason": "no P111/P113 finding"}
    # the reference check reads the main run, as before
    assert broken["findings"]["reference"] == {"status": D.QUIET, "reason": "all 1 results match the reference"}
    # a record made from `harness record`'s run has no probe run in it
    got = detect.variant_record(spec, detect.main_run(spec, "interpreter", "fixed", trials=1, seed=0)[0], [],
                                probe="not run: not in this recorded run (python -m harness detect --record)")
    assert got["findings"]["canary"]["status"] == D.NOT_RUN


def _detect_verdicts():
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "detect_verdicts.py"
    spec = importlib.util.spec_from_file_location("detect_verdicts", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_verdict_comparison_lists_status_changes_not_reworded_reasons(tmp_path):
    """benchmarks/detect_verdicts.py, behind docs/measurements/detect-probe-*.md: a row differs where a
    status (or a call's observed verdict) differs, never where only the reason's words do."""
    dv = _detect_verdicts()

    def rec(canary, repeat, observed="wrong"):
        v = {"findings": {"canary": {"status": canary, "reason": "x"}, "repeat": {"status": repeat, "reason": "y"}},
             "verdicts": [{"call": 1, "observed": observed, "as_declared": True}]}
        return {"variants": {"broken": v}, dv.ACROSS: {"broken": {"status": D.QUIET, "reason": "same"}}}

    old = {"a": rec(D.FLAGGED, D.QUIET), "b": rec(D.QUIET, D.QUIET)}
    new = {"a": rec(D.FLAGGED, D.QUIET), "b": rec(D.QUIET, D.NA, observed="ok")}
    new["a"]["variants"]["broken"]["findings"]["canary"]["reason"] = "P111 (the probe's guards): reworded"
    diff, n = dv.table(["old", "new"], [old, new], ["a", "b"])
    assert diff == [["b", "broken", "case: call 1", "wrong", "ok"], ["b", "broken", "repeat", D.QUIET, D.NA]]
    assert n == {"old": 8, "new": 8}
    # the records of a `detect --json` made elsewhere, as detect --record writes them
    out = tmp_path / "run.json"
    out.write_text(json.dumps([{"case": "a", "records": {"interpreter": old["a"]}, dv.ACROSS: old["a"][dv.ACROSS]}]))
    assert set(dv.from_run(str(out), "interpreter")) == {"a"}


def test_a_probe_that_fails_costs_only_the_checks_that_read_it(monkeypatch):
    """One bad item never stops the others: the probe raising is 'not run' for its readers, and the variant's
    record (its verdicts, the reference check) is kept."""
    from harness.probe import runner

    def boom(*a, **k):
        raise RuntimeError("no probe today")

    monkeypatch.setattr(runner, "probe", boom)
    run = RunResult("synthetic", "broken", "interpreter", "done", trials=[trial(close=False)], requested_trials=1)
    spec = parse_spec("synthetic", Path("/nonexistent/synthetic"), SPEC_TABLE)
    rec = detect.finish(spec, "interpreter", run, [], seed=0, skip=frozenset({"triton-viz"}))
    assert rec["probe"] == "not run: the probe failed: RuntimeError: no probe today"
    assert rec["findings"]["canary"] == \
        {"status": D.NOT_RUN, "reason": "the probe failed: RuntimeError: no probe today"}
    assert rec["findings"]["reference"]["status"] == D.FLAGGED and rec["status"] == "done"


def test_a_tools_report_is_kept_where_its_process_dies():
    """compute-sanitizer (or triton-viz) may report before the process it wraps dies: the report is the finding,
    beside the death, as the case checks' own runs read it (memcheck flagged a crashed run by its summary)."""
    from types import SimpleNamespace

    from harness.probe import runner
    from harness.probe.request import ProbeRequest

    batch = runner.Batch(ProbeRequest("k.py"), ["compute-sanitizer"], "gpu", 10.0, say=lambda _m: None)
    proc = SimpleNamespace(hung=False, stopped=0, cut=None, returncode=99, output_tail=MEMCHECK, silent=0)
    batch.died(runner.ProbeEvents(), proc, 1.0)
    run = batch.results["compute-sanitizer"]
    assert [f.code for f in run.findings] == ["P601", "P001"] and run.status is runner.Status.CRASH
    rec = {"detectors": ["compute-sanitizer"], "ran": {"compute-sanitizer": run.label},
           "findings": [dict(f.to_json(), detector="compute-sanitizer") for f in run.findings]}
    e = ev([trial()], backend="gpu")
    e.probe = rec
    assert check("memcheck", e)[0] == D.FLAGGED


@pytest.mark.skipif(not os.path.isdir(discovery.cases_dir() / "add-missing-mask"), reason="case not present")
def test_rejudging_a_gpu_record_reads_the_main_runs_kernels(tmp_path):
    """detect_verdicts --rejudge judges the checks that read the probe again: racecheck and ConSan ask the main
    run's kernels (ProbeCheck.drop), which the record keeps."""
    dv = _detect_verdicts()
    ran = {"compute-sanitizer": "done", "racecheck": "done", "consan": "done"}
    v = {"status": "done", "message": "", "kernels": [{"name": "add_kernel", "shared": 0}],
         "probe": {"detectors": list(ran), "ran": ran, "findings": [], "seconds": 1.0},
         "findings": {"racecheck": {"status": D.QUIET, "reason": "old"}, "consan": {"status": D.QUIET, "reason": "x"},
                      "memcheck": {"status": D.QUIET, "reason": "old"}}}
    src, dst = tmp_path / "in.json", tmp_path / "out.json"
    src.write_text(json.dumps([{"case": "add-missing-mask", "records": {"gpu": {"variants": {"broken": v}}}}]))
    dv.rejudge(str(src), str(dst))
    got = json.loads(dst.read_text())[0]["records"]["gpu"]["variants"]["broken"]["findings"]
    assert got["racecheck"]["status"] == got["consan"]["status"] == D.NA
    assert got["memcheck"] == {"status": D.QUIET, "reason": "no P601 finding"}
