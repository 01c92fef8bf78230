"""A reproduction of fastkmeans' Triton assignment step (fastkmeans/triton_kernels.py, _kmeans_kernel and
its launcher triton_kmeans, https://github.com/AnswerDotAI/fastkmeans/pull/9): our own kernel with the
released one's mechanism. One program per (tile of 128 points, tile of 128 centroids); the point-centroid
dot products from fp16 operands in a K loop of 32 features; distance |x|^2 + |c|^2 - 2 x.c from the norms
the caller passes; the tile's argmin, then atomic_min on a per-point best distance (filled with 1e38) and
a store of the best centroid id where the tile improved on it. Buggy, as released in 0.5.0: centroid
columns past C, loaded as 0 (norm and features), keep the distance |x|^2 and take part in the argmin.
Fixed: their distance is set to 1e38 first, as upstream's commit ba71725 does."""

import torch
import triton
import triton.language as tl

BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32  # upstream's heuristics for D <= 384 (D > 32)


@triton.jit
def _assign(x_ptr, xn_ptr, c_ptr, cn_ptr, best_dist_ptr, best_id_ptr, B, C, D: tl.constexpr,
            MASK_PADDED: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(C, BN)
    pm = pid // tiles_n
    pn = pid % tiles_n
    pts = pm * BM + tl.arange(0, BM)
    cen = pn * BN + tl.arange(0, BN)
    in_pts = pts < B
    in_cen = cen < C
    xn = tl.load(xn_ptr + pts, mask=in_pts, other=0.0)
    cn = tl.load(cn_ptr + cen, mask=in_cen, other=0.0)
    acc = tl.zeros([BM, BN], tl.float32)
    for f0 in range(0, D, BK):
        f = f0 + tl.arange(0, BK)
        xs = tl.load(x_ptr + pts[:, None] * D + f[None, :], mask=in_pts[:, None]).to(tl.float16)
        cs = tl.load(c_ptr + cen[:, None] * D + f[None, :], mask=in_cen[:, None]).to(tl.float16)
        acc += tl.dot(xs, tl.trans(cs), out_dtype=tl.float32)
    d = tl.fma(acc, -2.0, xn[:, None] + cn[None, :])
    if MASK_PADDED:  # BUG: as released this masking is absent: padded columns keep |x|^2 and enter the argmin
        d = tl.where(in_cen[None, :], d, 1e38)
    tile_best, tile_arg = tl.min(d, axis=1, return_indices=True)
    before = tl.atomic_min(best_dist_ptr + pts, tile_best, mask=in_pts)
    better = tile_best < before
    kept = tl.load(best_id_ptr + pts, mask=in_pts)
    tl.store(best_id_ptr + pts, tl.where(better, pn * BN + tile_arg, kept), mask=in_pts)


def _launch(x, x_norms, centroids, c_norms, mask_padded):
    B, D = x.shape
    C = centroids.shape[0]
    best_ids = torch.zeros(B, dtype=torch.int64, device=x.device)  # as fastkmeans' caller allocates it
    best_dist = torch.full((B,), 1e38, dtype=torch.float32, device=x.device)
    grid = (triton.cdiv(B, BLOCK_M) * triton.cdiv(C, BLOCK_N),)
    _assign[grid](x, x_norms, centroids, c_norms, best_dist, best_ids, B, C, D, MASK_PADDED=mask_padded,
                  BM=BLOCK_M, BN=BLOCK_N, BK=BLOCK_K, num_warps=4)
    return best_ids


def launch_buggy(x, x_norms, centroids, c_norms):
    return _launch(x, x_norms, centroids, c_norms, False)


def launch_fixed(x, x_norms, centroids, c_norms):
    return _launch(x, x_norms, centroids, c_norms, True)


def make_inputs(*, device, gen, k=64, points_per_cluster=100):
    """speedbench.py's synthetic data (generate_synthetic_data: k cluster centres randn * 10, each point
    a centre plus randn * 5 noise, 128 features, 100 points a cluster) and fastkmeans' initial
    centroids (k distinct data points drawn at random); the norms as the caller computes them (sum of
    squares of the float32 rows). fp32 data, as the library keeps it."""
    n, d = k * points_per_cluster, 128
    centres = torch.randn(k, d, generator=gen) * 10
    which = torch.randint(0, k, (n,), generator=gen)
    x = centres[which] + torch.randn(n, d, generator=gen) * 5
    centroids = x[torch.randperm(n, generator=gen)[:k]].clone()
    x, centroids = x.to(device), centroids.to(device)
    return {"x": x, "x_norms": (x * x).sum(1), "centroids": centroids, "c_norms": (centroids * centroids).sum(1)}


def reference(x, x_norms, centroids, c_norms):
    """The nearest centroid of each point: |x|^2 + |c|^2 - 2 x.c with the kernel's fp16-rounded features
    in the dot product (the norms as given), argmin over the k centroids."""
    xs = x.to(torch.float16).to(x.dtype)
    cs = centroids.to(torch.float16).to(x.dtype)
    dist = x_norms[:, None] + c_norms[None, :] - 2.0 * (xs @ cs.T)
    return dist.argmin(dim=1)


FUZZ = {"k": (1, 300), "points_per_cluster": (1, 100)}
