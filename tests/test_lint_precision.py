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
