"""Our own reproduction of TorchRL's Triton GRU forward (the "triton" recurrent backend of
GRUModule, torchrl/modules/tensordict_module/_rnn_triton.py) before and after 952438b.

As upstream, the wrapper computes the input projections for all steps at once with
F.linear (cuBLAS: IEEE fp32 unless the user allowed TF32), and the kernel runs the time
loop, one program per BLOCK_B batch rows: gh = h @ W_hh^T + b_hh, r = sigmoid(gx_r + gh_r),
z = sigmoid(gx_z + gh_z), n = tanh(gx_n + r * gh_n), h = n + z * (h - n). Episode resets
(is_init) and the K-tiling of the recurrent matmul are left out.

The only difference between the versions is the precision of the three tl.dot calls: the
buggy kernel left it at Triton's default, which is TF32 for fp32 operands on Ampere and
newer; the fixed one passes input_precision resolved from PyTorch's float32 matmul
setting ("highest", the default, gives "ieee").
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _sigmoid(x):
    return 1.0 / (1.0 + tl.exp(-x))


@triton.jit
def _gru_fwd_kernel(gx_ptr, h0_ptr, w_r_ptr, w_z_ptr, w_n_ptr, b_hh_ptr, out_ptr, B, T,
                    H: tl.constexpr, BLOCK_B: tl.constexpr, FIXED: tl.constexpr,
                    INPUT_PRECISION: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    cols = tl.arange(0, H)
    row_ok = rows < B
    wt = cols[:, None] * H + cols[None, :]  # W^T blocks, (H_in, H_out), row-major
    w_r = tl.load(w_r_ptr + wt)
    w_z = tl.load(w_z_ptr + wt)
    w_n = tl.load(w_n_ptr + wt)
    b_r = tl.load(b_hh_ptr + cols)
    b_z = tl.load(b_hh_ptr + H + cols)
    b_n = tl.load(b_hh_ptr + 2 * H + cols)
    h = tl.load(h0_ptr + rows[:, None] * H + cols[None, :], mask=row_ok[:, None], other=0.0)
    for t in range(T):
        base = (rows[:, None] * T + t) * (3 * H) + cols[None, :]
        gx_r = tl.load(gx_ptr + base, mask=row_ok[:, None], other=0.0)
        gx_z = tl.load(gx_ptr + base + H, mask=row_ok[:, None], other=0.0)
        gx_n = tl.load(gx_ptr + base + 2 * H, mask=row_ok[:, None], other=0.0)
        if FIXED:
            gh_r = tl.dot(h, w_r, input_precision=INPUT_PRECISION)
            gh_z = tl.dot(h, w_z, input_precision=INPUT_PRECISION)
            gh_n = tl.dot(h, w_n, input_precision=INPUT_PRECISION)
        else:
            gh_r = tl.dot(h, w_r)  # BUG: default precision is TF32 on Ampere+, while F.linear above ran in IEEE fp32
            gh_z = tl.dot(h, w_z)  # BUG
            gh_n = tl.dot(h, w_n)  # BUG
        r = _sigmoid(gx_r + gh_r + b_r[None, :])
        z = _sigmoid(gx_z + gh_z + b_z[None, :])
        n = 2.0 * _sigmoid(2.0 * (gx_n + r * (gh_n + b_n[None, :]))) - 1.0  # tanh
        h = n + z * (h - n)
        tl.store(out_ptr + (rows[:, None] * T + t) * H + cols[None, :], h, mask=row_ok[:, None])


def _precision():
    # the fix's resolution, reduced to the default path: torch's float32 matmul setting
    return {"highest": "ieee", "high": "tf32x3", "medium": "tf32"}[torch.get_float32_matmul_precision()]


def gru_forward(x, h0, w_ih, b_ih, w_hh, b_hh, *, fixed):
    """x (B, T, I) fp32, h0 (B, H), torch.nn.GRU's weight layout (gates r, z, n).
    Returns every step's hidden state, (B, T, H)."""
    B, T, I = x.shape
    H = h0.shape[1]
    gx = torch.nn.functional.linear(x.reshape(-1, I), w_ih, b_ih).reshape(B, T, 3 * H).contiguous()
    wt = w_hh.t()  # (H, 3H)
    w_r, w_z, w_n = (wt[:, g * H:(g + 1) * H].contiguous() for g in range(3))
    out = torch.empty(B, T, H, device=x.device, dtype=torch.float32)
    BLOCK_B = 16
    _gru_fwd_kernel[(triton.cdiv(B, BLOCK_B),)](gx, h0.contiguous(), w_r, w_z, w_n, b_hh.contiguous(), out, B, T,
                                                H=H, BLOCK_B=BLOCK_B, FIXED=fixed, INPUT_PRECISION=_precision())
    return out
