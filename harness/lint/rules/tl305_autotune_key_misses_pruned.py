"""TL305: an autotune key that leaves out an argument the config pruning reads."""

from __future__ import annotations

import ast

from harness.lint.flow import flows
from harness.lint.registry import HIGH, rule

BAD = '''
import triton
import triton.language as tl

def fits_row(configs, named_args, **kwargs):
    block = triton.next_power_of_2(named_args["n_cols"])
    return [c for c in configs if c.kwargs["BLOCK"] == block]

@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (256, 512, 1024)], key=["n_rows"],
                 prune_configs_by={"early_config_prune": fits_row})
@triton.jit
def rms_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row * stride + cols, x / tl.sqrt(tl.sum(x * x) / n_cols), mask=cols < n_cols)
'''

GOOD = BAD.replace('key=["n_rows"]', 'key=["n_rows", "n_cols"]')


def pruned_reads(fn: ast.FunctionDef) -> set[str]:
    """The argument names a pruning function reads: ``named_args["n"]``, ``nargs.get("n")``, ``kwargs["n"]``."""
    out = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str) \
                and isinstance(n.value, ast.Name) and n.value.id in {a.arg for a in fn.args.args[1:]} | {
                    fn.args.kwarg.arg if fn.args.kwarg else ""}:
            out.add(n.slice.value)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" and n.args \
                and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
            out.add(n.args[0].value)
    return out


def keeps_all(fn: ast.FunctionDef) -> bool:
    """Every ``return`` of the pruning function gives back its first argument, the configs, as they came: it
    reads the sizes (to log them) and prunes nothing."""
    first = fn.args.args[0].arg if fn.args.args else None
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    return bool(returns) and all(isinstance(r.value, ast.Name) and r.value.id == first for r in returns)


def sizes(flow) -> set[str]:
    """The kernel arguments used as sizes: compared (``cols < n_cols``) or bounding a loop. Tensors are not
    (the autotuner keys on their dtypes by itself)."""
    out = set()
    for n in flow.nodes:
        if isinstance(n, ast.Compare) or isinstance(n, ast.Call) and (ast.unparse(n.func) == "range" or
                                                                     flow.m.tl_call(n) in ("range", "cdiv")):
            out |= {x.id for x in ast.walk(n) if isinstance(x, ast.Name) and x.id in flow.k.params}
    return out - flow.k.constexprs


def keyed_at_every_launch(flow, key: list[str], name: str) -> bool:
    """Every launch passes, for some argument of the key, an expression built from what it passes for ``name``
    (``shape_key=pack(M, N=N, K=K)`` with ``N`` passed as ``N``): the key changes when ``name`` does."""
    launches = flow.k.launches
    if not launches:
        return False
    for launch in launches:
        passed = launch.args.get(name)
        if passed is None:
            return False
        text = ast.unparse(passed)
        if not any(k in launch.args and k != name and any(ast.unparse(n) == text for n in ast.walk(launch.args[k]))
                   for k in key):
            return False
    return True


@rule("TL305", "autotune-key-misses-pruned-arg", cases=("autotune-key-missing-shape",), confidence=HIGH,
      bad=BAD, good=GOOD,
      summary="@triton.autotune's early_config_prune reads a kernel argument that key= does not list")
def check(module):
    """The autotuner caches one config per key. When the pruning keeps only the configs that are right for
    ``n_cols`` and ``n_cols`` is not in the key, a second call with another ``n_cols`` reuses a config that
    was never valid for it (a block narrower than the row). Everything the pruning reads belongs in the key.
    Quiet when the key names a bucket of the argument (``M_CLOSEST`` or ``m_key`` for ``M``): that is
    deliberate; when every launch passes for an argument of the key an expression built from what it passes for
    the missing one (``shape_key=pack(M, N=N)``: the key covers ``N``); when the pruning gives back its configs
    unchanged (it only logs); only
    arguments the kernel uses as sizes count (a tensor's dtype is in the autotuner's key by itself)."""
    for flow in flows(module):
        at = flow.k.autotune
        fn = module.functions.get(at.prune) if at and at.prune else None
        if fn is None or at.key is None or keeps_all(fn):
            continue
        tokens = {t.lower() for k in at.key for t in k.split("_")}  # M_CLOSEST, m_key: a bucket of M, named for it
        missing = sorted(m for m in (pruned_reads(fn) & sizes(flow)) - set(at.key) - at.tuned if m.lower() not in tokens
                         and not keyed_at_every_launch(flow, at.key, m))
        if missing:
            node = next((k.value for k in at.node.keywords if k.arg == "key"), at.node)
            yield node, (f"the autotune key {at.key} leaves out {', '.join(missing)}, which {fn.name} (the config "
                         f"pruning) reads: a config pruned for one {missing[0]} is reused for another")
