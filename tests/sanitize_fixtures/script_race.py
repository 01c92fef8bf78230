"""The sum into out[0] (a store race), run as a module: python -m script_race."""

import torch

from kernels import total

print(total(torch.randn(1000, device="cuda")).item())
