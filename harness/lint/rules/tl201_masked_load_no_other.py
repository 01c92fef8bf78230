"""TL201 / TL202 share this helper; TL201: a masked tl.load with no ``other=`` feeding a max or argmax."""

from __future__ import annotations

import ast

from harness.lint.registry import HIGH, rule
from harness.lint.rules._twins import neutral_other, padded_reductions

RANGES = ("range", "tl.range", "tl.static_range", "triton.language.range")


def _a_stop(flow, node: ast.AST) -> bool:
    """``node`` is the stop of a ``range(stop)`` or ``range(start, stop)`` whose start is a literal >= 0."""
    call = flow.parents.get(node)
    if not (isinstance(call, ast.Call) and ast.unparse(call.func) in RANGES and call.args and node in call.args):
        return False
    if len(call.args) == 1:
        return True
    start = call.args[0]
    return call.args.index(node) == 1 and isinstance(start, ast.Constant) and isinstance(start.value, int) and \
        start.value >= 0


def only_a_trip_count(flow, red: ast.Call) -> bool:
    """A ``tl.max`` whose value is only ever a loop's trip count (the stop of a ``range`` from 0 or past it,
    directly or through a name assigned once): a padded lane's 0 raises the max only from below 0 to 0, and
    a stop at or below the start runs no trip either way, so the padding changes nothing. ``flow``: the
    kernel's flow that holds ``red``."""
    if ast.unparse(red.func).rsplit(".", 1)[-1] != "max":
        return False
    if _a_stop(flow, red):
        return True
    holder = flow.parents.get(red)
    if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name)
            and len(flow.env.get(holder.targets[0].id, ())) == 1):
        return False
    name = holder.targets[0].id
    uses = [n for n in flow.nodes if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return bool(uses) and all(_a_stop(flow, n) for n in uses)

BAD = '''
import triton
import triton.language as tl

@triton.jit
def greedy_kernel(logp_ptr, out_ptr, stride, vocab, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    logp = tl.load(logp_ptr + row * stride + cols, mask=cols < vocab)
    tl.store(out_ptr + row, tl.argmax(logp, axis=0))
'''

GOOD = BAD.replace("mask=cols < vocab)", 'mask=cols < vocab, other=-float("inf"))')


@rule("TL201", "masked-load-no-other-max", cases=("masked-load-no-other",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="a masked tl.load with no other= whose value reaches tl.max, tl.min, tl.argmax or tl.argmin")
def check(module):
    """Masked lanes of a ``tl.load`` without ``other=`` are undefined, and 0 on today's GPUs: 0 beats every
    negative value in a max (log-probabilities, scores) and every positive one in a min. Fires only when
    the reduced value is the load itself, give or take a scale or an offset by a number; quiet when it
    passes through ``tl.where`` (the padding is replaced), any call (``tl.abs``, ``tl.exp``: never
    negative), or arithmetic with another block, and for a max that is only a loop's trip count (the stop
    of a range from 0: a 0 that wins it runs the same no trips as the negative max it replaced)."""
    for flow, red, load in padded_reductions(module, explicit_zero=False):
        if only_a_trip_count(flow, red):
            continue
        name = ast.unparse(red.func).rsplit(".", 1)[-1]
        yield red, (f"tl.{name} over a tl.load (line {load.lineno}) with a mask and no other=: the masked lanes "
                    f"read 0 (undefined, in fact), which can win the {name}; pass other=-float('inf') "
                    f"(+inf for a min)"), "masked-load-no-other", neutral_other(load, name)
