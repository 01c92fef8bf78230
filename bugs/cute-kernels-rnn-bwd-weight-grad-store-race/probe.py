"""A reproduction of cute-kernels' multihead RNN Triton backward (cute_kernels/kernels/rnn/triton_implementation/
backward.py: the kernel rnn_backward_triton_kernel and its launcher rnn_backward_triton, which the autograd backward
of rnn_cute calls): our own kernel and launcher with the same mechanism, launch pattern and arguments.

The RNN is y_t = tanh(x_t + y_{t-1} @ W_n) for each head n, y_{-1} = 0, on inputs (B, S, N, H) and a weight
(N, H, H). The backward launches a grid of (cdiv(B, BLOCK_SIZE_B), N) programs, BLOCK_SIZE_B = 32 (rnn_cute's
default BLOCK_SIZE_B_backward), BLOCK_SIZE_H = max(16, next_power_of_2(H)). Each program takes one block of
batch rows of one head, loads W_n once, and scans the sequence backwards: dz_t = (dy_t + carry) * (1 - y_t^2)
is stored as the input gradient, the carry for step t-1 is dz_t @ W_n^T, and the weight gradient of its rows,
sum over t of y_{t-1}^T @ dz_t, is accumulated in float32 registers. After the loop the program writes that
partial into weight_grad[n], the (H, H) slice every batch block of head n shares.

Buggy, as added in PR 186 (commit bfe3230) and unchanged until the fix: the launcher (the autograd backward)
allocates weight_grad = torch.empty_like(weight) and each program tl.store-s its partial there, so with more
than one batch block (B > 32) the programs of a head overwrite each other and weight_grad holds one block's
rows only (whichever stored last). Fixed, as PR 242 (commit b793feb): weight_grad is allocated as float32
zeros, each program tl.atomic_add-s its partial, and the sum is cast back to the weight's dtype. The two sides
differ only there (# BUG: / # FIX:).

Two things differ from the upstream code on purpose, neither the bug: the forward output the backward reads
(upstream saved from its own Triton forward kernel) is computed here in PyTorch, float32, the same recurrence;
and the two tl.dot calls use full float32 (input_precision="ieee") where upstream passed allow_tf32=True, so
that the fixed side stays within float32's tolerance of the float64 reference on a GPU (TF32 is not this bug).
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE_B = 32  # rnn_cute's default BLOCK_SIZE_B_backward


@triton.jit
def _rnn_bwd_kernel(w_ptr, y_ptr, dy_ptr, dx_ptr, dw_ptr, B, S, H, stride_b, stride_s, stride_wn,
                    BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr, ATOMIC_DW: tl.constexpr):
    pid_b = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    cols = tl.arange(0, BLOCK_H)
    mask_bh = (rows < B)[:, None] & (cols < H)[None, :]
    mask_hh = (cols < H)[:, None] & (cols < H)[None, :]
    w_offs = pid_n * stride_wn + cols[:, None] * H + cols[None, :]
    w = tl.load(w_ptr + w_offs, mask=mask_hh, other=0.0)
    base = rows[:, None] * stride_b + pid_n * H + cols[None, :]
    carry = tl.zeros((BLOCK_B, BLOCK_H), dtype=tl.float32)
    dw = tl.zeros((BLOCK_H, BLOCK_H), dtype=tl.float32)
    y = tl.load(y_ptr + base + (S - 1) * stride_s, mask=mask_bh, other=0.0)
    for i in range(S):
        t = S - 1 - i
        offs = base + t * stride_s
        dz = (tl.load(dy_ptr + offs, mask=mask_bh, other=0.0) + carry) * (1.0 - y * y)
        tl.store(dx_ptr + offs, dz, mask=mask_bh)
        y_prev = tl.load(y_ptr + offs - stride_s, mask=mask_bh & (t > 0), other=0.0)  # y_{-1} = 0
        carry = tl.dot(dz, tl.trans(w), input_precision="ieee")
        dw = tl.dot(tl.trans(y_prev), dz, dw, input_precision="ieee")
        y = y_prev
    if ATOMIC_DW:
        # FIX: every batch block adds its rows' part into the zeroed float32 weight_grad
        tl.atomic_add(dw_ptr + w_offs, dw, mask=mask_hh)
    else:
        # BUG: every batch block of head n stores its part to the same weight_grad[n]; the last store wins
        tl.store(dw_ptr + w_offs, dw, mask=mask_hh)


def _forward(x, weight):
    """The RNN's output, y_t = tanh(x_t + y_{t-1} @ W_n), float32 (the tensor the backward reads)."""
    B, S, N, H = x.shape
    y = torch.empty_like(x)
    state = torch.zeros(B, N, 1, H, device=x.device, dtype=x.dtype)
    for t in range(S):
        state = torch.tanh(x[:, t].unsqueeze(-2) + state @ weight)
        y[:, t] = state.squeeze(-2)
    return y


def _launch(x, weight, output_grad, fixed):
    x, weight, output_grad = x.contiguous(), weight.contiguous(), output_grad.contiguous()
    B, S, N, H = x.shape
    y = _forward(x, weight)
    input_grad = torch.empty_like(y)
    if fixed:  # FIX: PR 242, float32 zeros for the atomic adds
        weight_grad = torch.zeros_like(weight, dtype=torch.float32)
    else:  # BUG: as in PR 186, an uninitialised buffer each program overwrites
        weight_grad = torch.empty_like(weight)
    _rnn_bwd_kernel[(triton.cdiv(B, BLOCK_SIZE_B), N)](
        weight, y, output_grad, input_grad, weight_grad, B, S, H, y.stride(0), y.stride(1), weight.stride(0),
        BLOCK_B=BLOCK_SIZE_B, BLOCK_H=max(16, triton.next_power_of_2(H)), ATOMIC_DW=fixed)
    weight_grad = weight_grad.type_as(weight)
    return torch.cat([input_grad.flatten(), weight_grad.flatten()])


def launch_buggy(x, weight, output_grad):
    return _launch(x, weight, output_grad, False)


def launch_fixed(x, weight, output_grad):
    return _launch(x, weight, output_grad, True)


def make_inputs(*, device, gen, batch=4, seq_len=1024, num_heads=4, head_dim=64):
    """As the upstream test (tests/kernels/rnn_test.py, test_rnn) makes them: x (batch, seq_len, num_heads,
    head_dim) and weight (num_heads, head_dim, head_dim) normal with std 0.01, float32, no input state; the
    output gradient is that of y.sum(), all ones. Defaults: the test's batch_size 4, sequence_length 1024,
    num_heads 4, head_dim 64."""
    x = (torch.randn(batch, seq_len, num_heads, head_dim, generator=gen) * 0.01).to(device)
    weight = (torch.randn(num_heads, head_dim, head_dim, generator=gen) * 0.01).to(device)
    output_grad = torch.ones(batch, seq_len, num_heads, head_dim).to(device)
    return {"x": x, "weight": weight, "output_grad": output_grad}


def reference(x, weight, output_grad):
    """Autograd of the recurrence y_t = tanh(x_t + y_{t-1} @ W_n) (as upstream's rnn_torch), the input and
    weight gradients flattened and concatenated as the launchers return them."""
    with torch.enable_grad():
        xr = x.detach().clone().requires_grad_(True)
        wr = weight.detach().clone().requires_grad_(True)
        B, S, N, H = xr.shape
        state = torch.zeros(B, N, 1, H, device=x.device, dtype=x.dtype)
        outs = []
        for t in range(S):
            state = torch.tanh(xr[:, t].unsqueeze(-2) + state @ wr)
            outs.append(state.squeeze(-2))
        torch.stack(outs, dim=1).backward(output_grad)
    return torch.cat([xr.grad.flatten(), wr.grad.flatten()])


FUZZ = {"batch": (1, 8), "seq_len": (1, 2048), "num_heads": (1, 8), "head_dim": (1, 128)}
