"""The probe reaches narrow triggers (issue #20, "Reach"): the thresholds in a launcher's own
branches, fuzzing that goes on after the first failure and reports each kind, pinned sizes,
and the ``--large`` tier past 2**31 elements (on a GPU; its planner is tested here on the CPU).

The fixtures are in tests/probe_fixtures/reach/; each probe names only the shapes detector.
"""

from pathlib import Path

import pytest
import torch

from harness import probe
from harness.probe import branches, fuzz
from harness.probe.detectors import large

ROOT = Path(__file__).resolve().parents[1]
REACH = ROOT / "tests" / "probe_fixtures" / "reach"
LIMIT_16 = 2 ** 16


def shapes(name, **kw):
    kw.setdefault("options", {"fuzz_trials": 8})
    return probe(str(REACH / name), detectors=["shapes"], backends=["interpreter"], **kw)


def p401(report):
    """The P401 findings of a report (or of a list of findings)."""
    return [f for f in getattr(report, "findings", report) if f.code == "P401"]


# --- thresholds read from the launcher's source --------------------------------------------------------


def _helper(t, width):
    if width < 64 and t.shape[0] >= 2048:
        return 1
    return 0


def _launcher(x, out, n_cols, eps=1e-5):
    M, N = x.shape
    n = x.numel()
    *_, last = x.shape
    BLOCK = 1024 if N > 512 else 256  # noqa: F841
    if M >= 2048:
        pass
    if x.shape[0] > 65535 or x.size(1) <= 2 ** 12:
        pass
    if n_cols < 64 and eps < 0.5:  # a float constant is no threshold
        pass
    if 0 < n <= LIMIT_16:
        pass
    if last == 3:
        pass
    _helper(x, n_cols)
    return out


def test_thresholds_reads_each_pattern_of_the_launchers_branches():
    th = branches.thresholds(_launcher)
    assert th["x.shape[0]"] == {2048, 65535}  # M >= 2048, x.shape[0] > 65535, and the helper's t.shape[0]
    assert th["x.shape[1]"] == {512, 4096}  # N > 512 (a conditional expression), x.size(1) <= 2 ** 12
    assert th["n_cols"] == {64}  # the parameter, and the helper's width bound to it
    assert th["x.numel()"] == {0, 65536}  # a chained comparison against a module-level constant
    assert th["x.shape[-1]"] == {3}  # *_, last = x.shape
    assert "eps" not in th


def test_thresholds_map_back_to_the_size_keywords_by_name_and_by_value():
    th = branches.thresholds(_launcher)
    inputs = {"x": torch.zeros(10, 20), "out": torch.zeros(10), "n_cols": 20}
    got = branches.to_sizes(th, inputs, {"rows": 10, "cols": 20, "eps": 1e-5})
    assert got == {"rows": {2048, 65535}, "cols": {512, 4096, 64, 3}}
    assert branches.to_sizes({"n_cols": {64}}, {"n_cols": 7}, {"n_cols": 7}) == {"n_cols": {64}}


def test_the_plan_holds_each_threshold_and_its_neighbours_past_the_usual_volume():
    sizes = fuzz.plan({"batch": 8, "row": 100}, [128], {}, seed=0, trials=6, thresholds={"batch": {2048}, "row": {64}})
    have = {(s["batch"], s["row"]) for s in sizes}
    assert {(2047, 100), (2048, 100), (2049, 100), (8, 63), (8, 64), (8, 65)} <= have
    assert {(2047, 63), (2049, 63), (2049, 65)} <= have  # both sizes across their thresholds
    assert fuzz.plan({"batch": 8, "row": 100}, [128], {}, seed=0, trials=6) == \
        [s for s in fuzz.plan({"batch": 8, "row": 100}, [128], {}, seed=0, trials=6)]
    # a threshold far past the defaults: the other sizes made small so that it fits
    far = fuzz.plan({"a": 1000, "b": 1000}, [128], {}, seed=0, trials=4, thresholds={"a": {100_000}})
    assert {"a": 100_001, "b": 1} in far and all(fuzz.volume(s) <= fuzz.BIG_VOLUME for s in far)


def test_index_limits_only_where_fuzz_allows_them():
    assert not [s for s in fuzz.plan({"n": 100}, [64], {}, 0, 8) if s["n"] > 30_000]
    wide = {s["n"] for s in fuzz.plan({"n": 100}, [64], {"n": (1, 70_000)}, 0, 8)}
    assert {32767, 32768, 32769, 65535, 65536, 65537} <= wide
    assert 65537 not in {s["n"] for s in fuzz.plan({"n": 100}, [64], {"n": (1, 65_536)}, 0, 8)}


def test_a_pinned_size_keeps_its_value_in_every_planned_size():
    for ranges, pins, want in (({"n": 1024}, (), 1024), ({"n": (1024, 1024)}, (), 1024), ({}, ("n",), 100)):
        sizes = fuzz.plan({"n": 100, "m": 7}, [64], ranges, 0, 8, pins=pins)
        assert sizes and all(s["n"] == want for s in sizes), (ranges, pins)
        assert len({s["m"] for s in sizes}) > 3  # the other size is still fuzzed
    assert "n" not in fuzz.pools_for({"n": 100, "m": 7}, [64], {"n": 1024})


# --- the shapes detector on the fixtures -----------------------------------------------------------------


def test_a_bug_only_on_the_launchers_other_path_is_found():
    """batch >= 2048 and width < 64 takes a packed path that writes past the end; the defaults are 8 x 24."""
    (f,) = p401(shapes("narrow_path.py"))
    assert f.message.startswith("wrote outside: ") and f.sizes["batch"] == 2049, f.message
    assert f.defect_class == "out-of-bounds-write"


def test_a_failure_at_small_sizes_does_not_hide_the_other_path():
    """launch_shared is wrong at every size (fp16 rounding on the default path): fuzzing meets that first,
    and must go on to the packed path's write past the end."""
    found = {f.message.split(":")[0]: f for f in p401(shapes("narrow_path.py", launcher="launch_shared"))}
    assert set(found) == {"wrong values", "wrote outside"}, [f.message for f in found.values()]
    assert found["wrote outside"].sizes["batch"] == 2049 and found["wrong values"].sizes["batch"] < 2048


def test_two_mechanisms_in_one_kernel_are_two_findings():
    found = {f.message.split(":")[0]: f for f in p401(shapes("two_ways.py"))}
    assert set(found) == {"never written", "wrong values"}, [f.message for f in found.values()]
    assert found["never written"].sizes["batch"] % 2 == 1  # an odd batch
    assert found["wrong values"].sizes["batch"] % 2 == 0 and found["wrong values"].sizes["width"] in (3, 5, 7)
    assert found["never written"].defect_class == "unwritten-output"


def test_a_pinned_size_stays_pinned_while_the_other_is_fuzzed():
    (f,) = p401(shapes("pinned.py"))  # FUZZ = {"width": 24}; make_inputs' default is 16
    assert f.sizes == {"batch": 1, "width": 24}, f.message
    (g,) = p401(shapes("pinned.py", sizes={"width": 20}, options={"fuzz_trials": 8, "pinned": ["width"]}))
    assert g.sizes == {"batch": 1, "width": 20}, g.message  # --sizes pins over FUZZ


# --- --large: the planner on the CPU, the run on a GPU -----------------------------------------------------


def test_the_large_planner_scales_the_size_that_grows_the_largest_tensor():
    tensors = [{"name": "x", "numel": 8 * 1000, "itemsize": 4, "growth": {"rows": 1, "cols": 1}},
               {"name": "w", "numel": 1000, "itemsize": 4, "growth": {"cols": 1}},
               {"name": "(result)", "numel": 8, "itemsize": 4, "growth": {"rows": 1}}]
    p = large.plan({"rows": 8, "cols": 1000, "eps": 1e-5}, tensors, free_bytes=80 << 30)
    # scaling cols would grow w as well: rows reaches 2**31 elements of x with fewer bytes in all
    assert p["key"] == "rows" and p["tensor"] == "x" and p["numel"] > 2 ** 31
    assert p["sizes"]["cols"] == 1000 and p["sizes"]["eps"] == 1e-5
    assert 2 ** 31 < p["sizes"]["rows"] * 1000 <= 1.011 * 2 ** 31  # whole rows past it, not one element
    assert p["sizes"]["rows"] % 8 == 0  # as divisible as the default: an even width stays even (make_inputs' pairs)
    by_bytes = large.plan({"rows": 8, "cols": 1000}, [{**tensors[0], "itemsize": 2}], 80 << 30, by="bytes")
    assert by_bytes["bytes"] > 2 ** 31 and by_bytes["sizes"]["rows"] < p["sizes"]["rows"]
    assert large.plan({"rows": 8, "cols": 1000}, tensors, free_bytes=8 << 30) is None  # keeps 20% free
    square = [{"name": "a", "numel": 64 * 64, "itemsize": 4, "growth": {"n": 2}}]
    q = large.plan({"n": 64}, square, 80 << 30)
    assert 1.01 * 2 ** 31 < q["sizes"]["n"] ** 2 <= 1.011 * 2 ** 31
    assert large.growth({"n": 4 * 64 * 64}, 64 * 64, {"n": 2}) == {"n": 2.0}
    assert large.sample_rows(1000, 500, 10) == [(0, 10), (490, 510), (990, 1000)]
    assert large.sample_rows(30, 15, 10) == [(0, 30)]


def test_large_runs_where_asked_for_and_otherwise_on_the_kernels_evidence():
    """--large on a GPU runs without looking at the source; otherwise the launched kernels' int32 offsets decide
    (tests/test_probe_large_auto.py), on the GPU a run and under the interpreter their warning."""
    from harness.probe.detectors import registry

    d = registry()["large"]
    assert d.backends == ("gpu", "interpreter")
    assert d.skip(type("C", (), {"options": {"large": True}, "backend": "gpu"})()) is None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="--large runs past 2**31 elements on a GPU")
def test_large_finds_an_int32_row_offset_overflow_and_the_fix_is_quiet():
    broken = probe(str(REACH / "row_offsets.py"), detectors=["large"], backends=["gpu"], options={"large": True},
                   timeout=560)
    (f,) = [f for f in broken.findings if f.code == "P404"]
    assert f.severity == "error" and f.sizes["rows"] * f.sizes["cols"] > 2 ** 31, broken.text()
    fixed = probe(str(REACH / "row_offsets.py"), launcher="launch_fixed", detectors=["large"], backends=["gpu"],
                  options={"large": True}, timeout=560)
    assert not [f for f in fixed.findings if f.code == "P404" and f.severity == "error"], fixed.text()


def test_on_a_gpu_the_files_gpu_sizes_run_for_real(monkeypatch):
    """The grid-limit dry run is the interpreter's; on a GPU the GPU_SIZES are launched, and a
    launch CUDA refuses there ("invalid argument") is reported as a grid past the limits."""
    from types import SimpleNamespace

    from harness.probe.detectors import shapes

    made = []
    ctx = SimpleNamespace(backend="gpu", target=SimpleNamespace(gpu_sizes={"rows": 300_000}, sizes={"rows": 1000}),
                          late=lambda: False, trying=None,
                          finding=lambda code, msg, **kw: made.append((code, msg)) or (code, msg))
    monkeypatch.setattr(shapes, "fail", lambda c, s: ("raised RuntimeError",
                                                      "raised RuntimeError: Triton Error [CUDA]: invalid argument"))
    assert [code for code, _ in shapes.grid_limits(ctx)] == ["P403"] and "rows=300000" in made[0][1]
    monkeypatch.setattr(shapes, "fail", lambda c, s: ("wrong values", "3/9 differ"))
    assert [code for code, _ in shapes.grid_limits(ctx)] == ["P401"]
    monkeypatch.setattr(shapes, "fail", lambda c, s: None)
    assert shapes.grid_limits(ctx) == []
    ctx.target.gpu_sizes = None
    assert shapes.grid_limits(ctx) == []


def test_a_launch_cuda_refuses_at_a_scaled_size_is_a_limit_not_an_int32_overflow():
    """--large scales one size to 2**31 elements; a kernel that puts that size on grid axis 1
    gets CUDA's "invalid argument" for every version, fixed or not: another size is tried."""
    from harness.probe.detectors.large import launch_refused

    assert launch_refused(RuntimeError("Triton Error [CUDA]: invalid argument"))
    assert not launch_refused(RuntimeError("CUDA error: an illegal memory access was encountered"))
    assert not launch_refused(ValueError("invalid argument: n must be > 0"))  # the launcher's own words


def test_on_a_gpu_the_block_sizes_come_from_the_source(tmp_path):
    """No instrumented run on a GPU records the constexprs a launch used: shape fuzzing's block
    edges and the experiments' block multiples come from the launchers' UPPERCASE power-of-2
    keywords and the autotune configs instead."""
    import importlib.util
    from types import SimpleNamespace

    from harness.probe import kernels

    f = tmp_path / "k.py"
    f.write_text("import triton\nimport triton.language as tl\n\n"
                 "@triton.autotune(configs=[triton.Config({'BLOCK_K': 32}), triton.Config({'BLOCK_K': 256})], key=['n'])\n"
                 "@triton.jit\ndef k(x, n, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):\n    pass\n\n"
                 "def launch(x):\n    k[(1,)](x, x.numel(), BLOCK_N=64, num_warps=4, eps=3)\n")
    spec = importlib.util.spec_from_file_location("k_blocks_mod", f)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    target = SimpleNamespace(kernel=mod, inputs=mod)
    assert kernels.source_blocks(target) == [32, 64, 256]  # num_warps and eps are not block sizes
    ctx = SimpleNamespace(blocks=[], backend="gpu", target=target)
    assert kernels.blocks(ctx) == [32, 64, 256] and ctx.blocks == [32, 64, 256]
    ctx = SimpleNamespace(blocks=[], backend="interpreter", target=target)
    assert kernels.blocks(ctx) == []  # the interpreter's runs say which were used


def test_the_plan_tries_the_defaults_own_tails_early_one_size_at_a_time():
    # a size whose default is a block multiple is tried one off it, the others at their defaults, among
    # the first sizes (a long last block, where a short one hides the bug: mamba's chunk scan)
    defaults = {"seqlen": 256, "chunk": 128, "heads": 2, "dim": 32, "state": 16, "batch": 1}
    plan = fuzz.plan(defaults, [64, 32], {}, seed=0, trials=24)
    alone = [s for s in plan[:20] if sum(s[k] != v for k, v in defaults.items()) == 1]
    for k, v in (("seqlen", 255), ("chunk", 127), ("chunk", 129)):  # (257: sizes stay within the default
        assert {**defaults, k: v} in alone                          # where FUZZ gives no range)
    wide = fuzz.plan(defaults, [64, 32], {"seqlen": (1, 600)}, seed=0, trials=24)
    assert {**defaults, "seqlen": 257} in wide[:20]
    gpu = fuzz.plan(defaults, [64, 32], {}, seed=0, trials=24, largest=True)  # on a GPU: first (one compile)
    assert gpu[:3] == [{**defaults, "seqlen": 255}, {**defaults, "chunk": 127}, {**defaults, "chunk": 129}]
    assert len(gpu) == len(fuzz.plan(defaults, [64, 32], {}, seed=0, trials=24, largest=True))
    assert fuzz.own_tails(16, [64, 32], list(range(1, 100))) == []  # not a block multiple: no tail of its own
    assert fuzz.own_tails(1, [1], [1, 2]) == []


# --- the sizes a failure cut short, after the diagnosis (shapes-rest) ----------------------------------


@pytest.fixture
def fuzz_ctx(monkeypatch):
    """A shape-fuzzing Context on two_ways.py under the patched interpreter, in this process, whose
    probe budget keeps all its time for the diagnosis once a result is wrong: fuzzing stops at its
    first failure, as a short --budget makes it."""
    import time

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from harness.probe.budget import Budget
    from harness.probe.context import Context
    from harness.probe.target import load
    from harness.run.triton_compat import patched

    with patched(interpreter=True, bench_calls=2) as counter:
        ctx = Context(load(str(REACH / "two_ways.py"), None, "launch", backend="interpreter"), "interpreter", 0,
                      "shapes", counter, {"fuzz_trials": 8})
        ctx.budget = Budget(ends=time.monotonic() + 600)
        ctx.budget.reserve = 600.0
        yield ctx


def test_a_failure_under_a_short_budget_leaves_the_other_sizes_for_after_the_diagnosis(fuzz_ctx):
    from harness.probe.detectors import shapes as fuzzing, shapes_rest

    first = p401(fuzzing.fuzz_sizes(fuzz_ctx))
    left = fuzz_ctx.board.fuzz_left
    tried = left["tried"]
    assert len(first) == 1 and left["cut"] and tried < len(left["sizes"]), [f.message for f in first]
    fuzz_ctx.name, fuzz_ctx.budget.reserve = "shapes-rest", 0.0  # as the worker runs it: after the diagnosis
    fuzz_ctx.board.wrong_now = None
    assert shapes_rest.DETECTOR.skip(fuzz_ctx) is None
    more = p401(shapes_rest.rest(fuzz_ctx))
    kinds = [f.message.split(":")[0] for f in first + more]
    assert sorted(kinds) == ["never written", "wrong values"], [f.message for f in first + more]
    assert [f.detector for f in more] == ["shapes"]  # shape fuzzing's finding: its board rules apply
    assert fuzz_ctx.board.fuzz_left is None and fuzz_ctx.board.fuzz["tried"] > tried  # from where it stopped


def test_sizes_left_are_not_run_when_fuzzing_was_not_cut_or_the_budget_is_spent(fuzz_ctx):
    from harness.probe.detectors import shapes as fuzzing, shapes_rest

    fuzz_ctx.budget.reserve = 0.0  # a failure does not cut fuzzing short: it runs its sizes
    fuzzing.fuzz_sizes(fuzz_ctx)
    assert "not cut short" in shapes_rest.DETECTOR.skip(fuzz_ctx)
    fuzz_ctx.board.fuzz_left = {"cut": True}
    fuzz_ctx.budget.ends = fuzz_ctx.budget.now() + 0.5
    assert "spent" in shapes_rest.DETECTOR.skip(fuzz_ctx) and fuzz_ctx.board.fuzz_left is None
