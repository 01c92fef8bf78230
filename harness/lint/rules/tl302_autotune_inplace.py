"""TL302: an in-place update in an autotuned kernel, its tensor not in restore_value."""

from __future__ import annotations

import ast

from harness.lint.fixes import autotune_names
from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import memory_ops, pointer_param, scalar_operand, value_chain

BAD = '''
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"])
@triton.jit
def add_inplace_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)
'''

GOOD = BAD.replace('key=["n"])', 'key=["n"], restore_value=["x_ptr"])')


IDEMPOTENT = {"maximum", "minimum", "clamp", "abs"}


def idempotent(flow, value, mine: set) -> bool:
    """The value stored is the loaded one through a function that gives the same on its own result:
    ``tl.maximum(x, 0)``, ``tl.minimum(x, c)``, ``tl.clamp(x, lo, hi)``, ``tl.abs(x)``, ``tl.where(x > 0, x, 0)``,
    the other operands numbers or scalar arguments, ``.to()`` casts on the way. A repeated launch stores the
    same again (a ReLU or a clamp in place): nothing to restore."""
    def loaded(n) -> bool:
        return any(id(x) in mine for x in value_chain(flow, n, lambda y: False)) and not any(
            isinstance(x, ast.BinOp) for x in value_chain(flow, n))

    node = value
    while isinstance(node, ast.Name) and len(flow.reaching(node)) == 1:
        node = flow.reaching(node)[0]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to" \
            and flow.m.tl_call(node) is None:
        return idempotent(flow, node.func.value, mine)
    name = flow.m.tl_call(node)
    args = list(getattr(node, "args", []))
    if name in IDEMPOTENT and args:
        data = [a for a in args if not scalar_operand(flow, a)]
        return len(data) == 1 and loaded(data[0])
    if name == "where" and len(args) == 3:
        data = [a for a in args[1:] if not scalar_operand(flow, a)]
        return len(data) == 1 and loaded(data[0]) and all(
            scalar_operand(flow, x) or loaded(x) for x in ast.iter_child_nodes(args[0]) if isinstance(x, ast.expr)
            and not isinstance(x, ast.cmpop))
    return False


@rule("TL302", "autotune-inplace-no-restore", cases=("inplace-autotune",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="an @triton.autotune kernel that loads a tensor and stores back into it, which restore_value "
              "does not name")
def check(module):
    """An in-place update (``x += y``, an optimizer step, a residual add) repeated by every benchmarking
    launch of the first call: the caller's tensor comes back updated hundreds of times.
    ``restore_value=["x_ptr"]`` makes the autotuner copy it before each timing launch and put it back.
    Fires when the kernel reads the tensor before it first writes it and stores a value computed from what
    it read; a scratch buffer written before it is read is left alone, so is an idempotent update (a ReLU
    or a clamp in place: ``tl.maximum(x, 0)`` stored back gives the same each launch), and so is a kernel with one config
    (a literal list, a comprehension over literals, or a function of the file that returns one): Triton's
    autotuner does not benchmark a single config, so the update runs once (a hazard the day a second
    config is added)."""
    for flow in flows(module):
        at = flow.k.autotune
        if at is None or not at.benchmarks:
            continue
        safe = {p for p in flow.k.params if at.resets(p)}
        first, loads = {}, {}
        for call, kind, pointer, _ in memory_ops(flow):
            param = pointer_param(flow, pointer)
            first.setdefault(param, kind)
            if kind == "load":
                loads.setdefault(param, []).append(call)
        for call, kind, pointer, _ in memory_ops(flow):
            param = pointer_param(flow, pointer) if kind == "store" else None
            if not param or param in safe or first.get(param) != "load":
                continue
            value = arg(call, 1, "value")
            mine = {id(c) for c in loads.get(param, ())}
            if value is not None and any(id(n) in mine for n in flow.sources(value)) and \
                    not idempotent(flow, value, mine):
                yield call, (f"stores into {param}, which this autotuned kernel also loads: an in-place update "
                             f"that every benchmarking launch repeats; add restore_value=[{param!r}] to "
                             f"@triton.autotune"), "inplace-autotune", autotune_names(at.node, "restore_value", param)
                safe.add(param)
