"""Glue for accelerated-scan's complex first-order scan, accelerated_scan/complex.py: its public
``scan(forget, inputs)`` (the autograd function Scan: forward_scan launched over a (batch, dim) grid,
one program per sequence, which solves x[t] = forget[t] * x[t-1] + inputs[t] in blocks of 2048
steps) and the backward pass a user gets from ``scan(...).backward(d_output)``: backward_scan,
launched on the same grid, runs the adjoint recursion right to left block by block and writes the
gradients of forget and inputs. The launch returns those two gradients.

Complex tensors are given and returned here as their float32 real views (a trailing dim of 2: real,
imaginary), as torch.view_as_real lays them out and as the kernels read them, so that every value
the probe compares is a real number. ``inputs`` is real, as in the project's tests (the launcher
then treats its imaginary part as zero and returns a real gradient)."""

import torch

from harness.bugs.source import load


def _run(variant, forget, inputs, d_output):
    mod = load(__file__, variant)
    a = torch.view_as_complex(forget).detach().requires_grad_(True)
    b = inputs.detach().requires_grad_(True)
    out = mod.scan(a, b)
    out.backward(torch.view_as_complex(d_output))
    return torch.view_as_real(a.grad), b.grad


def launch_buggy(forget, inputs, d_output):
    return _run("buggy", forget, inputs, d_output)


def launch_fixed(forget, inputs, d_output):
    return _run("fixed", forget, inputs, d_output)


def make_inputs(*, device, gen, batch=1, dim=2, seqlen=4096):
    """As accelerated-scan's tests/tests_eq_complex.py makes them: forget gates polar(radius, angle)
    with angle uniform in [0, 2 pi) and radius uniform in [0.4, 1.0), complex64; real inputs
    randn().tanh(); shape (batch, dim, seqlen). The incoming gradient is randn complex, as
    tests/bench_complex.py makes d_output. All float32, complex ones as (..., 2) real views."""
    angle = 2 * torch.pi * torch.rand(batch, dim, seqlen, generator=gen)
    radius = 0.4 + 0.6 * torch.rand(batch, dim, seqlen, generator=gen)
    forget = torch.view_as_real(torch.polar(radius, angle).to(torch.complex64)).contiguous()
    inputs = torch.randn(batch, dim, seqlen, generator=gen).tanh()
    d_output = torch.randn(batch, dim, seqlen, 2, generator=gen)
    return {"forget": forget.to(device), "inputs": inputs.to(device), "d_output": d_output.to(device)}


def reference(forget, inputs, d_output):
    """The gradients of sum(Re(conj(d_output) * x)) for x[t] = a[t] x[t-1] + b[t], x[-1] = 0, in
    torch's convention for complex gradients (the one the project's torch reference scan gets from
    autograd): the adjoint g[t] = d_output[t] + conj(a[t+1]) g[t+1] (g past the end 0), the gradient
    of the inputs Re(g[t]) (real inputs) and of the forget gates g[t] * conj(x[t-1]). One step at a
    time, in complex128."""
    dev = inputs.device
    a = torch.view_as_complex(forget.detach().cpu().double().contiguous())
    b = inputs.detach().cpu().double().to(torch.complex128)
    d = torch.view_as_complex(d_output.detach().cpu().double().contiguous())
    T = a.shape[-1]
    x = torch.zeros_like(a)
    prev = torch.zeros_like(a[..., 0])
    for t in range(T):
        prev = a[..., t] * prev + b[..., t]
        x[..., t] = prev
    g = torch.zeros_like(a)
    nxt = torch.zeros_like(a[..., 0])
    for t in range(T - 1, -1, -1):
        nxt = d[..., t] + (a[..., t + 1].conj() * nxt if t + 1 < T else 0)
        g[..., t] = nxt
    x_prev = torch.cat([torch.zeros_like(x[..., :1]), x[..., :-1]], dim=-1)
    d_forget = torch.view_as_real(g * x_prev.conj()).contiguous()
    return d_forget.to(dev), g.real.contiguous().to(dev)


FUZZ = {"batch": (1, 2), "dim": (1, 4), "seqlen": (32, 8192)}
