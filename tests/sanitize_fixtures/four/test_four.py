"""Four tests of a user's suite for ``sanitize --backend gpu`` (issue 40; tests/test_gpu_sanitize.py):
the unmasked add first (on a GPU under compute-sanitizer its out-of-bounds access ends the
process's CUDA context), then the sum into ``out[0]`` (a store race between programs, which
compute-sanitizer does not see), then two clean kernels. Every one of them must run."""

import torch

from kernels import add_masked, add_unmasked, row_sums, total


def test_add_unmasked():
    x = torch.randn(1000, device="cuda")
    y = torch.randn(1000, device="cuda")
    torch.testing.assert_close(add_unmasked(x, y), x + y)


def test_total():
    x = torch.randn(1000, device="cuda")
    out = total(x)
    torch.testing.assert_close(out[0], x.sum(), rtol=1e-4, atol=1e-4)


def test_add_masked():
    x = torch.randn(1000, device="cuda")
    torch.testing.assert_close(add_masked(x, x), 2 * x)


def test_row_sums():
    x = torch.randn(33, 100, device="cuda")
    torch.testing.assert_close(row_sums(x), x.sum(dim=1), rtol=1e-4, atol=1e-4)
