"""Does Triton put a CTA barrier after a scalar atomic whose result is used? (lint's TL703 counts one.)

Compiles four small kernels for NVIDIA sm_90 and AMD gfx942 (no GPU needed: Triton compiles to PTX and
AMDGCN on the CPU) and prints the barrier instructions in each: a store, then a load of other lanes'
addresses, with between them (1) a scalar ``tl.atomic_add`` whose result is used, (2) one whose result
is dropped, (3) nothing, (4) ``tl.debug_barrier()``.

    python3 benchmarks/lint_atomic_barrier.py
"""

import platform

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def atomic_used(x_ptr, flag_ptr, out_ptr, D: tl.constexpr):
    d = tl.arange(0, D)
    tl.store(x_ptr + d, d.to(tl.float32))
    seen = tl.atomic_add(flag_ptr, 1, sem="acq_rel")
    tl.store(out_ptr + d, tl.load(x_ptr + (D - 1 - d)) + seen)


@triton.jit
def atomic_dropped(x_ptr, flag_ptr, out_ptr, D: tl.constexpr):
    d = tl.arange(0, D)
    tl.store(x_ptr + d, d.to(tl.float32))
    tl.atomic_add(flag_ptr, 1, sem="acq_rel")
    tl.store(out_ptr + d, tl.load(x_ptr + (D - 1 - d)))


@triton.jit
def nothing(x_ptr, flag_ptr, out_ptr, D: tl.constexpr):
    d = tl.arange(0, D)
    tl.store(x_ptr + d, d.to(tl.float32))
    tl.store(out_ptr + d, tl.load(x_ptr + (D - 1 - d)))


@triton.jit
def debug_barrier(x_ptr, flag_ptr, out_ptr, D: tl.constexpr):
    d = tl.arange(0, D)
    tl.store(x_ptr + d, d.to(tl.float32))
    tl.debug_barrier()
    tl.store(out_ptr + d, tl.load(x_ptr + (D - 1 - d)))


def main() -> None:
    print(f"triton {triton.__version__}, python {platform.python_version()}, compiled on the CPU (no GPU), "
          f"command: python3 benchmarks/lint_atomic_barrier.py")
    print("| kernel | target | barrier instructions |")
    print("|---|---|---|")
    signature = {"x_ptr": "*fp32", "flag_ptr": "*i32", "out_ptr": "*fp32", "D": "constexpr"}
    for fn in (atomic_used, atomic_dropped, nothing, debug_barrier):
        for target, kind, bars in ((GPUTarget("cuda", 90, 32), "ptx", ("bar.sync", "barrier.sync")),
                                   (GPUTarget("hip", "gfx942", 64), "amdgcn", ("s_barrier",))):
            asm = triton.compile(ASTSource(fn=fn, signature=signature, constexprs={"D": 128}), target=target).asm[kind]
            found = [line.strip() for line in asm.splitlines() if line.strip().startswith(bars)]
            print(f"| {fn.__name__} | {target.backend} {target.arch} | {', '.join(found) or 'none'} |")


if __name__ == "__main__":
    main()
