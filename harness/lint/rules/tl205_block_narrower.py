"""TL205: one block of tl.arange(0, BLOCK) masked against a size, with BLOCK a fixed number: the rest is never read."""

from __future__ import annotations

import ast

from harness.lint.flow import flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import launcher_calls, memory_ops, module_int

BAD = '''
import triton
import triton.language as tl

@triton.jit
def nrm2_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sqrt(tl.sum(x * x)))

def nrm2(x, out):
    nrm2_kernel[(1,)](x, out, x.numel(), BLOCK=1024)
'''

GOOD = BAD.replace("BLOCK=1024", "BLOCK=triton.next_power_of_2(x.numel())")


def bare_masks(flow):
    """(load, block, size): a load whose mask is ``offs < size`` for offsets that are a bare
    ``tl.arange(0, block)``, no program id and no loop, with ``size`` a runtime kernel argument."""
    strided = {a[1] for n in flow.nodes for a in flow.atoms(n) if a[0] == "tile"} \
        if any(isinstance(n, (ast.For, ast.While)) for n in flow.nodes) else set()
    for call, kind, _, mask in memory_ops(flow):
        if kind != "load" or not isinstance(mask, ast.Compare) or not isinstance(mask.ops[0], ast.Lt):
            continue
        left, size = flow.atoms(mask.left), mask.comparators[0]
        blocks = {a[1] for a in left if a[0] == "arange"}
        if len(blocks) == 1 and not any(a[0] in ("pid", "loop", "stride", "tile") for a in left) and \
                isinstance(size, ast.Name) and size.id in flow.k.params and size.id not in flow.k.constexprs:
            block = blocks.pop()
            if block in flow.k.params and block not in strided and flow.m.tl_call(call) == "load":
                yield call, block, size.id


def fixed_block(module, launch, block: str):
    """The launch's value for ``block`` when it is a fixed number or capped by min(), else None."""
    value = launch.resolve(launch.args.get(block)) if block in launch.args else None
    if value is None:
        return None
    if module_int(module, value) is not None:
        return ast.unparse(launch.args[block])
    if isinstance(value, ast.Call) and ast.unparse(value.func) == "min":
        return ast.unparse(value)
    return None


@rule("TL205", "block-narrower-than-extent", cases=("row-wider-than-block", "nrm2-global-sum"), confidence=HIGH,
      bad=BAD, good=GOOD,
      summary="a load of tl.arange(0, BLOCK) masked against a size, no loop over the rest, and a launch that "
              "fixes or caps BLOCK: elements past BLOCK are never read")
def check(module):
    """``offs < n`` keeps the block inside the tensor but does not make the block cover it: with
    ``BLOCK=1024`` (or ``min(next_power_of_2(n), 8192)``) and no loop, everything past the first
    BLOCK elements is silently left out of the sum or max. Quiet when the launch sizes BLOCK from the
    extent (``next_power_of_2(n)``), the kernel loops, or the launcher asserts on the size."""
    for flow in flows(module):
        for load, block, size in bare_masks(flow):
            for launch in flow.k.launches:
                fixed = fixed_block(module, launch, block)
                if fixed is None or launcher_calls(launch, "next_power_of_2") and "min" not in fixed or \
                        launch.launcher is not None and any(isinstance(n, ast.Assert) for n in ast.walk(launch.launcher)):
                    continue
                yield load, (f"one block of {block} = {fixed} lanes masked against {size}, and nothing loops over "
                             f"the rest: past {block} elements the result leaves the rest out (line "
                             f"{launch.node.lineno} launches it); loop over {size} in steps of {block}"), \
                    "nrm2-global-sum" if "min" not in fixed else "row-wider-than-block"
                break
