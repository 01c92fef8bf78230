"""A reproduction of TorchRec's Triton TBE pooled forward (table_batched_embedding_bag_forward_unweighted_kernel,
torchrec/distributed/triton_tbe/triton_table_batched_embeddings.py; the fix:
https://github.com/meta-pytorch/torchrec/pull/3730): our own kernel with the upstream one's launch and
loop. One program per sample b; for each feature t, the bag's rows (indices[offsets[t * B + b]:
offsets[t * B + b + 1]]) are gathered from the table's slice of one flat weight tensor and summed, four
rows per step and the rest one at a time, into an fp32 accumulator, stored at the feature's column
offset of the sample's output row. Buggy: the four fp16 rows of a step are added to each other in
fp16 before the sum meets the accumulator (what PR 3730 describes: "FP16 intermediate arithmetic
when adding loaded embedding rows"); fixed: each row converted to fp32 first (the PR's
``row.to(tl.float32)``).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _tbe_forward(out_ptr, indices_ptr, offsets_ptr, weight_ptr, table_offsets_ptr, dims_ptr, out_offsets_ptr,
                 total_dim: tl.constexpr, B, T: tl.constexpr, BLOCK: tl.constexpr, ROWS_FP32: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    for t in range(T):
        table_offset = tl.load(table_offsets_ptr + t)
        dim = tl.load(dims_ptr + t)
        start = tl.load(offsets_ptr + t * B + b)
        end = tl.load(offsets_ptr + t * B + b + 1)
        mask = cols < dim
        bag = tl.zeros((BLOCK,), dtype=tl.float32)
        endn = start + 4 * ((end - start) // 4)
        for idx in range(start, endn, 4):
            r0 = tl.load(weight_ptr + table_offset + tl.load(indices_ptr + idx) * dim + cols, mask=mask, other=0)
            r1 = tl.load(weight_ptr + table_offset + tl.load(indices_ptr + idx + 1) * dim + cols, mask=mask, other=0)
            r2 = tl.load(weight_ptr + table_offset + tl.load(indices_ptr + idx + 2) * dim + cols, mask=mask, other=0)
            r3 = tl.load(weight_ptr + table_offset + tl.load(indices_ptr + idx + 3) * dim + cols, mask=mask, other=0)
            if ROWS_FP32:
                bag += r0.to(tl.float32) + r1.to(tl.float32) + r2.to(tl.float32) + r3.to(tl.float32)
            else:  # the four fp16 rows added in fp16, then to the fp32 accumulator
                bag += r0 + r1 + r2 + r3  # BUG: fp16 additions before the fp32 accumulator
        for idx in range(endn, end):
            row = tl.load(weight_ptr + table_offset + tl.load(indices_ptr + idx) * dim + cols, mask=mask, other=0)
            bag += row.to(tl.float32)
        tl.store(out_ptr + b * total_dim + tl.load(out_offsets_ptr + t) + cols, bag, mask=mask)


def _launch(weight, table_offsets, dims, indices, offsets, rows_fp32):
    T = dims.numel()
    B = (offsets.numel() - 1) // T
    d = dims.tolist()
    total = sum(d)
    out_offsets = torch.tensor([0] + d[:-1], dtype=torch.int64).cumsum(0).to(weight.device)
    out = torch.empty(B, total, dtype=torch.float32, device=weight.device)
    _tbe_forward[(B,)](out, indices, offsets, weight, table_offsets, dims, out_offsets, total_dim=total, B=B, T=T,
                       BLOCK=triton.next_power_of_2(max(d)), ROWS_FP32=rows_fp32)
    return out


def launch_buggy(weight, table_offsets, dims, indices, offsets):
    return _launch(weight, table_offsets, dims, indices, offsets, False)


def launch_fixed(weight, table_offsets, dims, indices, offsets):
    return _launch(weight, table_offsets, dims, indices, offsets, True)


def make_inputs(*, device, gen, batch=128, tables=8, bag=8):
    """As upstream's test_forward_numeric_alignment_fp16 makes them: per table a hash size from 50 to 200
    and a dimension from 16 to 124 in steps of 4; fp16 weights uniform in [-1, 1]; every bag of ``bag``
    random rows of its table; offsets feature-major (t * batch + b)."""
    hashes = torch.randint(50, 201, (tables,), generator=gen)
    dims = 16 + 4 * torch.randint(0, 28, (tables,), generator=gen)
    sizes = hashes * dims
    weight = (torch.rand(int(sizes.sum()), generator=gen) * 2 - 1).to(torch.float16)
    table_offsets = torch.cat([torch.zeros(1, dtype=torch.int64), sizes.cumsum(0)[:-1]])
    indices = torch.cat([torch.randint(0, int(hashes[t]), (batch * bag,), generator=gen) for t in range(tables)])
    offsets = torch.arange(0, tables * batch * bag + 1, bag, dtype=torch.int64)
    return {"weight": weight.to(device), "table_offsets": table_offsets.to(device), "dims": dims.to(device),
            "indices": indices.to(device), "offsets": offsets.to(device)}


def reference(weight, table_offsets, dims, indices, offsets):
    T = dims.numel()
    B = (offsets.numel() - 1) // T
    ends = table_offsets.tolist()[1:] + [weight.numel()]
    out = []
    for t in range(T):
        table = weight[int(table_offsets[t]):ends[t]].double().view(-1, int(dims[t]))
        bags = [table[indices[int(offsets[t * B + b]):int(offsets[t * B + b + 1])].long()].sum(0) for b in range(B)]
        out.append(torch.stack(bags))
    return torch.cat(out, dim=1)


FUZZ = {"batch": 128, "tables": (8, 12), "bag": (8, 12)}
