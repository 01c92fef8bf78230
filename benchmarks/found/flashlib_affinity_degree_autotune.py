"""flashlib 0.4.0's ``triton_affinity_with_degree`` (flashlib/kernels/distance/triton/affinity.py), called as
released on a GPU, against the affinity row sums it returns itself (``W.sum(1)``) and against torch: on the first
call for each size bucket the degree vector is the sum over every launch the autotuner made while benchmarking its
five configs (lint's TL301: ``tl.atomic_add`` into ``DEG_ptr`` in an autotuned kernel with no ``reset_to_zero``);
the second call is right. GPU only (the launcher asserts ``X.is_cuda``). The code is not copied here.

    pip download --no-deps flashlib==0.4.0 -d wheels/          # where there is internet
    pip install --no-deps --target /tmp/flashlib wheels/flashlib-0.4.0-py3-none-any.whl   # on the GPU machine
    python benchmarks/found/flashlib_affinity_degree_autotune.py /tmp/flashlib
"""

import sys


def main(site: str) -> int:
    from _released import released

    loaded = released(site, "flashlib", "flashlib.kernels.distance.triton", "triton_affinity_with_degree",
                      "the released launcher asserts X.is_cuda")
    if loaded is None:
        return 2
    import torch

    _, triton_affinity_with_degree = loaded
    torch.manual_seed(0)
    x = torch.randn(1000, 32, device="cuda")
    gamma = 0.05
    want = torch.exp(-gamma * torch.cdist(x.double(), x.double()) ** 2).sum(1).float()
    wrong = False
    for call in ("first", "second"):
        w, degree = triton_affinity_with_degree(x, gamma)
        torch.cuda.synchronize()
        ratio = (degree / want).median().item()
        own = (degree / w.sum(1)).median().item()
        bad = abs(ratio - 1) > 1e-2
        wrong |= bad
        print(f"{call} call, N=1000 D=32: degree / expected row sums, median x{ratio:.2f} "
              f"(degree / the returned W's own row sums x{own:.2f}): {'wrong' if bad else 'right'}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
