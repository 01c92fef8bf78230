"""TL301: an atomic accumulation in an autotuned kernel, its target not in reset_to_zero."""

from __future__ import annotations

from harness.lint.fixes import autotune_names
from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import pointer_param

BAD = '''
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 1024}), triton.Config({"BLOCK": 4096})], key=["n"])
@triton.jit
def sumsq_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x * x))
'''

GOOD = BAD.replace('key=["n"])', 'key=["n"], reset_to_zero=["out_ptr"])')

ACCUMULATING = ("atomic_add", "atomic_sub", "atomic_xor")


@rule("TL301", "autotune-atomic-no-reset", cases=("nrm2-atomics", "splitk-matmul-autotune"), confidence=HIGH,
      bad=BAD, good=GOOD,
      summary="tl.atomic_add into a kernel argument of an @triton.autotune kernel that reset_to_zero (or "
              "restore_value) does not name")
def check(module):
    """On the first call for a key, the autotuner launches every config many times to time it, on the
    caller's tensors; each launch adds into the same output, so the first call returns the sum over
    hundreds of launches. ``reset_to_zero=["out_ptr"]`` zeroes it before each. Quiet when a config's
    ``pre_hook`` names it (``init_to_zero(["out_ptr"])``) or is a hook lint cannot read; quiet for atomic_max,
    atomic_min, atomic_and/or, atomic_xchg and atomic_cas, which a repeated launch does not change."""
    for flow in flows(module):
        at = flow.k.autotune
        if at is None or not at.benchmarks:
            continue
        for call in flow.calls(*ACCUMULATING):
            target = arg(call, 0, "pointer")
            param = pointer_param(flow, target) if target is not None else None
            if param and not at.resets(param):
                yield call, (f"tl.{flow.m.tl_call(call)} into {param} in an autotuned kernel: every benchmarking "
                             f"launch of the first call adds into it again; add reset_to_zero=[{param!r}] to "
                             f"@triton.autotune"), "splitk-matmul-autotune" if "dot" in module.source else "nrm2-atomics", \
                    autotune_names(at.node, "reset_to_zero", param)
