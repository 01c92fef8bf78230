#!/usr/bin/env python3
"""GPU confirmations of three bugs that lint's first runs found in released packages
(docs/lint-first-run.md, sets Z, Y and W), each through the released package's own code:

  turbo-gnn 0.1.0rc4  the graph transformer's backward (`wsb_flashattn_tc_backward_kernel`,
                      src/backends/triton_backend/kernels_impl.py:799 and :821, Z3 and Z4) is
                      autotuned over 18 configs with no `reset_to_zero` and `tl.atomic_add`s dQ
                      and dV into tensors its launcher zeroes once: the first backward for each
                      (num_nodes, head dim) returns them multiplied by the number of launches.
  fastqml 0.2.1       the in-place no-grad forward (`apply_mux_ry_`, `apply_mux_ry_rz_`,
                      fastqml/register_ops.py) launches `_mux_fwd_kernel` on the caller's `re`
                      and `im` with flat offsets and nothing makes them contiguous.
  mlipops 0.6.0       `interp_derivatives_kernel` (mlipops/pme_triton.py:80-82, W1 to W3) loads
                      `ti` with no mask: past its end for a particle or point count that is not a
                      multiple of 256. (`interp_dipoles_kernel`, :132-134, has the same loads.)

Nothing of the packages is copied here: they are installed from wheels (docs/measurements/
found-confirm/run.sh) and imported. Two modules that the Triton path of turbo-gnn never calls
are replaced by empty stand-ins so that the package imports: `turbo_gnn._C` (its CUDA
extension, which the sdist builds only with nvcc) and `ogb.nodeproppred` (a data-set loader
that would pull pandas and scikit-learn); the output says so.

On a machine without a GPU (TRITON_INTERPRET=1) the parts that can run under the interpreter
run, and the others say "needs a GPU".

    python3 confirm.py [--logdir DIR] [--only fastqml,mlipops,turbo-gnn]
"""
import argparse
import importlib.metadata as md
import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback
import types

import torch

HERE = os.path.abspath(__file__)
ROWS = []  # (package, what, observed, expected, verdict)
GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET", "0") != "1"
DEV = "cuda" if GPU else "cpu"


def ver(dist):
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return "not installed"


def row(package, what, observed, expected, verdict):
    ROWS.append((package, what, observed, expected, verdict))
    print(f"  [{verdict}] {package}: {what}\n      observed: {observed}\n      expected: {expected}", flush=True)


def rel(a, b):
    """max |a - b| / max |b|"""
    a = a.double().cpu()
    b = b.double().cpu()
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-30))


def scale_factor(a, b):
    """least-squares c in a ~ c * b"""
    a = a.double().flatten().cpu()
    b = b.double().flatten().cpu()
    return float((a * b).sum() / (b * b).sum().clamp_min(1e-30))


# --------------------------------------------------------------------------------------------
# turbo-gnn 0.1.0rc4
# --------------------------------------------------------------------------------------------

STUBBED = []


def tg_import():
    """The package's Triton backend, with its unused CUDA extension and data-set loader stubbed."""
    try:
        import turbo_gnn._C  # noqa: F401  (present only when the sdist was built with nvcc)
    except ImportError:
        sys.modules["turbo_gnn._C"] = types.ModuleType("turbo_gnn._C")
        STUBBED.append("turbo_gnn._C (CUDA extension, not built: the Triton path does not use it)")
    try:
        import ogb.nodeproppred  # noqa: F401
    except ImportError:
        ogb = types.ModuleType("ogb")
        npp = types.ModuleType("ogb.nodeproppred")

        class NodePropPredDataset:  # never instantiated here
            pass

        npp.NodePropPredDataset = NodePropPredDataset
        ogb.nodeproppred = npp
        sys.modules["ogb"] = ogb
        sys.modules["ogb.nodeproppred"] = npp
        STUBBED.append("ogb.nodeproppred (OGB data-set loader, unused here)")
    from src.backends.triton_backend import TritonBlockSparseBackend
    from src.backends.triton_backend import kernels_impl as ki
    from src.data.converters import AdjacencyForwardBackwardCSR, WSBFormat
    return ki, TritonBlockSparseBackend, WSBFormat, AdjacencyForwardBackwardCSR


def tg_graph(n, deg, seed):
    """A random directed graph as a dense bool [n, n] (row attends to column), self-loops in."""
    g = torch.Generator().manual_seed(seed)
    adj = torch.rand(n, n, generator=g) < (deg / n)
    adj |= torch.eye(n, dtype=torch.bool)
    return adj


def tg_wsb(adj, WSBFormat, AdjacencyForwardBackwardCSR, ki):
    """The WSB (row-window / 16x8 tensor-core block) format of `adj`, laid out as the package's
    format documents it (converters.py: WSBFormat and the prototype in build_wsb_format): row
    windows of ROW_WINDOW_SIZE rows, each window's sorted distinct columns cut into TCBs of
    TCB_WIDTH (padded with column 0), bitmap bit (row % 8) * TCB_WIDTH + column of the TCB,
    rows 0-7 in the first uint64 and 8-15 in the second. (The package builds it with a CUDA
    source, wsb_format.cu, that its sdist does not ship.) Checked below with the package's own
    `WSBFormat.to_dense()`."""
    import numpy as np
    RW = ki.ROW_WINDOW_SIZE
    TW = ki.TCB_WIDTH
    TS = ki.TCB_SIZE
    n = adj.shape[0]
    nrw = (n + RW - 1) // RW
    offs, cols_all, bms, wts = [0], [], [], []
    for rw in range(nrw):
        r0, r1 = rw * RW, min(rw * RW + RW, n)
        cols = sorted(set(torch.nonzero(adj[r0:r1].any(0)).flatten().tolist()))
        ntcb = (len(cols) + TW - 1) // TW
        for t in range(ntcb):
            real = cols[t * TW:(t + 1) * TW]
            lo = hi = 0
            w = np.zeros(TS, dtype=np.float32)
            for lr in range(r1 - r0):
                for lc, c in enumerate(real):
                    if adj[r0 + lr, c]:
                        bit = (lr % 8) * TW + lc
                        if lr < 8:
                            lo |= 1 << bit
                        else:
                            hi |= 1 << bit
                        w[lr * TW + lc] = 1.0
            cols_all.extend(real + [0] * (TW - len(real)))
            bms.extend([lo, hi])
            wts.extend(w.tolist())
        offs.append(offs[-1] + ntcb)
    bitmap = torch.from_numpy(np.array(bms, dtype=np.uint64).view(np.int64).copy())
    a = adj.float().to_sparse_csr()
    wsb = WSBFormat(
        tcb_row_offset=torch.tensor(offs, dtype=torch.int32),
        col_idx=torch.tensor(cols_all, dtype=torch.int32),
        bitmap=bitmap,
        weights=torch.tensor(wts, dtype=torch.float16),
        num_nodes=n, num_edges=int(adj.sum()), num_row_windows=nrw, num_tcbs=offs[-1],
        adjacency_matrices_meta=AdjacencyForwardBackwardCSR(adj_mat_csr_forward=a, adj_mat_csr_backward=a),
    )
    dense = wsb.to_dense()
    if not torch.equal(dense.bool(), adj):
        raise RuntimeError("the WSB format built here does not decode (WSBFormat.to_dense) to the graph")
    return wsb


def tg_ref_attention(q, k, v, adj, scale):
    """The forward the kernels compute (kernels_impl.py, the backward's docstring):
    O[row] = softmax(K[row] @ Q[col]^T * scale over the row's columns) @ V[col], per head."""
    s = torch.einsum("rhd,chd->hrc", k, q) * scale
    s = s.masked_fill(~adj.to(s.device)[None], float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.einsum("hrc,chd->rhd", p, v)


class Counter:
    def __init__(self):
        self.n = 0

    def __call__(self, *a, **k):
        self.n += 1


def tg_hook(ki):
    """Counts the backward kernel's launches (Triton's JITFunction pre-run hook, if it has one)."""
    c = Counter()
    fn = ki.wsb_flashattn_tc_backward_kernel
    jit = getattr(fn, "fn", None)
    if jit is not None and hasattr(jit, "add_pre_run_hook"):
        jit.add_pre_run_hook(c)
        return c
    return None


def tg_direct_call(ki, wsb, n, H, D, seed):
    """WSBGraphTransformer.apply(q, k, v, wsb, scale) and its backward against autograd of the
    dense attention in float64, from the same fp16-rounded inputs."""
    g = torch.Generator().manual_seed(seed)
    q0, k0, v0 = (torch.randn(n, H, D, generator=g).half().float() for _ in range(3))
    do = torch.randn(n, H, D, generator=g)
    scale = D ** -0.5
    q, k, v = (t.clone().to(DEV).requires_grad_(True) for t in (q0, k0, v0))
    out = ki.WSBGraphTransformer.apply(q, k, v, wsb, scale)
    out.backward(do.to(DEV).view_as(out))
    torch.cuda.synchronize()
    qr, kr, vr = (t.double().requires_grad_(True) for t in (q0, k0, v0))
    ref = tg_ref_attention(qr, kr, vr, wsb_adj(wsb), scale)
    ref.backward(do.double())
    return {
        "O": (rel(out.detach().view(n, H, D), ref.detach()), 1.0),
        "dQ": (rel(q.grad, qr.grad), scale_factor(q.grad, qr.grad)),
        "dK": (rel(k.grad, kr.grad), scale_factor(k.grad, kr.grad)),
        "dV": (rel(v.grad, vr.grad), scale_factor(v.grad, vr.grad)),
    }


_ADJ = {}


def wsb_adj(wsb):
    return _ADJ[id(wsb)]


def tg_fmt(res):
    return ", ".join(f"{k} err {e:.1e} (x{c:,.1f})" for k, (e, c) in res.items())


TG_DIRECT = (200, 2, 32)  # nodes, heads, head dim
TG_CONV = [(200, 1), (200, 1), (328, 2)]  # (nodes, graph seed) of the layer's three calls
TOL = 3e-2  # fp16 tensor-core products against float64: right is ~1e-3


def section_turbo_gnn():
    print("\n== turbo-gnn 0.1.0rc4: WSBGraphTransformer's autotuned backward, atomics without reset_to_zero ==", flush=True)
    ki, Backend, WSBFormat, AFB = tg_import()
    pkg = f"turbo-gnn {ver('turbo-gnn')}"
    print(f"  stand-ins: {'; '.join(STUBBED) or 'none'}")
    print(f"  backward configs: {len(ki._FLASHATTN_ACTIVE_CONFIGS)} (TRITON_AUTOTUNE_DISABLED={os.environ.get('TRITON_AUTOTUNE_DISABLED', 'unset')}), "
          f"reset_to_zero: {getattr(ki.wsb_flashattn_tc_backward_kernel, 'reset_to_zero', '?')}")

    def build(n, seed):
        adj = tg_graph(n, 8, seed)
        wsb = tg_wsb(adj, WSBFormat, AFB, ki)
        print(f"  graph: {n} nodes, {int(adj.sum())} edges, {wsb.num_row_windows} row windows, {wsb.num_tcbs} TCBs "
              f"(WSBFormat.to_dense() equals the graph)")
        wsb = wsb.to(DEV)
        _ADJ[id(wsb)] = adj
        return wsb

    if not GPU:
        build(40, 1)
        row(pkg, "WSBGraphTransformer forward/backward", "not run: the package's launchers assert Q.is_cuda",
            "-", "needs a GPU")
        return
    counter = tg_hook(ki)

    # 1. the autograd function itself, head dim 32: first call (tuned) and second (cached)
    n, H, D = TG_DIRECT
    wsb = build(n, 1) if n else None
    for call in ((1, 2) if n else ()):
        before = counter.n if counter else 0
        res = tg_direct_call(ki, wsb, n, H, D, seed=10 + call)
        launches = (counter.n - before) if counter else None
        bad = [k for k, (e, _) in res.items() if e > TOL]
        row(pkg, f"WSBGraphTransformer.apply, {n} nodes, {H} heads, D={D}, call {call}"
                 + (" (autotuning)" if call == 1 else " (config cached)"),
            f"{tg_fmt(res)}; backward kernel launches {launches}",
            f"every gradient within {TOL} of autograd (x1.0)",
            "WRONG" if bad else "right")

    # 2. the package's graph-transformer convolution layer (conv.py), head dim 16
    torch.manual_seed(0)
    layer = Backend(device=DEV).create_conv("gt", feature_dim=64, heads=4).to(DEV)
    for call, (n, seed) in enumerate(TG_CONV, start=1):
        wsb = build(n, seed) if call != 2 else wsb
        x = torch.randn(n, 64, generator=torch.Generator().manual_seed(100 + call)).to(DEV).requires_grad_(True)
        wout = torch.randn(n, 64, generator=torch.Generator().manual_seed(200 + call)).to(DEV)
        layer.zero_grad()
        before = counter.n if counter else 0
        out = layer(x, wsb)
        (out * wout).sum().backward()
        torch.cuda.synchronize()
        launches = (counter.n - before) if counter else None
        gx, gw = x.grad.detach().clone(), layer.qkv_proj.weight.grad.detach().clone()
        # reference: the same layer written with torch ops, the attention in float64
        xr = x.detach().double().requires_grad_(True)
        W = layer.qkv_proj.weight.detach().double().requires_grad_(True)
        b = layer.qkv_proj.bias.detach().double()
        xl = torch.nn.functional.layer_norm(xr, (64,))
        qkv = torch.nn.functional.linear(xl, W, b)
        q, k, v = qkv.split(64, -1)
        # the kernels read fp16 copies; the gradient passes the rounding unchanged
        q, k, v = (t + (t.half().double() - t).detach() for t in (q, k, v))
        q, k, v = (t.reshape(-1, 4, 16) for t in (q, k, v))
        o = tg_ref_attention(q, k, v, wsb_adj(wsb), layer.attn_scores_multiplier).reshape(-1, 64)
        (o * wout.double()).sum().backward()
        res = {"out": (rel(out.detach(), o.detach()), 1.0), "dx": (rel(gx, xr.grad), scale_factor(gx, xr.grad)),
               "dW_qkv": (rel(gw, W.grad), scale_factor(gw, W.grad))}
        bad = [kk for kk, (e, _) in res.items() if e > TOL]
        what = {1: "first call (autotuning)", 2: "second call, same graph (config cached)",
                3: "first call for a new graph size (autotuning again)"}[call]
        row(pkg, f"TritonBlockSparseBackend().create_conv('gt') layer (conv.py), {n} nodes, 4 heads, D=16: {what}",
            f"{tg_fmt(res)}; backward kernel launches {launches}",
            f"gradients within {TOL} of the same layer in torch (x1.0)", "WRONG" if bad else "right")

    # 3. control: the package's own single-config switch, in a fresh process
    env = dict(os.environ, TRITON_AUTOTUNE_DISABLED="1")
    r = subprocess.run([sys.executable, HERE, "--child", "turbo-single-config"], env=env,
                       capture_output=True, text=True, timeout=300)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("CHILD ")]
    if lines:
        res = json.loads(lines[-1][6:])
        bad = [k for k, (e, _) in res["res"].items() if e > TOL]
        row(pkg, "control: TRITON_AUTOTUNE_DISABLED=1 (the package's one safe config, no tuning), "
                 f"WSBGraphTransformer.apply, 200 nodes, D=32, first call",
            f"{tg_fmt({k: tuple(v) for k, v in res['res'].items()})}; backward kernel launches {res['launches']}",
            f"every gradient within {TOL} of autograd (x1.0)", "WRONG" if bad else "right")
    else:
        row(pkg, "control: TRITON_AUTOTUNE_DISABLED=1", f"child failed (exit {r.returncode}): "
            + (r.stderr.strip().splitlines() or ["?"])[-1][:300], "-", "not run")


def child_turbo_single_config():
    ki, _, WSBFormat, AFB = tg_import()
    counter = tg_hook(ki)
    adj = tg_graph(200, 8, 1)
    wsb = tg_wsb(adj, WSBFormat, AFB, ki).to(DEV)
    _ADJ[id(wsb)] = adj
    res = tg_direct_call(ki, wsb, 200, 2, 32, seed=11)
    print("CHILD " + json.dumps({"res": res, "launches": counter.n if counter else None,
                                 "configs": len(ki._FLASHATTN_ACTIVE_CONFIGS)}))


# --------------------------------------------------------------------------------------------
# fastqml 0.2.1
# --------------------------------------------------------------------------------------------

def section_fastqml():
    print("\n== fastqml 0.2.1: in-place no-grad forward (apply_mux_ry_, apply_mux_ry_rz_) on a view ==", flush=True)
    import fastqml
    from fastqml import register_ops as ro
    pkg = f"fastqml {ver('fastqml')}"
    print(f"  fastqml.__version__ {fastqml.__version__}, HAVE_TRITON {ro.HAVE_TRITON}")
    B, nq, target, sel = 8, 10, 0, 3
    D, S = 1 << nq, 1 << sel
    stride = 1 << (nq - 1 - target)
    g = torch.Generator().manual_seed(0)
    re0 = torch.randn(B, D, generator=g)
    im0 = torch.randn(B, D, generator=g)
    nrm = (re0 ** 2 + im0 ** 2).sum(1, keepdim=True).sqrt()
    re0, im0 = re0 / nrm, im0 / nrm
    ty = torch.rand(B, S, generator=g) * 6.283
    tz = torch.rand(B, S, generator=g) * 6.283

    def views(kind):
        """re, im (B, D) as the caller may hold them, plus the storage(s) behind them."""
        if kind == "contiguous":
            re, im = re0.clone().to(DEV), im0.clone().to(DEV)
            return re, im, [re, im]
        if kind == "rows of a (B, 2, D) tensor":
            st = torch.stack([re0, im0], 1).to(DEV)
            return st[:, 0], st[:, 1], [st]
        if kind == "slice of a (B, D+32) buffer":
            br = torch.full((B, D + 32), 7.0, device=DEV)
            bi = torch.full((B, D + 32), 7.0, device=DEV)
            br[:, :D] = re0.to(DEV)
            bi[:, :D] = im0.to(DEV)
            return br[:, :D], bi[:, :D], [br, bi]
        if kind == "transposed (D, B) tensor":
            re, im = re0.t().contiguous().to(DEV).t(), im0.t().contiguous().to(DEV).t()
            return re, im, [re, im]
        raise ValueError(kind)

    kinds = ["contiguous", "rows of a (B, 2, D) tensor", "slice of a (B, D+32) buffer", "transposed (D, B) tensor"]
    # sanity: the package's eager path (the reference) agrees with its autograd Triton path
    exp_r, exp_i = ro._mux_eager(re0.clone(), im0.clone(), ty, None, stride, S)
    if GPU:
        vr, vi, _ = views("rows of a (B, 2, D) tensor")
        o_r, o_i = ro.apply_mux_ry(vr, vi, ty.to(DEV), target, nq, sel)
        e = max(rel(o_r, exp_r), rel(o_i, exp_i))
        row(pkg, "reference check: apply_mux_ry (autograd path, copies its input) on rows of a (B, 2, D) tensor vs the package's eager path",
            f"max error {e:.1e}", "< 1e-5", "right" if e < 1e-5 else "WRONG")
    for name, tzz in (("apply_mux_ry_", None), ("apply_mux_ry_rz_", tz)):
        exp_r, exp_i = ro._mux_eager(re0.clone(), im0.clone(), ty, tzz, stride, S)
        for kind in kinds:
            re, im, stores = views(kind)
            pad_before = [s.clone() for s in stores]
            with torch.no_grad():
                if GPU:
                    if tzz is None:
                        ro.apply_mux_ry_(re, im, ty.to(DEV), target, nq, sel)
                    else:
                        ro.apply_mux_ry_rz_(re, im, ty.to(DEV), tzz.to(DEV), target, nq, sel)
                    torch.cuda.synchronize()
                    how = f"{name}(re, im, ...) on CUDA, no grad"
                else:
                    # the call that apply_mux_ry_'s CUDA branch makes (register_ops.py), under the interpreter
                    cy, sy = torch.cos(ty / 2).contiguous(), torch.sin(ty / 2).contiguous()
                    cz = torch.cos(tzz / 2).contiguous() if tzz is not None else None
                    sz = torch.sin(tzz / 2).contiguous() if tzz is not None else None
                    ro._mux_launch_fwd(re, im, cy, sy, cz, sz, stride, S)
                    how = f"_mux_launch_fwd as {name}'s CUDA branch calls it (interpreter)"
            er, ei = rel(re, exp_r), rel(im, exp_i)
            off = int(((re.cpu() - exp_r).abs() > 1e-5).sum() + ((im.cpu() - exp_i).abs() > 1e-5).sum())
            extra = ""
            if kind == "slice of a (B, D+32) buffer":
                pads = sum(int((s[:, D:] != p[:, D:]).sum()) for s, p in zip(stores, pad_before))
                extra = f"; {pads} of {2 * B * 32} padding elements overwritten"
            bad = max(er, ei) > 1e-5 or (extra and not extra.startswith("; 0 "))
            row(pkg, f"{how}; {B} states of {nq} qubits, target {target}, {sel} select bits; state: {kind}",
                f"max error {max(er, ei):.2e} of the largest amplitude, {off} of {2 * B * D} amplitudes off{extra}",
                "equal to the package's eager path on a contiguous copy (error < 1e-5)", "WRONG" if bad else "right")


# --------------------------------------------------------------------------------------------
# mlipops 0.6.0
# --------------------------------------------------------------------------------------------

def ml_setup(n, what, seed=0):
    import mlipops
    from mlipops import CoulombPME, NeighborList
    g = torch.Generator().manual_seed(seed)
    box = (torch.eye(3) * 2.0).to(DEV)
    mm = "dipole" if what == "dipole" else "charge"
    pme = CoulombPME(NeighborList(cutoff=0.9, device=DEV), None, 16, 16, 16, 5, 3.0, 138.935, max_multipole=mm)
    if not GPU:
        pme.use_triton = True  # the branch a CUDA device takes; under the interpreter on the CPU
    npart = 64 if what == "potential" else n
    pos = (torch.rand(npart, 3, generator=g) * 2.0).to(DEV)
    q = torch.randn(npart, generator=g)
    q = (q - q.mean()).to(DEV)
    pts = (torch.rand(n, 3, generator=g) * 2.0).to(DEV)
    dip = (torch.randn(npart, 3, generator=g) * 0.1).to(DEV) if mm == "dipole" else None
    return mlipops, pme, box, pos, q, pts, dip


def ml_run(pme, what, box, pos, q, pts, dip):
    """The package's public calls: compute_potential at the points, or the energy and its backward
    (the forces; interp_derivatives_kernel, or interp_dipoles_kernel with dipoles)."""
    if what == "potential":
        return pme.compute_potential(pts, pos, q, box, include_direct=False)
    p = pos.clone().requires_grad_(True)
    e = pme(p, q, box, include_direct=False, dipoles=dip)
    e.sum().backward()
    return p.grad


def find_sanitizer():
    c = [shutil.which("compute-sanitizer")]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            c.append(os.path.join(os.environ[var], "bin", "compute-sanitizer"))
    c.append("/usr/local/cuda/bin/compute-sanitizer")
    import glob
    c += sorted(glob.glob("/usr/local/cuda-*/bin/compute-sanitizer"), reverse=True)
    return next((x for x in c if x and os.access(x, os.X_OK)), None)


def section_mlipops(logdir):
    print("\n== mlipops 0.6.0: interp_derivatives_kernel's unmasked loads of ti ==", flush=True)
    pkg = f"mlipops {ver('mlipops')}"
    # values: the Triton path equals the package's torch path (the bug does not change them)
    for what, n in (("potential", 256), ("potential", 300), ("potential", 5), ("forces", 300), ("dipole", 300)):
        mlipops, pme, box, pos, q, pts, dip = ml_setup(n, what)
        got = ml_run(pme, what, box, pos, q, pts, dip).detach()
        pme.use_triton = False
        ref = ml_run(pme, what, box, pos, q, pts, dip).detach()
        e = rel(got, ref)
        desc = {"potential": f"compute_potential at {n} points (64 charges)",
                "forces": f"forces (energy backward) of {n} charges",
                "dipole": f"forces of {n} charges and dipoles (interp_dipoles_kernel)"}[what]
        row(pkg, f"{desc}: Triton path vs the package's torch path", f"max error {e:.1e}",
            "equal (the bug reads out of bounds, the result stays right)", "right" if e < 1e-4 else "WRONG")
    if not GPU:
        row(pkg, "out-of-bounds read of ti", "not run", "compute-sanitizer / a guard page", "needs a GPU")
        return

    # 1. compute-sanitizer memcheck, one process per case (an error ends the CUDA context)
    cs = find_sanitizer()
    if cs is None:
        row(pkg, "compute-sanitizer memcheck", "compute-sanitizer not found (PATH, $CUDA_HOME, /usr/local/cuda)", "-", "not run")
    else:
        helptext = subprocess.run([cs, "--help"], capture_output=True, text=True, timeout=120).stdout
        pad = ["--padding", "8192"] if "--padding" in helptext else []
        print(f"  compute-sanitizer: {cs}; memcheck with {' '.join(pad) or 'no padding option'}, PYTORCH_NO_CUDA_MEMORY_CACHING=1")
        for what, n in (("potential", 256), ("potential", 300), ("forces", 300), ("dipole", 300)):
            cmd = [cs, "--tool", "memcheck", *pad, "--print-limit", "10", "--report-api-errors", "no",
                   "--error-exitcode", "99", sys.executable, HERE, "--child", "mlipops-run", "--what", what, "--n", str(n)]
            env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1")
            t0 = time.time()
            try:
                r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
                out, rc = r.stdout + r.stderr, r.returncode
            except subprocess.TimeoutExpired as ex:
                out, rc = (ex.stdout or b"").decode(errors="replace") if isinstance(ex.stdout, bytes) else (ex.stdout or ""), "timeout"
            if logdir:
                with open(os.path.join(logdir, f"memcheck-mlipops-{what}-{n}.log"), "w") as f:
                    f.write(" ".join(cmd) + "\n" + out)
            m = re.search(r"ERROR SUMMARY: (\d+) error", out)
            nerr = int(m.group(1)) if m else None
            reads = len(re.findall(r"Invalid __global__ read", out))
            kernels = sorted(set(re.findall(r"at (?:0x[0-9a-f]+ in )?([A-Za-z_]\w*?)(?:\+0x[0-9a-f]+|\()", out)) &
                             {"interp_derivatives_kernel", "interp_dipoles_kernel", "spread_charge_kernel", "spread_dipoles_kernel"})
            lines = sorted(set(re.findall(r"pme_triton\.py:(\d+)", out)), key=int)
            past = re.findall(r"is ([\d,]+) bytes after the nearest allocation at 0x[0-9a-f]+ of size ([\d,]+) bytes", out)
            done = "CHILD done" in out
            obs = (f"{nerr if nerr is not None else '?'} errors ({reads} invalid global reads shown)"
                   + (f" in {', '.join(kernels)}" if kernels else "") + (f", pme_triton.py lines {', '.join(lines)}" if lines else "")
                   + (f"; e.g. {past[0][0]} bytes after an allocation of {past[0][1]} bytes" if past else "")
                   + f"; exit {rc}; child {'finished' if done else 'did not finish'}; {time.time() - t0:.0f} s")
            expect_bad = n % 256 != 0
            if nerr is None:
                verdict = "not run"
            elif nerr == 0:
                verdict = "WRONG (not shown)" if expect_bad else "clean"
            else:
                verdict = "OUT OF BOUNDS" if kernels or lines else "errors (see log)"
            kern = "interp_dipoles_kernel" if what == "dipole" else "interp_derivatives_kernel"
            row(pkg, f"memcheck: {what} with n={n} ({kern})", obs,
                "out-of-bounds reads of ti" if expect_bad else "no error (n a multiple of 256)", verdict)

    # 2. without the sanitizer: ti moved to the end of a mapped page with an unmapped page after it
    for n in (256, 300):
        r = subprocess.run([sys.executable, HERE, "--child", "mlipops-guard", "--n", str(n)],
                           capture_output=True, text=True, timeout=240)
        out = r.stdout + r.stderr
        if logdir:
            with open(os.path.join(logdir, f"guardpage-mlipops-{n}.log"), "w") as f:
                f.write(out)
        res = [ln[6:] for ln in out.splitlines() if ln.startswith("GUARD ")]
        res = res[-1] if res else f"no result (exit {r.returncode}): " + (out.strip().splitlines() or ["?"])[-1][:200]
        fault = "illegal memory access" in out.lower() or "illegal address" in out.lower()
        if res.startswith("setup failed"):
            verdict = "not run"
        elif n % 256 == 0:
            verdict = "clean" if res.startswith("ok") else "inconclusive"
        else:
            verdict = "OUT OF BOUNDS" if fault else ("WRONG (not shown)" if res.startswith("ok") else "inconclusive")
        row(pkg, f"guard page: compute_potential at n={n} points, ti placed so it ends where an unmapped page begins",
            res, "illegal memory access" if n % 256 else "runs clean", verdict)


def child_mlipops_run(what, n):
    mlipops, pme, box, pos, q, pts, dip = ml_setup(n, what)
    print(f"CHILD start {what} n={n}", flush=True)
    r = ml_run(pme, what, box, pos, q, pts, dip)
    if GPU:
        torch.cuda.synchronize()
    print(f"CHILD done {what} n={n} sum={float(r.double().sum()):.6e}", flush=True)


def child_mlipops_guard(n):
    import ctypes
    import mlipops.coulombpme as cp
    try:
        torch.zeros(1, device="cuda")
        cu = ctypes.CDLL("libcuda.so.1")
        u64, sz = ctypes.c_uint64, ctypes.c_size_t

        class Loc(ctypes.Structure):
            _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]

        class Flags(ctypes.Structure):
            _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                        ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]

        class Prop(ctypes.Structure):
            _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", Loc),
                        ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", Flags)]

        class Access(ctypes.Structure):
            _fields_ = [("location", Loc), ("flags", ctypes.c_int)]

        cu.cuMemGetAllocationGranularity.argtypes = [ctypes.POINTER(sz), ctypes.POINTER(Prop), ctypes.c_int]
        cu.cuMemAddressReserve.argtypes = [ctypes.POINTER(u64), sz, sz, u64, u64]
        cu.cuMemCreate.argtypes = [ctypes.POINTER(u64), sz, ctypes.POINTER(Prop), u64]
        cu.cuMemMap.argtypes = [u64, sz, sz, u64, u64]
        cu.cuMemSetAccess.argtypes = [u64, sz, ctypes.POINTER(Access), sz]
        cu.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]

        def chk(rc, what):
            if rc != 0:
                raise RuntimeError(f"{what}: CUresult {rc}")

        ctx = ctypes.c_void_p()
        chk(cu.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
        if not ctx.value:
            raise RuntimeError("no current CUDA context")
        dev = torch.cuda.current_device()
        prop = Prop()
        prop.type = 1  # CU_MEM_ALLOCATION_TYPE_PINNED
        prop.location.type = 1  # CU_MEM_LOCATION_TYPE_DEVICE
        prop.location.id = dev
        gran = sz()
        chk(cu.cuMemGetAllocationGranularity(ctypes.byref(gran), ctypes.byref(prop), 0), "cuMemGetAllocationGranularity")
        G = gran.value
        va = u64()
        chk(cu.cuMemAddressReserve(ctypes.byref(va), 2 * G, 0, 0, 0), "cuMemAddressReserve")
        h = u64()
        chk(cu.cuMemCreate(ctypes.byref(h), G, ctypes.byref(prop), 0), "cuMemCreate")
        chk(cu.cuMemMap(va.value, G, 0, h.value, 0), "cuMemMap")
        acc = Access()
        acc.location.type = 1
        acc.location.id = dev
        acc.flags = 3  # CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        chk(cu.cuMemSetAccess(va.value, G, ctypes.byref(acc), 1), "cuMemSetAccess")
        ptr = va.value + G - n * 3 * 4

        class CAI:
            __cuda_array_interface__ = {"shape": (n, 3), "typestr": "<i4", "data": (ptr, False),
                                        "version": 2, "strides": None}

        at_end = torch.as_tensor(CAI(), device="cuda")
        assert at_end.data_ptr() == ptr and at_end.dtype == torch.int32
        at_end.zero_()
        torch.cuda.synchronize()
        # the page after the end must fault: check with a torch read one element past it? No:
        # that would end the context. The mapped page is G bytes; the next G bytes are reserved
        # and unmapped.
    except Exception as ex:  # noqa: BLE001
        print(f"GUARD setup failed: {type(ex).__name__}: {ex}", flush=True)
        return
    mlipops, pme, box, pos, q, pts, dip = ml_setup(n, "potential")
    orig = cp.compute_spline_coefficients

    def moved(pme_, positions, *a, **k):
        ti, dr, data, ddata = orig(pme_, positions, *a, **k)
        if positions is pts:  # the points' grid indices: what interp_derivatives_kernel reads
            at_end.copy_(ti)
            ti = at_end
        return ti, dr, data, ddata

    cp.compute_spline_coefficients = moved
    try:
        pot = pme.compute_potential(pts, pos, q, box, include_direct=False)
        torch.cuda.synchronize()
        print(f"GUARD ok: ran clean, ti's {n * 12} bytes end {G // 1024} KiB into a mapped page "
              f"(potential sum {float(pot.sum()):.6e})", flush=True)
    except Exception as ex:  # noqa: BLE001
        print(f"GUARD error: {type(ex).__name__}: {str(ex).strip().splitlines()[0][:160]}", flush=True)


# --------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--logdir", default=os.environ.get("OUT"))
    ap.add_argument("--only", default="fastqml,mlipops,turbo-gnn")
    ap.add_argument("--child")
    ap.add_argument("--what")
    ap.add_argument("--n", type=int)
    a = ap.parse_args()
    if a.child == "turbo-single-config":
        return child_turbo_single_config()
    if a.child == "mlipops-run":
        return child_mlipops_run(a.what, a.n)
    if a.child == "mlipops-guard":
        return child_mlipops_guard(a.n)

    import triton
    dev = torch.cuda.get_device_name(0) if GPU else "no GPU (TRITON_INTERPRET=1 on the CPU)"
    print(f"found-confirm: {dev}; torch {torch.__version__}, triton {triton.__version__}, "
          f"Python {sys.version.split()[0]}; turbo-gnn {ver('turbo-gnn')}, fastqml {ver('fastqml')}, "
          f"mlipops {ver('mlipops')}, torch_geometric {ver('torch_geometric')}", flush=True)
    if not GPU and os.environ.get("TRITON_INTERPRET") != "1":
        print("no GPU and TRITON_INTERPRET is not 1: the kernels cannot run", flush=True)
    crashed = []
    sections = {"turbo-gnn": section_turbo_gnn, "fastqml": section_fastqml,
                "mlipops": lambda: section_mlipops(a.logdir)}
    for name in a.only.split(","):
        t0 = time.time()
        try:
            sections[name]()
        except Exception:  # noqa: BLE001
            crashed.append(name)
            tb = traceback.format_exc()
            print(tb, flush=True)
            row(name, "section", "crashed: " + tb.strip().splitlines()[-1][:300], "-", "not run")
        print(f"  ({name}: {time.time() - t0:.0f} s)", flush=True)

    print("\n== summary ==")
    try:
        from tabulate import tabulate
        print(tabulate([(p, w, o, e, v) for p, w, o, e, v in ROWS],
                       headers=["package", "what was run", "observed", "expected", "verdict"],
                       tablefmt="github", maxcolwidths=[18, 60, 70, 34, 14]))
    except Exception:  # noqa: BLE001
        for r in ROWS:
            print(" | ".join(r))
    shown = sorted({p for p, w, o, e, v in ROWS if v in ("WRONG", "OUT OF BOUNDS")})
    print(f"\nbug shown for: {', '.join(shown) or 'none'}; sections crashed: {', '.join(crashed) or 'none'}")
    return 2 if crashed else 0


if __name__ == "__main__":
    sys.exit(main() or 0)
