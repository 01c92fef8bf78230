"""Ordinary tests of the kernels in kernels.py, written for a GPU (``device="cuda"``)."""

import pytest
import torch

from kernels import add_masked, add_unmasked, row_sums, total

DEVICE = "cuda"


@pytest.fixture(autouse=True)
def seed():
    torch.manual_seed(0)


def test_add_unmasked():
    x = torch.randn(1000, device=DEVICE)
    y = torch.randn(1000, device=DEVICE)
    torch.testing.assert_close(add_unmasked(x, y), x + y)


def test_add_masked():
    x = torch.randn(1000, device=DEVICE)
    y = torch.randn(1000, device=DEVICE)
    torch.testing.assert_close(add_masked(x, y), x + y)


def test_total():
    x = torch.randn(1000, device=DEVICE)
    out = total(x)
    torch.cuda.synchronize()
    torch.testing.assert_close(out[0], x.sum(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cols", [7, 64, 100])
def test_row_sums(cols):
    assert torch.cuda.is_available()
    x = torch.randn(33, cols, device=DEVICE)
    assert x.is_cuda
    torch.testing.assert_close(row_sums(x), x.sum(dim=1), rtol=1e-4, atol=1e-4)
