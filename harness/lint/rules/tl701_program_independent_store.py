"""TL701: every program stores its own partial result to the same address."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import memory_ops, under_if

BAD = '''
import triton
import triton.language as tl

@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(x))

def total(x, out):
    sum_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
'''

GOOD = BAD.replace("tl.store(out_ptr, tl.sum(x))", "tl.atomic_add(out_ptr, tl.sum(x))").replace(
    "    sum_kernel[", "    out.zero_()\n    sum_kernel[")

VARYING = ("pid", "loop", "arange", "tile")


def one_program(launches) -> bool:
    """Every launch's grid is all ones (a single program)."""
    axes = [l.grid_axes() for l in launches]
    return bool(axes) and all(a is not None and all(isinstance(e, ast.Constant) and e.value == 1 for e in a)
                              for a in axes)


@rule("TL701", "program-independent-store", cases=("nrm2-race", "sum-reduction-store-race"), confidence=HIGH,
      bad=BAD, good=GOOD,
      summary="tl.store of a per-program result to an address that does not depend on the program id")
def check(module):
    """Many programs store their own block's result to one address: the last writer wins, a different one
    from run to run on a GPU. Fires when the address has no program id, loop variable or tl.arange in it
    and the stored value comes from loads that do; quiet under an ``if`` (``if pid == 0:``), for
    kernels launched on a grid of one program, and for device functions that other kernels call."""
    helpers = {n.func.id for k in module.kernels.values() for n in ast.walk(k.node)
               if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    for flow in flows(module):
        if one_program(flow.k.launches) or flow.k.name in helpers and not flow.k.launches:
            continue  # a device function called by kernels: its caller's grid decides
        for call, kind, pointer, _ in memory_ops(flow):
            if kind != "store" or under_if(flow, call) or flow.in_loop(call):
                continue
            if any(a[0] in VARYING + ("load",) for a in flow.atoms(pointer)):
                continue
            value = arg(call, 1, "value")
            per_program = value is not None and any(
                flow.m.tl_call(n) == "load" and any(a[0] in ("pid", "tile") for a in flow.atoms(arg(n, 0, "pointer")))
                for n in flow.sources(value) if isinstance(n, ast.Call))
            if per_program:
                yield call, (f"every program stores its own result to {ast.unparse(pointer)}, an address that does "
                             f"not depend on the program id: the last writer wins; give each program its own slot "
                             f"or combine with tl.atomic_add")
