"""TL306: atomics that accumulate into a tensor the launcher never zeroes."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import MEDIUM, rule
from harness.lint.rules._common import pointer_param

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
    """'empty' if ``name`` is a torch.empty the launcher made, 'param' if it came from the caller and the
    launcher never fills it, '' if it is filled (zeros, zero_(), fill_(), an assignment into it)."""
    made = None
    for n in ast.walk(launcher):
        if getattr(n, "lineno", before) >= before:
            continue
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            made = n.value
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ZEROING and \
                isinstance(n.func.value, ast.Name) and n.func.value.id == name:
            return ""
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Subscript) and ast.unparse(t.value) == name
                                             for t in n.targets):
            return ""
    if made is None:
        return "param" if name in {a.arg for a in launcher.args.args} else ""
    last = ast.unparse(made.func).rsplit(".", 1)[-1] if isinstance(made, ast.Call) else ""
    return "empty" if last in ("empty", "empty_like", "new_empty") else ""


@rule("TL306", "atomic-into-uninitialized", cases=("atomic-accumulator-empty",), confidence=MEDIUM, bad=BAD,
      good=GOOD,
      summary="tl.atomic_add into a tensor that the launcher made with torch.empty, or took from its caller and "
              "never zeroed")
def check(module):
    """An atomic add is a read-modify-write: the first program adds to whatever the accumulator held.
    ``torch.empty`` does not clear memory (the caching allocator hands back an old block), so the result is
    ``leftover + sum``, right in a fresh process and wrong later. Fires for a torch.empty made in the
    launcher (certain) and for a caller's tensor the launcher never zeroes (the caller may have); quiet
    when the kernel's autotune zeroes it (reset_to_zero, or a config's ``pre_hook=init_to_zero([...])``)."""
    for flow in flows(module):
        targets = {pointer_param(flow, arg(c, 0, "pointer")) for c in flow.calls("atomic_add", "atomic_sub")
                   if arg(c, 0, "pointer") is not None} - {None}
        if flow.k.autotune is not None:  # a config's pre_hook (init_to_zero) zeroes before every launch
            targets = {t for t in targets if not flow.k.autotune.resets(t)}
        for launch in flow.k.launches:
            for param in sorted(targets):
                passed = launch.args.get(param)
                if launch.launcher is None or not isinstance(passed, ast.Name):
                    continue
                how = initialised(launch.launcher, passed.id, launch.node.lineno)
                if how:
                    origin = "comes from torch.empty" if how == "empty" else "is the caller's, never zeroed here"
                    yield launch.node, (f"{passed.id} {origin}, and {flow.k.name} tl.atomic_adds into it "
                                        f"({param}): the sum starts from whatever memory it held; zero it first "
                                        f"({passed.id}.zero_() or torch.zeros)")
