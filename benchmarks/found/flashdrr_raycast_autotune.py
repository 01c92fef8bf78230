"""flashdrr 0.6.0's ``FusedVolumeRenderer`` (exported by ``flashdrr.rendering``; flashdrr/rendering/triton_raycast.py),
called as released, against the density gradient of a float64 torch re-implementation of its forward written here:
on the first backward for each image size the gradient is the sum over every launch the autotuner made while
benchmarking the backward kernel's seven configs (lint's TL301: ``_bwd_kernel`` ``tl.atomic_add``s into the density
gradient that ``_FusedVolumeRenderFunction.backward`` zeroes once, in an autotuned kernel with no ``reset_to_zero``);
the second backward is right. The code is not copied here.

Under the Triton interpreter, on a CPU: the autotuner has no GPU timer there, so the casebook's
``harness.run.triton_compat.patched`` gives it one that calls the kernel as ``triton.testing.do_bench`` does (fewer
times than on a GPU, where the first gradient is wrong by a larger factor), and counts the calls. On a GPU, run it
with ``--gpu`` (not run yet).

    pip install --no-deps --target /tmp/flashdrr flashdrr==0.6.0
    python benchmarks/found/flashdrr_raycast_autotune.py /tmp/flashdrr            # CPU, interpreter
    python benchmarks/found/flashdrr_raycast_autotune.py /tmp/flashdrr --gpu      # a GPU, compiled

The reference follows the forward's documented arguments: rays from each view's camera position along the per-pixel
directions, ``ray_samples`` depths evenly from ``near`` to ``far``, the density sampled trilinearly with zeros
outside (``grid_sample``'s padding, as the kernel's comments say), summed and scaled by ``0.1 * (far - near) /
ray_samples``. Its forward is checked against the package's before its gradient is used. Exit 1 when a gradient is
wrong (the bug), 0 when none is, 2 when flashdrr cannot be imported from SITE.
"""

import itertools
import os
import sys
from pathlib import Path

GPU = "--gpu" in sys.argv[1:]
if not GPU:
    os.environ.setdefault("TRITON_INTERPRET", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for harness.run


def reference_tau(density, view, near, far, ras2ijk, vol_shape, dirs_cam, samples, torch):
    """tau, in float64, written from the renderer's documented geometry: density (B, C, X, Y, Z) with the ray's
    i, j, k coordinates indexing its last, middle and first spatial axis as the kernel does (a cube here)."""
    f = torch.float64
    density, view, near, far = density.to(f), view.to(f), near.to(f), far.to(f)
    ras2ijk, vol_shape, dirs_cam = ras2ijk.to(f), vol_shape.to(f), dirs_cam.to(f)
    rot, shift = ras2ijk[:3, :3], ras2ijk[:3, 3]
    dirs = torch.einsum("bij,hwj->bhwi", view[:, :3, :3], dirs_cam) @ rot.T        # (B, H, W, 3), voxel axes
    origin = view[:, :3, 3] @ rot.T + shift                                          # (B, 3)
    depths = near[:, None] + (far - near)[:, None] * torch.linspace(0, 1, samples, dtype=f)[None, :]   # (B, S)
    pos = origin[:, None, None, None, :] + dirs[:, None] * depths[:, :, None, None, None]   # (B, S, H, W, 3)
    idx = pos * (vol_shape / (vol_shape - 1)) - 0.5                                  # align_corners=False
    low = torch.floor(idx)
    frac = idx - low
    b = torch.arange(density.shape[0])[:, None, None, None]
    total = 0
    for corner in itertools.product((0, 1), repeat=3):
        c = torch.tensor(corner, dtype=f)
        at = low + c
        inside = ((at >= 0) & (at < vol_shape)).all(-1)                               # zeros padding
        weight = torch.where(c.bool(), frac, 1 - frac).prod(-1)
        at = torch.minimum(at.clamp(min=0), vol_shape - 1).long()
        value = density[b, :, at[..., 2], at[..., 1], at[..., 0]]                    # (B, S, H, W, C)
        total = total + torch.where(inside, weight, 0.0)[..., None] * value
    fused = total.sum(1).permute(0, 3, 1, 2)                                          # (B, C, H, W)
    return fused * (0.1 * (far - near) / samples).view(-1, 1, 1, 1)


def main(site: str) -> int:
    sys.path.insert(0, site)
    import contextlib

    import torch

    from _released import installed, run_on

    version = installed(site, "flashdrr", "flashdrr==0.6.0")
    if version is None:
        return 2
    try:
        from flashdrr.rendering import FusedVolumeRenderer
    except ImportError as exc:
        print(f"error: flashdrr not importable from {site}: {exc}", file=sys.stderr)
        return 2
    device = run_on(GPU, f"flashdrr {version}")
    if device is None:
        return 2
    from harness.run.triton_compat import patched


    # A random 8 x 8 x 8 volume, one view looking along +z through it, a 4 x 4 image of rays spread slightly about
    # the axis, 32 samples from near to far; the upstream gradient of tau random too.
    torch.manual_seed(0)
    n, size, samples = 8, 4, 32
    density = torch.rand(1, 1, n, n, n)
    view = torch.eye(4)[None]
    view[0, :3, 3] = torch.tensor([3.5, 3.5, -20.0])
    ys, xs = torch.meshgrid(torch.linspace(-0.05, 0.05, size), torch.linspace(-0.05, 0.05, size), indexing="ij")
    dirs = torch.stack([xs, ys, torch.ones_like(xs)], -1)
    dirs = dirs / dirs.norm(dim=-1, keepdim=True)
    near, far = torch.tensor([15.0]), torch.tensor([30.0])
    ras2ijk, vol_shape = torch.eye(4), torch.tensor([n, n, n], dtype=torch.float32)
    grad_tau = torch.rand(1, 1, size, size) + 0.5
    args = (view, near, far, ras2ijk, vol_shape, dirs)

    d64 = density.double().requires_grad_(True)
    want_tau = reference_tau(d64, *args, samples, torch)
    (want_tau * grad_tau.double()).sum().backward()
    want = d64.grad
    reached = want != 0

    renderer = FusedVolumeRenderer(ray_samples=samples)
    to = dict(device=device)
    wrong = False
    summary = []
    with (contextlib.nullcontext() if GPU else patched(interpreter=True)) as counter:
        for call in ("first", "second"):
            d = density.to(**to, copy=True).requires_grad_(True)  # a fresh leaf: its .grad is this call's alone
            tau = renderer(d, *(a.to(**to) for a in args), return_tau=True)
            if call == "first":
                tau_err = (tau.detach().cpu().double() - want_tau.detach()).abs().max().item()
                tau_rel = tau_err / want_tau.detach().abs().max().item()
                print(f"forward: tau of the package against the float64 re-implementation, largest difference "
                      f"{tau_rel:.2e} of the largest tau ({'agree' if tau_rel < 1e-5 else 'DISAGREE'})")
                if tau_rel >= 1e-5:
                    print("verdict: the reference does not reproduce the package's forward; nothing shown",
                          file=sys.stderr)
                    return 2
            if counter is not None:
                counter.clear()
            tau.backward(grad_tau.to(**to))
            launches = sum(counter.calls) if counter is not None else None
            got = d.grad.detach().cpu().double()
            ratio = got[reached] / want[reached]
            err = (got - want).abs().max().item() / want.abs().max().item()
            bad = err > 1e-4
            wrong |= bad
            tuned = (f"; the autotuner's benchmarking launched _bwd_kernel {launches} times before the real launch"
                     if launches else "; no benchmarking launch (autotune cache hit)" if launches == 0 else "")
            print(f"{call} backward, image {size} x {size}, volume {n}^3, {samples} samples: density gradient sum "
                  f"observed {got.sum().item():.5f}, expected {want.sum().item():.5f}; on the "
                  f"{int(reached.sum())} voxels the rays reach, observed / expected x{ratio.min().item():.2f} to "
                  f"x{ratio.max().item():.2f}; max relative error {err:.2e}{tuned}: {'wrong' if bad else 'right'}")
            summary.append(f"{call} backward {'wrong' if bad else 'right'} (x{ratio.median().item():.2f})")
    print(f"verdict: {'; '.join(summary)}: {'the bug shows' if wrong else 'the bug does not show'}")
    return 1 if wrong else 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--gpu"]
    sys.exit(main(args[0] if args else "."))
