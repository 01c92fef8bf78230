"""Glue for mamba2-chunk-state-bwd-db-seq-idx-missing-exp (a reproduction: repro.py beside
this file). ``nseqs`` sequences of random lengths are packed into one row of ``seqlen``
tokens; with ``nseqs = 1`` the launcher passes no seq_idx (one plain sequence), as a
caller that does not pack does, and the buggy branch is never taken.
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from repro import chunk_state_bwd_db  # noqa: E402

FUZZ = {"seqlen": (1, 400), "nseqs": (1, 6), "hdim": (1, 64), "dstate": (1, 64)}
# dstates is rounded to fp16 for the dot, as upstream rounds it to x's dtype
TOLERANCE = {"rtol": 1e-2, "atol": 1e-2}


def _prepare(dt, A, chunk_size):
    seqlen = dt.shape[0]
    nchunks = -(-seqlen // chunk_size)
    dtc = torch.nn.functional.pad(dt.float(), (0, nchunks * chunk_size - seqlen)).reshape(nchunks, chunk_size)
    return dtc.contiguous(), torch.cumsum(dtc * A.float(), dim=1).contiguous()


def _run(x, dstates, dt, A, seq_idx, chunk_size, fixed):
    dtc, dA_cumsum = _prepare(dt, A, chunk_size)
    packed = seq_idx is not None and int(seq_idx.max()) > 0
    return chunk_state_bwd_db(x, dstates.float().contiguous(), dtc, dA_cumsum,
                              seq_idx.to(torch.int32).contiguous() if packed else None, chunk_size, fixed=fixed)


def launch_buggy(x, dstates, dt, A, seq_idx, chunk_size):
    return _run(x, dstates, dt, A, seq_idx, chunk_size, False)


def launch_fixed(x, dstates, dt, A, seq_idx, chunk_size):
    return _run(x, dstates, dt, A, seq_idx, chunk_size, True)


def make_inputs(*, device, gen, seqlen=256, nseqs=1, hdim=64, dstate=16, chunk_size=64):
    x = torch.randn(seqlen, hdim, generator=gen).to(torch.float16)  # an fp16 model's activations
    nchunks = -(-seqlen // chunk_size)
    dstates = torch.randn(nchunks, hdim, dstate, generator=gen) * 0.1
    dt = 0.01 + 0.1 * torch.rand(seqlen, generator=gen)
    A = torch.tensor(-1.0)
    cuts = torch.randperm(max(seqlen - 1, 1), generator=gen)[: nseqs - 1].sort().values + 1 if nseqs > 1 else torch.tensor([], dtype=torch.long)
    seq_idx = torch.zeros(seqlen, dtype=torch.int32)
    for cut in cuts.tolist():
        seq_idx[cut:] += 1
    t = dict(x=x, dstates=dstates, dt=dt, A=A, seq_idx=seq_idx)
    return {**{k: v.to(device) for k, v in t.items()}, "chunk_size": chunk_size}


def reference(x, dstates, dt, A, seq_idx, chunk_size):
    x, dstates, dt, A = x.double(), dstates.double(), dt.double(), A.double()
    seqlen = x.shape[0]
    db = torch.zeros(seqlen, dstates.shape[2], dtype=torch.float64, device=x.device)
    for c, s in enumerate(range(0, seqlen, chunk_size)):
        e = min(s + chunk_size, seqlen)
        cs = torch.cumsum(dt[s:e] * A, dim=0)
        scale = torch.exp(torch.clamp(cs[-1] - cs, max=0.0))
        scale = torch.where(seq_idx[s:e] == seq_idx[e - 1], scale, torch.zeros_like(scale))
        db[s:e] = (scale * dt[s:e])[:, None] * (x[s:e] @ dstates[c])
    return db
