"""Glue for fairchem-core's UMA fast-GPU Wigner backward (fairchem/core/models/uma/triton/custom_ops.py):
the triton_op _kernel_permute_wigner_inv_edge_to_node_bwd_dw(grad_out, x_l, grad_wigner_flat), which
PermuteWignerInvEdgeToNodeFunction.backward calls with a zeroed (E, 81) buffer to get the gradient w.r.t.
the per-edge Wigner matrices, launching permute_wigner_inv_edge_to_node_bwd_dw_kernel on (GRID_E_STRIDE,)
programs. The glue calls that launcher itself, with the buffer the backward allocates, as the fix's
regression test does, and returns the buffer as (E, 9, 9).

custom_ops.py imports only torch.library, its constants and its kernels (all three taken out of the
package); the package's __init__ files are left empty, so nothing else of fairchem is imported."""

import torch

from harness.bugs.source import load


def _run(variant, grad_out, x_l):
    mod = load(__file__, variant)
    num_edges = grad_out.shape[0]
    # as PermuteWignerInvEdgeToNodeFunction.backward allocates it (zeros for the off-diagonal blocks)
    grad_wigner_flat = torch.zeros((num_edges, 81), dtype=grad_out.dtype, device=grad_out.device)
    mod._kernel_permute_wigner_inv_edge_to_node_bwd_dw(grad_out, x_l, grad_wigner_flat)
    return grad_wigner_flat.reshape(num_edges, 9, 9)


def launch_buggy(grad_out, x_l):
    return _run("buggy", grad_out, x_l)


def launch_fixed(grad_out, x_l):
    return _run("fixed", grad_out, x_l)


def make_inputs(*, device, gen, num_edges=32, sphere_channels=128):
    """As the fix's test test_permute_wigner_inv_bwd_dw_matches_pytorch makes them: grad_out (the gradient
    of the L-major output) and x_l (the L-major permuted input the forward saved), both randn
    (num_edges, 9, C) float32. C is sphere_channels rounded up to a power of 2, as 2.19.0's launchers assert
    (every UMA config uses one: 128 in K4L2 and K10L4, 256 in K16L6)."""
    c = 1 << max(0, int(sphere_channels) - 1).bit_length()
    grad_out = torch.randn(num_edges, 9, c, generator=gen)
    x_l = torch.randn(num_edges, 9, c, generator=gen)
    return {"grad_out": grad_out.to(device), "x_l": x_l.to(device)}


def reference(grad_out, x_l):
    """The block-diagonal outer product over all channels, as the fix's test computes it:
    dW[e, i, j] = sum_c grad_out[e, i, c] * x_l[e, j, c] for i, j in one L block (0, 1:4, 4:9), 0 elsewhere."""
    dy, x = grad_out.double(), x_l.double()
    dw = torch.zeros(dy.shape[0], 9, 9, dtype=torch.float64, device=dy.device)
    for lo, hi in ((0, 1), (1, 4), (4, 9)):
        dw[:, lo:hi, lo:hi] = torch.bmm(dy[:, lo:hi, :], x[:, lo:hi, :].transpose(1, 2))
    return dw


FUZZ = {"num_edges": (1, 4096), "sphere_channels": (1, 512)}
