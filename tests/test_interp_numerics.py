"""harness.run.interp_numerics: bfloat16 arithmetic and float conversions under the interpreter.

Kernels of our own run in a child process with TRITON_INTERPRET=1 (as the workers run them),
once on the plain interpreter, once inside ``triton_compat.patched(interpreter=True)`` and once
after it; every result is compared with torch's (bfloat16 arithmetic in float32 rounded to
nearest even, torch's float8 conversions), which is what a GPU computes for these operations.
The probes (``bf16_defects``, ``wrong_conversions``) are checked against the kernels: what a
probe calls wrong is what the plain interpreter's kernels get wrong, and where the interpreter
is right (here: once the fix is in) nothing is patched. Then end to end: the probe on a bf16 /
fp8 fixture, and ``harness sanitize`` on a user's suite, each in its own processes.
"""

from pathlib import Path

import numpy as np
import pytest
from test_triton_compat import run_interpreted  # tests/ is on the path: pytest's rootdir-less import

ROOT = Path(__file__).resolve().parents[1]

KERNELS = r'''
import json, sys
import numpy as np
import torch
import triton
import triton.language as tl
from harness.run import interp_numerics as N, triton_compat
from triton.runtime import interpreter


@triton.jit
def bf16_ops(x_ptr, y_ptr, z_ptr, out_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    z = tl.load(z_ptr + offs)
    if OP == "mul":
        r = x * y
    elif OP == "add":
        r = x + y
    elif OP == "sub":
        r = x - y
    elif OP == "neg":
        r = -x
    elif OP == "lt":
        r = (x < y).to(tl.bfloat16)
    elif OP == "eq":
        r = (x == x).to(tl.bfloat16)
    elif OP == "fma":
        r = tl.fma(x, y, z)
    elif OP == "clamp":  # bfloat16 bounds (Python floats would make it a float32 clamp)
        r = tl.clamp(x, y, z)
    elif OP == "clamp_nan":
        r = tl.clamp(x, y, z, propagate_nan=tl.PropagateNan.ALL)
    elif OP == "scalar":
        r = x * 3.0
    elif OP == "div":
        r = x / y
    else:  # "where"
        r = tl.where(x > y, x, y)
    tl.store(out_ptr + offs, r)


@triton.jit
def bf16_sum(x_ptr, out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr, tl.sum(tl.load(x_ptr + tl.arange(0, BLOCK)), axis=0))


@triton.jit
def bf16_dot(a_ptr, b_ptr, out_ptr, M: tl.constexpr):
    r = tl.arange(0, M)
    a = tl.load(a_ptr + r[:, None] * M + r[None, :])
    b = tl.load(b_ptr + r[:, None] * M + r[None, :])
    tl.store(out_ptr + r[:, None] * M + r[None, :], tl.dot(a, b))


@triton.jit
def int_to_bf16(i_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(i_ptr + offs).to(tl.bfloat16))


@triton.jit
def convert(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(out_ptr.dtype.element_ty))


@triton.jit
def convert_rtz(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.bfloat16, fp_downcast_rounding="rtz"))


@triton.jit
def fma_kernel(x_ptr, y_ptr, z_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.fma(tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)))


def wrong(got, want):
    a, b = got.double(), want.double()
    return int(((a != b) & ~(a.isnan() & b.isnan())).sum())


def attempt(fn):
    try:
        return fn()
    except Exception as e:
        return type(e).__name__


N_EL = 1024
g = torch.Generator().manual_seed(0)
bf = torch.bfloat16
x, y, z = [(torch.randn(N_EL, generator=g) * 3).to(bf) for _ in range(3)]
x[0], y[0] = 1.5, 2.0
f = lambda t: t.float()
BF16 = {  # what a GPU computes: float32 arithmetic rounded to bfloat16 (torch's bfloat16 ops do the same)
    "mul": x * y, "add": x + y, "sub": x - y, "neg": -x, "lt": (x < y).to(bf), "eq": (x == x).to(bf),
    "fma": (x.double() * y.double() + z.double()).float().to(bf), "clamp": torch.clamp(x, torch.minimum(y, z), torch.maximum(y, z)),
    "clamp_nan": torch.clamp(x, torch.minimum(y, z), torch.maximum(y, z)),
    "scalar": (f(x) * 3.0).to(bf), "div": (f(x) / f(y)).to(bf), "where": torch.where(x > y, x, y),
}
ints = torch.arange(-N_EL // 2, N_EL // 2, dtype=torch.int32) * 1031  # past 256: bfloat16 rounds them


def fp8_pair(dt):
    """fp32 values evenly spaced over the format's range, as the helper that found it counted."""
    top = torch.finfo(dt).max
    return torch.linspace(-top, top, 4096)


def run_all():
    out = {}
    for op, want in BF16.items():
        r = torch.empty(N_EL, dtype=bf)
        a, b, c = (x, torch.minimum(y, z), torch.maximum(y, z)) if op.startswith("clamp") else (x, y, z)
        out[f"bf16-{op}"] = attempt(lambda: (bf16_ops[(1,)](a, b, c, r, OP=op, BLOCK=N_EL), wrong(r, want))[1])
    s = torch.empty(1, dtype=bf)
    small = (torch.randn(64, generator=torch.Generator().manual_seed(1))).to(bf)
    out["bf16-sum"] = attempt(lambda: (bf16_sum[(1,)](small, s, BLOCK=64),
                                       int(abs(f(s)[0] - f(small).sum()) > 0.02 * f(small).abs().sum()))[1])
    da, db, dout = x[:256].view(16, 16), y[:256].view(16, 16), torch.empty(16, 16)
    want = da.float() @ db.float()  # bf16 products are exact in fp32: only the order of the sums may differ
    out["bf16-dot"] = attempt(lambda: (bf16_dot[(1,)](da, db, dout, M=16),
                                       int(((dout - want).abs() > 1e-5 * (1 + want.abs())).sum()))[1])
    r = torch.empty(N_EL, dtype=bf)
    out["int-to-bf16"] = attempt(lambda: (int_to_bf16[(1,)](ints, r, BLOCK=N_EL), wrong(r, ints.to(bf)))[1])
    src = torch.linspace(-500, 500, 4096)
    r = torch.empty(4096, dtype=bf)
    out["fp32-to-bf16"] = attempt(lambda: (convert[(1,)](src, r, BLOCK=4096), wrong(r, src.to(bf)))[1])
    trunc = (src.view(torch.int32) & -65536).view(torch.float32).to(bf)  # toward zero: the low half dropped
    out["fp32-to-bf16-rtz"] = attempt(lambda: (convert_rtz[(1,)](src, r, BLOCK=4096), wrong(r, trunc))[1])
    for name, dt in (("fp8e4nv", torch.float8_e4m3fn), ("fp8e5", torch.float8_e5m2)):
        v = fp8_pair(dt)
        for sname, sdt in (("fp32", torch.float32), ("fp16", torch.float16), ("bf16", bf)):
            s8 = v.to(sdt)
            r8 = torch.empty(4096, dtype=dt)
            out[f"{sname}-to-{name}"] = attempt(lambda: (convert[(1,)](s8, r8, BLOCK=4096), wrong(r8, s8.to(dt)))[1])
        codes = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(dt)
        r32 = torch.empty(256)
        out[f"{name}-to-fp32"] = attempt(lambda: (convert[(1,)](codes, r32, BLOCK=256), wrong(r32, codes.float()))[1])
    for name, dt, m in (("fp16", torch.float16, 10), ("fp32", torch.float32, 23)):
        a = torch.full((16,), 1 + 2.0 ** -m, dtype=dt)
        c = torch.full((16,), -(1 + 2.0 ** (1 - m)), dtype=dt)
        r = torch.empty(16, dtype=dt)
        # one rounding: x * x + z = 2**(-2m) exactly; rounding the product first gives 0
        out[f"fma-{name}"] = attempt(lambda: (fma_kernel[(1,)](a, a, c, r, BLOCK=16),
                                              wrong(r, torch.full((16,), 2.0 ** (-2 * m), dtype=dt)))[1])
    return out


B = interpreter.InterpreterBuilder
res = {"probe_bf16": sorted(N.bf16_defects(B()) | N.bf16_reduction_defects()),
       "probe_conversions": sorted("-to-".join(p) for p in N.wrong_conversions(interpreter._convert_float)),
       "plain": run_all()}
before = (B.binary_op, B.cast_impl, B.create_fma, B.create_dot, interpreter._convert_float, interpreter.ReduceOps.sum)
with triton_compat.patched(interpreter=True):
    res["patched"] = run_all()
    res["probe_bf16_inside"] = sorted(N.bf16_defects(B()) | N.bf16_reduction_defects())
    res["probe_conversions_inside"] = sorted(
        "-to-".join(p) for p in N.wrong_conversions(interpreter._convert_float))
res["undone"] = (B.binary_op, B.cast_impl, B.create_fma, B.create_dot, interpreter._convert_float,
                 interpreter.ReduceOps.sum) == before
res["after"] = run_all()
print("RESULT " + json.dumps(res))
'''


@pytest.fixture(scope="module")
def kernels():
    return run_interpreted(KERNELS)


# the probe findings that each kernel check shows (by the builder methods its operations reach);
# a check whose operation only some Tritons send to that method (negation: 3.8's create_fneg;
# tl.clamp: 3.9's, the earlier ones promote to float32) is held one way: wrong => a probe says so
BF16_PROBE = {"bf16-mul": {"binary"}, "bf16-add": {"binary"}, "bf16-sub": {"binary"}, "bf16-lt": {"binary"},
              "bf16-eq": {"binary"}, "bf16-where": {"binary"}, "bf16-fma": {"fma-bf16"},
              "bf16-scalar": {"binary", "constant"}, "bf16-sum": {"sum"}, "int-to-bf16": {"cast"},
              "bf16-dot": {"dot"},
              "fma-fp16": {"fma-fp16"}, "fma-fp32": {"fma-fp32"}}
ONE_WAY = {"bf16-neg": {"binary", "unary"}, "bf16-clamp": {"binary"}, "bf16-clamp_nan": {"ternary"}}
CONVERSIONS = ("fp32-to-bf16", "fp32-to-fp8e4nv", "fp16-to-fp8e4nv", "bf16-to-fp8e4nv", "fp8e4nv-to-fp32",
               "fp32-to-fp8e5", "fp16-to-fp8e5", "bf16-to-fp8e5", "fp8e5-to-fp32")


def test_every_bf16_operation_and_conversion_matches_torch_under_the_fix(kernels):
    assert kernels["patched"] == {k: 0 for k in kernels["patched"]}, kernels["patched"]


def test_the_plain_interpreter_gets_bf16_products_and_fp8_rounding_wrong(kernels):
    """The two defects first reported, on this Triton (3.4 to 3.9 each keep bfloat16 as uint16
    and round without the carry: fp32 to fp8e4nv is wrong for 48 of the 4,096 values)."""
    plain = kernels["plain"]
    assert plain["bf16-mul"] != 0 and plain["fp32-to-fp8e4nv"] != 0, plain
    assert plain["fp32-to-fp8e5"] != 0 and plain["fp32-to-bf16"] != 0, plain


def test_the_probes_name_exactly_what_the_plain_kernels_get_wrong(kernels):
    plain, bf16, conv = kernels["plain"], set(kernels["probe_bf16"]), set(kernels["probe_conversions"])
    for check, probes in BF16_PROBE.items():
        assert (plain[check] != 0) == bool(probes & bf16), (check, plain[check], bf16)
    for check, probes in ONE_WAY.items():
        assert plain[check] == 0 or probes & bf16, (check, plain[check], bf16)
    for check in CONVERSIONS:
        assert (plain[check] != 0) == (check in conv), (check, plain[check], conv)


def test_rounding_toward_zero_keeps_the_interpreters_truncation(kernels):
    assert kernels["plain"]["fp32-to-bf16-rtz"] == 0 and kernels["patched"]["fp32-to-bf16-rtz"] == 0, kernels


def test_inside_the_fix_the_probes_find_nothing_left_and_it_is_undone_after(kernels):
    assert kernels["probe_bf16_inside"] == [] and kernels["probe_conversions_inside"] == [], kernels
    assert kernels["undone"] and kernels["after"] == kernels["plain"], kernels


def test_a_right_interpreter_is_left_alone(monkeypatch):
    """Where ``_convert_float`` and the builder already compute what torch does, neither fix
    patches anything (here: a first Patcher's fix is the right interpreter a second one sees)."""
    from triton.runtime import interpreter

    from harness.run import interp_numerics as N
    from harness.run.patching import Patcher

    before = interpreter._convert_float
    with Patcher() as first:
        N.float_conversions(first)
        N.bf16_arithmetic(first)
        # the second fix's probes run on a fresh function object: not the marker, the behaviour
        monkeypatch.setattr(interpreter, "_convert_float",
                            lambda *a, _f=interpreter._convert_float: _f(*a))
        with Patcher() as second:
            N.float_conversions(second)
            assert second._undo == []
        monkeypatch.undo()
        B = interpreter.InterpreterBuilder
        assert N.bf16_defects(B()) == set() and N.bf16_reduction_defects() == set()
        for attr in ("binary_op", "unary_op", "ternary_op"):  # unmarked: the probe alone decides
            monkeypatch.setattr(B, attr, lambda self, *a, _f=getattr(B, attr): _f(self, *a))
        with Patcher() as second:
            N.bf16_arithmetic(second)
            assert second._undo == []
        monkeypatch.undo()
    assert interpreter._convert_float is before


def test_torch_convert_rounds_to_nearest_even_with_the_carry():
    from harness.run.interp_numerics import torch_convert

    got = torch_convert(np.array([127.9, 120.0, 124.0, 448.0], dtype=np.float32), "fp32", "fp8e4nv")
    import torch

    assert torch.from_numpy(got.view(np.int8).copy()).view(torch.float8_e4m3fn).float().tolist() == \
        [128.0, 120.0, 128.0, 448.0]  # 124 is a tie between 120 and 128: to the even mantissa, 128


def test_the_probe_finds_a_right_bf16_kernel_right_and_a_wrong_one_wrong(tmp_path):
    """End to end, through the probe's workers: a correct bf16 / fp8 kernel is clean (the plain
    interpreter made it a P202 error: 588 of 600 outputs non-finite or wrong), and the same
    kernel with its operands swapped is still an error."""
    from harness import probe
    from harness.probe.findings import ERROR

    fixture = ROOT / "tests" / "probe_fixtures" / "everyday" / "bf16_gate.py"
    r = probe(str(fixture), detectors=["reference", "memcheck"])
    assert not r.findings, r.text()
    text = fixture.read_text()
    kernel_line = "tl.where(x > 0, x * y + b, -x)"
    assert kernel_line in text
    broken = tmp_path / "bf16_gate_swapped.py"
    broken.write_text(text.replace(kernel_line, "tl.where(x > 0, x * b + y, -x)"))
    r = probe(str(broken), detectors=["reference"])
    assert "P201" in {f.code for f in r.findings if f.severity == ERROR}, r.text()


SUITE_TEST = r'''
import torch, triton, triton.language as tl


@triton.jit
def mul_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * tl.load(y_ptr + offs))


def test_bf16_product_and_fp8_carry():
    x = torch.full((16,), 1.5, dtype=torch.bfloat16)
    out = torch.empty_like(x)
    mul_kernel[(1,)](x, torch.full((16,), 2.0, dtype=torch.bfloat16), out, BLOCK=16)
    assert out.float().tolist() == [3.0] * 16
    q = torch.empty(16, dtype=torch.float8_e4m3fn)
    mul_kernel[(1,)](torch.full((16,), 127.9), torch.ones(16), q, BLOCK=16)
    assert q.float().tolist() == [128.0] * 16
'''


def test_sanitize_runs_a_users_suite_with_the_numbers_fixed(tmp_path):
    """``harness sanitize pytest``: the user's own process under the interpreter gets the fixes
    too (plainly, 1.5 * 2.0 in bf16 is 0 and 127.9 stored as fp8e4nv is 64)."""
    import os
    import subprocess
    import sys

    (tmp_path / "test_numbers.py").write_text(SUITE_TEST)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TRITON_INTERPRET", None)
    p = subprocess.run([sys.executable, "-m", "harness", "sanitize", "pytest", str(tmp_path), "-q", "-p",
                        "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0 and "1 passed" in p.stdout + p.stderr, p.stdout[-2000:] + p.stderr[-2000:]
