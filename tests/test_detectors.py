"""The detectors: each flags the event stream it should and stays quiet on the others.

Most tests feed synthetic worker events (no process, no kernel). One runs the worker
under a fake compute-sanitizer, to check the wrapper, the overrides and the parsing.
"""

import os
import sys
import textwrap

import pytest

from harness.detectors import session as detect
from harness.core import discovery
from harness.detectors import base as D
from harness.core.events import RunResult
from harness.core.spec import parse_spec


def trial(trial=0, call=0, close=True, fp="a", nonfinite=0, past=None, unwritten=None, result="1", tuned=0, n=1):
    return {"trial": trial, "call": call, "close": close, "n": n, "n_bad": 0 if close else n,
            "max_abs": 0.0 if close else 1.0, "max_rel": 0.0, "nonfinite": nonfinite, "result": result,
            "reference": "1", "fingerprint": fp, "guard": {"wrote_past_end": past or {}, "unwritten": unwritten or {}},
            "bench_calls": [tuned] if tuned else []}


SPEC = parse_spec("synthetic", None, {
    "title": "t", "category": "bounds", "defect": "out-of-bounds-write", "summary": "s", "launcher": "f",
    "expect": {"gpu": "wrong", "interpreter": "wrong"}})


def ev(trials, probes=(), status="done", backend="interpreter", extra=None, message=""):
    run = RunResult("synthetic", "broken", backend, status, message=message, trials=list(trials),
                    probes=list(probes), requested_trials=max(1, len(trials)))
    return D.Evidence(SPEC, backend, "broken", run, extra or {})


def test_reference_flags_a_wrong_result_only():
    assert D.check_reference(ev([trial(close=False, result="3")]))[0] == D.FLAGGED
    assert D.check_reference(ev([trial(), trial(trial=1)]))[0] == D.QUIET


def test_repeat_flags_distinct_results_and_needs_two_runs():
    status, reason = D.check_repeat(ev([trial(fp="a"), trial(trial=1, fp="b"), trial(trial=2, fp="a")]))
    assert status == D.FLAGGED and "2 distinct results over 3 runs" in reason
    assert D.check_repeat(ev([trial(), trial(trial=1)]))[0] == D.QUIET
    assert D.check_repeat(ev([trial()]))[0] == D.NA


def test_first_call_flags_a_first_call_that_differs_from_the_second():
    status, reason = D.check_first_call(ev([trial(close=False, tuned=60), trial(call=1)]))
    assert status == D.FLAGGED and "call 1 wrong" in reason and "60 times" in reason
    assert D.check_first_call(ev([trial(), trial(call=1)]))[0] == D.QUIET
    assert D.check_first_call(ev([trial(close=False), trial(call=1, close=False)]))[0] == D.QUIET
    assert D.check_first_call(ev([trial()]))[0] == D.NA
    # its own two-call run wins over the main run
    two = RunResult("synthetic", "broken", "interpreter", "done", trials=[trial(), trial(call=1, close=False)])
    assert D.check_first_call(ev([trial()], extra={"first-call": two}))[0] == D.FLAGGED


def test_canary_flags_writes_past_the_end_and_unwritten_output():
    assert "wrote 7 padding elements around out" in D.check_canary(ev([trial(past={"out": 7})]))[1]
    assert D.check_canary(ev([trial(unwritten={"out": 3})]))[0] == D.FLAGGED
    assert D.check_canary(ev([trial()]))[0] == D.QUIET


def test_poison_and_nan_scan_tell_padding_from_the_kernel():
    from_padding = [{"trial": 0, "call": 0, "nonfinite_with_nan_padding": 5, "nonfinite_with_finite_padding": 0}]
    own = [{"trial": 0, "call": 0, "nonfinite_with_nan_padding": 5, "nonfinite_with_finite_padding": 5}]
    nan = [trial(close=False, nonfinite=5)]
    assert D.check_poison(ev(nan, from_padding))[0] == D.FLAGGED
    assert D.check_nan_scan(ev(nan, from_padding))[0] == D.QUIET
    assert D.check_poison(ev(nan, own))[0] == D.QUIET
    assert D.check_nan_scan(ev(nan, own))[0] == D.FLAGGED
    assert D.check_nan_scan(ev(nan))[0] == D.FLAGGED  # no guarded inputs, so no probe
    assert D.check_nan_scan(ev([trial()]))[0] == D.QUIET


def test_no_result_is_not_a_quiet_detector():
    assert D.check_reference(ev([], status="hang", message="timed out"))[0] == D.NA
    assert D.check_reference(ev([], status="error", message="boom"))[0] == D.NOT_RUN
    assert D.check_reference(ev([], status="skip", message="why"))[0] == D.NA


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
    s = D.sanitizer_summary(MEMCHECK)
    assert s["errors"] == 1024
    assert s["first"] == "Invalid __global__ write of size 4 bytes at add_kernel+0x1d0 in broken.py:24"
    r = D.sanitizer_summary("========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)\n"
                            "========= ERROR SUMMARY: 0 errors\n")
    assert r["errors"] == 0 and r["warnings"] == 1
    assert D.sanitizer_summary("Traceback ...") is None


def test_memcheck_and_racecheck_findings():
    check = D.BY_NAME["memcheck"].check
    flagged = check(ev([trial()], backend="gpu", extra={"memcheck": tool_run(MEMCHECK, "crash", "exit status 99")}))
    assert flagged[0] == D.FLAGGED and flagged[1].startswith("1024 errors; first: Invalid __global__ write")
    quiet = check(ev([trial()], backend="gpu", extra={"memcheck": tool_run("========= ERROR SUMMARY: 0 errors")}))
    assert quiet == (D.QUIET, "0 errors")
    assert check(ev([trial()], backend="gpu", extra={"memcheck": tool_run("Segmentation fault", "crash")}))[0] \
        == D.NOT_RUN
    assert check(ev([trial()], backend="gpu", extra={"memcheck": "not run: compute-sanitizer not found"})) \
        == (D.NOT_RUN, "compute-sanitizer not found")


def test_triton_debug_flags_a_device_assert():
    out = "broken.py:12: block: [3,0,0], thread: [0,0,0] Assertion `int32 overflow detected for operation mul` failed."
    got = D.check_triton_debug(ev([trial()], backend="gpu", extra={"triton-debug": tool_run(out, "crash")}))
    assert got == (D.FLAGGED, "device_assert fired: int32 overflow detected for operation mul")
    assert D.check_triton_debug(ev([trial()], backend="gpu", extra={"triton-debug": tool_run("")}))[0] == D.QUIET


def test_triton_viz_reads_the_wrappers_line():
    line = f"{D.VIZ_MARK} 3 out-of-bounds accesses; first: load of x_ptr in add_kernel at broken.py:22"
    assert D.check_triton_viz(ev([trial()], extra={"triton-viz": tool_run(line)})) == \
        (D.FLAGGED, "3 out-of-bounds accesses; first: load of x_ptr in add_kernel at broken.py:22")
    assert D.check_triton_viz(ev([trial()], extra={"triton-viz": tool_run(f"{D.VIZ_MARK} 0 out-of-bounds accesses")}))[0] \
        == D.QUIET
    assert D.check_triton_viz(ev([trial()], extra={"triton-viz": tool_run(f"{D.VIZ_UNAVAILABLE} ImportError")}))[0] \
        == D.NOT_RUN


def test_divergence_compares_behaviour_classes():
    v = lambda obs, call=1: {"observed": obs, "call": call}  # noqa: E731
    assert D.check_divergence([v("flaky")], [v("wrong")])[0] == D.FLAGGED
    assert D.check_divergence([v("ok")], [v("hidden")])[0] == D.QUIET
    assert D.check_divergence([v("wrong, flaky")], [v("flaky")])[0] == D.QUIET
    assert D.check_divergence(None, [v("wrong")])[0] == D.NOT_RUN
    assert D.check_divergence([v("skip")], [v("wrong")])[0] == D.NA


def test_evaluate_covers_every_detector_and_survives_a_broken_one(monkeypatch):
    def boom(ev):
        raise ValueError("bad")

    found = D.evaluate(ev([trial(close=False)]))
    assert set(found) == {d.name for d in D.DETECTORS if d.check}
    assert found["memcheck"].status == D.NA and found["triton-debug"].status == D.NA
    bad = D.Detector("bad", "bad", "both", "", "", boom)
    monkeypatch.setattr(D, "DETECTORS", D.DETECTORS + [bad])
    assert D.evaluate(ev([trial()]))["bad"] == D.Finding(D.NOT_RUN, "detector failed: ValueError: bad")


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


# ------------------------------------------------ the extra runs: a fake compute-sanitizer

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


def test_worker_runs_under_a_wrapper_with_overrides(tmp_path, monkeypatch):
    monkeypatch.setenv("CASEBOOK_CASES", str(tmp_path))
    d = tmp_path / "tiny-copy"
    d.mkdir()
    (d / "case.toml").write_text(textwrap.dedent("""
        title = "t"
        category = "bounds"
        defect = "unwritten-output"
        summary = "s"
        launcher = "run"
        [expect]
        gpu = "wrong"
        interpreter = "wrong"
        [sizes.interpreter]
        n = 1000
        """))
    (d / "case.py").write_text(textwrap.dedent("""
        import torch
        from harness.buffers import guarded, output
        def make_inputs(*, device, gen, n):
            return {"x": guarded(torch.ones(n), device), "out": output((n,), torch.float32, device)}
        def reference(x):
            return x.double()
        """))
    for name in ("broken", "fixed"):
        (d / f"{name}.py").write_text("def run(x, out):\n    out.copy_(x)\n    return out\n")
    (d / "README.md").write_text("# t\n")
    fake = tmp_path / "compute-sanitizer"
    fake.write_text(FAKE_SANITIZER.replace("{python}", sys.executable))
    fake.chmod(0o755)
    spec = discovery.load("tiny-copy")
    plan = {"trials": 1, "wrapper": [str(fake), "--tool", "memcheck"], "log_file": True,
            "overrides": {"pad": 0, "sizes": {"n": 7}, "calls": 2}}
    run = detect._extra_run(spec, "fixed", "interpreter", 0, plan)
    assert run.status == "done", run.output_tail
    assert [t["call"] for t in run.trials] == [0, 1] and run.trials[0]["n"] == 7
    assert run.trials[0]["guard"] == {"wrote_past_end": {}, "unwritten": {}}
    e = D.Evidence(spec, "gpu", "fixed", run, {"memcheck": run})
    assert D.BY_NAME["memcheck"].check(e) == (
        D.FLAGGED, "1 error; first: Invalid __global__ read of size 4 bytes at k+0x10 in broken.py:3")


def test_extra_runs_plan(monkeypatch):
    monkeypatch.setattr(detect, "compute_sanitizer", lambda: None)
    plan = detect.extra_runs(SPEC, "gpu")
    assert plan["memcheck"].startswith("not run: compute-sanitizer not found")
    assert plan["triton-debug"]["extra_env"] == {"TRITON_DEBUG": "1"}
    assert plan["first-call"]["overrides"]["calls"] == 2
    monkeypatch.setattr(detect, "compute_sanitizer", lambda: "/x/compute-sanitizer")
    mem = detect.extra_runs(SPEC, "gpu")["memcheck"]
    assert mem["extra_env"] == {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"} and mem["overrides"]["pad"] == 0
    assert "triton-viz" in detect.extra_runs(SPEC, "interpreter")


@pytest.mark.skipif(not os.path.isdir(discovery.cases_dir() / "add-missing-mask"), reason="case not present")
def test_small_sizes_default_to_the_interpreters():
    spec = discovery.load("add-missing-mask")
    assert spec.small_sizes() == spec.sizes["interpreter"]
