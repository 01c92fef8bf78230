"""Our own reproduction of mamba-ssm's single-step SSM update (selective_state_update) as it
stood at 009bec5 and after 3854ad8: one decoding step of a selective state space layer.

For each (batch row, channel block) program: dt <- softplus(dt + dt_bias), the state decays
by exp(A * dt) and takes in dt * B * x, and the output is <state, C> + D * x. The state is
updated in place, as in the upstream function. The only difference between the two
versions is how softplus is evaluated in float32.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _ssm_step_kernel(state_ptr, x_ptr, dt_ptr, dt_bias_ptr, A_ptr, B_ptr, C_ptr, D_ptr, out_ptr,
                     dim, dstate,
                     s_state_b, s_state_d, s_state_n, s_x_b, s_dt_b, s_B_b, s_C_b, s_out_b,
                     FIXED: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    b = tl.program_id(1)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    row_ok = rows < dim
    tile_ok = row_ok[:, None] & (cols[None, :] < dstate)

    tile = b * s_state_b + rows[:, None] * s_state_d + cols[None, :] * s_state_n
    h = tl.load(state_ptr + tile, mask=tile_ok, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + b * s_x_b + rows, mask=row_ok, other=0.0).to(tl.float32)
    dt = tl.load(dt_ptr + b * s_dt_b + rows, mask=row_ok, other=0.0).to(tl.float32)
    dt += tl.load(dt_bias_ptr + rows, mask=row_ok, other=0.0).to(tl.float32)
    if FIXED:
        # softplus(t) == t to float32 precision for large t: skip exp there
        dt = tl.where(dt <= 20.0, tl.log(1.0 + tl.exp(dt)), dt)
    else:
        dt = tl.log(1.0 + tl.exp(dt))  # BUG: exp(dt) is inf in float32 for dt > ~88.7, so dt becomes inf
    A = tl.load(A_ptr + rows[:, None] * dstate + cols[None, :], mask=tile_ok, other=0.0).to(tl.float32)
    Bv = tl.load(B_ptr + b * s_B_b + cols, mask=cols < dstate, other=0.0).to(tl.float32)
    Cv = tl.load(C_ptr + b * s_C_b + cols, mask=cols < dstate, other=0.0).to(tl.float32)
    D = tl.load(D_ptr + rows, mask=row_ok, other=0.0).to(tl.float32)

    h = h * tl.exp(A * dt[:, None]) + (Bv[None, :] * dt[:, None]) * x[:, None]
    tl.store(state_ptr + tile, h, mask=tile_ok)
    y = tl.sum(h * Cv[None, :], axis=1) + D * x
    tl.store(out_ptr + b * s_out_b + rows, y, mask=row_ok)


def ssm_step(state, x, dt, A, B, C, D, dt_bias, *, fixed):
    """state (batch, dim, dstate) updated in place; x, dt (batch, dim); A (dim, dstate);
    B, C (batch, dstate); D, dt_bias (dim,). Returns out (batch, dim). dt goes through softplus."""
    batch, dim, dstate = state.shape
    out = torch.empty_like(x)
    # the upstream launcher picks the channel block from dstate by hand (no autotune: it would rerun the in-place update)
    block_m = 32 if dstate <= 16 else 16 if dstate <= 32 else 8 if dstate <= 64 else 4
    grid = (triton.cdiv(dim, block_m), batch)
    _ssm_step_kernel[grid](state, x, dt, dt_bias, A.contiguous(), B, C, D, out, dim, dstate,
                           state.stride(0), state.stride(1), state.stride(2), x.stride(0), dt.stride(0),
                           B.stride(0), C.stride(0), out.stride(0),
                           FIXED=fixed, BLOCK_M=block_m, BLOCK_N=triton.next_power_of_2(dstate))
    return out


def ssm_step_buggy(*args):
    return ssm_step(*args, fixed=False)


def ssm_step_fixed(*args):
    return ssm_step(*args, fixed=True)
