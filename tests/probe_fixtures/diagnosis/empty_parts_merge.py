"""Two partial attention results merged by their log-sum-exps. A part over no keys has
lse = -inf; where both parts of a row are empty, max(l1, l2) is -inf too and -inf - -inf is
NaN. The reference gives such a row 0 (nothing attended), and -inf means something to it:
its result changes when the -inf become 0. The diagnosis should see a special value the
kernel does not handle, not padding that got in."""

import torch
import triton
import triton.language as tl


@triton.jit
def merge_kernel(o1_ptr, l1_ptr, o2_ptr, l2_ptr, out_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < D
    l1 = tl.load(l1_ptr + row)
    l2 = tl.load(l2_ptr + row)
    m = tl.maximum(l1, l2)
    w1 = tl.exp(l1 - m)  # -inf - -inf = NaN when both parts are empty
    w2 = tl.exp(l2 - m)
    o1 = tl.load(o1_ptr + row * D + cols, mask=mask, other=0.0)
    o2 = tl.load(o2_ptr + row * D + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * D + cols, (o1 * w1 + o2 * w2) / (w1 + w2), mask=mask)


def launch(o1, l1, o2, l2):
    out = torch.empty_like(o1)
    merge_kernel[(o1.shape[0],)](o1, l1, o2, l2, out, o1.shape[1], BLOCK=triton.next_power_of_2(o1.shape[1]))
    return out


def make_inputs(*, device, gen, rows=8, d=16):
    o1, o2 = torch.randn(rows, d, generator=gen), torch.randn(rows, d, generator=gen)
    l1, l2 = torch.randn(rows, generator=gen), torch.randn(rows, generator=gen)
    l1[::2] = float("-inf")  # every other row: the first part is empty
    l2[::4] = float("-inf")  # every fourth: both are
    return {k: v.to(device) for k, v in dict(o1=o1, l1=l1, o2=o2, l2=l2).items()}


def reference(o1, l1, o2, l2):
    l1, l2 = l1.double()[:, None], l2.double()[:, None]
    m = torch.maximum(l1, l2)
    empty = torch.isinf(m) & (m < 0)
    m = torch.where(empty, torch.zeros_like(m), m)
    w1, w2 = torch.exp(l1 - m), torch.exp(l2 - m)
    merged = (o1.double() * w1 + o2.double() * w2) / torch.where(empty, torch.ones_like(w1), w1 + w2)
    return torch.where(empty, torch.zeros_like(merged), merged)
