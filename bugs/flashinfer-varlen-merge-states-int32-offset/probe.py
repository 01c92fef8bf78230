"""Glue for flashinfer.triton.cascade.variable_length_merge_states (merge attention states
(v, lse) over variable-length index sets given by indptr).

The project's launcher is called. Its argument checks (CUDA tensor, Hopper GPU) live in
flashinfer/triton/utils.py, which imports the package's heavy utilities; they are no part of
the bug and are stood in for by no-ops, so the same glue runs under the interpreter.
"""


import torch

from harness.bugs.source import interpreter_fixes, load

_CHECKS = {name: (lambda *a, **k: None) for name in ("check_input", "check_device", "check_dim", "check_shape")}




def _mod(variant):
    interpreter_fixes("range-int32")  # what compiled Triton does: harness/run/triton_compat.py
    return load(__file__, variant, stubs={"flashinfer.triton.utils": _CHECKS})


def launch_buggy(v, s, indptr):
    return _mod("buggy").variable_length_merge_states(v, s, indptr)[0]


def launch_fixed(v, s, indptr):
    return _mod("fixed").variable_length_merge_states(v, s, indptr)[0]


def make_inputs(*, device, gen, seq_len=16, per=2, num_heads=2, head_dim=16):
    """seq_len index sets of per consecutive states each: v (seq_len * per, heads, head_dim) fp16,
    s its log2-sum-exp (float32). Small defaults: the kernel walks every element one scalar at a
    time (tl.range over head_dim, heads and the set, a state_merge call each), which the
    interpreter pays for element by element; the bug needs 2**31 elements (--large, on a GPU)."""
    rows = seq_len * per
    v = torch.randn(rows, num_heads, head_dim, generator=gen, dtype=torch.float32).to(torch.float16)
    s = torch.randn(rows, num_heads, generator=gen) * 4
    indptr = torch.arange(0, rows + 1, per, dtype=torch.int32)
    return {"v": v.to(device), "s": s.to(device), "indptr": indptr.to(device)}


def reference(v, s, indptr):
    """o = sum_i 2^(s_i - m) v_i / sum_i 2^(s_i - m) over each index set, in float64."""
    seq_len = indptr.numel() - 1
    lengths = (indptr[1:] - indptr[:-1]).long()
    seg = torch.repeat_interleave(torch.arange(seq_len, device=v.device), lengths)
    rows = slice(int(indptr[0]), int(indptr[-1]))
    s = s[rows].double()
    m = torch.full((seq_len, s.shape[1]), -torch.inf, dtype=torch.float64, device=v.device)
    m = m.scatter_reduce(0, seg[:, None].expand_as(s), s, reduce="amax")
    w = torch.exp2(s - m[seg])
    den = torch.zeros_like(m).index_add_(0, seg, w)
    num = v[rows].double().mul_(w[:, :, None])  # in place: at the trigger v holds 2**31 elements
    out = torch.zeros(seq_len, *v.shape[1:], dtype=torch.float64, device=v.device).index_add_(0, seg, num)
    del num
    return out / den[:, :, None]
