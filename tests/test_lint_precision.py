"""``harness lint`` stays quiet for a reason it can see in the source, and fires again without it.

Each pair is one correct kernel whose reason was learnt from released code (docs/lint-packages.md)
and the same kernel with that reason taken away: the rule must be quiet on the first and fire on
the second, so neither half can pass by a rule that never fires or always does.
"""

import pytest

from harness.lint import lint_source

HEAD = "import torch\nimport triton\nimport triton.language as tl\n"

ONE_CONFIG = HEAD + '''
@triton.autotune(configs=[triton.Config({"BLOCK": 1024})], key=["n"])
@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))
'''

MUTEX = HEAD + '''
@triton.jit
def merge_kernel(x_ptr, out_ptr, lock_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    part = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0))
    lock = lock_ptr + pid // 4
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(out_ptr + pid // 4, tl.load(out_ptr + pid // 4) + part)
    tl.atomic_xchg(lock, 0)
'''

GRID_STRIDE = HEAD + '''
@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def copy(x, y):
    copy_kernel[(max(1, x.numel() // 4096),)](x, y, x.numel(), BLOCK=1024)
'''

K_LOOP = HEAD + '''
@triton.jit
def rowsum_kernel(a_ptr, out_ptr, K, stride, BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    a_ptrs = a_ptr + row * stride + tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        acc += tl.load(a_ptrs)
        a_ptrs += BLOCK_K
    tl.store(out_ptr + row, tl.sum(acc))

def supported(K):
    return K % 128 == 0

def rowsum(a, out):
    BLOCK_K = 128
    rowsum_kernel[(a.shape[0],)](a, out, a.shape[1], a.stride(0), BLOCK_K=BLOCK_K)
'''

BRANCHES = HEAD + '''
@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))

def vector_sum(x, fused):
    if fused:
        out = torch.zeros(1, device=x.device)
    else:
        out = torch.empty(1, device=x.device)
    if fused:
        sum_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out
'''

LENGTHS = HEAD + '''
@triton.jit
def longest_kernel(len_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    lengths = tl.load(len_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr, tl.max(lengths, axis=0))
'''

SHIFTED = HEAD + '''
@triton.jit
def pairs_kernel(x_ptr, out_ptr, SHIFT, C: tl.constexpr, B: tl.constexpr):
    start = tl.program_id(0) * C + SHIFT
    offs = tl.arange(0, B) + start
    pair = (offs - SHIFT) // 2
    tl.store(out_ptr + offs - SHIFT, tl.load(x_ptr + pair))
'''

SCALAR = HEAD + '''
@triton.jit
def stats_kernel(x_ptr, info_ptr, n, BLOCK: tl.constexpr):
    step = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + step * n + offs, mask=offs < n, other=0.0)
    tl.store(info_ptr + step * 2, tl.load(info_ptr + step * 2) + tl.sum(x))
    tl.store(info_ptr + step * 2 + 1, tl.load(info_ptr + step * 2 + 1) + tl.sum(x * x))
'''

TILE = HEAD + '''
@triton.jit
def scores_kernel(q_ptr, k_ptr, out_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    q = tl.load(q_ptr + offs)
    best = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        qk = tl.zeros((BLOCK,), dtype=tl.float16)
        qk += (q * tl.load(k_ptr + start + offs, mask=start + offs < N, other=0.0)).to(tl.float16)
        best = tl.maximum(best, qk.to(tl.float32))
    tl.store(out_ptr + offs, best)
'''

RENAMED = HEAD + '''
@triton.jit
def scratch_kernel(x_ptr, acc_ptr, out_ptr, D: tl.constexpr):
    row = tl.program_id(0)
    d = tl.arange(0, D)
    init_ptrs = acc_ptr + row * D + d
    tl.store(init_ptrs, tl.load(x_ptr + row * D + d) * 2.0)
    final_ptrs = acc_ptr + row * D + d
    tl.store(out_ptr + row * D + d, tl.load(final_ptrs) + 1.0)
'''

TICKET = HEAD + '''
@triton.jit
def reverse_kernel(x_ptr, tmp_ptr, flag_ptr, out_ptr, D: tl.constexpr):
    row = tl.program_id(0)
    d = tl.arange(0, D)
    tl.store(tmp_ptr + row * D + d, tl.load(x_ptr + row * D + d))
    seen = tl.atomic_add(flag_ptr, 1, sem="acq_rel")
    tl.store(out_ptr + row * D + d, tl.load(tmp_ptr + row * D + (D - 1 - d)) + seen * 0.0)
'''

GATHERED = HEAD + '''
@triton.jit
def pull_kernel(emb_ptr, head_ptr, tail_ptr, E, D: tl.constexpr, BLOCK: tl.constexpr):
    e = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = e < E
    head = tl.load(head_ptr + e, mask=ok, other=0)
    tail = tl.load(tail_ptr + e, mask=ok, other=0)
    d = tl.arange(0, D)
    h = tl.load(emb_ptr + head[:, None] * D + d[None, :], mask=ok[:, None], other=0.0)
    t = tl.load(emb_ptr + tail[:, None] * D + d[None, :], mask=ok[:, None], other=0.0)
    w = tl.exp(-tl.sum((h - t) * (h - t), axis=1))
    tl.atomic_add(emb_ptr + head[:, None] * D + d[None, :], w[:, None] * (t - h), mask=ok[:, None])

def pull(emb, head, tail):
    pull_kernel[(triton.cdiv(head.shape[0], 128),)](emb, head, tail, head.shape[0], D=emb.shape[1], BLOCK=128)
'''

PRUNED = HEAD + '''
def _divides(**axes):
    def prune(configs, named_args, **kw):
        args = {**named_args, **kw}
        keep = [c for c in configs if all(args[dim] % c.kwargs[ax] == 0 for ax, dim in axes.items())]
        if not keep:
            raise ValueError("no config tiles the size")
        return keep
    return prune

@triton.autotune(configs=[triton.Config({"BN": 32}), triton.Config({"BN": 64})], key=["N"],
                 prune_configs_by={"early_config_prune": _divides(BN="N")})
@triton.jit
def scale_kernel(x_ptr, out_ptr, N, BN: tl.constexpr):
    n = tl.program_id(0) * BN + tl.arange(0, BN)
    tl.store(out_ptr + n, tl.load(x_ptr + n) * 2.0)

def scale(x, out):
    scale_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BN"]),)](x, out, x.numel())
'''

PACKED_KEY = HEAD + '''
def fits_row(configs, named_args, **kwargs):
    block = triton.next_power_of_2(named_args["n_cols"])
    return [c for c in configs if c.kwargs["BLOCK"] == block]

@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (256, 512, 1024)], key=["shape_key"],
                 prune_configs_by={"early_config_prune": fits_row})
@triton.jit
def rms_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, shape_key, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row * stride + cols, x / tl.sqrt(tl.sum(x * x) / n_cols), mask=cols < n_cols)

def rms(x, out):
    n_rows, n_cols = x.shape
    rms_kernel[(n_rows,)](x, out, n_rows, n_cols, x.stride(0), shape_key=(n_rows.bit_length(), n_cols))
'''

GATED = HEAD + '''
@triton.jit
def rows_kernel(x_ptr, out_ptr, n_rows, D: tl.constexpr, ROWS: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    d = tl.arange(0, D)
    ok = (r < n_rows)[:, None]
    tl.store(out_ptr + r[:, None] * D + d[None, :], tl.load(x_ptr + r[:, None] * D + d[None, :], mask=ok), mask=ok)

def supported(x, L):
    if x.dim() != 3 or L % 128 or L == 0:
        return False
    return True

def rows(x, out, A, L):
    rows_kernel[((A * L) // 8,)](x, out, A * L, D=x.shape[-1], ROWS=8)
'''

ONE_LINE = HEAD + '''
@triton.jit
def interleave_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK); odd = offs * 2 | 1
    tl.store(out_ptr + odd, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def interleave(x, out):
    interleave_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
'''

INTERLEAVED = HEAD + '''
@triton.jit
def conj_flip_kernel(z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    ptr = z_ptr + offs * 2
    re = tl.load(ptr, mask=ok, other=0.0)
    tl.store(ptr, -re, mask=ok)
    im = tl.load(ptr + 1, mask=ok, other=0.0)
    tl.store(ptr + 1, -im, mask=ok)

def conj_flip(z):
    conj_flip_kernel[(triton.cdiv(z.numel() // 2, 256),)](z, z.numel() // 2, BLOCK=256)
'''

WORK_QUEUE = HEAD + '''
@triton.jit
def queue_kernel(x_ptr, out_ptr, counter_ptr, n_tiles, BLOCK: tl.constexpr):
    counter = counter_ptr + tl.program_id(0) % 8
    tile = tl.atomic_add(counter, 1)
    while tile < n_tiles:
        offs = tile * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)
        tile = tl.atomic_add(counter, 1)
'''

STACK = HEAD + '''
@triton.jit
def lut_kernel(q_ptr, cb_ptr, lut_ptr, stride_q, stride_cb, stride_lut_n, stride_lut_s,
               KSUB: tl.constexpr, DSUB: tl.constexpr):
    n = tl.program_id(0)
    s = tl.program_id(2)
    j = tl.arange(0, KSUB)
    d = tl.arange(0, DSUB)
    q = tl.load(q_ptr + n * stride_q + s * DSUB + d)
    cb = tl.load(cb_ptr + s * stride_cb + j[:, None] * DSUB + d[None, :])
    dist = tl.sum((q[None, :] - cb) * (q[None, :] - cb), axis=1)
    tl.store(lut_ptr + n * stride_lut_n + s * stride_lut_s + j, dist)

def build_lut(q, codebooks):
    nq = q.shape[0]
    m, ksub, dsub = codebooks.shape
    lut = torch.empty((nq, m, ksub), device=q.device)
    lut_kernel[(nq, 1, m)](q, codebooks, lut, q.stride(0), codebooks.stride(0), lut.stride(0), lut.stride(1),
                           KSUB=ksub, DSUB=dsub)
    return lut
'''

WHERE_CLAMP = HEAD + '''
@triton.jit
def row_dot_kernel(o_ptr, do_ptr, delta_ptr, n_rows, D: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = rows < n_rows
    safe = tl.where(inside, rows, n_rows - 1)
    cols = tl.arange(0, D)
    o = tl.load(o_ptr + safe[:, None] * D + cols[None, :])
    do = tl.load(do_ptr + safe[:, None] * D + cols[None, :])
    tl.store(delta_ptr + rows, tl.sum(o * do, axis=1), mask=inside)

def row_dot(o, do, delta):
    n_rows = o.shape[0]
    row_dot_kernel[(triton.cdiv(n_rows, 128),)](o, do, delta, n_rows, D=o.shape[1], BLOCK=128)
'''

# Set S's classes (docs/lint-first-run.md): each correct for a reason the launch shows
# S7: the atomic is under a constexpr the launch turns off
SWITCHED = HEAD + '''
@triton.jit
def block_sums_kernel(x_ptr, part_ptr, total_ptr, n, BLOCK: tl.constexpr, ACCUMULATE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0))
    if ACCUMULATE:
        tl.atomic_add(total_ptr, s)
    else:
        tl.store(part_ptr + pid, s)

def block_sums(x):
    blocks = triton.cdiv(x.numel(), 256)
    part = torch.empty(blocks, device=x.device)
    block_sums_kernel[(blocks,)](x, part, part, x.numel(), BLOCK=256, ACCUMULATE=False)
    return part
'''

# S3-S6: a scratch buffer of whole tiles
SPLIT_PARTIALS = HEAD + '''
@triton.jit
def merge_splits_kernel(part_ptr, out_ptr, n_split, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, n_split):
        acc += tl.load(part_ptr + (row * n_split + s) * BLOCK + offs)
    tl.store(out_ptr + row * BLOCK + offs, acc)

def merge_splits(part_of, rows, n_split, width):
    block = triton.next_power_of_2(width)
    part = torch.empty(rows * n_split * block, device="cuda")
    part_of(part)
    out = torch.empty(rows, block, device="cuda")
    merge_splits_kernel[(rows,)](part, out, n_split, BLOCK=block)
    return out[:, :width]
'''

# a padded buffer is read whole, as it is written whole
PADDED_INPUT = HEAD + '''
@triton.jit
def square_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x * x)

def squares(x):
    n = x.numel()
    n_padded = triton.cdiv(n, 512) * 512
    staged = torch.zeros(n_padded, device=x.device)
    staged[:n] = x
    out = torch.empty(n_padded, device=x.device)
    square_kernel[(triton.cdiv(n, 512),)](staged, out, BLOCK=512)
    return out[:n]
'''

# S8-S9's question: K built as whole groups at the launch
GROUPED_K = HEAD + '''
GROUP = 32

@triton.jit
def group_dot_kernel(a_ptr, b_ptr, out_ptr, K, BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        acc += tl.load(a_ptr + row * K + k0 + offs) * tl.load(b_ptr + k0 + offs)
    tl.store(out_ptr + row, tl.sum(acc))

def group_dot(a, b, n_groups):
    K = n_groups * GROUP
    out = torch.empty(a.shape[0], device=a.device)
    group_dot_kernel[(a.shape[0],)](a, b, out, K, BLOCK_K=GROUP)
    return out
'''

# S1-S2: a running max over the whole loop, then summed
RUNNING_MAX = HEAD + '''
@triton.jit
def peak_score_kernel(x_ptr, out_ptr, N, stride_row, stride_tok, R: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    toks = tl.arange(0, R)
    cols = tl.arange(0, BLOCK)
    peak = tl.full((R,), float("-inf"), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + cols
        x = tl.load(x_ptr + row * stride_row + toks[:, None] * stride_tok + offs[None, :],
                    mask=offs[None, :] < N, other=float("-inf"))
        peak = tl.maximum(peak, tl.max(x, axis=1))
    tl.atomic_add(out_ptr, tl.log(tl.sum(peak)))

def peak_score(x):
    rows, r, n = x.shape
    out = torch.zeros(1, device=x.device)
    peak_score_kernel[(rows,)](x, out, n, x.stride(0), x.stride(1), R=r, BLOCK=128)
    return out
'''

PAIRS = [  # (rule, correct kernel, the same kernel without the reason it is correct)
    ("TL301", ONE_CONFIG, ONE_CONFIG.replace('[triton.Config({"BLOCK": 1024})]',
                                             '[triton.Config({"BLOCK": 1024}), triton.Config({"BLOCK": 256})]')),
    ("TL702", MUTEX, MUTEX.replace("    tl.atomic_xchg(lock, 0)\n", "")),
    ("TL401", GRID_STRIDE, GRID_STRIDE.replace(
        "    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):\n        offs",
        "    for start in range(tl.program_id(0) * BLOCK, n, 4096):\n        offs")),
    ("TL101", K_LOOP, K_LOOP.replace("K % 128 == 0", "K % 96 == 0")),
    ("TL306", BRANCHES, BRANCHES.replace("torch.zeros(1,", "torch.empty(1,")),
    ("TL202", LENGTHS, LENGTHS.replace("tl.max(lengths, axis=0)", "tl.exp(lengths - tl.max(lengths, axis=0))")),
    ("TL102", SHIFTED, SHIFTED.replace("tl.program_id(0) * C + SHIFT", "tl.program_id(0) * C")),
    ("TL703", SCALAR, SCALAR.replace("tl.load(info_ptr + step * 2 + 1)", "tl.load(info_ptr + step * 2 + 1 + offs)")),
    ("TL703", RENAMED, RENAMED.replace("final_ptrs = acc_ptr + row * D + d", "final_ptrs = acc_ptr + row * D + (D - 1 - d)")),
    ("TL703", TICKET, TICKET.replace("seen = tl.atomic_add(flag_ptr, 1, sem=\"acq_rel\")", "tl.atomic_add(flag_ptr, 1, sem=\"acq_rel\")")
     .replace(" + seen * 0.0", "")),
    ("TL206", GATHERED, GATHERED.replace("w = tl.exp(-tl.sum((h - t) * (h - t), axis=1))",
                                         "w = tl.exp(-tl.sum((h - t) * (h - t), axis=0))").replace(
        "w[:, None] * (t - h)", "w[None, :] * (t - h)")),
    ("TL101", PRUNED, PRUNED.replace('''                 prune_configs_by={"early_config_prune": _divides(BN="N")})\n''', "")
     .replace('''key=["N"],\n''', '''key=["N"])\n''')),
    ("TL101", PRUNED, PRUNED.replace('''        if not keep:
            raise ValueError("no config tiles the size")
        return keep''', "        return keep or configs")),
    ("TL305", PACKED_KEY, PACKED_KEY.replace("shape_key=(n_rows.bit_length(), n_cols)", "shape_key=n_rows.bit_length()")),
    ("TL401", GATED, GATED.replace("L % 128 or", "L % 4 or")),
    ("TL701", ONE_LINE, ONE_LINE.replace("odd = offs * 2 | 1", "odd = 2 | 1")),
    ("TL703", INTERLEAVED, INTERLEAVED.replace("im = tl.load(ptr + 1,", "im = tl.load(ptr + 2,")),
    ("TL402", STACK, STACK.replace("    m, ksub, dsub = codebooks.shape\n", "    m = codebooks.shape[0]\n")
     .replace("KSUB=ksub, DSUB=dsub", "KSUB=256, DSUB=16")),
    ("TL101", WHERE_CLAMP, WHERE_CLAMP.replace("inside = rows < n_rows", "inside = rows > n_rows")),
    ("TL101", WHERE_CLAMP, WHERE_CLAMP.replace("tl.where(inside, rows, n_rows - 1)",
                                               "tl.where(inside, rows, rows + 1)")),
    ("TL702", WORK_QUEUE, WORK_QUEUE.replace("        tile = tl.atomic_add(counter, 1)", "        tile = tl.atomic_add(counter, 0)")),
    ("TL602", TILE, TILE.replace("        qk = tl.zeros((BLOCK,), dtype=tl.float16)\n", "").replace(
        "    best = tl.zeros", "    qk = tl.zeros((BLOCK,), dtype=tl.float16)\n    best = tl.zeros")),
    ("TL306", SWITCHED, SWITCHED.replace("ACCUMULATE=False", "ACCUMULATE=True")),
    ("TL101", SPLIT_PARTIALS, SPLIT_PARTIALS.replace("rows * n_split * block,", "rows * n_split * width,")),
    ("TL101", PADDED_INPUT, PADDED_INPUT.replace("staged = torch.zeros(n_padded,", "staged = torch.zeros(n,")),
    ("TL101", GROUPED_K, GROUPED_K.replace("K = n_groups * GROUP", "K = a.shape[1]")),
    ("TL206", RUNNING_MAX, RUNNING_MAX.replace("peak = tl.maximum(peak, tl.max(x, axis=1))", "peak = tl.max(x, axis=1)")),
]


@pytest.mark.parametrize("code, correct, without", PAIRS, ids=[p[0] for p in PAIRS])
def test_quiet_for_a_reason_it_can_see_and_fires_without_it(code, correct, without):
    assert correct != without, code
    assert [str(f) for f in lint_source(correct, "correct.py")] == []  # no default rule fires on it
    assert code in {f.code for f in lint_source(without, "without.py", select=[code])}, without


def test_a_stack_of_matrices_on_axis_2_is_quiet_but_its_tokens_still_count():
    """TL402 (set M's M7): the leading dimension of a tensor the launcher shows to have three dimensions or more
    is a count of matrices (codebooks, layers, heads), not a matrix's ``m`` rows; the same leading dimension named
    for the data's rows (a ``(tokens, heads, dim)`` query) is still a row count, and a 2-D table's ``m`` too."""
    def tl402(source):
        return "TL402" in {f.code for f in lint_source(source, "k.py")}

    assert not tl402(STACK)
    tokens = STACK.replace("m, ksub, dsub = codebooks.shape", "num_tokens, ksub, dsub = codebooks.shape").replace(
        "(nq, 1, m)", "(nq, 1, num_tokens)").replace("(nq, m, ksub)", "(nq, num_tokens, ksub)")
    assert tl402(tokens)
    table = STACK.replace("m, ksub, dsub = codebooks.shape", "m, ksub = codebooks.shape").replace(
        "KSUB=ksub, DSUB=dsub", "KSUB=ksub, DSUB=16")
    assert tl402(table)
    by_size = STACK.replace("    m, ksub, dsub = codebooks.shape\n", "    m = codebooks.shape[0]\n").replace(
        "KSUB=ksub, DSUB=dsub", "KSUB=256, DSUB=codebooks.size(2)")
    assert not tl402(by_size)  # a size of dimension 2 read: three dimensions at least


def test_a_where_clamp_is_read_in_either_order_and_through_an_and():
    """Set R's R4 and R5 (a ``tl.where`` on the bound is a clamp): ``tl.where(rows >= n, n - 1, rows)`` (the bound's
    test the other way round), ``n_rows > rows`` and a conjunction with another test are clamps too; a test of the
    wrong side in the swapped order is not."""
    def tl101(source):
        return "TL101" in {f.code for f in lint_source(source, "k.py")}

    swapped = WHERE_CLAMP.replace("tl.where(inside, rows, n_rows - 1)", "tl.where(rows >= n_rows, n_rows - 1, rows)")
    assert not tl101(swapped)
    assert tl101(swapped.replace("rows >= n_rows, n_rows - 1", "rows < n_rows, n_rows - 1"))
    assert not tl101(WHERE_CLAMP.replace("inside = rows < n_rows", "inside = n_rows > rows"))
    assert not tl101(WHERE_CLAMP.replace("safe = tl.where(inside,", "safe = tl.where(inside & (rows >= 0),"))


def fires(code, source):
    return code in {f.code for f in lint_source(source, "k.py")}


def test_an_atomic_in_a_branch_the_launch_compiles_out_is_not_there_and_one_it_may_compile_is():
    """Set S's S7: a ``tl.constexpr`` the launch fixes (a literal, a name bound once to one, a module constant no
    function rebinds, the parameter's default) picks the branch Triton compiles; the atomic in the other one is not
    in the kernel. A flag lint cannot pin down (the caller's, a loop's, **kwargs, a heuristic's) leaves it in."""
    flag = SWITCHED.replace("ACCUMULATE=False", "ACCUMULATE=fused")
    assert not fires("TL306", SWITCHED.replace("ACCUMULATE=False", "ACCUMULATE=0"))
    assert fires("TL306", SWITCHED.replace("ACCUMULATE=False", "ACCUMULATE=1"))
    assert fires("TL306", SWITCHED.replace("x.numel(), BLOCK=256, ACCUMULATE=False", "x.numel(), 256, True"))
    assert not fires("TL306", SWITCHED.replace("x.numel(), BLOCK=256, ACCUMULATE=False", "x.numel(), 256, False"))
    assert fires("TL306", flag.replace("def block_sums(x):", "def block_sums(x, fused):"))
    assert not fires("TL306", flag.replace("    part = torch.empty", "    fused = False\n    part = torch.empty"))
    assert fires("TL306", flag.replace("    block_sums_kernel[", "    for fused in (False, True):\n        block_sums_kernel["))
    module = flag.replace("\n@triton.jit", "\nfused = False\n\n@triton.jit", 1)
    assert not fires("TL306", module)
    assert fires("TL306", module + "\ndef fuse():\n    global fused\n    fused = True\n")
    default = SWITCHED.replace("ACCUMULATE: tl.constexpr)", "ACCUMULATE: tl.constexpr = False)").replace(
        ", ACCUMULATE=False)", ")")
    assert not fires("TL306", default)
    assert fires("TL306", default.replace("= False)", "= True)"))
    assert fires("TL306", default.replace("BLOCK=256)", "BLOCK=256, **opts)").replace("(x):", "(x, **opts):"))
    tuned = default.replace("@triton.jit\ndef", '@triton.heuristics({"ACCUMULATE": lambda a: a["n"] > 4096})\n'
                                                "@triton.jit\ndef")
    assert fires("TL306", tuned)


def test_the_branch_taken_is_read_from_not_and_or_comparisons_and_an_early_return():
    assert fires("TL306", SWITCHED.replace("if ACCUMULATE:", "if not ACCUMULATE:"))  # the atomic is in the else
    assert not fires("TL306", SWITCHED.replace("if ACCUMULATE:", "if ACCUMULATE and n > 0:"))
    assert fires("TL306", SWITCHED.replace("if ACCUMULATE:", "if ACCUMULATE or n > 0:"))  # n decides
    mode = SWITCHED.replace("if ACCUMULATE:", "if ACCUMULATE == 2:")
    assert not fires("TL306", mode.replace("ACCUMULATE=False", "ACCUMULATE=1"))
    assert fires("TL306", mode.replace("ACCUMULATE=False", "ACCUMULATE=2"))
    early = SWITCHED.replace("    if ACCUMULATE:\n        tl.atomic_add(total_ptr, s)\n    else:\n        tl.store(part_ptr + pid, s)\n",
                             "    if not ACCUMULATE:\n        tl.store(part_ptr + pid, s)\n        return\n"
                             "    tl.atomic_add(total_ptr, s)\n")
    assert early != SWITCHED and not fires("TL306", early)
    assert fires("TL306", early.replace("ACCUMULATE=False", "ACCUMULATE=True"))


def test_a_buffer_is_whole_tiles_when_its_size_has_the_launched_block_as_a_factor():
    """Set S's S3 to S6: the size's factors, through the launcher's names (and ints: 64 is 64), hold the very value
    the launch passes for the block; for a tile of rows (``lanes[:, None] * D``) the row's length apart. A sum, a
    division, another factor, a square tile whose rows and columns lint cannot tell apart: still reported."""
    def tl101(old, new):
        assert old in SPLIT_PARTIALS, old
        return fires("TL101", SPLIT_PARTIALS.replace(old, new))

    alloc = "torch.empty(rows * n_split * block,"
    assert not tl101(alloc, "torch.empty((rows, n_split, block),")
    assert not tl101(alloc, "torch.empty(rows, n_split, block,")
    assert not tl101("    part = " + alloc, "    count = rows * n_split * block\n    part = torch.empty(count,")
    assert tl101("BLOCK=block)", "BLOCK=width)")
    assert tl101(alloc, "torch.empty(rows * n_split * block + 1,")
    assert tl101(alloc, "torch.empty(rows * n_split * block // 2,")
    assert tl101("    part_of(part)\n", "    part_of(part)\n    block = block * 2\n")  # read where it is allocated
    given = SPLIT_PARTIALS.replace("width):", "width, block):").replace("    block = triton.next_power_of_2(width)\n", "")
    assert not fires("TL101", given)  # the caller's block, the same at the allocation and the launch
    assert fires("TL101", given.replace("    part_of(part)\n", "    part_of(part)\n    block = 2 * block\n"))
    literal = SPLIT_PARTIALS.replace("block = triton.next_power_of_2(width)", "block = 64")
    assert not fires("TL101", literal.replace(alloc, "torch.empty(rows * n_split * 64,"))
    assert fires("TL101", literal.replace(alloc, "torch.empty(rows * n_split * 48,"))
    rows = SPLIT_PARTIALS.replace("tl.load(part_ptr + (row * n_split + s) * BLOCK + offs)",
                                  "tl.sum(tl.load(part_ptr + ((row * n_split + s) * BLOCK + offs)[:, None] * D"
                                  " + tl.arange(0, D)[None, :]), axis=1)").replace(
        "n_split, BLOCK: tl.constexpr)", "n_split, BLOCK: tl.constexpr, D: tl.constexpr)").replace(
        "BLOCK=block)", "BLOCK=block, D=16)")
    assert rows != SPLIT_PARTIALS and fires("TL101", rows)  # n * block elements hold n * block / 16 rows
    assert not fires("TL101", rows.replace(alloc, "torch.empty(rows * n_split * block * 16,"))
    square = PADDED_INPUT.replace("offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
                                  "offs = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK))[:, None] * BLOCK"
                                  " + tl.arange(0, BLOCK)[None, :]").replace("torch.zeros(n_padded,", "torch.zeros(n * 512,")
    assert fires("TL101", square)  # rows and columns walk by the same block: which one the 512 is, lint cannot tell


def test_a_k_loop_walks_whole_groups_only_when_the_launcher_shows_k_is_a_multiple():
    """Set S's S8 and S9 stay: their launcher checks ``scales.shape == (E, N, K // 32)``, which a K up to 31 wider
    passes. ``K`` built as whole groups at the launch, or asserted ``K % GROUP == 0``, is a multiple."""
    measured = GROUPED_K.replace("    K = n_groups * GROUP\n", "    K = a.shape[1]\n")
    assert not fires("TL101", measured.replace("a.shape[1]\n", "a.shape[1]\n    assert K % GROUP == 0\n"))
    assert fires("TL101", measured.replace("a.shape[1]\n", "a.shape[1]\n    assert n_groups == K // GROUP\n"))
    assert fires("TL101", GROUPED_K.replace("K = n_groups * GROUP", "K = n_groups * 48"))
    assert not fires("TL101", GROUPED_K.replace("K = n_groups * GROUP", "K = n_groups * 64"))
    counted = GROUPED_K.replace("for k0 in range(0, K, BLOCK_K):", "for i in range(0, tl.cdiv(K, BLOCK_K)):\n"
                                                                    "        k0 = i * BLOCK_K")
    assert not fires("TL101", counted)
    assert fires("TL101", counted.replace("K = n_groups * GROUP", "K = a.shape[1]"))


def test_a_reduction_carried_over_the_whole_loop_is_complete_and_one_block_of_it_is_not():
    """Set S's S1 and S2: a running max (or sum) over a loop every program runs whole is the program's own. The
    sum taken inside the loop, a loop split among programs, or summed lanes that walk with the program are
    partials."""
    step = "        peak = tl.maximum(peak, tl.max(x, axis=1))\n"
    assert not fires("TL206", RUNNING_MAX.replace(step, "        peak += tl.max(x, axis=1)\n"))
    assert not fires("TL206", RUNNING_MAX.replace(step, "        peak = peak + tl.sum(x, axis=1)\n"))
    assert not fires("TL206", RUNNING_MAX.replace("tl.log(tl.sum(peak))", "tl.log(tl.sum(peak, axis=0))"))
    inside = RUNNING_MAX.replace(step + "    tl.atomic_add(out_ptr", step + "        tl.atomic_add(out_ptr")
    assert inside != RUNNING_MAX and fires("TL206", inside)
    assert fires("TL206", RUNNING_MAX.replace("for start in range(0, N, BLOCK):",
                                              "for start in range(tl.program_id(1) * 4 * BLOCK, N, BLOCK):"))
    assert fires("TL206", RUNNING_MAX.replace("toks[:, None] * stride_tok", "(tl.program_id(1) * R + toks)[:, None]"
                                                                            " * stride_tok"))
