"""Why the 2 x H200 board's P404 on gemlite 0.5.1.post1 (gemlite-a16w8-channel-scale-dropped's fixed
version) at m=16, n=128, k=16945024 finds every row wrong: gemm_INT_kernel turns the float32 accumulator
into the meta dtype (float16) before it multiplies the per-channel scales (acc.to(meta_dtype) *
scales_b), so an unscaled sum of products past float16's largest value (65504) is Inf, where the scaled
result is finite. Run on a GPU from the repository root: prints the device, the versions, how many
outputs are Inf or NaN, the largest unscaled sum (float32) and the largest reference value."""

import importlib.util
import sys

import torch
import triton

spec = importlib.util.spec_from_file_location("glue", "bugs/gemlite-a16w8-channel-scale-dropped/probe.py")
glue = importlib.util.module_from_spec(spec)
spec.loader.exec_module(glue)
m, n, k = 16, 128, int(sys.argv[1]) if len(sys.argv) > 1 else 16945024
print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__, f"m={m} n={n} k={k}")
inp = glue.make_inputs(device="cuda", gen=torch.Generator().manual_seed(0), m=m, n=n, k=k)
out = glue.launch_fixed(**inp).float()
torch.cuda.synchronize()
unscaled = (inp["x"].float() @ inp["w_q"].float()).abs().max().item()
ref = glue.reference(**inp)
print(f"outputs Inf {int(torch.isinf(out).sum())} NaN {int(torch.isnan(out).sum())} of {out.numel()}; "
      f"largest unscaled sum {unscaled:.1f} (float16 holds up to 65504); largest |reference| {ref.abs().max().item():.1f}; "
      f"largest error where finite {(out.double() - ref).abs()[torch.isfinite(out)].max().item() if torch.isfinite(out).any() else float('nan'):.3g}")
