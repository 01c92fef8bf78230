"""TL303: an autotuned kernel launched on a fixed grid that divides by a block size."""

from __future__ import annotations

import ast

from harness.lint.flow import flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import axis_blocks

BAD = '''
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 512})], key=["n"])
@triton.jit
def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * tl.sigmoid(x), mask=offs < n)

def silu(x, out):
    n = x.numel()
    silu_kernel[(triton.cdiv(n, 1024),)](x, out, n)
'''

GOOD = BAD.replace("silu_kernel[(triton.cdiv(n, 1024),)]", 'silu_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)]')


def divides(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and ast.unparse(n.func).endswith("cdiv") or
               isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv) for n in ast.walk(node))


@rule("TL303", "grid-ignores-tuned-block", cases=("grid-ignores-meta",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="an @triton.autotune kernel whose block size is tuned, launched on a grid that is a fixed tuple "
              "dividing by some other block")
def check(module):
    """The grid must follow the config the autotuner picks: ``lambda meta: (cdiv(n, meta["BLOCK"]),)``. A
    tuple computed with the old fixed block launches the wrong number of programs for every other config
    (too few: the tail is never written). Quiet for a grid with no division (a persistent grid of SMs), and
    for a tuned block that is only a loop's step (``for k in range(0, K, BLOCK_K)``), not a grid axis: the
    programs walk the whole extent whatever its value."""
    for flow in flows(module):
        at = flow.k.autotune
        tiles = {a[1] for n in flow.nodes for a in flow.atoms(n) if a[0] == "tile"} if at else set()
        steps = {ast.unparse(n.iter.args[2]) for n in flow.nodes if isinstance(n, ast.For) and
                 isinstance(n.iter, ast.Call) and len(n.iter.args) == 3}
        on_grid = set().union(*axis_blocks(flow).values()) if at else set()
        tuned = sorted(b for b in tiles & at.tuned if b in on_grid or b not in steps) if at else []
        if not tuned:
            continue
        for launch in flow.k.launches:
            grid = launch.resolve(launch.grid)
            if isinstance(grid, (ast.Tuple, ast.List)) and divides(grid):
                yield launch.node, (f"{flow.k.name} is autotuned over {tuned[0]}, but this grid, "
                                    f"{ast.unparse(grid)}, does not depend on the config: use lambda meta: "
                                    f"(... meta[{tuned[0]!r}] ...)")
