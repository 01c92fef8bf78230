"""A row permutation (a mixture-of-experts dispatch moves each token's row to its expert's slot) whose
destination offset ``dst * hidden`` is int32: ``dst`` is loaded from an int32 index map, so the product wraps
once the output passes 2**31 elements (launch); its twin widens ``dst`` to int64 first (launch_fixed). Both are
right at every size the interpreter can run. The index is data, not a program id: the evidence is an int32
value loaded from a tensor times a runtime size."""

import torch
import triton
import triton.language as tl


@triton.jit
def permute_rows_kernel(x_ptr, dst_ptr, out_ptr, hidden, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # the source row: widened, only the destination wraps
    dst = tl.load(dst_ptr + row)
    for c0 in range(0, hidden, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < hidden
        x = tl.load(x_ptr + row * hidden + cols, mask=mask)
        tl.store(out_ptr + dst * hidden + cols, x, mask=mask)


@triton.jit
def permute_rows_kernel_64(x_ptr, dst_ptr, out_ptr, hidden, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    dst = tl.load(dst_ptr + row).to(tl.int64)
    for c0 in range(0, hidden, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < hidden
        x = tl.load(x_ptr + row * hidden + cols, mask=mask)
        tl.store(out_ptr + dst * hidden + cols, x, mask=mask)


def _run(kernel, x, dst):
    out = torch.empty_like(x)
    kernel[(x.shape[0],)](x, dst, out, x.shape[1], BLOCK=1024)
    return out


def launch(x, dst):
    return _run(permute_rows_kernel, x, dst)


def launch_fixed(x, dst):
    return _run(permute_rows_kernel_64, x, dst)


def make_inputs(*, device, gen, tokens=64, hidden=1000):
    x = torch.randn(tokens, hidden, generator=gen)
    dst = torch.randperm(tokens, generator=gen).to(torch.int32)
    return {"x": x.to(device), "dst": dst.to(device)}


def reference(x, dst):
    out = torch.empty_like(x, dtype=torch.float64)
    out[dst.long()] = x.double()
    return out
