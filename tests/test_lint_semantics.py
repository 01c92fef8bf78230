"""Semantics, not names (issue 39 item 1): lint resolves what it can read statically and cheaply, and each
refinement is a pair, as in tests/test_lint_precision.py: a correct kernel that is correct for a reason
visible in the source (quiet), and the same kernel with that reason taken away (the rule fires).

- aliases and one-level wrappers of ``tl.*`` (``from triton.language import program_id``, ``tle = tl``, a
  function that returns ``tl.program_id(axis)``, a wrapper module beside the file: ``tle.program_id(0)``);
- literal autotune configs: comprehensions over literals, a function that returns the list, the values a
  tuned block takes (fixed to 1; all dividing a literal extent; asserted as a divisor), the expression a
  config gives it (``Cfg.BLOCK_K``, asserted), the single config (TL302);
- loops that walk whole tiles after (or before) a peeled tail;
- a branch that ends in ``return``;
- a tuned block used as a loop step rather than a grid axis (TL303); an idempotent in-place update under
  autotune (a ReLU stored back: TL302);
- ``tl.where`` clearing padding lanes before a reduction; a buffer written in full by an earlier launch;
- an index clamped into the buffer (``tl.minimum(offs, n - 1)``, ``tl.clamp``, ``% n``) is in bounds (TL101);
- a sum that covers the program's whole row (one program per row) is complete: a non-linear function of it,
  added over rows, is right (TL206).
"""

from pathlib import Path

import pytest

from harness.lint import lint_file, lint_paths, lint_source
from harness.lint.rules.tl204_padding_division import BAD as TL204_BAD

HEAD = "import torch\nimport triton\nimport triton.language as tl\n"

# ---------------------------------------------------------------- aliases and wrappers

STORE_PER_PROGRAM = '''
@triton.jit
def partial_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = PID(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(part_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))

def partial_sums(x, part):
    partial_kernel[(triton.cdiv(x.numel(), 1024),)](x, part, x.numel(), BLOCK=1024)
'''

SAME_FILE_WRAPPER = HEAD + '''
@triton.jit
def program_id(axis):
    """The program id along ``axis``."""
    return tl.program_id(axis)
''' + STORE_PER_PROGRAM.replace("PID(0)", "program_id(0)")

FROM_IMPORT = HEAD + "from triton.language import program_id as pid_of\n" + \
    STORE_PER_PROGRAM.replace("PID(0)", "pid_of(0)")

MODULE_ALIAS = HEAD + "tle = tl\n" + STORE_PER_PROGRAM.replace("PID(0)", "tle.program_id(0)")

WITHOUT_PID = ("    tl.store(part_ptr + pid, tl.sum(", "    tl.store(part_ptr, tl.sum(")

# ---------------------------------------------------------------- autotune configs

TUNED_DIVIDES = HEAD + '''
@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in [64, 128, 256] for w in (4, 8)],
                 key=["n"])
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs))

def scale(x, y):
    scale_kernel[lambda meta: (triton.cdiv(1024, meta["BLOCK"]),)](x, y, 1024)
'''

ROWS_OF_ONE = HEAD + '''
@triton.autotune(configs=[triton.Config({"BLOCK_M": 1, "BLOCK_N": n}) for n in [64, 128]], key=["M", "N"])
@triton.jit
def rows_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        ptrs = rows[:, None] * N + cols[None, :]
        tl.store(y_ptr + ptrs, tl.load(x_ptr + ptrs, mask=cols[None, :] < N), mask=cols[None, :] < N)

def copy_rows(x, y):
    M, N = x.shape
    rows_kernel[lambda meta: (triton.cdiv(M, meta["BLOCK_M"]),)](x, y, M, N)
'''

ONE_CONFIG_FUNCTION = HEAD + '''
def matmul_get_configs():
    return [triton.Config({"BLOCK": 1024}, num_warps=4)]

@triton.autotune(configs=matmul_get_configs(), key=["n"])
@triton.jit
def epilogue_kernel(c_ptr, bias_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    c = tl.load(c_ptr + offs, mask=mask)
    tl.store(c_ptr + offs, c + tl.load(bias_ptr + offs, mask=mask), mask=mask)
'''

ONE_CONFIG_LITERAL = HEAD + '''
@triton.autotune(configs=[triton.Config({"BLOCK": 1024})], key=["n"])
@triton.jit
def axpy_kernel(x_ptr, y_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, y + a * tl.load(x_ptr + offs, mask=mask), mask=mask)
'''

RELU_IN_PLACE = HEAD + '''
@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"])
@triton.jit
def relu_inplace_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, tl.maximum(x, 0.0), mask=mask)
'''

TUNED_LOOP_STEP = HEAD + '''
@triton.autotune(configs=[triton.Config({"BLOCK_K": 64}), triton.Config({"BLOCK_K": 128})], key=["K"])
@triton.jit
def rowsum_kernel(x_ptr, out_ptr, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        cols = k + tl.arange(0, BLOCK_K)
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * K + cols[None, :], mask=cols[None, :] < K, other=0.0), axis=1)
    tl.store(out_ptr + rows, acc)

def rowsum(x, out):
    M, K = x.shape
    assert M % 32 == 0
    rowsum_kernel[(M // 32,)](x, out, K, BLOCK_M=32)
'''

TUNED_AND_ASSERTED = HEAD + '''
configs = [triton.Config({"BLOCK_M": bm}, num_stages=s) for bm in [64] for s in [2, 3]]

@triton.autotune(configs, key=["T"])
@triton.jit
def rowmax_kernel(x_ptr, out_ptr, T, D: tl.constexpr, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, D)
    tl.store(out_ptr + rows, tl.max(tl.load(x_ptr + rows[:, None] * D + cols[None, :]), axis=1))

def rowmax(x, out):
    T, D = x.shape
    assert T % 64 == 0, "rows must be a multiple of 64"
    rowmax_kernel[lambda meta: (triton.cdiv(T, 64),)](x, out, T, D)
'''

CONFIG_EXPRESSION = HEAD + '''
class Cfg:
    BLOCK_K: int = 32

def validate(K):
    assert K % Cfg.BLOCK_K == 0, "K must be a multiple of the block"

@triton.autotune(configs=[triton.Config({"BLOCK_K": Cfg.BLOCK_K}, num_warps=4)], key=["K"])
@triton.jit
def matvec_kernel(a_ptr, v_ptr, out_ptr, K, stride, BLOCK_K: tl.constexpr):
    ks = tl.arange(0, BLOCK_K)
    a_ptrs, v_ptrs = a_ptr + tl.program_id(0) * stride + ks, v_ptr + ks
    total = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        total += tl.load(a_ptrs) * tl.load(v_ptrs)
        a_ptrs += BLOCK_K
        v_ptrs += BLOCK_K
    tl.store(out_ptr + tl.program_id(0), tl.sum(total))

def matvec(a, v, out):
    validate(a.shape[1])
    matvec_kernel[(a.shape[0],)](a, v, out, a.shape[1], a.stride(0))
'''

# ---------------------------------------------------------------- loops, branches, padding, launches

PEELED_HEAD = HEAD + '''
@triton.jit
def rowsum_kernel(x_ptr, out_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * stride
    cols = tl.arange(0, BLOCK)
    tail = N % BLOCK
    acc = tl.sum(tl.load(base + cols, mask=cols < tail, other=0.0))
    for start in range(tail, N, BLOCK):
        acc += tl.sum(tl.load(base + start + cols))
    tl.store(out_ptr + row, acc)
'''

PEELED_TAIL = HEAD + '''
@triton.jit
def rowsum_kernel(x_ptr, out_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * stride
    cols = tl.arange(0, BLOCK)
    whole = N // BLOCK * BLOCK
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, whole, BLOCK):
        acc += tl.load(base + start + cols)
    acc += tl.load(base + whole + cols, mask=whole + cols < N, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc))
'''

RETURNING_BRANCH = HEAD + '''
@triton.jit
def rotate_kernel(x_ptr, out_ptr, flag, D: tl.constexpr):
    row = tl.program_id(0)
    d = tl.arange(0, D)
    if flag:
        tl.store(out_ptr + row * D + d, tl.load(x_ptr + row * D + d))
        return
    partner = tl.load(out_ptr + row * D + (d + D // 2) % D)
    tl.store(x_ptr + row * D + d, partner)
'''

WHERE_BEFORE_SUM = TL204_BAD.replace("    ratio = p / q\n", "    ratio = p / q\n    ratio = tl.where(mask, ratio, 0.0)\n")

FILLED_BY_EARLIER_LAUNCH = HEAD + '''
@triton.jit
def fill_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)

@triton.jit
def hist_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    bins = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(out_ptr + bins, 1.0, mask=offs < n)

def histogram(x, bins):
    out = torch.empty(bins, device=x.device)
    fill_kernel[(triton.cdiv(bins, 256),)](out, bins, BLOCK=256)
    hist_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out
'''

ROWS_MASKED_NORM = HEAD + '''
@triton.jit
def rms_center_kernel(x_ptr, y_ptr, n_rows, WIDTH: tl.constexpr, ROWS: tl.constexpr):
    first = tl.program_id(0) * ROWS
    r = first + tl.arange(0, ROWS)
    w = tl.arange(0, WIDTH)
    live = r < n_rows
    tile = tl.load(x_ptr + r[:, None] * WIDTH + w[None, :], mask=live[:, None], other=0.0)
    avg = tl.sum(tile, axis=1) / WIDTH
    dev = tile - avg[:, None]
    spread = tl.sum(dev * dev, axis=1) / WIDTH
    tl.store(y_ptr + r[:, None] * WIDTH + w[None, :], dev / tl.sqrt(spread[:, None] + 1e-6), mask=live[:, None])

def center_rows(x, y):
    n_rows, width = x.shape
    rms_center_kernel[(triton.cdiv(n_rows, 16),)](x, y, n_rows, WIDTH=width, ROWS=16)
'''

COORDINATE_RNG = HEAD + '''
@triton.jit
def shared_noise_kernel(x_ptr, out_ptr, total, inner, outer, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = offs < total
    group = offs // outer
    noise_at = group * inner + offs % inner
    u = tl.rand(seed, noise_at)
    x = tl.load(x_ptr + offs, mask=keep, other=0.0)
    tl.store(out_ptr + offs, tl.where(u > p, x / (1 - p), 0.0), mask=keep)

class SharedNoise(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, p, seed):
        heads, length, width = x.shape
        inner = length * width
        outer = heads * length * width
        out = torch.empty_like(x)
        shared_noise_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), inner, outer, p, seed, BLOCK=1024)
        ctx.sizes = (x.numel(), inner, outer)
        return out

    @staticmethod
    def backward(ctx, g):
        total, inner, outer = ctx.sizes
        dx = torch.empty_like(g)
        shared_noise_kernel[(triton.cdiv(total, 1024),)](g, dx, total, inner, outer, 0.5, 0, BLOCK=1024)
        return dx, None, None
'''

SPLITS_OF_A_WIDTH = HEAD + '''
@triton.jit
def table_sum_kernel(t_ptr, out_ptr, n_cols, per_split, BLOCK: tl.constexpr):
    seq = tl.program_id(0)
    split = tl.program_id(1)
    cols = split * per_split + tl.arange(0, BLOCK)
    ok = (cols < n_cols) & (cols < (split + 1) * per_split)
    tl.atomic_add(out_ptr + seq, tl.sum(tl.load(t_ptr + seq * n_cols + cols, mask=ok, other=0)))

def table_sums(table, out):
    n_seqs, n_cols = table.shape
    splits = min(n_cols, 8)
    per_split = triton.cdiv(n_cols, splits)
    table_sum_kernel[(n_seqs, splits)](table, out, n_cols, per_split, BLOCK=triton.next_power_of_2(per_split))
'''

# the capped size reassigned to a power of two (at least 1) before the division: never 0 there
SPLITS_RESHAPED = HEAD + '''
import math

@triton.jit
def chunk_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))

def chunk_sum(x, out):
    numel = x.numel()
    block = min(4096, numel)
    block = int(2 ** math.floor(math.log2(block)))
    chunk_sum_kernel[(triton.cdiv(numel, block),)](x, out, numel, BLOCK=block)
'''

# blocks counted by a floor: every tile the loop reads is whole (the rest of K is left undone, not read past)
FLOOR_COUNTED = HEAD + '''
@triton.jit
def rowsum_kernel(x_ptr, out_ptr, K, stride, BK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BK,), dtype=tl.float32)
    for k in range(0, K // BK):
        acc += tl.load(x_ptr + row * stride + k * BK + tl.arange(0, BK))
    tl.store(out_ptr + row, tl.sum(acc))

def rowsums(x, out):
    rowsum_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BK=128)
'''

# a max of per-row counts taken only as a loop's trip count: a padded lane's 0 can lift a max only from below 0,
# and a range to 0 or below runs no trip either way
TRIP_COUNT = HEAD + '''
@triton.jit
def longest_kernel(cnt_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    c = tl.load(cnt_ptr + offs, mask=offs < n)
    most = tl.max(c, axis=0)
    acc = 0.0
    for i in tl.range(0, most):
        acc += tl.load(x_ptr + i)
    tl.store(out_ptr, acc)
'''

# a softmax over values scaled by a width that exp makes of a log-width: the summed exp subtracts the max; the
# inner exp is not summed
WIDTH_SCALED_SOFTMAX = HEAD + '''
@triton.jit
def scaled_softmax_kernel(x_ptr, lw_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))
    z = x / tl.exp(tl.load(lw_ptr))
    num = tl.exp(z - tl.max(z, axis=0))
    tl.store(out_ptr + offs, num / tl.sum(num, axis=0), mask=offs < n)
'''

# per-row log-likelihoods over a row's whole width, each row's own sum, less a per-row value lifted at its use
ROW_CENTRED_LSE = HEAD + '''
@triton.jit
def row_lse_kernel(v_ptr, mu_ptr, s_ptr, M, K: tl.constexpr, BM: tl.constexpr):
    m = tl.program_id(0) * BM + tl.arange(0, BM)
    j = tl.arange(0, K)
    mu = tl.load(mu_ptr + m, mask=m < M, other=0.0)
    v = tl.load(v_ptr + m[:, None] * K + j[None, :], mask=m[:, None] < M, other=0.0)
    tl.atomic_add(s_ptr + m, tl.log(tl.sum(tl.exp(v - mu[:, None]), axis=1)), mask=m < M)
'''

CLAMPED_GATHER = HEAD + '''
@triton.jit
def scale_rows_kernel(x_ptr, div_ptr, out_ptr, n_rows, D: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = rows < n_rows
    cols = tl.arange(0, D)
    div = tl.load(div_ptr + BOUNDED)
    x = tl.load(x_ptr + rows[:, None] * D + cols[None, :], mask=live[:, None], other=0.0)
    tl.store(out_ptr + rows[:, None] * D + cols[None, :], x / div[:, None], mask=live[:, None])

def scale_rows(x, div, out):
    n_rows, d = x.shape
    scale_rows_kernel[(triton.cdiv(n_rows, 64),)](x, div, out, n_rows, D=d, BLOCK=64)
'''

ROW_STATISTIC = HEAD + '''
@triton.jit
def rms_norm_bwd_kernel(dy_ptr, x_ptr, dx_ptr, dw_ptr, stride, D, eps, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    row = tl.program_id(0)
    mask = cols < D
    dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0)
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    rms_inv = tl.rsqrt(tl.sum(x * x, 0) / D + eps)
    x_hat = x * rms_inv
    dx = rms_inv * (dy - x_hat * (tl.sum(dy * x_hat, 0) / D))
    tl.store(dx_ptr + row * stride + cols, dx, mask=mask)
    tl.atomic_add(dw_ptr + cols, dy * x_hat, mask=mask)

def rms_norm_backward(dy, x, dx, dw, eps):
    n_rows, d = x.shape
    dw.zero_()
    rms_norm_bwd_kernel[(n_rows,)](dy, x, dx, dw, x.stride(0), d, eps, BLOCK=triton.next_power_of_2(d))
'''

# the same backward with the row cut into blocks over a second grid axis: each program's sum is a slice's
ROW_SPLIT = ("    cols = tl.arange(0, BLOCK)\n", "    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)\n")

# set X's X1 (cosmos-rl 0.4.7's all-to-all, docs/lint-first-run.md): a program's share walked in whole steps, then a
# tail; for a program whose share starts past the end, (end - off) // STEP is negative, but truncated toward zero
# off + whole stays between off and end, so the range runs no trip and neither does the tail (run under the
# interpreter with two programs past the end: the copy right, nothing outside dst written)
WHOLE_STEPS = HEAD + '''
@triton.jit
def copy_kernel(src, dst, n, SHARE: tl.constexpr, STEP: tl.constexpr):
    off = tl.program_id(0) * SHARE
    end = tl.minimum(off + SHARE, n)
    whole = (end - off) // STEP * STEP
    for i in tl.range(off, off + whole, STEP):
        o = i + tl.arange(0, STEP)
        tl.store(dst + o, tl.load(src + o))
    off += whole
    while off < end:
        o = off + tl.arange(0, STEP)
        tl.store(dst + o, tl.load(src + o, mask=o < end), mask=o < end)
        off += STEP

def copy(src, dst):
    assert src.is_contiguous() and dst.is_contiguous()
    copy_kernel[(triton.cdiv(src.numel(), 4096) + 2,)](src, dst, src.numel(), SHARE=4096, STEP=256)
'''

PAIRS = [  # (id, rule, correct kernel, (old, new): the edit that takes the reason away)
    ("wrapper-same-file", "TL701", SAME_FILE_WRAPPER, WITHOUT_PID),
    ("from-triton-language-import", "TL701", FROM_IMPORT, WITHOUT_PID),
    ("module-alias", "TL701", MODULE_ALIAS, WITHOUT_PID),
    ("tuned-blocks-divide-extent", "TL101", TUNED_DIVIDES, ("[64, 128, 256]", "[64, 96, 256]")),
    ("tuned-block-fixed-to-1", "TL101", ROWS_OF_ONE, ('"BLOCK_M": 1, "BLOCK_N": n}) for n in [64, 128]',
                                                      '"BLOCK_M": m, "BLOCK_N": n}) for m in [1, 2] for n in [64, 128]')),
    ("tuned-block-asserted-divisor", "TL101", TUNED_AND_ASSERTED, ('    assert T % 64 == 0, "rows must be a multiple of 64"\n', "")),
    ("config-expression-asserted", "TL101", CONFIG_EXPRESSION, ('    assert K % Cfg.BLOCK_K == 0, "K must be a multiple of the block"\n', "    pass\n")),
    ("single-config-function", "TL302", ONE_CONFIG_FUNCTION, (
        'return [triton.Config({"BLOCK": 1024}, num_warps=4)]',
        'return [triton.Config({"BLOCK": b}, num_warps=4) for b in (512, 1024)]')),
    ("single-config-literal", "TL302", ONE_CONFIG_LITERAL, (
        '[triton.Config({"BLOCK": 1024})]', '[triton.Config({"BLOCK": 1024}), triton.Config({"BLOCK": 256})]')),
    ("idempotent-update-in-place", "TL302", RELU_IN_PLACE, ("tl.maximum(x, 0.0)", "tl.maximum(x, 0.0) + 1.0")),
    ("tuned-block-only-a-loop-step", "TL303", TUNED_LOOP_STEP, (
        '[triton.Config({"BLOCK_K": 64}), triton.Config({"BLOCK_K": 128})]',
        '[triton.Config({"BLOCK_K": 64, "BLOCK_M": 32}), triton.Config({"BLOCK_K": 128, "BLOCK_M": 64})]')),
    ("whole-tiles-after-peeled-head", "TL101", PEELED_HEAD, ("range(tail, N, BLOCK)", "range(0, N, BLOCK)")),
    ("whole-tiles-before-peeled-tail", "TL101", PEELED_TAIL, ("range(0, whole, BLOCK)", "range(0, N, BLOCK)")),
    ("branch-ends-in-return", "TL703", RETURNING_BRANCH, ("        return\n", "")),
    ("where-clears-padding-before-sum", "TL204", WHERE_BEFORE_SUM, ("    ratio = tl.where(mask, ratio, 0.0)\n", "")),
    ("rows-masked-sum-along-columns", "TL203", ROWS_MASKED_NORM, (
        "mask=live[:, None], other=0.0)", "mask=live[:, None] & (w[None, :] < WIDTH), other=0.0)")),
    ("rng-coordinate-scaled-down", "TL502", COORDINATE_RNG, ("        outer = heads * length * width\n",
                                                             "        outer = heads * width\n")),
    ("rng-coordinate-scaled-down-backward", "TL502", COORDINATE_RNG, (
        "        ctx.sizes = (x.numel(), inner, outer)", "        ctx.sizes = (x.numel(), outer, inner)")),
    ("min-of-a-width-not-the-batch", "TL404", SPLITS_OF_A_WIDTH, ("splits = min(n_cols, 8)", "splits = min(n_seqs, 8)")),
    ("capped-size-reassigned-before-division", "TL404", SPLITS_RESHAPED, (
        "    block = int(2 ** math.floor(math.log2(block)))\n", "")),
    ("max-only-a-trip-count", "TL201", TRIP_COUNT, ("    tl.store(out_ptr, acc)\n",
                                                    "    tl.store(out_ptr, acc + most)\n")),
    ("exp-inside-a-max-subtracted-exp", "TL603", WIDTH_SCALED_SOFTMAX, ("tl.exp(z - tl.max(z, axis=0))", "tl.exp(z)")),
    ("per-row-value-lifted-at-its-use", "TL206", ROW_CENTRED_LSE, (
        "tl.atomic_add(s_ptr + m, tl.log(tl.sum(tl.exp(v - mu[:, None]), axis=1)), mask=m < M)",
        "tl.atomic_add(s_ptr + j, tl.log(tl.sum(tl.exp(v - mu[:, None]), axis=0)))")),
    ("blocks-counted-by-a-floor", "TL101", FLOOR_COUNTED, ("range(0, K // BK)", "range(0, tl.cdiv(K, BK))")),
    ("blocks-counted-by-a-floor-one-argument", "TL101", FLOOR_COUNTED.replace("range(0, K // BK)", "range(K // BK)"),
     ("range(K // BK)", "range(tl.cdiv(K, BK))")),
    ("index-clamped-by-minimum", "TL101", CLAMPED_GATHER.replace("BOUNDED", "tl.minimum(rows, n_rows - 1)"),
     ("tl.minimum(rows, n_rows - 1)", "rows")),
    ("index-clamped-by-minimum-bound-first", "TL101",
     CLAMPED_GATHER.replace("BOUNDED", "tl.minimum(n_rows - 1, rows)"), ("tl.minimum(n_rows - 1, rows)", "rows")),
    ("index-clamped-by-clamp", "TL101", CLAMPED_GATHER.replace("BOUNDED", "tl.clamp(rows, 0, n_rows - 1)"),
     ("tl.clamp(rows, 0, n_rows - 1)", "tl.maximum(rows, 0)")),
    ("index-clamped-through-a-name", "TL101", CLAMPED_GATHER.replace(
        "    div = tl.load(div_ptr + BOUNDED)", "    last = tl.maximum(tl.minimum(rows, n_rows - 1), 0)\n"
        "    div = tl.load(div_ptr + last)"), ("tl.maximum(tl.minimum(rows, n_rows - 1), 0)", "tl.maximum(rows, 0)")),
    ("index-clamped-by-a-lane-bound", "TL101", CLAMPED_GATHER.replace("BOUNDED", "tl.minimum(rows, n_rows - 1)"),
     ("tl.minimum(rows, n_rows - 1)", "tl.minimum(rows, rows + 1)")),
    ("index-wrapped-by-modulo", "TL101", CLAMPED_GATHER.replace("BOUNDED", "rows % n_rows"), ("rows % n_rows", "rows")),
    ("row-statistic-complete-in-program", "TL206", ROW_STATISTIC, ROW_SPLIT),
    ("whole-steps-toward-the-end", "TL102", WHOLE_STEPS, ("    off += whole\n", "    off += (end - off) // STEP\n")),
    ("filled-by-earlier-launch", "TL306", FILLED_BY_EARLIER_LAUNCH, (
        "    fill_kernel[(triton.cdiv(bins, 256),)](out, bins, BLOCK=256)\n", "")),
]


@pytest.mark.parametrize("code, correct, edit", [p[1:] for p in PAIRS], ids=[p[0] for p in PAIRS])
def test_quiet_for_a_reason_it_can_see_and_fires_without_it(code, correct, edit):
    without = correct.replace(*edit)
    assert without != correct, edit
    assert [str(f) for f in lint_source(correct, "correct.py", select=["ALL"]) if f.code == code] == []
    assert [str(f) for f in lint_source(correct, "correct.py")] == []  # no default rule fires on it
    assert code in {f.code for f in lint_source(without, "without.py", select=[code])}, without


# ---------------------------------------------------------------- a wrapper module beside the file

TLE = HEAD + '''
@triton.jit
def program_id(axis):
    return tl.program_id(axis).to(tl.int64)
'''

ROW_KERNEL = HEAD + '''{imp}

@triton.jit
def row_kernel(x_ptr, y_ptr, stride, n, BLOCK: tl.constexpr):
    row = {pid}(0)
    cols = tl.arange(0, BLOCK)
    tl.store(y_ptr + row * stride + cols, tl.load(x_ptr + row * stride + cols, mask=cols < n), mask=cols < n)

def copy_rows(x, y):
    row_kernel[(x.shape[0],)](x, y, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
'''


def package(tmp_path: Path, tle: str, imp: str, pid: str) -> Path:
    (tmp_path / "pkg" / "utils").mkdir(parents=True)
    for folder in (tmp_path / "pkg", tmp_path / "pkg" / "utils"):
        (folder / "__init__.py").write_text("")
    (tmp_path / "pkg" / "utils" / "tle.py").write_text(tle)
    (tmp_path / "pkg" / "ops.py").write_text(ROW_KERNEL.format(imp=imp, pid=pid))
    return tmp_path / "pkg" / "ops.py"


@pytest.mark.parametrize("imp, pid", [
    ("from pkg.utils import tle", "tle.program_id"),
    ("from .utils import tle", "tle.program_id"),
    ("from pkg.utils.tle import program_id as pid64", "pid64"),
    ("import pkg.utils.tle as tle", "tle.program_id"),
], ids=["absolute", "relative", "function", "import-as"])
def test_a_wrapper_module_beside_the_file_is_read(tmp_path, imp, pid):
    """``tle.program_id(0)`` from the package's own module, which returns ``tl.program_id(axis).to(tl.int64)``:
    a program id (TL701 sees the store depends on it) already 64-bit (TL501 quiet); the same wrapper without
    the cast fires TL501, as ``tl.program_id`` would."""
    ops = package(tmp_path, TLE, imp, pid)
    assert [str(f) for f in lint_file(ops, select=["ALL"])] == []
    tle = tmp_path / "pkg" / "utils" / "tle.py"
    tle.write_text(TLE.replace(".to(tl.int64)", "") + "# a different size: read again\n")
    assert {f.code for f in lint_file(ops, select=["TL501"])} == {"TL501"}


def test_without_the_wrapper_module_the_name_is_no_program_id(tmp_path):
    """The module lint cannot find says nothing: ``tle.program_id`` is then an unknown call (no TL501)."""
    ops = package(tmp_path, TLE.replace(".to(tl.int64)", ""), "from pkg.utils import tle", "tle.program_id")
    (tmp_path / "pkg" / "utils" / "tle.py").unlink()
    assert [f.code for f in lint_file(ops, select=["TL501"])] == []


# ---------------------------------------------------------------- launches through torch.library

TRACEABLE_LAUNCH = HEAD + '''{imp}

@triton.jit
def shift_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=keep) + 1.0, mask=keep)

def shift(x, out):
    n = out.numel()
    {wrapper}(shift_kernel)[(triton.cdiv(n, 512),)](x, out, n, BLOCK=512)
'''


@pytest.mark.parametrize("imp, wrapper", [
    ("from torch.library import wrap_triton", "wrap_triton"),
    ("", "torch.library.wrap_triton"),
    ("from torch.library import capture_triton", "capture_triton"),
], ids=["wrap_triton", "torch.library.wrap_triton", "capture_triton"])
def test_a_kernel_launched_through_wrap_triton_is_a_launch(imp, wrapper):
    """``wrap_triton(kernel)[grid](...)`` launches the kernel with that grid: the rules that read the launch see
    it (TL401 on a grid that floors the division), and the grid that rounds up stays quiet."""
    code = TRACEABLE_LAUNCH.format(imp=imp, wrapper=wrapper)
    assert [str(f) for f in lint_source(code, "correct.py", select=["ALL"]) if f.code == "TL401"] == []
    floored = code.replace("(triton.cdiv(n, 512),)", "(n // 512,)")
    assert floored != code
    launch_line = next(i for i, line in enumerate(floored.splitlines(), 1) if "(n // 512,)" in line)
    assert [f.line for f in lint_source(floored, "floored.py", select=["TL401"])] == [launch_line]
    other = floored.replace(f"{wrapper}(shift_kernel)", f"{wrapper}(some_other_kernel)")
    assert [f.code for f in lint_source(other, "other.py", select=["TL401"])] == []  # not this kernel's launch


# ---------------------------------------------------------------- a kernel launched from another file

KERNELS = HEAD + '''
@triton.jit
def add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)
'''

OPS = '''{imp}


def add(x, out):
    n = out.numel()
    {kernel}[GRID](x, out, n, BLOCK=512)
'''


def two_files(tmp_path: Path, kernels: str, imp: str, kernel: str, grid: str) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "kernels.py").write_text(kernels)
    (tmp_path / "pkg" / "ops.py").write_text(OPS.format(imp=imp, kernel=kernel).replace("GRID", grid))
    return tmp_path / "pkg"


IMPORTED = [
    ("from .kernels import add_kernel", "add_kernel"),
    ("from pkg.kernels import add_kernel as k", "k"),
    ("import pkg.kernels as K", "K.add_kernel"),
    ("from pkg import kernels", "kernels.add_kernel"),
    ("from . import kernels\nfrom torch.library import wrap_triton", "wrap_triton(kernels.add_kernel)"),
]


@pytest.mark.parametrize("imp, kernel", IMPORTED, ids=["relative", "from-as", "import-as", "from-package", "wrap_triton"])
def test_a_kernel_imported_from_another_file_is_paired_with_its_launch(tmp_path, imp, kernel):
    """``add_kernel`` (masked) is defined in pkg/kernels.py and launched in pkg/ops.py: linted together, the grid
    that floors ``n // 512`` fires TL401 in ops.py, at the launch (a bug: that launcher launches it); the grid
    that rounds up is quiet; ops.py linted alone, or a launch of a name the module does not define, is not a
    launch of it."""
    pkg = two_files(tmp_path, KERNELS, imp, kernel, "(n // 512,)")
    ops = pkg / "ops.py"
    launch_line = next(i for i, line in enumerate(ops.read_text().splitlines(), 1) if "(n // 512,)" in line)
    found = lint_paths([str(pkg)], select=["TL401"]).findings
    assert [(Path(f.path).name, f.line, f.severity) for f in found] == [("ops.py", launch_line, "bug")]
    assert "which launches add_kernel" in found[0].reason
    assert lint_paths([str(ops)], select=["TL401"]).findings == []  # the kernel is not in what was linted
    ops.write_text(ops.read_text().replace("(n // 512,)", "(triton.cdiv(n, 512),)"))
    assert [str(f) for f in lint_paths([str(pkg)]).findings] == []  # no default rule fires
    ops.write_text(ops.read_text().replace(f"{kernel}[", "other_kernel[").replace("cdiv(n, 512)", "n // 512"))
    assert lint_paths([str(pkg)], select=["TL401"]).findings == []  # not a kernel of kernels.py


def test_a_kernel_rule_that_reads_the_launch_sees_one_in_another_file(tmp_path):
    """The unmasked kernel of pkg/kernels.py launched from pkg/ops.py on a grid that rounds up: its last block is
    partial, TL101 fires in kernels.py (a bug, the launch in ops.py named); kernels.py alone has no launch: the
    strong evidence is gone and TL101 is quiet."""
    unmasked = KERNELS.replace(", mask=offs < n) + 1.0, mask=offs < n)", ") + 1.0)")
    assert unmasked != KERNELS
    pkg = two_files(tmp_path, unmasked, "from .kernels import add_kernel\nimport triton", "add_kernel",
                    "(triton.cdiv(n, 512),)")
    found = lint_paths([str(pkg)], select=["TL101"]).findings
    assert {(Path(f.path).name, f.severity) for f in found} == {("kernels.py", "bug")}
    assert all("ops.py" in f.reason for f in found)
    assert lint_paths([str(pkg / "kernels.py")], select=["TL101"]).findings == []


# ---------------------------------------------------------------- arguments declared 64-bit

def test_a_stride_annotated_int64_makes_the_product_64_bit():
    """``stride: tl.int64`` makes Triton pass the argument as int64 whatever its value, so ``row * stride`` is an
    int64 product (TL501 quiet, as torchao's fixed jagged-scales kernel declares its sizes); the same kernel
    without the annotation fires TL501."""
    from harness.lint.rules.tl501_int32_pointer_offset import BAD

    annotated = BAD.replace("stride, n_cols", "stride: tl.int64, n_cols")
    assert annotated != BAD
    assert [f.code for f in lint_source(annotated, select=["TL501"])] == []
    assert [f.code for f in lint_source(BAD, select=["TL501"])] == ["TL501"]


# ---------------------------------------------------------------- a causal mask aligned by an offset parameter

CAUSAL_OFFSET = '''
@triton.jit
def attn_kernel(k_ptr, o_ptr, S_q, S_k, Q_START, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    q_abs = offs_m + Q_START
    offs_n = tl.arange(0, BLOCK_N)
    for start_n in range(0, S_k, BLOCK_N):
        k = tl.load(k_ptr + start_n + offs_n, mask=start_n + offs_n < S_k, other=0.0)
        causal = (start_n + offs_n)[None, :] <= q_abs[:, None]
        s = tl.where(causal, k[None, :], float("-inf"))
        tl.store(o_ptr + offs_m, tl.max(s, 1), mask=offs_m < S_q)
'''


def test_a_causal_mask_shifted_by_a_runtime_offset_is_aligned():
    """Lint set U (U2 to U5): the queries' absolute position, ``offs_m + Q_START`` with ``Q_START`` the
    caller's ``S_k - S_q``, is the bottom-right alignment TL103 asks for, whatever the parameter is called;
    without the offset the same kernel is the top-left mask the rule is for."""
    assert not [f for f in lint_source(HEAD + CAUSAL_OFFSET, "k.py") if f.code == "TL103"]
    bare = CAUSAL_OFFSET.replace("offs_m + Q_START", "offs_m")
    assert [f.code for f in lint_source(HEAD + bare, "k.py") if f.code == "TL103"] == ["TL103"]
    block = CAUSAL_OFFSET.replace("offs_m + Q_START", "offs_m + BLOCK_N")  # a constexpr is no offset
    assert [f.code for f in lint_source(HEAD + block, "k.py") if f.code == "TL103"] == ["TL103"]


# ---------------------------------------------------------------- a sum along one axis of a 3-D block

SPAN_LOGITS = '''
@triton.jit
def span_bwd_kernel(q_ptr, k_ptr, dk_ptr, L, stride_q, D: tl.constexpr, S: tl.constexpr, BLOCK_N: tl.constexpr):
    qi = tl.program_id(0)
    d = tl.arange(0, D)
    s_idx = tl.arange(0, S)
    q = tl.load(q_ptr + qi * stride_q + d)
    for start in range(0, L, BLOCK_N):
        n = start + tl.arange(0, BLOCK_N)
        k_pos = s_idx[:, None] * L + n[None, :]
        k = tl.load(k_ptr + k_pos[:, :, None] * D + d[None, None, :])
        w = tl.exp(tl.sum(k * q[None, None, :], axis=2))
        tl.atomic_add(dk_ptr + k_pos[:, :, None] * D + d[None, None, :], w[:, :, None] * q[None, None, :])
'''


def test_a_sum_along_the_whole_axis_of_a_3d_block_is_complete_whatever_the_other_axes_walk():
    """Lint set T (T10, T11): each logit is a dot product along the head, ``tl.sum(..., axis=2)`` of a 3-D block
    whose key offsets (``k_pos[:, :, None]``, axes 0 and 1) the loop walks; the head axis is whole in the program,
    so the exp of each sum, added over queries, is right. Cut the head into blocks over a second grid axis and the
    sum along axis 2 is a slice's: the rule fires."""
    assert not [f for f in lint_source(HEAD + SPAN_LOGITS, "k.py") if f.code == "TL206"]
    split = SPAN_LOGITS.replace("    d = tl.arange(0, D)\n", "    d = tl.program_id(1) * D + tl.arange(0, D)\n")
    assert [f.code for f in lint_source(HEAD + split, "k.py") if f.code == "TL206"], "a head split over programs"
