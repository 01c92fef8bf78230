"""flashlib 0.4.0's ``triton_logreg_fwd_bwd`` (flashlib/primitives/logistic_regression/triton/logistic_regression.py),
called as released, against the gradient computed by torch: on the first call for each (N, D) the gradient is the
sum over every launch the autotuner made while benchmarking its four configs (lint's TL301: ``tl.atomic_add`` into
``grad_w``/``grad_b`` in an autotuned kernel with no ``reset_to_zero``); the second call is right. The code is not
copied here.

Under the Triton interpreter, on a CPU: the autotuner has no GPU timer there, so the casebook's
``harness.run.triton_compat.patched`` gives it one that calls the kernel as ``triton.testing.do_bench`` does (fewer
times than on a GPU, where the first call is wrong by a larger factor). On a GPU, run it with ``--gpu``.

    pip install --no-deps --target /tmp/flashlib flashlib==0.4.0
    python benchmarks/found/flashlib_logreg_autotune.py /tmp/flashlib            # CPU, interpreter
    python benchmarks/found/flashlib_logreg_autotune.py /tmp/flashlib --gpu      # a GPU, compiled
"""

import os
import sys
from pathlib import Path

GPU = "--gpu" in sys.argv[1:]
if not GPU:
    os.environ.setdefault("TRITON_INTERPRET", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for harness.run


def main(site: str) -> int:
    sys.path.insert(0, site)
    import contextlib

    import torch

    try:
        import flashlib
        from flashlib.primitives.logistic_regression.triton import triton_logreg_fwd_bwd
    except ImportError as exc:
        print(f"error: flashlib not importable from {site}: {exc}", file=sys.stderr)
        return 2
    from _released import run_on

    device = run_on(GPU, f"flashlib {flashlib.__version__}")
    if device is None:
        return 2
    from harness.run.triton_compat import patched

    torch.manual_seed(0)
    n, d = 300, 40
    x = torch.randn(n, d, device=device)
    w = torch.randn(d, device=device) * 0.1
    b = torch.zeros(1, device=device)
    y = (torch.rand(n, device=device) > 0.5).float()
    p = torch.sigmoid(x @ w + b)
    want_w, want_b = x.T @ (p - y), (p - y).sum()
    wrong = False
    with (contextlib.nullcontext() if GPU else patched(interpreter=True)):
        for call in ("first", "second"):
            got_w, got_b = triton_logreg_fwd_bwd(x, w, b, y)
            ratio = (got_b / want_b).item()
            err = (got_w - want_w).abs().max().item() / want_w.abs().max().item()
            bad = abs(ratio - 1) > 1e-3 or err > 1e-3
            wrong |= bad
            print(f"{call} call, N={n} D={d}: grad_b observed {got_b.item():.5f}, expected {want_b.item():.5f} "
                  f"(x{ratio:.2f}); grad_w max relative error {err:.2e}: {'wrong' if bad else 'right'}")
    return 1 if wrong else 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--gpu"]
    sys.exit(main(args[0] if args else "."))
