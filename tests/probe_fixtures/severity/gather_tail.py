"""A gather out[i] = src[idx[i]] in blocks of 64, as a dequantizer reads a group index and then
that group's scale. ``launch_unmasked`` loads the indices and the gathered values with no mask
(only the store is masked): at a length that is not a multiple of 64 the last block reads indices
past the end of ``idx`` and then ``src`` at whatever those hold. Under the interpreter the guard
bands' poison there is a huge index, and the process dies (SIGSEGV): a true out-of-bounds access,
which the probe must name. ``launch`` masks both loads and is right at every length."""

import torch
import triton
import triton.language as tl


@triton.jit
def gather_kernel(idx_ptr, src_ptr, out_ptr, n, BLOCK: tl.constexpr, MASKED: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if MASKED:
        idx = tl.load(idx_ptr + offs, mask=mask, other=0)
        val = tl.load(src_ptr + idx, mask=mask, other=0.0)
    else:
        idx = tl.load(idx_ptr + offs)
        val = tl.load(src_ptr + idx)
    tl.store(out_ptr + offs, val, mask=mask)


def _launch(idx, src, masked):
    out = torch.empty(idx.shape[0], device=src.device, dtype=src.dtype)
    gather_kernel[(triton.cdiv(idx.shape[0], 64),)](idx, src, out, idx.shape[0], BLOCK=64, MASKED=masked)
    return out


def launch(idx, src):
    return _launch(idx, src, True)


def launch_unmasked(idx, src):
    return _launch(idx, src, False)


def make_inputs(*, device, gen, n=128, groups=8):
    idx = torch.randint(0, groups, (n,), generator=gen, dtype=torch.int32)
    return {"idx": idx.to(device), "src": torch.randn(groups, generator=gen).to(device)}


def reference(idx, src):
    return src.double()[idx.long()]
