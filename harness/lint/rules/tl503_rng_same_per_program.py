"""TL503: random numbers drawn with an offset that does not depend on the program."""

from __future__ import annotations

from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._twins import RNG

BAD = '''
import triton
import triton.language as tl

@triton.jit
def dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    r = tl.rand(seed, tl.arange(0, BLOCK))
    tl.store(out_ptr + offs, tl.where(r > p, x / (1 - p), 0.0), mask=offs < n)
'''

GOOD = BAD.replace("tl.rand(seed, tl.arange(0, BLOCK))", "tl.rand(seed, offs)")


@rule("TL503", "rng-offset-per-block", cases=("dropout-repeated-mask",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="tl.rand/tl.randn/tl.randint whose seed and offset depend on neither the program id nor a loop, in "
              "a kernel that uses the program id")
def check(module):
    """The same (seed, offset) pairs give the same numbers: with offsets ``tl.arange(0, BLOCK)`` every program
    draws the same block of numbers, so the dropout mask repeats every BLOCK elements. Use the global
    element index as the offset."""
    for flow in flows(module):
        if not any(True for _ in flow.calls("program_id")):
            continue
        for call in flow.calls(*RNG):
            seed, offset = arg(call, 0, "seed"), arg(call, 1, "offset")
            atoms = (flow.atoms(seed) if seed is not None else set()) | (flow.atoms(offset) if offset is not None else set())
            if offset is not None and not any(a[0] in ("pid", "loop", "tile", "load") for a in atoms):
                yield call, (f"tl.{flow.m.tl_call(call)} with a seed and offset that no program id or loop changes: "
                             f"every program draws the same numbers; offset by the global element index")
