"""A reproduction of the fused attention forward that the triton wheel shipped in triton.ops
(triton/ops/flash_attention.py, triton 2.0.0 and 2.1.0): our own kernel with the released one's launch
and mechanism. The grid is (N_CTX / 128, Z * H), one program per block of 128 query rows of one
head; the program offsets q, k, v and the output by off_hz * stride_qh (as both releases do), walks
the causal key blocks with an online softmax and stores its rows. Buggy (2.0.0): the V tile's rows
and columns are addressed with Q's strides (stride_qm, stride_qk) while the pointer advances by V's
row stride; fixed (2.1.0): V's own strides.

Why a reproduction: 2.0.0's module imports and runs under the Triton installed here, but its kernel
scales p by a 1-D tensor of row sums with no [:, None] (``p *= l_rcp``), which Triton 2.0 broadcast
by appending the missing axis (per row) and Triton 3 broadcasts numpy-style (per column): under
today's Triton the released 2.0.0 kernel is wrong for every input, for a reason that is not its bug.
The kernel here scales per row explicitly."""

import torch
import triton
import triton.language as tl

SM_SCALE = 0.5  # the scale of triton's own test_flash_attention.py
BLOCK = 128     # BLOCK_M = BLOCK_N = 128 in 2.0.0's launcher
D_HEAD = 64     # the only head size 2.0.0 accepts


@triton.jit
def _attn_fwd(Q, K, V, O, sm_scale,
              s_qh, s_qm, s_qk, s_kn, s_kk, s_vk, s_vn, s_oh, s_om, s_on,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr, V_OWN_STRIDES: tl.constexpr):
    mb = tl.program_id(0)
    hz = tl.program_id(1)
    rows = mb * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    dd = tl.arange(0, D)
    base = hz * s_qh  # both releases offset every tensor by q's head stride
    q = tl.load(Q + base + rows[:, None] * s_qm + dd[None, :] * s_qk)
    kt_ptr = K + base + cols[None, :] * s_kn + dd[:, None] * s_kk
    if V_OWN_STRIDES:  # 2.1.0
        v_ptr = V + base + cols[:, None] * s_vk + dd[None, :] * s_vn
    else:  # BUG: (2.0.0) V addressed with Q's row and column strides
        v_ptr = V + base + cols[:, None] * s_qm + dd[None, :] * s_qk
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, D), tl.float32)
    for n0 in range(0, (mb + 1) * BLOCK_M, BLOCK_N):
        s = tl.dot(q, tl.load(kt_ptr)) * sm_scale
        s = tl.where(rows[:, None] >= n0 + cols[None, :], s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), tl.load(v_ptr))
        m_i = m_new
        kt_ptr += BLOCK_N * s_kn
        v_ptr += BLOCK_N * s_vk
    acc = acc / l_i[:, None]
    tl.store(O + hz * s_oh + rows[:, None] * s_om + dd[None, :] * s_on, acc.to(O.dtype.element_ty))


def _launch(q, k, v, own):
    """As triton.ops.attention's forward launches it: head size checked, o = empty_like(q), grid
    (cdiv(N_CTX, 128), Z * H), every stride of the four tensors passed."""
    assert q.shape[-1] == k.shape[-1] == v.shape[-1] == D_HEAD
    o = torch.empty_like(q)
    grid = (triton.cdiv(q.shape[2], BLOCK), q.shape[0] * q.shape[1])
    _attn_fwd[grid](q, k, v, o, SM_SCALE,
                    q.stride(1), q.stride(2), q.stride(3), k.stride(2), k.stride(3),
                    v.stride(2), v.stride(3), o.stride(1), o.stride(2), o.stride(3),
                    BLOCK_M=BLOCK, BLOCK_N=BLOCK, D=D_HEAD, V_OWN_STRIDES=own)
    return o


def launch_buggy(q, k, v):
    return _launch(q, k, v, False)


def launch_fixed(q, k, v):
    return _launch(q, k, v, True)


def make_inputs(*, device, gen, z=1, h=2, n_blocks=2, v_transposed=0):
    """As triton's python/test/unit/operators/test_flash_attention.py makes them: q, k, v of shape
    (Z, H, N_CTX, 64) in float16, drawn from normal(0, 0.5). N_CTX = 128 * n_blocks: the released
    kernels handle whole blocks of 128 rows only (no masks; the test's N_CTX is 1024). With
    v_transposed=1 v holds the same kind of values but is given as the transpose of a contiguous
    (Z, H, 64, N_CTX) tensor (V^T stored per head): q's shape and head stride, other row and column
    strides."""
    n = 128 * n_blocks
    q = (torch.randn(z, h, n, D_HEAD, generator=gen) * 0.5).to(torch.float16)
    k = (torch.randn(z, h, n, D_HEAD, generator=gen) * 0.5).to(torch.float16)
    if v_transposed:
        v = (torch.randn(z, h, D_HEAD, n, generator=gen) * 0.5).to(torch.float16).to(device).transpose(-1, -2)
    else:
        v = (torch.randn(z, h, n, D_HEAD, generator=gen) * 0.5).to(torch.float16).to(device)
    return {"q": q.to(device), "k": k.to(device), "v": v}


def reference(q, k, v):
    """Causal softmax(q k^T * sm_scale) v, in float64 (triton's test computes the same in torch)."""
    n = q.shape[2]
    s = torch.matmul(q.double(), k.double().transpose(-1, -2)) * SM_SCALE
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool, device=q.device))
    s = s.masked_fill(~causal, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), v.double())


FUZZ = {"z": (1, 2), "h": (1, 4), "n_blocks": (1, 4), "v_transposed": (0, 1)}
