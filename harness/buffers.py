"""Inputs and outputs inside guard bands, so out-of-bounds accesses show deterministically.

A case's ``make_inputs`` builds its tensors with these two helpers:

- ``guarded(t, device)``: a copy of ``t`` placed inside a larger buffer whose padding
  holds *poison* (NaN for floats, a huge sentinel for integers). A kernel that reads
  past the end reads poison, on the GPU and under the interpreter alike (the
  interpreter copies a tensor's whole storage, padding included).
- ``output(shape, dtype, device)``: an output whose own elements and padding hold a
  *canary*. After the run the harness reports padding that changed ("wrote past the
  end") and elements still holding the canary ("left unwritten").

``row_pad`` adds padding between the rows of a 2-D tensor too, so a kernel that runs
past the end of a row (not only past the end of the tensor) is caught, and a kernel
that ignores the row stride is caught as well.

The registry of guards lives in this module; each (case, variant, backend) runs in
its own process, and the worker resets it before each trial.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

DEFAULT_PAD = 16384  # elements on each side: more than any block a case uses

_CANARY = {
    torch.float64: -1.2345678e30, torch.float32: -1.2345678e30,
    torch.float16: -31337.0, torch.bfloat16: -31337.0,
    torch.int64: -123456789, torch.int32: -123456789, torch.int16: -31337,
    torch.int8: -113, torch.uint8: 0xA5,
}


@dataclass
class Guard:
    kind: str  # "input" or "output"
    base: torch.Tensor  # the whole flat buffer
    view: torch.Tensor  # what the kernel is given
    pad_mask: torch.Tensor  # True where base is padding (same device as base)
    fill: float | int  # poison (inputs) or canary (outputs)
    name: str = "?"


_GUARDS: list[Guard] = []
_finite_poison = False  # the worker's re-run: fill input padding with a finite value
_pad = None  # padding to use instead of each call's own (0 under compute-sanitizer)


def reset(finite_poison: bool = False, pad: int | None = None) -> None:
    global _finite_poison, _pad
    _GUARDS.clear()
    _finite_poison = finite_poison
    _pad = pad


def guards() -> list[Guard]:
    return list(_GUARDS)


def default_poison(dtype: torch.dtype):
    if dtype.is_floating_point:
        return float("nan")
    if dtype == torch.bool:
        return True
    return torch.iinfo(dtype).max


def _place(shape, dtype, device, pad: int, row_pad: int, fill) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    shape = tuple(shape)
    pad = pad if _pad is None else _pad
    if row_pad and len(shape) >= 2:
        alloc = shape[:-1] + (shape[-1] + row_pad,)
    else:
        alloc = shape
    inner = 1
    for s in alloc:
        inner *= s
    base = torch.full((pad + inner + pad,), fill, dtype=dtype, device=device)
    # strides of the (possibly row-padded) allocation, in elements
    strides, acc = [], 1
    for s in reversed(alloc):
        strides.append(acc)
        acc *= s
    strides = tuple(reversed(strides))
    view = base.as_strided(shape, strides, pad)
    mask = torch.ones(base.numel(), dtype=torch.bool, device=device)
    mask.as_strided(shape, strides, pad).fill_(False)
    return base, view, mask


def guarded(t: torch.Tensor, device, *, pad: int = DEFAULT_PAD, row_pad: int = 0, poison=None) -> torch.Tensor:
    """``t`` copied to ``device`` inside a buffer padded with poison."""
    fill = default_poison(t.dtype) if poison is None else poison
    if _finite_poison and t.dtype.is_floating_point:
        fill = 0.0
    base, view, mask = _place(t.shape, t.dtype, device, pad, row_pad, fill)
    view.copy_(t.to(device))
    _GUARDS.append(Guard("input", base, view, mask, fill))
    return view


def output(shape, dtype: torch.dtype, device, *, pad: int = DEFAULT_PAD, row_pad: int = 0, canary=None) -> torch.Tensor:
    """An output tensor whose elements and padding hold a canary value."""
    fill = _CANARY.get(dtype, 0) if canary is None else canary
    base, view, mask = _place(shape, dtype, device, pad, row_pad, fill)
    _GUARDS.append(Guard("output", base, view, mask, fill))
    return view


def name_guards(inputs: dict) -> None:
    """Label each guard with the argument name it was passed as."""
    for g in _GUARDS:
        for k, v in inputs.items():
            if isinstance(v, torch.Tensor) and v.data_ptr() == g.view.data_ptr() and v.shape == g.view.shape:
                g.name = k


def _differs_from_fill(t: torch.Tensor, fill) -> torch.Tensor:
    """Elementwise: do the bytes of ``t`` differ from the bytes of ``fill``?"""
    ref = torch.full((1,), fill, dtype=t.dtype, device=t.device)
    size = t.element_size()
    a = t.contiguous().view(torch.uint8).view(-1, size)
    b = ref.view(torch.uint8).view(1, size)
    return (a != b).any(dim=1)


def check() -> dict:
    """After a run: padding that changed, and output elements never written."""
    past_end, unwritten = {}, {}
    for g in _GUARDS:
        changed = _differs_from_fill(g.base[g.pad_mask], g.fill)
        n = int(changed.sum())
        if n:
            past_end[g.name] = past_end.get(g.name, 0) + n
        if g.kind == "output" and g.view.dtype != torch.bool:
            still = ~_differs_from_fill(g.view.reshape(-1), g.fill)
            m = int(still.sum())
            if m:
                unwritten[g.name] = m
    return {"wrote_past_end": past_end, "unwritten": unwritten}
