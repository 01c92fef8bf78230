"""TL203: padding lanes centred by the mean, then squared and summed (the variance counts them)."""

from __future__ import annotations

import ast

from harness.lint.flow import Flow, arg, flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import masked_loads, value_chain

BAD = '''
import triton
import triton.language as tl

@triton.jit
def layer_norm_kernel(x_ptr, y_ptr, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / N
    xc = x - mean
    var = tl.sum(xc * xc, axis=0) / N
    tl.store(y_ptr + row * stride + cols, xc / tl.sqrt(var + eps), mask=mask)
'''

GOOD = BAD.replace("xc = x - mean", "xc = tl.where(mask, x - mean, 0.0)")


@rule("TL203", "padding-centred-variance", cases=("layernorm-padding-variance",), confidence=HIGH, bad=BAD,
      good=GOOD, summary="x - mean over a masked block, then summed (a variance): each padding lane adds mean**2")
def check(module):
    """The padding lanes of a masked load are 0, which adds nothing to the mean; after ``x - mean`` they are
    ``-mean``, and their squares go into the variance: ``var + (BLOCK - N) / N * mean**2``. Fires when a masked load minus (a scale
    of) its own
    ``tl.sum`` is squared and summed, with no ``tl.where`` that puts the padding back to 0 between, and the
    mask covers the summed axis: a 2-D tile masked on its rows only (``mask=rows_ok[:, None]``) and summed
    along its columns has no padding lane in any row's sum (a padding row's variance is its own, and is not
    stored)."""
    for flow in flows(module):
        loads = {id(c): c for c, _ in masked_loads(flow)}
        for node in flow.nodes:
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)):
                continue
            x = {id(n): loads[id(n)] for n in value_chain(flow, node.left) if id(n) in loads}
            means = [n for n in value_chain(flow, node.right) if flow.m.tl_call(n) == "sum"]
            if not x or not any(id(n) in x for m in means for n in value_chain(flow, arg(m, 0, "input") or m)):
                continue
            for s in flow.calls("sum"):
                if all(summed_axis_unmasked(flow, c, s) for c in x.values()):
                    continue
                square = next((n for n in value_chain(flow, arg(s, 0, "input") or s) if squares(n)), None)
                if square is not None and any(n is node for n in value_chain(flow, square.left)):
                    yield node, (f"{ast.unparse(node)} turns the masked (0) lanes into -mean, and tl.sum on line "
                                 f"{s.lineno} adds their squares: wrap it as tl.where(mask, {ast.unparse(node)}, 0.0)")
                    break


def squares(n: ast.AST) -> bool:
    """``a * a`` or ``a ** 2``."""
    return isinstance(n, ast.BinOp) and (isinstance(n.op, ast.Mult) and ast.dump(n.left) == ast.dump(n.right) or
                                         isinstance(n.op, ast.Pow) and isinstance(n.right, ast.Constant) and
                                         n.right.value == 2)


def mask_axes(flow: Flow, node: ast.AST, seen: frozenset = frozenset()) -> tuple[set[int], int] | None:
    """The axes of a block along which ``node`` (a mask) varies with a ``tl.arange``, and the block's rank, as far as
    the source says: ``ok[:, None]`` (``ok`` built on an arange) varies along axis 0 of a rank-2 block. None when
    lint cannot tell (a bare 1-D arange, which broadcasts along the last axis of a block of unknown rank)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
        elts = node.slice.elts
        if not all(isinstance(e, ast.Slice) or isinstance(e, ast.Constant) and e.value is None for e in elts):
            return None
        if not any(a[0] in ("arange", "tile") for a in flow.atoms(node.value)):
            return set(), len(elts)
        inner = [e for e in ast.walk(node.value) if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Tuple)]
        return ({i for i, e in enumerate(elts) if isinstance(e, ast.Slice)}, len(elts)) if not inner else None
    if isinstance(node, ast.Name):
        if node.id not in flow.env:
            return set(), 0
        if node.id in seen:
            return None
        parts = [mask_axes(flow, v, seen | {node.id}) for v in flow.reaching(node)]
    elif isinstance(node, ast.Constant):
        return set(), 0
    elif isinstance(node, (ast.Compare, ast.BinOp, ast.BoolOp, ast.UnaryOp)) or \
            isinstance(node, ast.Call) and flow.m.tl_call(node) is None and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("to", "cast"):
        parts = [mask_axes(flow, c, seen) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]
    else:
        return None if any(a[0] in ("arange", "tile") for a in flow.atoms(node)) else (set(), 0)
    if not parts or any(p is None for p in parts):
        return None
    ranks = {p[1] for p in parts if p[1]}
    if len(ranks) > 1:
        return None
    return set().union(*(p[0] for p in parts)), (ranks.pop() if ranks else 0)


def summed_axis_unmasked(flow: Flow, load: ast.Call, total: ast.Call) -> bool:
    """``total`` (a ``tl.sum``) runs along an axis that the load's mask does not vary on: every lane it adds is
    a real element (the masked lanes are whole rows of their own)."""
    axis = arg(total, 1, "axis")
    mask = arg(load, 1, "mask")
    if not (isinstance(axis, ast.Constant) and isinstance(axis.value, int)) or mask is None:
        return False
    found = mask_axes(flow, mask)
    if found is None or not found[1]:
        return False
    axes, rank = found
    return axis.value % rank not in axes and -rank <= axis.value < rank
