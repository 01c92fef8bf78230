"""TL104 (preview): a tensor indexed by flat offsets, passed with no stride and no contiguity check."""

from __future__ import annotations

import ast

from harness.lint.flow import flows
from harness.lint.registry import LOW, rule
from harness.lint.rules._common import memory_ops, pointer_param

BAD = '''
import triton
import triton.language as tl

@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * alpha, mask=offs < n)

def scale(x, alpha, out):
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, alpha, BLOCK=1024)
'''

GOOD = BAD.replace("    n = x.numel()", "    assert x.is_contiguous() and out.is_contiguous()\n    n = x.numel()")

CHECKS = ("contiguous", "is_contiguous", "stride", "view", "reshape", "flatten", "ravel", "empty_like", "zeros_like")


@rule("TL104", "flat-offsets-no-contiguity", cases=("noncontiguous-input",), confidence=LOW, preview=True, bad=BAD,
      good=GOOD,
      summary="a launcher argument the kernel addresses with flat offsets only, and which the launcher never makes "
              "contiguous, checks, or asks for strides")
def check(module):
    """Flat offsets ``pid * BLOCK + tl.arange(0, BLOCK)`` read storage order, which is the tensor's logical
    order only when it is contiguous: a transposed view or a slice gives the wrong elements, silently.
    Call ``.contiguous()``, assert ``is_contiguous()``, or pass the strides. Preview: most launchers are
    only ever called with contiguous tensors."""
    for flow in flows(module):
        flat = set()
        for _, _, pointer, _ in memory_ops(flow):
            param = pointer_param(flow, pointer)
            atoms = flow.atoms(pointer)
            if param and any(a[0] == "tile" for a in atoms) and not any(
                    a[0] == "param" and "stride" in a[1] for a in atoms):
                flat.add(param)
        for launch in flow.k.launches:
            fn = launch.launcher
            if fn is None:
                continue
            callers = {a.arg for a in fn.args.args}
            for param in sorted(flat):
                passed = launch.args.get(param)
                if not (isinstance(passed, ast.Name) and passed.id in callers):
                    continue
                used = [n for n in ast.walk(fn) if isinstance(n, ast.Attribute) and n.attr in CHECKS and
                        isinstance(n.value, ast.Name) and n.value.id == passed.id]
                if not used:
                    yield launch.node, (f"{passed.id} is addressed with flat offsets ({param}), and the launcher "
                                        f"never checks that it is contiguous: a transposed or sliced view gives the "
                                        f"wrong elements; call .contiguous() or pass its strides")
