"""Our own reproduction of the kernel TorchInductor generated for pytorch/pytorch#171493:
an index_add_ (a scatter with atomic adds into a per-graph accumulator) fused into the same
Triton kernel as a later read of that accumulator, gathered back per node.

The model (a PyG-style per-graph normalisation) is

    f_u = f**2 + c
    acc = zeros(n_graphs, d); acc.index_add_(0, batch, f_u)
    out = f_u / (acc[batch] + 1e-6)

Before the fix the scheduler fused the atomic scatter and the gather into one pointwise
kernel: each program adds its nodes into ``acc`` and then, in the same program, reads
``acc`` back. Nothing makes a program wait for the other programs' atomic adds, so a
program sees only the contributions that happened to land before its load (under the
interpreter, where programs run one after another, program p sees programs 0..p). The fix
refuses to fuse a read into a kernel whose write to the same buffer is an atomic
accumulation, so the scatter finishes (kernel boundary) before the gather runs.

Both sides are written the way Inductor lays out a pointwise kernel (flat xindex, XBLOCK
lanes a program, masks on xindex); the code is ours.
"""

import torch
import triton
import triton.language as tl

XBLOCK = 128  # a pointwise config; the race needs more than one program per graph
C = 0.00987654321
EPS = 1e-6


@triton.jit
def _fused_index_add_gather_div(f_ptr, batch_ptr, acc_ptr, out_ptr, xnumel, d,
                                C: tl.constexpr, EPS: tl.constexpr, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    node = xindex // d
    col = xindex % d
    f = tl.load(f_ptr + xindex, mask=xmask, other=0.0)
    g = tl.load(batch_ptr + node, mask=xmask, other=0)
    fu = f * f + C
    tl.atomic_add(acc_ptr + g * d + col, fu, mask=xmask)
    tot = tl.load(acc_ptr + g * d + col, mask=xmask, other=0.0)  # BUG: reads acc in the kernel that is still accumulating it; other programs' adds may not be there yet
    tl.store(out_ptr + xindex, fu / (tot + EPS), mask=xmask)


@triton.jit
def _index_add(f_ptr, batch_ptr, acc_ptr, xnumel, d, C: tl.constexpr, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    node = xindex // d
    col = xindex % d
    f = tl.load(f_ptr + xindex, mask=xmask, other=0.0)
    g = tl.load(batch_ptr + node, mask=xmask, other=0)
    tl.atomic_add(acc_ptr + g * d + col, f * f + C, mask=xmask)


@triton.jit
def _gather_div(f_ptr, batch_ptr, acc_ptr, out_ptr, xnumel, d,
                C: tl.constexpr, EPS: tl.constexpr, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    node = xindex // d
    col = xindex % d
    f = tl.load(f_ptr + xindex, mask=xmask, other=0.0)
    g = tl.load(batch_ptr + node, mask=xmask, other=0)
    tot = tl.load(acc_ptr + g * d + col, mask=xmask, other=0.0)
    tl.store(out_ptr + xindex, (f * f + C) / (tot + EPS), mask=xmask)


def per_graph_normalise(f, batch, n_graphs, *, fixed):
    """f (n, d) float32 contiguous, batch (n,) int64 graph ids in [0, n_graphs)."""
    n, d = f.shape
    xnumel = n * d
    acc = torch.zeros(n_graphs, d, dtype=f.dtype, device=f.device)
    out = torch.empty_like(f)
    grid = (triton.cdiv(xnumel, XBLOCK),)
    if xnumel == 0:
        return out
    if fixed:
        # the fix: the scatter is its own kernel; the gather runs after it has finished
        _index_add[grid](f, batch, acc, xnumel, d, C=C, XBLOCK=XBLOCK)
        _gather_div[grid](f, batch, acc, out, xnumel, d, C=C, EPS=EPS, XBLOCK=XBLOCK)
    else:
        _fused_index_add_gather_div[grid](f, batch, acc, out, xnumel, d, C=C, EPS=EPS, XBLOCK=XBLOCK)  # BUG: one fused kernel
    return out
