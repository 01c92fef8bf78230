"""flashnn 0.1.1's ``flashnn.DynamicQuantize`` (per-token int8 quantization; its Triton path is
``triton_dynamic_quantize`` in flashnn/triton_kernels/dynamic_quant.py), called as released, against the result the
package documents: scale = max|x| over the row / 127 and code = round(x / scale) (the ``_torch_impl`` of
quant_gemm.py and the package's own test compute exactly this).

The kernel finds each row's absolute maximum with ``tl.reduce`` and a combine function that returns the larger of
the two operands' absolute values (dynamic_quant.py:11-17 and :38). A reduction over one element never calls its
combine function: the element itself is the result. At hidden size 1 the "absolute maximum" of a negative value is
that value, sign kept, so the row's scale comes out negative and its code has the wrong sign (and, since the
kernel's half-step rounding then goes the wrong way, is one step short: -0.5 gives code 126 and scale -0.0039
where the documented result is -127 and +0.0039). Positive values are right; from hidden size 2 on the combine
runs and every row is right. The code is not copied here.

Under the Triton interpreter, on a CPU; the package is installed from PyPI:

    pip install --no-deps --target /tmp/flashnn flashnn==0.1.1
    python benchmarks/found/flashnn_dynamic_quant_single_column.py /tmp/flashnn

Codes are compared within one step and scales within 1e-2 (the tolerances of the package's test; the kernel rounds
half away from zero, torch half to even). Exit 1 when a case is wrong (the bug), 0 when none is, 2 when flashnn
cannot be imported from SITE.
"""

import os
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")


def documented(x, torch):
    """The documented result in float64: (codes, scales)."""
    x = x.double()
    scale = x.abs().amax(-1, keepdim=True) / 127.0
    return torch.round(x / scale), scale.squeeze(-1)


def main(site: str) -> int:
    sys.path.insert(0, site)
    import torch
    import triton

    from _released import installed

    version = installed(site, "flashnn", "flashnn==0.1.1")
    if version is None:
        return 2
    try:
        import flashnn
    except ImportError as exc:
        print(f"error: flashnn not importable from {site}: {exc}", file=sys.stderr)
        return 2
    print(f"flashnn {version}, torch {torch.__version__}, triton {triton.__version__}; "
          f"CPU, TRITON_INTERPRET=1")
    gen = torch.Generator().manual_seed(0)
    cases = [  # (name, input (num_tokens, hidden_size), half precision as DynamicQuantize takes it)
        ("hidden size 1", torch.tensor([[-0.5], [0.25], [-1.0], [0.75], [-0.125]])),
        ("hidden size 2", torch.tensor([[-0.5, 0.1], [0.25, -0.75], [-1.0, -0.5], [0.75, 0.5]])),
        ("hidden size 100", torch.rand(8, 100, generator=gen) * 2 - 1),
    ]
    wrong = False
    summary = []
    for name, x in cases:
        x = x.half()
        codes, scales = flashnn.DynamicQuantize()(x)
        want_codes, want_scales = documented(x, torch)
        code_off = (codes.double() - want_codes).abs().amax(-1)
        scale_off = (scales.double() - want_scales).abs() / want_scales
        rows_bad = (code_off > 1) | (scale_off > 1e-2)
        bad = bool(rows_bad.any())
        wrong |= bad
        print(f"{name} ({x.shape[0]} rows):")
        if x.shape[1] <= 2:
            for row in range(x.shape[0]):
                back = (codes[row].double() * scales[row].double()).tolist()
                print(f"  x {[round(v, 4) for v in x[row].tolist()]}: kernel codes {codes[row].tolist()} "
                      f"scale {scales[row].item():+.5f} (code x scale {[round(v, 4) for v in back]}); documented "
                      f"codes {[int(v) for v in want_codes[row].tolist()]} scale {want_scales[row].item():+.5f}: "
                      f"{'wrong' if rows_bad[row] else 'right'}")
        print(f"  {int(rows_bad.sum())} of {x.shape[0]} rows wrong; largest code difference "
              f"{code_off.max().item():.0f}, largest relative scale difference {scale_off.max().item():.2e}: "
              f"{'wrong' if bad else 'right'}")
        summary.append(f"{name} {'wrong' if bad else 'right'} ({int(rows_bad.sum())} of {x.shape[0]} rows)")
    print(f"verdict: {'; '.join(summary)}: {'the bug shows' if wrong else 'the bug does not show'}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
