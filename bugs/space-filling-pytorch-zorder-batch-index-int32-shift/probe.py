"""A reproduction of space-filling-pytorch's batched z-order encoder (space_filling_pytorch/functional/
z_order.py: the kernel _encode_z_kernel and its launcher encode_z, which space_filling_pytorch.encode calls
with method='z'): our own kernel and launcher with the same mechanism, launch pattern and arguments. One
program per (batch, block of BLK points), grid (B, cdiv(N, BLK)) with BLK = max(32, min(4096,
next_pow2(N))); each program loads the x, y, z coordinates of its points through the strides the launcher
passes, quantizes each from [-1, 1] to an int64 cell in [0, space_size) (in float32, clamped), interleaves
the bits of the three cells (bit i of x, y, z to bits 3i + 2, 3i + 1, 3i) and, with assign_batch_index,
ORs the batch index into bits 48 and up, then stores the int64 code into a new_empty (B, N) output.

Buggy, as released up to commit 0b5c27e's parent: the batch index is the program id, an int32, shifted
by 48 in its own type (ret |= pid_b << 48), so the shift overflows and no batch's codes carry its index.
Fixed, as commit 0b5c27e ('fix pid casting error'): the program id is widened to int64 before the shift.
The two sides differ only there (a constexpr switch)."""

import torch
import triton
import triton.language as tl

SPACE_SIZE = 1024  # the README's space_size (a resolution chosen by the caller, not a size to fuzz)


@triton.jit
def _zorder(fx, fy, fz, space_size):
    x = ((fx + 1) / 2 * space_size).to(tl.int64)
    y = ((fy + 1) / 2 * space_size).to(tl.int64)
    z = ((fz + 1) / 2 * space_size).to(tl.int64)
    x = tl.minimum(tl.maximum(x, 0), space_size - 1)
    y = tl.minimum(tl.maximum(y, 0), space_size - 1)
    z = tl.minimum(tl.maximum(z, 0), space_size - 1)
    code = tl.zeros_like(x)
    for i in tl.static_range(16):
        bit = 1 << i
        code |= (x & bit) << (2 * i + 2)
        code |= (y & bit) << (2 * i + 1)
        code |= (z & bit) << (2 * i)
    return code


@triton.jit
def _encode_z_kernel(xyz_ptr, out_ptr, B, N, space_size, s_b, s_n, s_c,
                     BLK: tl.constexpr, ASSIGN_BATCH_INDEX: tl.constexpr, WIDEN_PID: tl.constexpr):
    pid_b = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs = pid_n * BLK + tl.arange(0, BLK)
    mask = offs < N
    ptrs = xyz_ptr + pid_b * s_b + offs * s_n
    fx = tl.load(ptrs, mask=mask)
    fy = tl.load(ptrs + s_c, mask=mask)
    fz = tl.load(ptrs + 2 * s_c, mask=mask)
    code = _zorder(fx, fy, fz, space_size)
    if ASSIGN_BATCH_INDEX:
        if WIDEN_PID:  # fixed (0b5c27e): the batch index widened to int64 before the shift
            code |= pid_b.to(tl.int64) << 48
        else:  # BUG: the int32 program id shifted by 48 in its own type
            code |= pid_b << 48
    tl.store(out_ptr + pid_b * N + offs, code, mask=mask)


def _launch(xyz, assign_batch_index, fixed):
    assert xyz.ndim == 3 and xyz.size(-1) == 3, xyz.shape
    B, N = xyz.shape[:2]
    out = xyz.new_empty(B, N, dtype=torch.int64)
    BLK = max(32, min(4096, triton.next_power_of_2(N)))
    grid = (B, triton.cdiv(N, BLK))
    _encode_z_kernel[grid](xyz, out, B, N, SPACE_SIZE, *xyz.stride(), BLK=BLK,
                           ASSIGN_BATCH_INDEX=bool(assign_batch_index), WIDEN_PID=fixed)
    return out


def launch_buggy(xyz, assign_batch_index):
    return _launch(xyz, assign_batch_index, False)


def launch_fixed(xyz, assign_batch_index):
    return _launch(xyz, assign_batch_index, True)


def make_inputs(*, device, gen, batch=2, num_points=16, assign_batch_index=0):
    """As the README's example makes them: xyz = torch.rand(batch, num_points, 3) * 2 - 1, float32,
    encoded at space_size 1024 (batch 2, 16 points: the defaults; the upstream notebook's batch 3 and its
    unpadded example's 1000 to 32768 points bound FUZZ).
    assign_batch_index (an input switch, 0 by default as in encode's signature): 1 asks for the batch
    index in bits 48 and up, the README's last example; it shapes no tensor."""
    xyz = (torch.rand(batch, num_points, 3, generator=gen) * 2 - 1).to(device)
    return {"xyz": xyz, "assign_batch_index": int(assign_batch_index)}


def reference(xyz, assign_batch_index):
    """The z-order code of each point: each coordinate quantized as the kernel does, in float32
    (((c + 1) / 2 * space_size) truncated, clamped to [0, space_size)), the bits of x, y, z interleaved
    (bit i to 3i + 2, 3i + 1, 3i), plus batch_index << 48 when asked for."""
    cells = ((xyz.float() + 1) / 2 * SPACE_SIZE).to(torch.int64).clamp(0, SPACE_SIZE - 1)
    x, y, z = cells.unbind(-1)
    code = torch.zeros_like(x)
    for i in range(16):
        bit = 1 << i
        code |= (x & bit) << (2 * i + 2)
        code |= (y & bit) << (2 * i + 1)
        code |= (z & bit) << (2 * i)
    if assign_batch_index:
        code |= torch.arange(xyz.shape[0], dtype=torch.int64, device=xyz.device)[:, None] << 48
    return code


FUZZ = {"batch": (1, 8), "num_points": (1, 32768), "assign_batch_index": (0, 1)}
