"""What a correct bf16 attention backward gives at the special-values detector's large row, and why the probe
called fastvideo-kernel's VSA backward (0.2.6, a first-run entry's fixed version) wrong there before the large
row's allowance (``special.amplified``). With a key row at 266, the textbook FlashAttention-2 backward in the
kernel's formats (our emulation: float32 scores and sums, P and dS rounded to bf16 as dot operands, O stored in
bf16, D = rowsum(dO * O)) is off from the float64 gradient by 0.78 (a dQ row about 1.8 times the float64 one),
where the reference's own formula in bf16 is off by 0.02: the error floor and the formats run, both estimated
from the reference, cannot see where a kernel's formula rounds. The released launcher is off by up to 1.49: it
also scales k in bf16 (``arg_k = k * (sm_scale * RCP_LN2)``) before the backward recomputes the softmax against
the forward's log-sum-exp (an emulation of exactly that, in float64 otherwise, reproduces it).

Run from the repository root with the fetched bug cache:

    CASEBOOK_BUG_CACHE=$PWD/.bugcache TRITON_INTERPRET=1 python3 docs/measurements/fastvideo-argk-s27/argk.py

It makes the probe's default inputs (seed 0), puts the special detector's large row into q or k
(``special._place``), runs the released kernel (the version named on the command line, default fixed)
under the interpreter, and sets its error beside two float64 emulations of the same algorithm, ours:
one with the backward's k scaled exactly, one with it scaled in bf16 as the launcher does; and beside
the reference with each input moved by one unit roundoff of bf16 (what rounding the data once does)."""

import math
import os
import sys

import torch

from harness.probe import execute as X
from harness.probe import target as T
from harness.probe.detectors import special
from harness.run import triton_compat

ENTRY = "bugs/fastvideo-vsa-triton-bwd-dq-block-size-mask/probe.py"


def keep_mask(q, block_map, sizes):
    pos = torch.arange(q.shape[2])
    real = (pos % 64) < sizes.long().repeat_interleave(64)
    return block_map.bool().repeat_interleave(64, dim=-2).repeat_interleave(64, dim=-1) & real[None, None, None, :]


def emulated(q, k, v, do, keep, argk_bf16: bool):
    """dQ, dK, dV of the forward/backward pair as the released launchers order them, in float64; the
    backward's scaled k rounded to bf16 (``argk_bf16``) or exact."""
    sm = 1.0 / math.sqrt(q.shape[-1])
    c = sm * 1.4426950408889634
    q, k, v, do = (x.double() for x in (q, k, v, do))
    s2 = ((q @ k.transpose(-2, -1)) * c).masked_fill(~keep, float("-inf"))  # forward: qk * qk_scale
    lse2 = torch.logsumexp(s2 * math.log(2), -1) / math.log(2)             # the M it stores (base 2)
    o = torch.exp2(s2 - lse2[..., None]) @ v
    ak = (k.to(torch.bfloat16) * c).double() if argk_bf16 else k * c        # the backward's arg_k
    p = torch.exp2((q @ ak.transpose(-2, -1)).masked_fill(~keep, float("-inf")) - lse2[..., None])
    dv = p.transpose(-2, -1) @ do
    ds = p * (do @ v.transpose(-2, -1) - (o * do).sum(-1)[..., None])
    dq = ds @ ak * math.log(2)
    dk = ds.transpose(-2, -1) @ q * sm
    return torch.cat([dq.flatten(), dk.flatten(), dv.flatten()])


def textbook(q, k, v, do, keep, argk_bf16: bool = False):
    """The FlashAttention-2 backward as its paper and Triton's tutorial order it, in the kernel's formats (ours):
    float32 scores, sums and accumulators; P rounded to bf16 for the P @ V and P^T @ dO dots, O stored in bf16,
    D = rowsum(dO * O), dS = P * (dP - D) rounded to bf16 for the dS @ K and dS^T @ Q dots. ``argk_bf16``: the
    backward's scores from k scaled in bf16, as the released launcher does."""
    bf = torch.bfloat16
    sm = 1.0 / math.sqrt(q.shape[-1])
    c = sm * 1.4426950408889634
    f = lambda x: x.float()  # noqa: E731
    s2 = ((f(q) @ f(k).transpose(-2, -1)) * c).masked_fill(~keep, float("-inf"))
    m = s2.amax(-1, keepdim=True)
    p = torch.exp2(s2 - m)
    l = p.sum(-1, keepdim=True)  # noqa: E741
    o = ((p.to(bf).float() @ f(v)) / l).to(bf)
    lse2 = (m + torch.log2(l)).squeeze(-1)
    sb = f(q) @ f((k * c).to(bf)).transpose(-2, -1) if argk_bf16 else (f(q) @ f(k).transpose(-2, -1)) * c
    pb = torch.exp2(sb.masked_fill(~keep, float("-inf")) - lse2[..., None])
    dv = pb.to(bf).float().transpose(-2, -1) @ f(do)
    ds = (pb * (f(do) @ f(v).transpose(-2, -1) - (f(o) * f(do)).sum(-1)[..., None])).to(bf).float()
    return torch.cat([(ds @ f(k) * sm).flatten(), (ds.transpose(-2, -1) @ f(q) * sm).flatten(), dv.flatten()]).double()


def one_unit(t, inputs, seed):
    """The reference with every bf16 input moved by one unit roundoff (2**-8), up or down at random."""
    g = torch.Generator().manual_seed(seed)
    moved = {n: (v.double() * (1 + (torch.randint(0, 2, v.shape, generator=g).double() * 2 - 1) * 2.0 ** -8)
                 if isinstance(v, torch.Tensor) and v.dtype == torch.bfloat16 else v) for n, v in inputs.items()}
    return X.as_reference(t.reference(**moved)).reshape(-1).double()


def main():
    torch.manual_seed(0)
    variant = sys.argv[1] if len(sys.argv) > 1 else "fixed"
    assert os.environ.get("TRITON_INTERPRET") == "1", "run under TRITON_INTERPRET=1"
    t = T.load(ENTRY, launcher=f"launch_{variant}", backend="interpreter")
    inputs = X.make(t, t.sizes, 0, "interpreter")
    print(f"fastvideo-kernel VSA backward, {variant} version, under the interpreter; torch {torch.__version__}")
    print(f"sizes {t.sizes}")
    with triton_compat.patched(interpreter=True, bench_calls=1):  # the interpreter's fixes, autotune timed once
        for name in ("q", "k"):
            compare(t, inputs, name)


def compare(t, inputs, name):
    if True:
        given = X.clone_inputs(inputs)
        where = special._place(given, name, "large")
        r = X.reference(t, given).reshape(-1).double()
        out = t.launcher(**X.clone_inputs(given)).reshape(-1).double()
        keep = keep_mask(given["q"], given["block_map"].cpu(), given["variable_block_sizes"].cpu())
        exact = emulated(given["q"], given["k"], given["v"], given["do"], keep, False)
        argk = emulated(given["q"], given["k"], given["v"], given["do"], keep, True)
        units = max((one_unit(t, given, s) - r).abs().max().item() for s in range(4))
        fa2 = textbook(given["q"], given["k"], given["v"], given["do"], keep)
        fa2k = textbook(given["q"], given["k"], given["v"], given["do"], keep, True)
        own = special.in_kernel_formats(t, given, torch.bfloat16).reshape(-1).double()
        scale = special.atol_scale(inputs, name)
        rule = special.amplified(inputs, scale)
        mag = special._magnitudes(r)

        def line(what, x):
            e = (x - r).abs()
            over = int((e > rule * mag).sum())
            print(f"  {what:<44} max |error| {e.max().item():.3g}, rms {e.square().mean().sqrt().item():.3g}; "
                  f"beyond the large-row allowance: {over}")

        print(f"\nthe large row in '{name}' ({where}), {scale:.3g} times the row as made; allowance "
              f"{rule:.3g} x max(|ref|, rms ref {r.square().mean().sqrt().item():.3g}):")
        line("released kernel", out)
        line("emulation, exact (float64)", exact)
        line("emulation, exact but k scaled in bf16", argk)
        line("textbook FA2 in the kernel's formats", fa2)
        line("textbook FA2, k scaled in bf16", fa2k)
        line("the reference's own formula in bf16", own)
        i = int((fa2 - r).abs().argmax())
        print(f"  at the textbook FA2's worst element [{i}]: reference {r[i].item():.4g}, textbook {fa2[i].item():.4g}, "
              f"kernel {out[i].item():.4g}, the reference's formula in bf16 {own[i].item():.4g}")
        print(f"  the reference with the bf16 inputs moved one unit (4 draws): max |change| {units:.3g}")


if __name__ == "__main__":
    main()
