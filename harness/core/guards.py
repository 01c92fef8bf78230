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

The worker collects the guards of each trial in a ``GuardSet`` (``collecting()``):
a set is active for one block and never outlives it, so a re-run inside a trial
cannot take the trial's own guards away.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Iterator

import torch

DEFAULT_PAD = 16384  # elements on each side: more than any block a case uses

CANARY = {
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


class GuardSet:
    """The guards of one run of a kernel: every input and output made while it is active.

    ``collecting()`` makes one active for a block; ``guarded`` and ``output`` register
    in the active set (outside any, they still pad, and nothing is registered).
    ``finite_poison`` fills float input padding with 0 instead of NaN (the worker's
    re-run that tells a poison read from a NaN of the kernel's own); ``pad`` replaces
    each call's own padding (0 under compute-sanitizer, so that memcheck sees the
    accesses that padding would absorb).
    """

    def __init__(self, finite_poison: bool = False, pad: int | None = None):
        self.finite_poison, self.pad = finite_poison, pad
        self.guards: list[Guard] = []

    def name(self, inputs: dict) -> None:
        """Label each guard with the argument name it was passed as."""
        for g in self.guards:
            for k, v in inputs.items():
                if isinstance(v, torch.Tensor) and v.data_ptr() == g.view.data_ptr() and v.shape == g.view.shape:
                    g.name = k

    def has_inputs(self) -> bool:
        return any(g.kind == "input" for g in self.guards)

    def check(self) -> dict:
        """After a run: padding that changed, and output elements never written."""
        past_end, unwritten = {}, {}
        for g in self.guards:
            n = int(differs_from_fill(g.base[g.pad_mask], g.fill).sum())
            if n:
                past_end[g.name] = past_end.get(g.name, 0) + n
            if g.kind == "output" and g.view.dtype != torch.bool:
                m = int((~differs_from_fill(g.view.reshape(-1), g.fill)).sum())
                if m:
                    unwritten[g.name] = m
        return {"wrote_past_end": past_end, "unwritten": unwritten}


_ACTIVE: ContextVar[GuardSet | None] = ContextVar("casebook_guards", default=None)


@contextmanager
def collecting(finite_poison: bool = False, pad: int | None = None) -> Iterator[GuardSet]:
    """A fresh GuardSet, active for the block; the one active before comes back after it."""
    gs = GuardSet(finite_poison, pad)
    token = _ACTIVE.set(gs)
    try:
        yield gs
    finally:
        _ACTIVE.reset(token)


def default_poison(dtype: torch.dtype):
    if dtype.is_floating_point:
        return float("nan")
    if dtype == torch.bool:
        return True
    return torch.iinfo(dtype).max


def _place(shape, dtype, device, pad: int, row_pad: int, fill) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    shape = tuple(shape)
    active = _ACTIVE.get()
    pad = pad if active is None or active.pad is None else active.pad
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
    active = _ACTIVE.get()
    if active is not None and active.finite_poison and t.dtype.is_floating_point:
        fill = 0.0
    base, view, mask = _place(t.shape, t.dtype, device, pad, row_pad, fill)
    view.copy_(t.to(device))
    _register(Guard("input", base, view, mask, fill))
    return view


def output(shape, dtype: torch.dtype, device, *, pad: int = DEFAULT_PAD, row_pad: int = 0, canary=None) -> torch.Tensor:
    """An output tensor whose elements and padding hold a canary value."""
    fill = CANARY.get(dtype, 0) if canary is None else canary
    base, view, mask = _place(shape, dtype, device, pad, row_pad, fill)
    _register(Guard("output", base, view, mask, fill))
    return view


def _register(g: Guard) -> None:
    active = _ACTIVE.get()
    if active is not None:
        active.guards.append(g)


def differs_from_fill(t: torch.Tensor, fill) -> torch.Tensor:
    """Elementwise: do the bytes of ``t`` differ from the bytes of ``fill``?"""
    ref = torch.full((1,), fill, dtype=t.dtype, device=t.device)
    size = t.element_size()
    a = t.contiguous().view(torch.uint8).view(-1, size)
    b = ref.view(torch.uint8).view(1, size)
    return (a != b).any(dim=1)
