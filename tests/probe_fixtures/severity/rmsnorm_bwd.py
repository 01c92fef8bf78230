"""The input gradient of RMSNorm, fp32, one program per row: correct. At one column it is an
ill-conditioned reduction: dx = rstd * g * (1 - xhat**2) with xhat**2 = x**2 / (x**2 + eps), a
cancellation that a float32 kernel computes with an error of rstd * |g| * 2**-24 and more, far
above its result; the float64 reference has it exact. No fp32 kernel can do better there: the
probe's error floor says so and the probe is quiet. ``launch_bf16`` keeps the row's reduction
in bfloat16 (a precision bug): wrong beyond that floor, caught at the same sizes."""

import torch
import triton
import triton.language as tl

SIZES = {"rows": 2, "cols": 1}


@triton.jit
def rmsnorm_bwd_kernel(x_ptr, w_ptr, dy_ptr, dx_ptr, n_cols, eps, LOW: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    dy = tl.load(dy_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    xhat = x * rstd
    g = dy * w
    c = tl.sum(g * xhat, axis=0) / n_cols
    if LOW:
        c = c.to(tl.bfloat16).to(tl.float32)
    tl.store(dx_ptr + row * n_cols + cols, rstd * (g - xhat * c), mask=mask)


def _launch(x, w, dy, eps, low):
    dx = torch.empty_like(x)
    rows, cols = x.shape
    rmsnorm_bwd_kernel[(rows,)](x, w, dy, dx, cols, eps, LOW=low, BLOCK=triton.next_power_of_2(cols))
    return dx


def launch(x, w, dy, eps):
    return _launch(x, w, dy, eps, False)


def launch_bf16(x, w, dy, eps):
    return _launch(x, w, dy, eps, True)


def make_inputs(*, device, gen, rows, cols, eps=1e-5):
    return {"x": (0.3 * torch.randn(rows, cols, generator=gen)).to(device),
            "w": (1.0 + 0.1 * torch.randn(cols, generator=gen)).to(device),
            "dy": (100.0 * torch.randn(rows, cols, generator=gen)).to(device), "eps": eps}


def reference(x, w, dy, eps):
    x, w, dy = x.double(), w.double(), dy.double()
    rstd = torch.rsqrt(x.square().mean(dim=1, keepdim=True) + eps)
    xhat = x * rstd
    g = dy * w
    return rstd * (g - xhat * (g * xhat).mean(dim=1, keepdim=True))
