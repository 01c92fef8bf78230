"""TL601: tl.dot on what look like fp32 operands, with no input_precision."""

from __future__ import annotations

import ast

from harness.lint.fixes import insert_keyword
from harness.lint.flow import arg, flows
from harness.lint.registry import LOW, rule

BAD = '''
import triton
import triton.language as tl

@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptr + i[:, None] * K + (k + i)[None, :], mask=(k + i)[None, :] < K, other=0.0)
        b = tl.load(b_ptr + (k + i)[:, None] * BLOCK + i[None, :], mask=(k + i)[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + i[:, None] * BLOCK + i[None, :], acc)
'''

GOOD = BAD.replace("tl.dot(a, b, acc)", 'tl.dot(a, b, acc, input_precision="ieee")')

LOW_PRECISION = ("float16", "bfloat16", "float8", "fp8", "fp16", "bf16", "int8", "uint8", "element_ty", "dtype")


def casts_down(flow) -> bool:
    """The kernel converts something to a 16-bit, 8-bit or the output's element type: its data are then
    probably not fp32 (or the store casts), and TF32 does not apply."""
    for n in flow.nodes:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("to", "cast") or \
                flow.m.tl_call(n) == "cast":
            if any(s in ast.unparse(n) for s in LOW_PRECISION):
                return True
    return False


@rule("TL601", "fp32-dot-tf32", cases=("matmul-tf32-default",), confidence=LOW, preview=True, bad=BAD, good=GOOD,
      summary="tl.dot with no input_precision (or allow_tf32) in a kernel whose operands and result stay fp32")
def check(module):
    """On NVIDIA GPUs ``tl.dot`` of fp32 operands defaults to TF32 (a 10-bit mantissa): errors of 1e-3 to
    1e-2 relative, which the interpreter (full fp32) hides. Pass ``input_precision="ieee"`` where fp32
    accuracy matters, or ``"tf32"`` to say it does not. Fires only where nothing in the kernel converts to
    a 16- or 8-bit type or to the output's element type (operands that are fp16/bf16 do not use TF32).
    Preview: the operands' dtype is the caller's, which lint cannot see (split-K matmul of fp16 inputs into
    an fp32 output looks the same)."""
    for flow in flows(module):
        dots = [d for d in flow.calls("dot") if arg(d, 3, "input_precision") is None
                and arg(d, 4, "allow_tf32") is None]
        if dots and not casts_down(flow) and not any(p.lower().endswith(("dtype", "precision", "tf32"))
                                                     for p in flow.k.params):
            for d in dots:
                yield d, ("tl.dot of operands that stay fp32, with no input_precision: on NVIDIA GPUs that is TF32 "
                          "(10-bit mantissa, errors near 1e-3); pass input_precision=\"ieee\" for fp32 accuracy, "
                          "or \"tf32\" to say TF32 is intended"), "matmul-tf32-default", \
                    insert_keyword(d, "input_precision", '"ieee"', f'input_precision="ieee" on the tl.dot on line {d.lineno}')
