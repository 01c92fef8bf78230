"""TL306: atomics that accumulate into a tensor the launcher never zeroes."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import MEDIUM, rule
from harness.lint.rules._common import memory_ops, pointer_param

BAD = '''
import torch
import triton
import triton.language as tl

@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))

def vector_sum(x):
    out = torch.empty(1, device=x.device)
    sum_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out
'''

GOOD = BAD.replace("torch.empty(1,", "torch.zeros(1,")

ZEROING = {"zero_", "fill_", "copy_", "zeros", "zeros_like", "new_zeros", "full", "full_like", "new_full", "ones",
           "ones_like", "tensor", "clone"}


def initialised(launcher: ast.FunctionDef, name: str, before: int) -> str:
    """'empty' if ``name`` is a torch.empty the launcher made (every assignment of it before the launch is one),
    'param' if it came from the caller and the launcher never fills it, '' if it is filled (zeros, zero_(),
    fill_(), an assignment into it)."""
    made = []  # every assignment before the launch: an if/else may make it with torch.zeros in one branch
    for n in ast.walk(launcher):
        if getattr(n, "lineno", before) >= before:
            continue
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            made.append(n.value)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ZEROING and \
                isinstance(n.func.value, ast.Name) and n.func.value.id == name:
            return ""
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Subscript) and ast.unparse(t.value) == name
                                             for t in n.targets):
            return ""
    if not made:
        return "param" if name in {a.arg for a in launcher.args.args} else ""
    kinds = {ast.unparse(m.func).rsplit(".", 1)[-1] if isinstance(m, ast.Call) else "" for m in made}
    return "empty" if kinds <= {"empty", "empty_like", "new_empty"} else ""


def stored_params(flow) -> dict[str, int]:
    """The kernel's pointer arguments it stores into, with the line of the first store."""
    out = {}
    for call, kind, pointer, _ in memory_ops(flow):
        param = pointer_param(flow, pointer) if kind == "store" else None
        if param and param not in out:
            out[param] = call.lineno
    return out


def filled_before(module, launch) -> set[str]:
    """The launcher's names that an earlier launch in it passes to a kernel that stores into them (a prep
    kernel that writes zeros, or the counts, before the atomics start)."""
    stores = {id(f.k): stored_params(f) for f in flows(module)}
    out = set()
    for other in module.launches:
        if other.launcher is launch.launcher and other.node.lineno < launch.node.lineno:
            out |= {v.id for p, v in other.args.items() if isinstance(v, ast.Name) and p in stores.get(id(other.kernel), {})}
    return out


def uninitialised_atomics(module):
    """(launch, name passed, kernel parameter, 'empty' | 'param') for each atomic accumulator nobody zeroes."""
    for flow in flows(module):
        atomics = [c for c in flow.calls("atomic_add", "atomic_sub") if arg(c, 0, "pointer") is not None]
        stores = stored_params(flow)
        targets = {p for c in atomics if (p := pointer_param(flow, arg(c, 0, "pointer")))
                   and not (p in stores and stores[p] < min(a.lineno for a in atomics))}  # the kernel zeroes it
        if flow.k.autotune is not None:  # a config's pre_hook (init_to_zero) zeroes before every launch
            targets = {t for t in targets if not flow.k.autotune.resets(t)}
        for launch in flow.k.launches:
            filled = filled_before(module, launch) if targets and launch.launcher is not None else set()
            for param in sorted(targets):
                passed = launch.args.get(param)
                if launch.launcher is None or not isinstance(passed, ast.Name) or passed.id in filled:
                    continue
                how = initialised(launch.launcher, passed.id, launch.node.lineno)
                if how:
                    yield flow, launch, passed.id, param, how


@rule("TL306", "atomic-into-uninitialized", cases=("atomic-accumulator-empty",), confidence=MEDIUM, bad=BAD,
      good=GOOD,
      summary="tl.atomic_add into a tensor that the launcher made with torch.empty, or took from its caller, "
              "returns as its result and never zeroed")
def check(module):
    """An atomic add is a read-modify-write: the first program adds to whatever the accumulator held.
    ``torch.empty`` does not clear memory (the caching allocator hands back an old block), so the result is
    ``leftover + sum``, right in a fresh process and wrong later. Fires for a torch.empty made in the
    launcher, and for a caller's tensor that the launcher never zeroes and returns as its result (an ``out=``
    argument is overwritten, not added to); quiet when the kernel's autotune zeroes it (reset_to_zero, or a config's
    ``pre_hook=init_to_zero([...])``), when the kernel itself stores into it before its first atomic, or when
    an earlier launch in the launcher stores into it. A caller's tensor that the launcher never zeroes and
    does not return is TL307, a preview rule."""
    for flow, launch, name, param, how in uninitialised_atomics(module):
        if how == "param" and returned(launch.launcher, name):
            yield launch.node, (f"{name} is the caller's, never zeroed here, and {flow.k.name} tl.atomic_adds into "
                                f"it ({param}), and the function returns it as its result: the sum starts from "
                                f"whatever memory it held; zero it first ({name}.zero_())")
        elif how == "empty":
            yield launch.node, (f"{name} comes from torch.empty, and {flow.k.name} tl.atomic_adds into it "
                                f"({param}): the sum starts from whatever memory it held; zero it first "
                                f"({name}.zero_() or torch.zeros)")


def returned(launcher, name: str) -> bool:
    """The function returns ``name`` (alone or in a tuple): the tensor is its result, computed, not added to."""
    for n in ast.walk(launcher):
        if isinstance(n, ast.Return) and n.value is not None:
            values = n.value.elts if isinstance(n.value, ast.Tuple) else [n.value]
            if any(isinstance(v, ast.Name) and v.id == name for v in values):
                return True
    return False
