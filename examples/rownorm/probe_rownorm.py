"""The probe file for rownorm.py: what ``python -m harness probe`` needs, in plain torch.

    python -m harness probe examples/rownorm/probe_rownorm.py
    python -m harness probe examples/rownorm/probe_rownorm.py --launcher launch_fixed
"""

import torch

from rownorm import rownorm, rownorm_fixed  # beside this file: the probe puts its folder first on sys.path

FUZZ = {"n_rows": (1, 64), "n_cols": (1, 300)}  # optional: the ranges shape fuzzing draws from


def launch(x):
    return rownorm(x)


def launch_fixed(x):
    return rownorm_fixed(x)


def make_inputs(*, device, gen, n_rows=37, n_cols=100):
    return {"x": torch.randn(n_rows, n_cols, generator=gen).to(device)}


def reference(x):
    x = x.double()
    return x / torch.sqrt((x * x).sum(dim=1, keepdim=True) + 1e-6)
