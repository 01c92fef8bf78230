"""bfloat16 and fp8 numbers rounded as IEEE arithmetic rounds them, under Triton's CPU interpreter.

Triton's interpreter (``triton/runtime/interpreter.py``, 3.4 to 3.9) keeps a bfloat16 tensor
as its raw 16-bit patterns in a NumPy ``uint16`` array (``_get_np_dtype``) and an fp8 tensor as
``uint8``, and converts between float formats with its own bit arithmetic (``_convert_float``).
Two families of defects follow, each found by looking at that source and shown by a kernel
(tests/test_interp_numerics.py):

- **bfloat16 arithmetic on the bit patterns.** ``InterpreterBuilder.binary_op`` applies
  ``np.multiply``, ``np.add``, ``np.less``... to the ``uint16`` arrays themselves, so
  ``x * y``, ``x + y``, ``x - y``, ``-x``, ``x < y``, ``x == y`` and ``tl.fma`` on two bfloat16
  tensors are integer operations on the encodings (1.5 * 2.0 gives 0, 1.5 + 2.0 a NaN), and so
  is ``tl.sum`` of a bfloat16 block (``ReduceOps.sum``; ``tl.max`` and ``tl.cumsum`` promote
  bfloat16 to float32 first and are right), and 3.9's ``tl.clamp`` (through ``binary_op``, or
  ``ternary_op``'s ``np.clip`` when it propagates NaNs; 3.4 to 3.8 promote); an int cast to bfloat16
  keeps the integer as a bit pattern (``cast_impl``'s ``astype``). ``x * 3.0`` with a Python
  float fails (3.4 to 3.8 have no ``get_bf16``; 3.9's truncates).
  ``tl.dot`` of bfloat16 blocks (``create_dot``) is ``np.matmul`` of the patterns too (a 16 x 16
  product of randn values off by 1e10); the fix multiplies the float32 values (exact products),
  rounding to bfloat16 only where the accumulator is bfloat16.
  ``bf16-arithmetic`` decodes each bfloat16 operand to float32 (exact), computes there, and
  rounds the result back to bfloat16 to nearest even (through torch), which is the correctly
  rounded bfloat16 result for +, -, * and comparisons (float32 holds every product of two
  bfloat16 numbers exactly, and 24 >= 2 * 8 + 2 bits make the double rounding of a sum
  innocuous), which torch's bfloat16 arithmetic gives too. ``tl.fma`` is computed in float64
  and rounded to its type (the interpreter rounded the product first, in 3.4 to 3.8 for
  float32 and float16 too).
- **float conversions that drop the rounding carry.** ``_convert_float`` rounds a mantissa by
  adding the first dropped bit to the kept ones and masking the sum, so a mantissa that rounds
  up past its largest value loses the carry into the exponent instead of moving up a binade
  (fp32 127.9 to fp8e4nv gives 64, not 128; 48 of 4,096 values evenly spaced in [-448, 448]),
  rounds ties away from zero instead of to even, and saturates every exponent past the format's
  (fp32 500 to fp8e5 gives 256). float32 to bfloat16 (``tl.cast``, and every bfloat16 store of
  a float32 value) passes no rounding mode and truncates. fp8 to float32 decodes the fp8e4nv
  NaN as 480 and fp8e5's infinities and NaNs as numbers. ``float-conversions`` computes each
  conversion that torch has both types of (float64, float32, float16, bfloat16, fp8e4nv as
  ``float8_e4m3fn``, fp8e5 as ``float8_e5m2``) with torch, round to nearest even, for the
  default rounding (a ``tl.cast`` without ``fp_downcast_rounding``, or "rtne"); "rtz" and
  formats torch lacks (fp8e4b15, the AMD fp8e4b8 and fp8e5b16) keep the interpreter's code.
  Past the largest finite value, torch's rule holds (fp8e4nv saturates to +-448, fp8e5
  overflows to infinity); a GPU's cvt.rn.satfinite may differ there (not measured here).

Each fix first asks the interpreter (a probe of the behaviour, not its version) and changes
only what it gets wrong: where an interpreter gets a conversion pair or an operation right,
that part is left alone, and where it gets all right, nothing is patched.
``harness.run.triton_compat.patched(interpreter=True)`` installs both (``EVERYDAY_FIXES``).
"""

from __future__ import annotations

from harness.run.patching import Patcher

# tl dtype name -> torch dtype name, for the float formats torch has
_TORCH = {"fp64": "float64", "fp32": "float32", "fp16": "float16", "bf16": "bfloat16",
          "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2"}
_INT = {8: "int8", 16: "int16", 32: "int32", 64: "int64"}


def torch_dtype(tl_name: str):
    import torch

    name = _TORCH.get(tl_name)
    return getattr(torch, name, None) if name else None


def torch_convert(data, src_name: str, dst_name: str):
    """``data`` (the interpreter's array of ``src_name`` values: its float type, or the unsigned
    patterns of bfloat16 and fp8) converted by torch to ``dst_name``, round to nearest even, as
    the unsigned patterns of the destination's width (what ``_convert_float`` returns)."""
    import numpy as np
    import torch

    src, dst = torch_dtype(src_name), torch_dtype(dst_name)
    a = np.asarray(data)
    t = torch.from_numpy(np.ascontiguousarray(a).view(_INT[a.dtype.itemsize * 8]).copy()).view(src)
    out = t.to(dst).view(getattr(torch, _INT[dst.itemsize * 8])).numpy()
    return out.view(f"uint{dst.itemsize * 8}").reshape(a.shape)


def bf16_to_f32(bits):
    import numpy as np

    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(values):
    """float values (any NumPy float array) as bfloat16 patterns, round to nearest even."""
    import numpy as np

    return torch_convert(np.asarray(values, dtype=np.float32), "fp32", "bf16")


# ---------------------------------------------------------------- probes


def _sample(tl_name: str):
    """Values of ``tl_name`` that reach every rounding case of a conversion to a narrower float:
    every pattern of a 16- or 8-bit format; for float32 and float64, every eighth bfloat16
    pattern (every sign and exponent) widened with low bits just under, at and over half of a
    bfloat16 unit, and seeded random patterns (the cases of float16's and fp8's rounding bits)."""
    import numpy as np

    bits = {"fp64": 64, "fp32": 32, "fp16": 16, "bf16": 16, "fp8e4nv": 8, "fp8e5": 8}[tl_name]
    if bits <= 16:
        return np.arange(1 << bits, dtype=np.uint64).astype(f"uint{bits}")
    hi = np.arange(0, 1 << 16, 8, dtype=np.uint32) << np.uint32(16)
    rand = np.random.default_rng(0).integers(0, 1 << 32, size=1 << 13, dtype=np.uint64).astype(np.uint32)
    f32 = np.concatenate([hi, hi | 0x7FFF, hi | 0x8000, hi | 0x8001, rand]).view(np.float32)
    with np.errstate(invalid="ignore"):
        return f32 if bits == 32 else f32.astype(np.float64)


def _same(a, b) -> bool:
    """Two arrays of float values equal, NaN where the other is NaN (payloads aside)."""
    import numpy as np

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def _as_f64(patterns, tl_name: str):
    import numpy as np
    import torch

    a = np.ascontiguousarray(patterns)
    return torch.from_numpy(a.view(_INT[a.dtype.itemsize * 8]).copy()).view(torch_dtype(tl_name)).double().numpy()


def wrong_conversions(convert) -> set:
    """The ``(source, destination)`` pairs, among the formats torch has, that ``convert`` (the
    interpreter's ``_convert_float``) gets wrong where it is called: float32 to and from
    bfloat16 (with no rounding mode, as ``cast_impl`` calls it), and every float to and from an
    fp8 format (round to nearest even, as ``create_fp_to_fp`` calls it for ``tl.cast``)."""
    import triton.language as tl
    from triton._C.libtriton import ir

    fp8 = ["fp8e4nv", "fp8e5"]
    pairs = [("fp32", "bf16"), ("bf16", "fp32")] + [(s, d) for f in fp8 for s, d in (
        [(w, f) for w in ("fp64", "fp32", "fp16", "bf16")] + [(f, w) for w in ("fp64", "fp32", "fp16", "bf16")])]
    types = {"fp64": tl.float64, "fp32": tl.float32, "fp16": tl.float16, "bf16": tl.bfloat16,
             "fp8e4nv": tl.float8e4nv, "fp8e5": tl.float8e5}
    wrong = set()
    for src, dst in pairs:
        if torch_dtype(src) is None or torch_dtype(dst) is None:
            continue
        x = _sample(src)
        want = _as_f64(torch_convert(x, src, dst), dst)
        down = types[src].primitive_bitwidth > types[dst].primitive_bitwidth
        for mode in ([None, ir.ROUNDING_MODE.RTNE] if down else [None]):
            try:
                got = _as_f64(convert(x, types[src], types[dst], mode), dst)
            except Exception:  # noqa: BLE001  it cannot convert them at all: torch's is better
                wrong.add((src, dst))
                break
            if not _same(got, want):
                wrong.add((src, dst))
                break
    return wrong


_PROBED: dict = {}  # id(the interpreter's _convert_float) -> (it, the pairs it gets wrong)


def float_conversions(patcher: Patcher) -> None:
    """``_convert_float`` through torch for the pairs the interpreter gets wrong (module docstring)."""
    import numpy as np
    from triton._C.libtriton import ir
    from triton.runtime import interpreter

    plain = interpreter._convert_float
    if getattr(plain, "casebook_float_conversions", False):
        return
    hit = _PROBED.get(id(plain))
    if hit is None or hit[0] is not plain:
        with np.errstate(all="ignore"):
            hit = _PROBED[id(plain)] = (plain, wrong_conversions(plain))
    wrong = hit[1]
    if not wrong:
        return
    nearest = (None, ir.ROUNDING_MODE.RTNE)

    def convert(input, input_dtype, output_dtype, rounding_mode):
        pair = (getattr(input_dtype, "name", ""), getattr(output_dtype, "name", ""))
        if pair in wrong and rounding_mode in nearest:
            return torch_convert(input, *pair)
        return plain(input, input_dtype, output_dtype, rounding_mode)

    convert.casebook_float_conversions = True
    patcher.setattr(interpreter, "_convert_float", convert)


# ---------------------------------------------------------------- bfloat16 arithmetic


def _handle(values, dtype):
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    if dtype is tl.bfloat16:
        return interpreter.TensorHandle(f32_to_bf16(np.asarray(values, dtype=np.float32)), tl.bfloat16)
    np_dtype = {tl.float16: np.float16, tl.float32: np.float32, tl.float64: np.float64, tl.int32: np.int32}[dtype]
    return interpreter.TensorHandle(np.asarray(values, dtype=np_dtype), dtype)


def _value(handle):
    import numpy as np
    import triton.language as tl

    data = np.asarray(handle.data)
    if handle.dtype.scalar is tl.bfloat16 and data.dtype == np.uint16:
        return bf16_to_f32(data).astype(np.float64)
    return data.astype(np.float64)


def _tries(fn) -> object:
    try:
        return fn()
    except Exception:  # noqa: BLE001  an operation that fails is one it gets wrong
        return None


def bf16_defects(builder) -> set:
    """What of bfloat16 arithmetic ``builder`` (an ``InterpreterBuilder``) gets wrong, each tried
    on numbers whose answer is exact: "binary" (+, *, <), "unary" (negation, 3.8's
    ``create_fneg``), "ternary" (3.9's ``tl.clamp`` propagating NaNs), "cast" (integers and float64 to and from bfloat16), "constant" (``get_bf16``: missing, or not rounded to nearest even), and
    "fma-bf16", "fma-fp16", "fma-fp32" (``tl.fma`` rounded more than once, or on the patterns)."""
    import numpy as np
    import triton.language as tl

    bf = tl.bfloat16
    a, b = _handle([1.5, -1.5], bf), _handle([2.0, 2.0], bf)
    wrong = set()
    checks = {
        "binary": lambda: (np.array_equal(_value(builder.create_fmul(a, b)), [3.0, -3.0])
                           and np.array_equal(_value(builder.create_fadd(a, b)), [3.5, 0.5])
                           and list(np.asarray(builder.create_fcmpOLT(a, b).data)) == [True, True]),
        "unary": lambda: np.array_equal(_value(builder.unary_op(a, np.negative)), [-1.5, 1.5]),
        # tl.clamp(..., propagate_nan=ALL) of bfloat16 (3.9; earlier ones promote to float32)
        "ternary": lambda: np.array_equal(_value(builder.ternary_op(a, _handle([-1.0, -1.0], bf), b, np.clip)),
                                          [1.5, -1.0]),
        # int32 3 and float64 -2.5 to bfloat16 and back: the numbers, not their patterns
        "cast": lambda: (np.array_equal(_value(builder.cast_impl(_handle([3], tl.int32), bf)), [3.0])
                         and np.array_equal(_value(builder.cast_impl(_handle([-2.5], tl.float64), bf)), [-2.5])
                         and list(builder.cast_impl(_handle([3.0], bf), tl.int32).data) == [3]),
        # 1 + 2**-8 + 2**-10 is above half a unit of 1 in bfloat16: to nearest, 1 + 2**-7
        "constant": lambda: _value(builder.get_bf16(1 + 2 ** -8 + 2 ** -10))[0] == 1 + 2 ** -7,
    }
    # x * x - (x * x rounded) is 2**(-2m) with x = 1 + 2**-m: 0 where the product is rounded first
    for name, dtype, m in (("fma-bf16", bf, 7), ("fma-fp16", tl.float16, 10), ("fma-fp32", tl.float32, 23)):
        x, z = _handle([1 + 2.0 ** -m], dtype), _handle([-(1 + 2.0 ** (1 - m))], dtype)
        checks[name] = lambda x=x, z=z, m=m: _value(builder.create_fma(x, x, z))[0] == 2.0 ** (-2 * m)
    # tl.dot of two bfloat16 blocks into float32: [[1.5, -1.5]] @ [[2], [2]] is 0 (np.matmul of the patterns)
    row = interpreter_handle(np.array([[1.5, -1.5]], dtype=np.float32), bf)
    col = interpreter_handle(np.array([[2.0], [2.0]], dtype=np.float32), bf)
    acc = _handle(np.zeros((1, 1), dtype=np.float32), tl.float32)
    checks["dot"] = lambda: np.array_equal(_value(builder.create_dot(row, col, acc, "ieee", 0)), [[0.0]]) and \
        np.array_equal(_value(builder.create_dot(col, row, _handle(np.zeros((2, 2)), tl.float32), "ieee", 0)),
                       [[3.0, -3.0], [3.0, -3.0]])
    with np.errstate(all="ignore"):
        for name, check in checks.items():
            if not _tries(check):
                wrong.add(name)
    return wrong


def interpreter_handle(values, dtype):
    """A TensorHandle of ``values`` (any shape) in ``dtype`` (bfloat16 as its patterns)."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    if dtype is tl.bfloat16:
        return interpreter.TensorHandle(f32_to_bf16(np.asarray(values, dtype=np.float32)), tl.bfloat16)
    return _handle(values, dtype)


def _is_bf16(handle) -> bool:
    import numpy as np
    import triton.language as tl

    return getattr(getattr(handle, "dtype", None), "scalar", None) is tl.bfloat16 and \
        np.asarray(handle.data).dtype == np.uint16


def _in_f32(handles):
    import triton.language as tl
    from triton.runtime import interpreter

    return [interpreter.TensorHandle(bf16_to_f32(h.data), tl.float32) if _is_bf16(h) else h for h in handles]


def _back(out, dtype):
    """An operation's result on float32 values: a float result rounded to bfloat16, to nearest
    even, typed ``dtype`` (as the interpreter's own operation types it); a comparison's booleans
    typed int1 (the interpreter typed them bfloat16, and a later ``.to(tl.bfloat16)`` of the
    comparison then kept the booleans as bit patterns)."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    data = np.asarray(out.data)
    if data.dtype == np.bool_:
        return interpreter.TensorHandle(data, tl.int1)
    if np.issubdtype(data.dtype, np.floating):
        data = f32_to_bf16(data)
    return interpreter.TensorHandle(data, dtype)


def _cast(plain):
    """``cast_impl`` taking bfloat16's values, not its patterns, to and from the types other than
    float32 (which ``_convert_float`` converts): integers, booleans and float64 (``tl.cast`` of
    an int to bfloat16, ``x.to(tl.int32)`` of a bfloat16 ``x``)."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    bf = tl.bfloat16

    def cast_impl(self, src, dst_type):
        s, d = src.dtype.scalar, dst_type.scalar
        if (s == bf) == (d == bf) or tl.float32 in (s, d):
            return plain(self, src, dst_type)
        if s == bf:
            return plain(self, interpreter.TensorHandle(bf16_to_f32(src.data), tl.float32), dst_type)
        with np.errstate(all="ignore"):
            wide = np.asarray(src.data).astype(np.float64)
        return interpreter.TensorHandle(torch_convert(wide, "fp64", "bf16"), d)
    return cast_impl


def _block(values):
    import numpy as np
    import triton.language as tl

    h = _handle(np.asarray(values, dtype=np.float32), tl.bfloat16)
    return tl.core.tensor(h, tl.block_type(tl.bfloat16, [len(values)]))


def bf16_reduction_defects() -> set:
    """{"sum"} where the interpreter's ``ReduceOps.sum`` (``tl.sum`` of a bfloat16 block, which
    stays bfloat16: ``tl.cumsum``, ``tl.max`` and the rest promote it to float32 first) sums the
    patterns: wrong for ``[1.5, -1.0]``."""
    import numpy as np
    from triton.runtime import interpreter

    checks = {"sum": lambda: _value(interpreter.ReduceOps(0, None, False).sum(_block([1.5, -1.0])).handle)[0] == 0.5}
    with np.errstate(all="ignore"):
        return {name for name, check in checks.items() if not _tries(check)}


def _bf16_sum(plain):
    """``ReduceOps.sum`` summing a bfloat16 block's values in float32, the sum rounded to
    bfloat16 (a GPU's tree of bfloat16 additions rounds at each step: the two agree to the
    rounding of a bfloat16 sum, not bit for bit)."""
    import numpy as np

    def sum(self, input):
        if not _is_bf16(input.handle):
            return plain(self, input)
        with np.errstate(all="ignore"):
            out = np.sum(bf16_to_f32(input.handle.data), axis=self.axis, keepdims=self.keep_dims)
            out = f32_to_bf16(np.asarray(out, dtype=np.float32))
        return self.to_tensor(out, input.dtype)
    sum.casebook_bf16 = True
    return sum


def _bf16_dot(plain):
    """``create_dot`` multiplying bfloat16 blocks' float32 values (exact products), the result
    rounded to bfloat16 only where the accumulator is bfloat16."""
    import numpy as np

    def create_dot(self, a, b, d, *rest):
        if not (_is_bf16(a) or _is_bf16(b) or _is_bf16(d)):
            return plain(self, a, b, d, *rest)
        with np.errstate(all="ignore"):
            out = plain(self, *_in_f32([a, b, d]), *rest)
        return _back(out, d.dtype.scalar) if _is_bf16(d) else out
    return create_dot


def bf16_arithmetic(patcher: Patcher) -> None:
    """bfloat16 operations computed on float32 values (module docstring), each only where the
    interpreter gets it wrong (``bf16_defects``)."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    B = interpreter.InterpreterBuilder
    if any(getattr(getattr(B, f"{k}_op"), "casebook_bf16", False) for k in ("binary", "unary", "ternary")):
        return
    wrong = bf16_defects(B()) | bf16_reduction_defects()
    if not wrong:
        return
    bf = tl.bfloat16

    def wrap(original, name, typed_by):
        def run(self, *handles_and_op):
            *handles, op = handles_and_op
            if op is np.where or not any(_is_bf16(h) for h in handles):
                return original(self, *handles, op)
            with np.errstate(all="ignore"):
                return _back(original(self, *_in_f32(handles), op), handles[typed_by].dtype.scalar)
        run.casebook_bf16 = True
        run.__name__ = name
        return run

    # the operand whose type the interpreter gives the result: binary_op's lhs, ternary_op's other
    for name, typed_by in (("binary", 0), ("unary", 0), ("ternary", -1)):
        if name in wrong:
            attr = f"{name}_op"
            patcher.setattr(B, attr, wrap(getattr(B, attr), attr, typed_by))
    if "sum" in wrong:
        patcher.setattr(interpreter.ReduceOps, "sum", _bf16_sum(interpreter.ReduceOps.sum))
    if "cast" in wrong:
        patcher.setattr(B, "cast_impl", _cast(B.cast_impl))
    if "constant" in wrong:
        def get_bf16(self, value):
            return interpreter.TensorHandle(f32_to_bf16(np.array([value], dtype=np.float64)), bf)
        patcher.setattr(B, "get_bf16", get_bf16)
    if "dot" in wrong:
        patcher.setattr(B, "create_dot", _bf16_dot(B.create_dot))
    fma_wrong = {t for t, n in ((bf, "fma-bf16"), (tl.float16, "fma-fp16"), (tl.float32, "fma-fp32")) if n in wrong}
    if fma_wrong:
        plain_fma = B.create_fma

        def create_fma(self, x, y, z):
            dtype = z.dtype.scalar
            if dtype not in fma_wrong:
                return plain_fma(self, x, y, z)
            with np.errstate(all="ignore"):
                a, b, c = (bf16_to_f32(h.data) if _is_bf16(h) else np.asarray(h.data) for h in (x, y, z))
                exact = np.multiply(a, b, dtype=np.float64) + np.asarray(c, dtype=np.float64)
                out = f32_to_bf16(exact.astype(np.float32)) if dtype is bf else exact.astype(np.asarray(c).dtype)
            return interpreter.TensorHandle(out, dtype)
        patcher.setattr(B, "create_fma", create_fma)
