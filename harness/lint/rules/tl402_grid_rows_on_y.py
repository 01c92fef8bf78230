"""TL402: the number of rows on grid axis 1 or 2, which CUDA caps at 65,535."""

from __future__ import annotations

import ast
import re

from harness.lint.registry import MEDIUM, rule
from harness.lint.rules._common import from_shape

BAD = '''
import triton
import triton.language as tl

@triton.jit
def row_scale_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    row = tl.program_id(1)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols)
    tl.store(out_ptr + row * stride + cols, 2 * x, mask=cols < n_cols)

def row_scale(x, out):
    n_rows, n_cols = x.shape
    row_scale_kernel[(triton.cdiv(n_cols, 64), n_rows)](x, out, n_cols, x.stride(0), BLOCK=64)
'''

GOOD = BAD.replace("(triton.cdiv(n_cols, 64), n_rows)", "(n_rows, triton.cdiv(n_cols, 64))").replace(
    "tl.program_id(0) * BLOCK", "tl.program_id(1) * BLOCK").replace("row = tl.program_id(1)", "row = tl.program_id(0)")


DATA_ROWS = re.compile(r"(?i)rows|tokens|seqs|num_seq")
MATRIX_ROWS = re.compile(r"(?i)^m$|^n_?m$")  # a matrix's M (GEMM's M x K): the rows only of a 2-D operand


def _tensor(value: ast.AST) -> str | None:
    """The tensor a size is read from: ``x`` of ``x.shape[0]`` or ``x.size(0)``."""
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute) and value.value.attr == "shape":
        base = value.value.value
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size":
        base = value.func.value
    else:
        return None
    return ast.unparse(base)


def three_or_more_dims(launch, tensor: str) -> bool:
    """The launcher shows ``tensor`` to have at least three dimensions: its shape unpacked into three names or
    more (``m, ksub, dsub = codebooks.shape``), or a size or stride of dimension 2 or later read
    (``codebooks.stride(2)``, ``x.shape[2]``)."""
    for n in ast.walk(launch.launcher):
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], (ast.Tuple, ast.List)) and \
                len(n.targets[0].elts) >= 3 and not any(isinstance(e, ast.Starred) for e in n.targets[0].elts):
            v = n.value
            if isinstance(v, ast.Attribute) and v.attr == "shape" and ast.unparse(v.value) == tensor or \
                    isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "size" and \
                    not v.args and ast.unparse(v.func.value) == tensor:
                return True
        index = None
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "shape" and \
                ast.unparse(n.value.value) == tensor:
            index = n.slice
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("size", "stride") \
                and len(n.args) == 1 and ast.unparse(n.func.value) == tensor:
            index = n.args[0]
        if isinstance(index, ast.Constant) and isinstance(index.value, int) and index.value >= 2:
            return True
    return False


def leading_size(launch, node: ast.AST) -> bool:
    """The rows of a matrix: the first name of ``rows, cols = x.shape`` (two names: a 2-D tensor, whose
    leading dimension is tokens or rows, not a batch), or ``x.shape[0]`` / ``x.size(0)`` bound to a name
    that says rows or tokens. A tensor the launcher shows to have three dimensions or more is a stack: its
    leading dimension is a batch (a count of matrices: codebooks, layers, heads) unless its name says it
    counts the data's rows (``num_tokens, num_heads, head_dim = q.shape``); a matrix's ``m`` is then no row
    count."""
    if not isinstance(node, ast.Name) or launch.launcher is None:
        return False
    for n in ast.walk(launch.launcher):
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Tuple) and len(n.targets[0].elts) == 2 and \
                isinstance(n.targets[0].elts[0], ast.Name) and n.targets[0].elts[0].id == node.id and \
                isinstance(n.value, ast.Attribute) and n.value.attr == "shape":
            return True
    value = launch.resolve(node)
    first = isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) and value.slice.value == 0 \
        and from_shape(launch, value) or isinstance(value, ast.Call) and ast.unparse(value.func).endswith(".size") \
        and [ast.unparse(a) for a in value.args] == ["0"]
    if not first:
        return False
    if DATA_ROWS.search(node.id):
        return True
    tensor = _tensor(value)
    return MATRIX_ROWS.search(node.id) is not None and not (tensor and three_or_more_dims(launch, tensor))


@rule("TL402", "grid-rows-on-y", cases=("grid-y-over-65535",), confidence=MEDIUM, bad=BAD, good=GOOD,
      summary="a tensor's row count (x.shape[0], the first of rows, cols = x.shape) as grid axis 1 or 2")
def check(module):
    """CUDA allows 2**31 - 1 programs along grid axis 0 but only 65,535 along axes 1 and 2; past that the
    launch fails with 'invalid argument' (the interpreter has no such limit). Put the dimension that grows
    with the data (tokens, rows) on axis 0. Fires only for the row count of a matrix (``rows, cols = x.shape``,
    or ``n_rows = x.shape[0]``) on axis 1 or 2: a batch or a head count is left alone."""
    for launch in module.launches:
        axes = launch.grid_axes() or []
        for i, axis in enumerate(axes[1:3], start=1):
            if leading_size(launch, axis):
                yield axis, (f"grid axis {i} is {ast.unparse(axis)}, a row count: CUDA launches at most 65,535 "
                             f"programs on axes 1 and 2, so past 65,535 rows the launch fails; put it on axis 0")
