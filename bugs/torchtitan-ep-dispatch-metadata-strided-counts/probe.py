"""A reproduction of torchtitan's MinimalAsyncEP dispatch-metadata step
(torchtitan/distributed/minimal_async_ep/kernels.py: the wrapper fill_dispatch_metadata_kernel and its
Triton kernel, added by pytorch/torchtitan PR 3561, fixed by PR 3771): our own kernel and wrapper with
the upstream mechanism. Before the expert-parallel all-to-all copy, each routed row of this rank
(rows in expert-sorted order) is given the peer rank it goes to (expert // local experts) and its row in
that peer's expert-major receive buffer. One program per (global expert, block of 256 rows of that
expert's segment); the program reads the expert's routed count, the first routed row of the expert
(local_count_starts) and the expert's offset in the peer's buffer (local_dest_offsets) at
``pointer + expert``: it assumes the three int64 vectors are contiguous. The wrapper allocates the two
outputs with torch.empty (num_routed_tokens rows) and launches a grid of
(num experts, cdiv(max_tokens_per_segment, 256)).
Buggy, as in torchtitan main from PR 3561 until PR 3771: the wrapper passes the vectors as it gets
them, so a strided view (upstream's DeepSeek-V3 run builds such metadata from slices of a
[rank, ..., expert] count table) is read at its physical storage slots, which hold another rank's
metadata. Fixed: the wrapper makes the three vectors contiguous first, as PR 3771 does."""

import torch
import triton
import triton.language as tl

ROWS_PER_PROGRAM = 256  # upstream's metadata block size
LOCAL_EXPERTS = 2  # experts per EP rank, as in upstream's unit test (a model config, not a size to fuzz)


@triton.jit
def _route_rows(counts_ptr, dest_off_ptr, first_row_ptr, out_rank_ptr, out_row_ptr,
                PER_RANK: tl.constexpr, BLOCK: tl.constexpr):
    expert = tl.program_id(0)
    j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    # the three metadata vectors are indexed by the expert id alone: element `expert` of a contiguous vector
    n_rows = tl.load(counts_ptr + expert)
    first = tl.load(first_row_ptr + expert)
    base = tl.load(dest_off_ptr + expert)
    keep = j < n_rows
    peer = tl.zeros([BLOCK], tl.int64) + expert // PER_RANK
    tl.store(out_rank_ptr + first + j, peer, mask=keep)
    tl.store(out_row_ptr + first + j, base + j, mask=keep)


def _dispatch_metadata(counts, local_dest_offsets, local_count_starts, *, num_routed_tokens,
                       num_local_experts, max_tokens_per_segment, contiguous):
    if contiguous:  # BUG: absent until PR 3771: strided views reached the kernel as they were
        counts = counts.contiguous()
        local_dest_offsets = local_dest_offsets.contiguous()
        local_count_starts = local_count_starts.contiguous()
    dst_ranks = torch.empty(num_routed_tokens, dtype=torch.int64, device=counts.device)
    dst_rows = torch.empty_like(dst_ranks)
    grid = (counts.numel(), triton.cdiv(max_tokens_per_segment, ROWS_PER_PROGRAM))
    _route_rows[grid](counts, local_dest_offsets, local_count_starts, dst_ranks, dst_rows,
                      PER_RANK=num_local_experts, BLOCK=ROWS_PER_PROGRAM, num_warps=4)
    return dst_ranks, dst_rows


def _run(counts, local_dest_offsets, local_count_starts, contiguous):
    # What the MinimalAsyncEP caller knows: how many rows it routed and the largest segment (the
    # capacity it sizes the grid by); read from the logical values, as the caller has them.
    return _dispatch_metadata(counts, local_dest_offsets, local_count_starts,
                              num_routed_tokens=int(counts.sum()), num_local_experts=LOCAL_EXPERTS,
                              max_tokens_per_segment=max(int(counts.max()), 1), contiguous=contiguous)


def launch_buggy(counts, local_dest_offsets, local_count_starts):
    return _run(counts, local_dest_offsets, local_count_starts, False)


def launch_fixed(counts, local_dest_offsets, local_count_starts):
    return _run(counts, local_dest_offsets, local_count_starts, True)


def _rank_metadata(gen, tokens, ep_size, rank):
    """One rank's routing metadata: ``tokens`` routed rows spread over ep_size * local_experts global
    experts, the exclusive prefix sum of the counts (the first row of each expert in this rank's
    expert-sorted order), and each expert's offset in its peer's expert-major receive buffer (local
    expert segment, then one slot of ``tokens`` rows per source rank)."""
    experts = ep_size * LOCAL_EXPERTS
    which = torch.randint(0, experts, (tokens,), generator=gen)
    counts = torch.bincount(which, minlength=experts).to(torch.int64)
    starts = counts.cumsum(0) - counts
    local = torch.arange(experts) % LOCAL_EXPERTS
    offsets = (local * ep_size + rank) * tokens
    return counts, offsets.to(torch.int64), starts


def make_inputs(*, device, gen, tokens=64, ep_size=2, strided=0):
    """Upstream's unit test (tests/unit_tests/test_minimal_async_ep_kernels.py,
    test_metadata_kernels_match_reference) uses EP 2 with 2 local experts (4 global experts) and a
    handful of routed rows; here ``tokens`` rows (64 by default) are routed to uniformly drawn experts,
    EP sizes fuzzed up to 64 (the DeepSeek-V3 run of PR 3771 is EP 64).
    ``strided`` (an author switch, 0 by default): each of the three vectors is given as column 0 of a
    [num experts, 2] table (a view of stride 2, the layout PR 3771's test feeds, whose skipped slots
    hold another rank's metadata for the same experts, as the count tables upstream slices do)."""
    mine = tuple(t.to(device) for t in _rank_metadata(gen, tokens, ep_size, 0))
    if strided:  # the views made on the device: .to(device) copies a view with gaps into a dense tensor
        other = (t.to(device) for t in _rank_metadata(gen, tokens, ep_size, 1 % ep_size))
        mine = tuple(torch.stack([a, b], dim=1)[:, 0] for a, b in zip(mine, other))
    counts, offsets, starts = mine
    return {"counts": counts, "local_dest_offsets": offsets, "local_count_starts": starts}


def reference(counts, local_dest_offsets, local_count_starts):
    """Row r of this rank's expert-sorted routed rows, the j-th of expert e's segment, goes to peer
    e // local experts at row local_dest_offsets[e] + j (the logical values of the three vectors)."""
    c = counts.cpu().to(torch.int64)
    experts = torch.arange(c.numel()).repeat_interleave(c)
    first = local_count_starts.cpu().to(torch.int64)[experts]
    j = torch.arange(experts.numel()) - first
    ranks = experts // LOCAL_EXPERTS
    rows = local_dest_offsets.cpu().to(torch.int64)[experts] + j
    return ranks.to(counts.device), rows.to(counts.device)


FUZZ = {"tokens": (1, 4096), "ep_size": (1, 64)}
