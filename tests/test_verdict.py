"""verdict.judge, the core semantics, on synthetic trials: no kernel runs here."""

from pathlib import Path

import pytest

from harness.core.events import RunResult
from harness.core.spec import SpecError, parse_spec
from harness.core.verdict import judge


def spec_with(expect_gpu="wrong", expect_interp="wrong", calls=1, deterministic=False, **expect_extra):
    meta = {"title": "t", "category": "bounds", "defect": "out-of-bounds-write", "summary": "s", "launcher": "f",
            "run": {"calls": calls}, "compare": {"deterministic": deterministic},
            "expect": {"gpu": expect_gpu, "interpreter": expect_interp, **expect_extra}}
    return parse_spec("synthetic", Path("/nowhere"), meta)


def trial(trial=0, call=0, close=True, fingerprint="a", past=None, unwritten=None, max_abs=0.0):
    return {"trial": trial, "call": call, "close": close, "fingerprint": fingerprint, "n": 4, "n_bad": 0 if close else 1,
            "max_abs": max_abs, "max_rel": 0.0, "nonfinite": 0, "result": "r", "reference": "ref",
            "guard": {"wrote_past_end": past or {}, "unwritten": unwritten or {}}, "bench_calls": []}


def run_of(variant, trials, status="done", requested=None, message="", unavailable=False):
    return RunResult("synthetic", variant, "gpu", status, message=message, trials=trials,
                     requested_trials=len({t["trial"] for t in trials}) if requested is None else requested,
                     unavailable=unavailable)


def one(spec, run):
    (v,) = judge(spec, run)
    return v.observed, v.as_declared


def test_every_trial_wrong_is_wrong():
    trials = [trial(i, close=False, max_abs=1.0) for i in range(3)]
    assert one(spec_with(), run_of("broken", trials)) == ("wrong", True)


def test_one_right_trial_among_wrong_ones_is_not_wrong():
    trials = [trial(0, close=False), trial(1, close=True)]
    assert one(spec_with(), run_of("broken", trials)) == ("ok", False)


def test_a_guard_trip_makes_a_matching_result_wrong():
    trials = [trial(i, past={"out": 3}) for i in range(2)]
    assert one(spec_with(), run_of("broken", trials)) == ("wrong", True)
    trials = [trial(i, unwritten={"out": 1}) for i in range(2)]
    assert one(spec_with(), run_of("broken", trials)) == ("wrong", True)


def test_flaky_needs_two_distinct_results():
    spec = spec_with(expect_gpu="flaky")
    assert one(spec, run_of("broken", [trial(0, fingerprint="a"), trial(1, fingerprint="b")])) == ("flaky", True)
    assert one(spec, run_of("broken", [trial(0), trial(1)])) == ("ok", False)


def test_wrong_and_varying_reads_wrong_flaky_and_satisfies_either():
    trials = [trial(0, close=False, fingerprint="a"), trial(1, close=False, fingerprint="b")]
    assert one(spec_with(expect_gpu="wrong"), run_of("broken", trials)) == ("wrong, flaky", True)
    assert one(spec_with(expect_gpu="flaky"), run_of("broken", trials)) == ("wrong, flaky", True)


def test_a_fixed_kernel_must_repeat_bitwise_only_when_the_case_says_so():
    trials = [trial(0, fingerprint="a"), trial(1, fingerprint="b")]
    assert one(spec_with(deterministic=True), run_of("fixed", trials)) == ("flaky", False)
    assert one(spec_with(deterministic=False), run_of("fixed", trials)) == ("ok", True)


def test_hidden_is_satisfied_by_a_matching_broken_kernel():
    assert one(spec_with(expect_gpu="hidden", expect_interp="wrong"), run_of("broken", [trial()])) == ("hidden", True)


def test_a_crash_before_all_trials_is_a_crash():
    run = run_of("broken", [trial(0, close=False)], status="crash", requested=3, message="SIGSEGV")
    assert one(spec_with(expect_gpu="crash"), run) == ("crash", True)
    assert one(spec_with(expect_gpu="wrong"), run) == ("crash", False)


def test_no_trials_at_all_is_a_crash_not_an_exception():
    run = run_of("fixed", [], status="done", requested=5)
    assert one(spec_with(), run) == ("crash", False)


def test_either_declaration_accepts_each_alternative_and_still_fails_on_ok():
    spec = spec_with(expect_gpu="wrong|crash", gpu_why="depends on what is mapped below the tensor")
    assert one(spec, run_of("broken", [trial(0, close=False)])) == ("wrong", True)
    assert one(spec, run_of("broken", [], status="crash", requested=1, message="illegal address")) == ("crash", True)
    assert one(spec, run_of("broken", [trial(0)])) == ("ok", False)


def test_either_declaration_needs_a_reason():
    with pytest.raises(SpecError, match="gpu_why"):
        spec_with(expect_gpu="wrong|crash")


def test_a_skip_for_missing_hardware_counts_as_declared():
    run = run_of("broken", [], status="skip", requested=1, message="needs 2 GPUs; this machine has 1",
                 unavailable=True)
    assert one(spec_with(), run) == ("skip", True)
    assert one(spec_with(), run_of("broken", [], status="skip", requested=1)) == ("skip", False)


def test_each_call_is_judged_on_its_own_trials():
    spec = spec_with(expect_gpu=["wrong", "ok"], expect_interp=["wrong", "ok"], calls=2)
    trials = [trial(0, 0, close=False), trial(0, 1), trial(1, 0, close=False), trial(1, 1)]
    first, second = judge(spec, run_of("broken", trials))
    assert (first.observed, first.as_declared, first.trials) == ("wrong", True, 2)
    assert (second.observed, second.as_declared, second.trials) == ("ok", True, 2)


def test_the_observed_text_is_read_by_one_parser_and_written_back_the_same():
    from harness.core.verdict import Observed

    texts = ["ok", "hidden", "wrong", "flaky", "wrong, flaky", "crash", "hang", "error", "skip"]
    seen = {t: Observed.parse(t) for t in texts}
    assert [str(o) for o in seen.values()] == texts
    assert [t for t, o in seen.items() if o.wrong] == ["wrong", "wrong, flaky"]
    assert [t for t, o in seen.items() if o.flaky] == ["flaky", "wrong, flaky"]
    assert [o.kind for o in seen.values()] == ["ok", "ok", "wrong", "flaky", "flaky", "crash", "hang", "error", "skip"]
