"""Reproduction (our own code) of the kernel TorchInductor generated for a gather
(out[i] = table[idx[i]]) before and after pytorch/torchdynamo#615
(torchinductor/codegen/triton.py, July 2022).

Inductor's code generator chose the mask of each tl.load from the loop variables that
appear in the load's index expression. An indirect load whose index is only a value
loaded earlier (tmp0 = idx[x]; load table + tmp0) contains no loop variable, so it got
mask None. The index load itself was masked with xmask, so in the last block the lanes
past xnumel hold whatever a masked load without other= returns, and the unmasked table
load dereferences them: an out-of-bounds read in every launch whose size is not a
multiple of XBLOCK. The loaded values of those lanes are then dropped by the masked
store, so the output is right; only a memory checker (or an unlucky address) sees it.
The fix gives every load with an indirect index the full (dense) mask.
"""

import triton
import triton.language as tl


@triton.jit
def _gather(idx_ptr, table_ptr, out_ptr, xnumel, FIXED: tl.constexpr, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tmp0 = tl.load(idx_ptr + xindex, xmask)
    if FIXED:
        tmp1 = tl.load(table_ptr + tmp0, xmask)
    else:
        tmp1 = tl.load(table_ptr + tmp0)  # BUG: an index made only of a loaded value got no mask
    tl.store(out_ptr + xindex, tmp1, xmask)


def gather(table, idx, out, fixed, XBLOCK=128):
    n = idx.numel()
    _gather[(triton.cdiv(n, XBLOCK),)](idx, table, out, n, FIXED=fixed, XBLOCK=XBLOCK)
    return out
