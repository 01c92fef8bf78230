"""TL207: a tl.reduce or tl.associative_scan whose combine function transforms its operands before combining them."""

from __future__ import annotations

import ast

from harness.lint.flow import Flow, arg, flows, key
from harness.lint.model import assignments, dotted
from harness.lint.registry import HAZARD, HIGH, Severity, rule

BAD = '''
import triton
import triton.language as tl

@triton.jit
def abs_max(a, b):
    return tl.maximum(tl.abs(a), tl.abs(b))

@triton.jit
def row_absmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.reduce(x, 0, abs_max))

def row_absmax(x, out):
    row_absmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
'''

GOOD = BAD.replace('''@triton.jit
def abs_max(a, b):
    return tl.maximum(tl.abs(a), tl.abs(b))

''', "").replace("tl.reduce(x, 0, abs_max)", "tl.max(tl.abs(x), axis=0)")

# elementwise functions of one value: applied to an operand, each makes it a value of another kind
UNARY = {"abs", "fabs", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sqrt_rn", "rsqrt", "cbrt",
         "sin", "cos", "tan", "tanh", "sigmoid", "softplus", "erf", "floor", "ceil", "round", "rint", "nearbyint",
         "trunc", "square", "reciprocal"}
# arithmetic of an operand with a value that is no operand (a constant, a default argument): a scale, a shift;
# each with the constant that leaves the operand as it is
SCALES = {ast.Mult: 1, ast.Div: 1, ast.Pow: 1, ast.FloorDiv: 1, ast.Add: 0, ast.Sub: 0}
COMBINES = ("reduce", "associative_scan")


def operands(fn: ast.FunctionDef) -> list[str]:
    """The parameters Triton passes the values in: the positional ones without a default (``gamma=0.5`` is a
    constant of the combine, not an operand)."""
    positional = fn.args.posonlyargs + fn.args.args
    return [a.arg for a in positional[:len(positional) - len(fn.args.defaults)]]


def operand(flow: Flow, node: ast.AST, names: list[str], depth: int = 0) -> str | None:
    """The operand ``node`` is, as it came in: its name, through a name bound to it once and a cast
    (``x.to(tl.float32)``); None for anything computed from it."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "cast") \
            and flow.m.tl_call(node) is None:
        return operand(flow, node.func.value, names, depth)
    if not isinstance(node, ast.Name) or depth > 8:
        return None
    values = flow.reaching(node) if node.id in flow.env else []
    if node.id in names and not values:  # the parameter itself, not yet rebound here
        return node.id
    return operand(flow, values[0], names, depth + 1) if len(values) == 1 else None


def free_of(flow: Flow, node: ast.AST, names: list[str]) -> bool:
    """``node`` depends on no operand: a constant, a default argument, a global."""
    return not any(isinstance(n, ast.Name) and n.id in names for n in flow.sources(node))


def returned(flow: Flow) -> list[ast.AST]:
    """Every node the combine's returned values are made of, through names; not the conditions that only
    choose between values (a ``tl.where``'s first argument, a comparison, an ``if``'s test)."""
    stack = [n.value for n in flow.nodes if isinstance(n, ast.Return) and n.value is not None]
    seen, out = set(), []
    while stack:
        n = stack.pop()
        if id(n) in seen or isinstance(n, (ast.Compare, ast.BoolOp)):
            continue
        seen.add(id(n))
        out.append(n)
        if flow.m.tl_call(n) == "where" and len(n.args) >= 3:
            stack += n.args[1:3]
        elif isinstance(n, ast.IfExp):
            stack += [n.body, n.orelse]
        elif isinstance(n, ast.Name) and n.id in flow.env:
            stack += flow.reaching(n)
        else:
            stack += list(ast.iter_child_nodes(n))
    return out


def transform(flow: Flow, n: ast.AST, names: list[str]) -> tuple[str, str] | None:
    """(operand, what is done to it) where ``n`` applies a non-identity elementwise function to an operand:
    ``tl.abs(a)``, ``-a``, ``a * a``, ``a * 0.5``, a clamp ``tl.maximum(a, 0.0)``; None otherwise."""
    if isinstance(n, ast.Call):
        name = flow.m.tl_call(n) or ("abs" if dotted(n.func) == "abs" else None)
        args = list(n.args)
        if name in UNARY and args and (p := operand(flow, args[0], names)):
            return p, key(n)
        clamp = name in ("maximum", "minimum", "clamp", "pow") and len(args) >= 2
        if clamp and (p := operand(flow, args[0], names)) and all(free_of(flow, a, names) for a in args[1:]):
            return p, key(n)
        if clamp and name != "clamp" and (p := operand(flow, args[1], names)) and free_of(flow, args[0], names):
            return p, key(n)
    elif isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.Invert)):
        if p := operand(flow, n.operand, names):
            return p, key(n)
    elif isinstance(n, ast.BinOp) and type(n.op) in SCALES:
        left, right = operand(flow, n.left, names), operand(flow, n.right, names)
        if left and left == right and isinstance(n.op, (ast.Mult, ast.Add, ast.Pow)):
            return left, key(n)  # a * a: a square
        identity = SCALES[type(n.op)]
        swaps = isinstance(n.op, (ast.Mult, ast.Add))  # 1 * a and 0 + a leave a as it is; 0 - a, 1 / a do not
        for p, other, kept in ((left, n.right, True), (right, n.left, swaps)):
            same = kept and isinstance(other, ast.Constant) and other.value == identity
            if p and free_of(flow, other, names) and not same:
                return p, key(n)
    return None


def transforms(flow: Flow) -> dict[str, str]:
    """Operand -> the first transform the combine applies to it, in what it returns."""
    names = operands(flow.fn)
    out: dict[str, str] = {}
    for n in sorted(returned(flow), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if hit := transform(flow, n, names):
            out.setdefault(*hit)
    return out


def one_sided(names: list[str], changed: dict[str, str]) -> bool:
    """Some operand is transformed and its partner on the other side is not (``tl.maximum(a, tl.abs(b))``): the
    value that starts as the accumulator is never transformed, whatever the size."""
    half = len(names) // 2
    if not half or len(names) % 2:
        return False
    return any((names[(i + half) % len(names)] in changed) != (p in changed) for i, p in enumerate(names))


def can_be_one(flow: Flow, call: ast.Call) -> bool:
    """The block the reduction reads has an axis whose length a launch in the file passes as a runtime size
    that is 1 for a size of 1 (``runtime_size``), or is the literal 1. Lint does not tell which axis of a 2-D
    block the length is."""
    lengths = {key(n.args[1]) for n in flow.sources(arg(call, 0, "input") or call)
               if flow.m.tl_call(n) == "arange" and len(n.args) >= 2}
    if "1" in lengths:
        return True
    for launch in flow.k.launches:
        for name in lengths & set(flow.k.constexprs):
            given = launch.args.get(name)
            values = [given] if not isinstance(given, ast.Name) or launch.launcher is None else \
                assignments(launch.launcher).get(given.id, [given])
            if any(runtime_size(v) for v in values):
                return True
    return False


def runtime_size(v: ast.AST | None) -> bool:
    """A launch argument that is 1 for a size of 1: ``triton.next_power_of_2(n)`` of a runtime ``n``, or a
    tensor's size itself (``x.shape[1]``, ``x.size(1)``)."""
    if isinstance(v, ast.Call) and dotted(v.func).endswith("next_power_of_2"):
        return bool(v.args) and not isinstance(v.args[0], ast.Constant)
    if isinstance(v, ast.Subscript) and isinstance(v.value, ast.Attribute) and v.value.attr == "shape":
        return True
    return isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "size" and bool(v.args)


def message(kind: str, fn: str, changed: dict[str, str], sided: bool) -> str:
    what = ", ".join(changed.values())
    if kind == "associative_scan":
        return (f"tl.associative_scan with {fn}, whose combine transforms its operands ({what}): a scan never "
                f"merges its first element, which comes back as loaded at every size; transform the input before "
                f"the scan and let the combine only combine")
    if sided:
        return (f"tl.reduce with {fn}, whose combine transforms one operand only ({what}): the element that "
                f"starts as the accumulator is never transformed; transform the input before the reduction")
    return (f"tl.reduce with {fn}, whose combine transforms its operands ({what}): tl.reduce calls a combine "
            f"only to merge two values, so the only element of an axis of length 1 comes back as loaded (a "
            f"negative value is its own abs-max); transform the input before the reduction "
            f"(tl.max(tl.abs(x), axis))")


@rule("TL207", "combine-transforms-operands", cases=("reduce-combine-transforms",), confidence=HIGH, bad=BAD,
      good=GOOD, summary="tl.reduce or tl.associative_scan with a combine function that applies abs, a square, "
                         "exp, ... to its operands: an element it never merges comes back untransformed")
def check(module):
    """A combine function only merges two values that the reduction already holds: ``tl.reduce`` never calls
    it for an axis of one element (that element is the result, as loaded), and ``tl.associative_scan`` never
    for the first element of a scan. A transform written into it, ``tl.maximum(tl.abs(a), tl.abs(b))`` for an
    abs-max or ``a * a + b * b`` for a sum of squares, misses those elements: a row of width 1 comes back with its
    sign. Transform the input first and reduce with a plain combine (``tl.max(tl.abs(x), axis)``). Fires at the
    ``tl.reduce``/``tl.associative_scan`` call whose combine is a ``@triton.jit`` function of the file that
    returns a transformed operand (an elementwise function of it, its negation, its square, its product or sum
    with a constant, a clamp). Quiet for combines that only combine: ``tl.maximum(a, b)``, ``a + b``, an argmax
    over (value, index) pairs, a Welford or online-softmax merge (their ``exp(m1 - m)`` is of a difference, not
    of an operand), a transform that only chooses (``tl.where(tl.abs(a) >= tl.abs(b), a, b)``). Severity: a
    scan, or a one-sided transform, is wrong at every size; a reduction whose combine transforms both sides is
    wrong only where the reduced axis has one element, a bug where a launch passes the block as
    ``triton.next_power_of_2`` of a runtime size, a hazard otherwise."""
    combines = {f.k.name: f for f in flows(module)}
    for flow in flows(module):
        for call in flow.calls(*COMBINES):
            fn = arg(call, 2, "combine_fn")
            combine = combines.get(fn.id) if isinstance(fn, ast.Name) else None
            changed = transforms(combine) if combine is not None else {}
            if not changed:
                continue
            kind, names = flow.m.tl_call(call), operands(combine.fn)
            sided = one_sided(names, changed)
            text = message(kind, fn.id, changed, sided)
            if kind == "reduce" and not sided and not can_be_one(flow, call):
                yield call, text, Severity(HAZARD, "wrong only where the reduced axis has one element, which "
                                                   "lint does not see in the file")
            else:
                yield call, text
