"""RMSNorm of two tensors of different widths, autotuned on a key that leaves out the width.

The kernel normalizes one row per program and holds the whole row in one block:
``BLOCK`` must be at least ``n_cols``. It is tuned over ``BLOCK`` and ``num_warps``,
and ``early_config_prune`` keeps, for each call, only the configs whose ``BLOCK`` is
the row width rounded up to a power of two, so tuning only ever times configs that
are right for the shape in hand.

The key is ``["n_rows"]``: the number of tokens changes from batch to batch, so
that is what the author thought tuning should follow. A multi-head latent attention
(MLA) layer normalizes two latents of the same tokens with this kernel: the
compressed KV (``kv_lora_rank`` wide, 512 in DeepSeek-V3) and the compressed query
(``q_lora_rank``, 1536). Both calls have the same ``n_rows``, so they share one
entry of the autotuner's cache. The first call prunes to ``BLOCK = 512``, tunes, and
caches that config. The second call finds the key in the cache, never prunes, and
launches ``BLOCK = 512`` on rows of 1536: each program normalizes its first 512
columns by their own mean square and never writes the other 1024.
"""

import torch
import triton
import triton.language as tl


def _fits_row(configs, named_args, **kwargs):
    block = triton.next_power_of_2(named_args["n_cols"])
    return [c for c in configs if c.kwargs["BLOCK"] == block]


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (128, 256, 512, 1024, 2048) for w in (4, 8)],
    key=["n_rows"],  # BUG: n_cols decides which configs are valid, but it is not in the key
    prune_configs_by={"early_config_prune": _fits_row},
)
@triton.jit
def rms_norm_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_x, stride_out, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(out_ptr + row * stride_out + cols, x * rstd, mask=mask)


def _rms_norm(x: torch.Tensor, out: torch.Tensor, eps: float = 1e-6) -> None:
    n_rows, n_cols = x.shape
    rms_norm_kernel[(n_rows,)](x, out, n_rows, n_cols, x.stride(0), out.stride(0), eps)


def rms_norm_pair(kv_c: torch.Tensor, q_c: torch.Tensor, kv_out: torch.Tensor, q_out: torch.Tensor) -> torch.Tensor:
    """Normalize both latents of an MLA layer: the KV latent first, then the query latent."""
    _rms_norm(kv_c, kv_out)
    _rms_norm(q_c, q_out)
    return torch.cat((kv_out, q_out), dim=1)


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
