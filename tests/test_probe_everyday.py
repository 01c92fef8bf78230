"""The probe on everyday Triton code (issue #20, item 4): launchers that return tuples, dicts
or None, scalar spin locks, libdevice, ``and``/``or``/``not`` between masks, list grids, loops
over a runtime bound, float keywords of make_inputs, tolerances relative to the output's
magnitude, and a kernel that does not compile.

Each fixture in tests/probe_fixtures/everyday/ is a correct probe file; where a test needs a
broken one it edits a copy, so that each test also shows the probe still catches the bug.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from harness import probe
from harness.probe import execute as X
from harness.probe.findings import ERROR
from harness.probe.target import magnitude

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "probe_fixtures" / "everyday"


def errors(report):
    return [f for f in report.findings if f.severity == ERROR]


def edited(tmp_path, name, old, new):
    """A copy of fixture ``name`` with ``old`` replaced by ``new`` (which must be there)."""
    text = (FIXTURES / name).read_text()
    assert old in text, (name, old)
    path = tmp_path / name
    path.write_text(text.replace(old, new))
    return str(path)


# ---------------------------------------------------------------- scalar atomics: a spin lock


def test_a_spin_lock_on_a_scalar_pointer_is_clean_under_every_detector():
    r = probe(str(FIXTURES / "spin_lock.py"), backends=["interpreter"])
    assert errors(r) == [], r.text()
    assert not [f for f in r.findings if f.code in ("P000", "P001")], r.text()


def test_the_race_detector_still_sees_a_counter_updated_without_the_lock_or_outside_it(tmp_path):
    no_lock = edited(tmp_path, "spin_lock.py", "    while tl.atomic_cas(lock_ptr, 0, 1) == 1:\n        pass\n", "")
    r = probe(no_lock, detectors=["race"])
    assert "P301" in {f.code for f in errors(r)}, r.text()
    (tmp_path / "spin_lock.py").unlink()
    outside = edited(tmp_path, "spin_lock.py",
                     "    tl.store(count_ptr, tl.load(count_ptr) + 1)\n    tl.atomic_xchg(lock_ptr, 0)\n",
                     "    tl.atomic_xchg(lock_ptr, 0)\n    tl.store(count_ptr, tl.load(count_ptr) + 1)\n")
    r = probe(outside, detectors=["race"])
    races = [f for f in errors(r) if f.code == "P301"]
    assert races and "count_ptr" in races[0].message and "total_ptr" not in races[0].message, r.text()


# ---------------------------------------------------------------- what launchers return


@pytest.mark.parametrize("name", ["row_minmax_tuple.py", "row_stats_dict.py", "scale_in_place.py",
                                  "momentum_in_place.py"])
def test_tuples_dicts_and_in_place_launchers_are_compared_part_by_part(name):
    r = probe(str(FIXTURES / name), detectors=["reference", "guards", "memcheck"])
    assert errors(r) == [], r.text()


def test_a_wrong_part_of_a_tuple_or_dict_is_named(tmp_path):
    r = probe(edited(tmp_path, "row_minmax_tuple.py", "tl.store(hi_ptr + row, hi)", "tl.store(hi_ptr + row, lo)"),
              detectors=["reference"])
    wrong = [f for f in errors(r) if f.code == "P201"]
    assert wrong and "[1]:" in wrong[0].message and "[0]:" not in wrong[0].message, r.text()
    r = probe(edited(tmp_path, "row_stats_dict.py", "1.0 / tl.sqrt(var + eps)", "tl.sqrt(var + eps)"),
              detectors=["reference"])
    wrong = [f for f in errors(r) if f.code == "P201"]
    assert wrong and "rstd:" in wrong[0].message, r.text()


def test_an_in_place_launcher_that_misses_the_tail_is_caught_on_the_input_it_changes(tmp_path):
    broken = edited(tmp_path, "scale_in_place.py", "mask = offs < n\n", "mask = offs < n - 1\n")
    r = probe(broken, detectors=["reference", "guards"])
    found = {f.code: f for f in errors(r)}
    assert "P201" in found, r.text()
    # Call.returned names the input that holds the result: the never-written check reaches it
    assert "P113" in found and "'x'" in found["P113"].message, r.text()
    broken = edited(tmp_path, "momentum_in_place.py", "tl.store(v_ptr + offs, v, mask=mask)",
                    "tl.store(v_ptr + offs, 2 * v, mask=mask)")
    r = probe(broken, detectors=["reference"])
    assert any("v:" in f.message for f in errors(r)), r.text()


class _Target:
    tolerance = None

    def tolerance_for(self, dtype, ref=None):
        from harness.probe.target import Target

        return Target.tolerance_for(self, dtype, ref)


def _compare(out, ref, given, inputs):
    res = X.Call(ref=ref)
    X._compare(res, _Target(), out, given, inputs)
    return res


def _flat_ref(value):
    """What X.reference makes of a reference's return value (without a probe file)."""
    class T:
        @staticmethod
        def reference(**_):
            return value
    return X.reference(T, {})


def test_the_in_place_rules_pick_the_changed_input_and_say_when_they_cannot():
    before = {"x": torch.zeros(4), "y": torch.zeros(4), "n": 4}
    after = {"x": torch.ones(4), "y": torch.zeros(4), "n": 4}
    res = _compare(None, _flat_ref(torch.ones(4, dtype=torch.float64)), after, before)
    assert res.cmp["close"] and res.returned == "x", res.cmp
    both = {"x": torch.ones(4), "y": torch.full((4,), 2.0), "n": 4}
    res = _compare(None, _flat_ref(torch.ones(4, dtype=torch.float64)), both, before)
    assert not res.cmp["close"] and "dict" in res.cmp["result"], res.cmp  # two changed: say how to name one
    res = _compare(None, _flat_ref({"x": torch.ones(4), "y": torch.full((4,), 2.0)}), both, before)
    assert res.cmp["close"] and [n for n, _ in res.parts] == ["x", "y"], res.cmp
    res = _compare(None, _flat_ref({"x": torch.ones(4), "y": torch.full((4,), 3.0)}), both, before)
    assert not res.cmp["close"] and res.cmp["result"].startswith("y:") and res.returned == "y", res.cmp
    res = _compare((torch.ones(2), torch.ones(3)), _flat_ref((torch.ones(2),)), {}, {})
    assert not res.cmp["close"] and "2 outputs" in res.cmp["result"], res.cmp


# ---------------------------------------------------------------- what the plain interpreter gets wrong


@pytest.mark.parametrize("name", ["libdevice_gelu.py", "and_masks.py", "list_grid.py"])
def test_libdevice_bool_ops_list_grids_and_runtime_ranges_match_the_reference(name):
    r = probe(str(FIXTURES / name), detectors=["reference", "memcheck"])
    assert errors(r) == [] and not r.findings, r.text()


PLAIN = r'''
import json, sys, torch
sys.path.insert(0, "tests/probe_fixtures/everyday")
from harness.run import triton_compat
from harness.probe import execute as X
import libdevice_gelu, and_masks, list_grid, no_compile

def run(mod):
    # and_masks at n = 256, two whole blocks: the mask the plain interpreter drops there is only the window's
    inputs = mod.make_inputs(device="cpu", gen=torch.Generator().manual_seed(0), **({"n": 256} if mod is and_masks else {}))
    ref = mod.reference(**{k: (v.clone() if hasattr(v, "clone") else v) for k, v in inputs.items()})
    try:
        out = mod.launch(**inputs)
    except Exception as e:
        return type(e).__name__
    return "match" if torch.allclose(out.double(), ref, rtol=1e-4, atol=1e-5) else "wrong"

mods = [libdevice_gelu, and_masks, list_grid]
r = {"plain": [run(m) for m in mods]}
with triton_compat.patched(interpreter=True):
    r["patched"] = [run(m) for m in mods]
r["after"] = [run(m) for m in mods]

def error_of(fn):
    try:
        fn()
    except Exception as e:
        return X.compile_error(e)
    return "no error"

import triton, triton.language as tl

@triton.jit
def assert_kernel(x_ptr):
    tl.device_assert(tl.load(x_ptr) > 0, "x must be positive")

def bad_launcher():
    return 1 // 0

r["arange"] = error_of(lambda: no_compile.launch(torch.zeros(10)))
import dataclasses
from triton.runtime import interpreter
interpreter.interpreter_builder.options = dataclasses.replace(interpreter.interpreter_builder.options, debug=True)
r["assert"] = error_of(lambda: assert_kernel[(1,)](torch.zeros(1)))
r["launcher"] = error_of(bad_launcher)
from triton.compiler.errors import CompilationError
import ast
node = ast.parse("x = tl.arange(0, 10)").body[0]
r["gpu"] = X.compile_error(CompilationError("x = tl.arange(0, 10)", node, "arange's range must be a power of 2"))
print("RESULT " + json.dumps(r))
'''


@pytest.fixture(scope="module")
def plain():
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-c", PLAIN], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=300)
    lines = [line for line in p.stdout.splitlines() if line.startswith("RESULT ")]
    assert p.returncode == 0 and lines, p.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def test_the_plain_interpreter_gets_each_wrong_the_patched_one_right_and_the_patches_are_undone(plain):
    # libdevice: a missing _semantic (or None from the stubs); and: a mask dropped; a list grid: refused
    assert "match" not in plain["plain"], plain
    assert plain["patched"] == ["match"] * 3, plain
    assert plain["after"] == plain["plain"], plain


def test_a_kernel_that_does_not_compile_gives_tritons_message_and_nothing_else_does(plain):
    assert plain["arange"] and "power of 2" in plain["arange"], plain
    assert plain["gpu"] == "arange's range must be a power of 2", plain
    assert plain["assert"] is None and plain["launcher"] is None, plain


def test_libdevice_symbols_map_to_numpy():
    import numpy as np

    from harness.run.triton_compat import libdevice_numpy

    x = np.array([0.25, 1.5, -2.0], dtype=np.float32)
    assert np.allclose(libdevice_numpy("__nv_expf", np.float32)(x), np.exp(x.astype(np.float64)))
    assert np.allclose(libdevice_numpy("__nv_fast_expf", np.float32)(x), np.exp(x.astype(np.float64)))
    assert np.allclose(libdevice_numpy("__nv_rsqrtf", np.float32)(np.abs(x)), 1 / np.sqrt(np.abs(x)))
    assert np.allclose(libdevice_numpy("__nv_erff", np.float32)(x), [0.276326, 0.966105, -0.995322], atol=1e-6)
    assert list(libdevice_numpy("__nv_float2int_rz", np.int32)(np.array([-1.7, 1.7]))) == [-1.0, 1.0]
    assert list(libdevice_numpy("__nv_clz", np.int32)(np.array([1, 0, -1], dtype=np.int32))) == [31, 32, 0]
    assert list(libdevice_numpy("__nv_popc", np.int32)(np.array([7, 0, -1], dtype=np.int32))) == [3, 0, 32]
    assert libdevice_numpy("__nv_fadd_rd", np.float32) is None  # rounded down: no NumPy equivalent


# ---------------------------------------------------------------- sizes and tolerances


def test_a_float_keyword_of_make_inputs_is_never_fuzzed_or_scaled():
    # make_inputs raises for any eps but 1e-5: a detector that changed it would report P000/P001
    r = probe(str(FIXTURES / "eps_keyword.py"))
    assert not [f for f in r.findings if f.code in ("P000", "P001")] and errors(r) == [], r.text()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_outputs_of_a_correct_kernel_pass(dtype):
    r = probe(str(FIXTURES / "softmax_half.py"), detectors=["reference", "shapes"], sizes={"dtype": dtype})
    assert errors(r) == [], r.text()


def test_the_absolute_tolerance_grows_with_the_references_magnitude():
    from harness.core.compare import compare
    from harness.probe.target import DTYPE_TOLERANCE

    ref = torch.tensor([0.0123, 2.0e4, -3.0e4, 1.5e4], dtype=torch.float64)
    out = ref.float().clone()
    out[0] = 0.0127  # float32 rounding at the magnitude of the others
    rtol, atol = DTYPE_TOLERANCE["float32"]
    assert not compare(out, ref, rtol, atol)["close"]
    assert magnitude(ref) > 1e4 and compare(out, ref, *_Target().tolerance_for(torch.float32, ref))["close"]
    out[0] = 3.0  # a wrong element stays wrong
    assert not compare(out, ref, *_Target().tolerance_for(torch.float32, ref))["close"]
    small = torch.tensor([0.5, -0.25, 0.0], dtype=torch.float64)
    assert magnitude(small) == 1.0 and _Target().tolerance_for(torch.float32, small) == (rtol, atol)
    assert _Target().tolerance_for(torch.int32, ref) == (0.0, 0.0)  # integers match exactly


def test_a_correct_float32_kernel_whose_output_is_large_passes_with_an_exact_zero_beside_it():
    r = probe(str(FIXTURES / "row_dot_large.py"), detectors=["reference"])
    assert errors(r) == [], r.text()


def test_a_kernel_that_does_not_compile_is_one_finding_per_run_not_a_wrong_result():
    r = probe(str(FIXTURES / "no_compile.py"), detectors=["reference", "memcheck"])
    assert r.findings and all(f.code in ("P001", "P003") for f in r.findings), r.text()
    assert "power of 2" in r.findings[0].message, r.text()


def test_wrap_triton_hands_an_interpreted_kernel_back_as_torch_2_13_does(monkeypatch):
    """A ``torch.library.triton_op`` launcher calls ``wrap_triton(kernel)``; before torch 2.13 that refused the
    interpreter's ``@triton.jit`` (an InterpretedFunction), so the launcher raised under TRITON_INTERPRET=1
    (fairchem's first-run GPU board, torch 2.11: P001 on both versions). Under the patch it is handed back as
    it is; a compiled kernel still goes to torch's own, and leaving the patch restores torch's."""
    import torch.library as library
    from torch._library import triton as torch_triton
    from triton.runtime.interpreter import InterpretedFunction

    from harness.run.patching import Patcher
    from harness.run.triton_compat import _wrap_triton

    def refusing(kernel, /):  # torch 2.11's check
        raise RuntimeError("wrap_triton only works on functions annotated with triton.jit or triton.autotune")

    monkeypatch.setattr(torch_triton, "wrap_triton", refusing)
    monkeypatch.setattr(library, "wrap_triton", refusing)

    def kernel_fn(x_ptr):
        pass

    interpreted = InterpretedFunction(kernel_fn)
    with Patcher() as patcher:
        _wrap_triton(patcher)
        assert library.wrap_triton(interpreted) is interpreted
        assert torch_triton.wrap_triton(interpreted) is interpreted
        with pytest.raises(RuntimeError, match="only works on"):
            library.wrap_triton(kernel_fn)  # not a kernel: torch's own answer
    with pytest.raises(RuntimeError, match="only works on"):
        library.wrap_triton(interpreted)
