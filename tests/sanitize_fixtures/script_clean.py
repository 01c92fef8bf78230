"""A user's script with correct kernels only, which ends with its own exit status (3)."""

import sys

import torch

from kernels import add_masked, row_sums

x = torch.randn(1000, device="cuda")
assert torch.allclose(add_masked(x, x), 2 * x)
m = torch.randn(10, 37, device="cuda")
assert torch.allclose(row_sums(m), m.sum(dim=1), atol=1e-4)
torch.cuda.synchronize()
sys.exit(3)
