"""leetdecoding 0.0.3's Triton FleetAttention (``FleetAttention_triton``, leetDecoding/methods/FleetAttention_triton.py;
the method that the documented ``causal_linear_decoder(q, k, v, attn_method='FleetAttention')`` dispatches to),
called as released, against causal linear attention in float64 written here from the package's documented
semantics: ``out = tril(q @ k^T) @ v`` per batch and head (the check in efficient_linear_decoding.py's ``__main__``
and in its test, test/test_method.py), and with a per-head decay ``gamma`` (the "mask with weight" of the README)
``out[t] = sum over s <= t of gamma**(t - s) * (q[t] . k[s]) * v[s]``. The reference is first checked against the
package's own torch methods: ``FleetAttention`` (methods/FleetAttention.py, ``attn_method='FleetAttention_torch'``)
and ``linear_attn`` (methods/linear_attn.py, ``'vanilla'``, which takes the decay's slope s, gamma = exp(-s)).

Two defects, by reading the launcher (FleetAttention_triton.py:77-92) and its two kernels:

- the value width. The grid is ``(rank, bsz * heads, dim // 32)`` (line 85) with ``dim = V.shape[-1]``, unchecked:
  the last ``dim % 32`` columns of every row get no program and keep the zeros ``ans`` was allocated with, and at
  a width under 32 no program runs at all (lint's TL401, set U's first run, U6). This part shows on any backend.
- a race, on a GPU only. Every ``rank`` index (grid axis 0) is a program of its own, and each adds its share into
  ``ans`` with ``tl.load`` then ``tl.store`` (lines 35-36 and 73-74; the ``tl.atomic_add`` above them is commented
  out) at addresses that do not depend on that axis: concurrent programs of one head and column block read the same
  partial sum and the later store drops the other's addition. The interpreter runs programs one at a time, so it
  cannot show; ``--gpu`` runs the package test's shape (batch 1, 32 heads, 2,048 tokens, rank 128, width 128,
  float32) several times, and the same with rank 1 (one program per column block: nothing to race with) as a
  control. Not run yet.

``causal_linear_decoder`` itself is not called: its module (efficient_linear_decoding.py) imports ``pycuda.autoinit``
and ``pynvml`` and compiles three CUDA files with ``torch.utils.cpp_extension.load`` when it is imported, and asks
NVML for the free memory of ``q.device.index`` on every call; for float32 and float16 without a decay it calls
``FleetAttention_triton(q, k, v)`` or ``FleetAttention_triton(q, k, v, None)``, which is what is called here. Only
leetDecoding/methods/ is imported (its ``__init__`` files are empty). The code is not copied here.

    pip install --no-deps --target /tmp/leetdecoding leetdecoding==0.0.3
    python benchmarks/found/leetdecoding_fleet_attention_width.py /tmp/leetdecoding            # CPU, interpreter
    python benchmarks/found/leetdecoding_fleet_attention_width.py /tmp/leetdecoding --gpu      # a GPU, compiled

Exit 1 when an output is wrong (a bug shown), 0 when none is, 2 when leetdecoding cannot be imported from SITE, the
reference disagrees with the package's torch methods, or ``--gpu`` has no CUDA device.
"""

import os
import sys

GPU = "--gpu" in sys.argv[1:]
if not GPU:
    os.environ.setdefault("TRITON_INTERPRET", "1")

TOL = 1e-4  # of the largest reference output; float32 against float64


def reference(q, k, v, gamma, torch):
    """Causal linear attention in float64: tril(q k^T) v, the (t, s) weight times gamma**(t - s) when gamma (one
    decay factor per head) is given."""
    q, k, v = q.double(), k.double(), v.double()
    n = q.shape[-2]
    t = torch.arange(n, device=q.device)
    lag = (t[:, None] - t[None, :]).double()
    causal = lag >= 0
    if gamma is None:
        weight = causal.double()[None, None]
    else:
        g = gamma.double().view(1, -1, 1, 1)
        weight = torch.where(causal, g ** lag.clamp(min=0), torch.zeros((), dtype=torch.float64, device=q.device))
    return ((q @ k.transpose(-1, -2)) * weight) @ v


def compare(out, want, torch):
    """(columns all zero where the reference is not, columns with an element off, max error / max |reference|)."""
    out = out.detach().double()
    scale = want.abs().max().item()
    off = (out - want).abs() / scale
    per_col = off.flatten(0, -2).amax(0)
    zero = ((out.flatten(0, -2) == 0).all(0) & (want.flatten(0, -2) != 0).any(0))
    return int(zero.sum()), int((per_col > TOL).sum()), off.max().item()


def race(fleet, inputs, heads, n, launches, summary, torch) -> bool:
    """The same inputs (batch 1, ``heads`` heads, ``n`` tokens, width 128, float32) launched ``launches`` times at
    rank 128 and at rank 1, the control (one program per head and column block: nothing to race with); True when a
    launch is wrong."""
    print(f"\nthe rank programs' race: the same inputs launched {launches} times; batch 1, {heads} heads, {n} tokens, "
          f"width 128, float32")
    wrong = False
    for rank in (128, 1):
        q, k, v = inputs(1, heads, n, rank, 128)
        want = reference(q, k, v, None, torch)
        outs = []
        for _ in range(launches):
            outs.append(fleet(q, k, v))
            if q.is_cuda:
                torch.cuda.synchronize()
        results = [compare(o, want, torch) for o in outs]
        n_bad = sum(1 for _, bad, _ in results if bad)
        frac = max(((o.double() - want).abs() / want.abs().max() > TOL).double().mean().item() for o in outs)
        distinct = len({o.cpu().numpy().tobytes() for o in outs})
        is_bad = n_bad > 0
        wrong |= is_bad
        per = f"{rank} program{'s' if rank > 1 else ''} per head and column block"
        print(f"rank {rank:>3} ({per}): {n_bad} of {launches} launches wrong, "
              f"max error {max(e for _, _, e in results):.2e} of the largest output, up to {100 * frac:.1f} % of "
              f"the elements off, {distinct} distinct result(s) of the same inputs: {'wrong' if is_bad else 'right'}")
        summary.append(f"race at rank {rank} {'wrong' if is_bad else 'right'} ({n_bad} of {launches} launches)")
    return wrong


def main(site: str) -> int:
    sys.path.insert(0, site)
    import torch

    from _released import installed, run_on

    version = installed(site, "leetdecoding", "leetdecoding==0.0.3")
    if version is None:
        return 2
    try:
        from leetDecoding.methods.FleetAttention import FleetAttention
        from leetDecoding.methods.FleetAttention_triton import FleetAttention_triton
        from leetDecoding.methods.linear_attn import linear_attn
    except ImportError as exc:
        print(f"error: leetDecoding not importable from {site}: {exc}", file=sys.stderr)
        return 2
    device = run_on(GPU, f"leetdecoding {version}")
    if device is None:
        return 2

    gen = torch.Generator().manual_seed(0)

    def inputs(b, h, n, r, d):
        return tuple(torch.randn(*shape, generator=gen).to(device)
                     for shape in ((b, h, n, r), (b, h, n, r), (b, h, n, d)))

    # The reference against the package's own torch methods (no Triton), with and without the decay.
    q, k, v = inputs(1, 2, 16, 4, 24)
    slope = torch.tensor([0.5, 0.25], device=device)
    gamma = torch.exp(-slope)
    checks = [
        ("FleetAttention (torch), no decay", FleetAttention(q, k, v), reference(q, k, v, None, torch)),
        ("linear_attn ('vanilla'), no decay", linear_attn(q, k, v), reference(q, k, v, None, torch)),
        ("linear_attn ('vanilla'), decay exp(-s)", linear_attn(q, k, v, slope), reference(q, k, v, gamma, torch)),
    ]
    for name, got, want in checks:
        err = compare(got, want, torch)[2]
        print(f"reference check: the package's {name} against the float64 reference: max error {err:.1e} of the "
              f"largest output ({'agree' if err < TOL else 'DISAGREE'})")
        if err >= TOL:
            print("verdict: the reference does not reproduce the package's torch methods; nothing shown",
                  file=sys.stderr)
            return 2

    # The width table: batch 2, 2 heads, 16 tokens, rank 4, float32.
    b, h, n, r = 2, 2, 16, 4
    print(f"\nFleetAttention_triton(q, k, v[, gamma]) as causal_linear_decoder(..., attn_method='FleetAttention') "
          f"calls it; q, k ({b}, {h}, {n}, {r}), v ({b}, {h}, {n}, width), float32, randn; "
          f"error = max |out - reference| / max |reference|, a column wrong when an element is off by more than "
          f"{TOL:g} of that")
    print(f"{'kernel':<12} {'width':>5} {'programs on axis 2':>18} {'columns all zero':>16} {'columns wrong':>13} "
          f"{'max error':>9}  verdict")
    wrong = False
    summary = []
    rows = [("plain", d) for d in (16, 48, 64, 80, 128)] + [("decay", d) for d in (16, 64, 80)]
    for kind, d in rows:
        q, k, v = inputs(b, h, n, r, d)
        g = torch.exp(-torch.tensor([0.5, 0.25], device=device)) if kind == "decay" else None
        out = FleetAttention_triton(q, k, v, g)
        if GPU:
            torch.cuda.synchronize()
        zero, bad, err = compare(out, reference(q, k, v, g, torch), torch)
        is_bad = bad > 0
        wrong |= is_bad
        print(f"{kind:<12} {d:>5} {d // 32:>18} {f'{zero} of {d}':>16} {f'{bad} of {d}':>13} {err:>9.2e}  "
              f"{'wrong' if is_bad else 'right'}")
        summary.append(f"{kind} width {d} {'wrong' if is_bad else 'right'} ({bad} of {d} columns)")

    if not GPU:
        print("\nthe rank programs' race (load then store into ans, no atomic): not run; the interpreter runs "
              "programs one at a time, so it cannot show there (--gpu on a CUDA device)")
    else:
        # The package test's shape (test/test_method.py: 32 heads, rank 128, width 128; its default 2,048 tokens).
        wrong |= race(FleetAttention_triton, inputs, 32, 2048, 5, summary, torch)
    print(f"\nverdict: {'; '.join(summary)}: {'a bug shows' if wrong else 'no bug shows'}")
    return 1 if wrong else 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--gpu"]
    sys.exit(main(args[0] if args else "."))
