"""One call of the user's kernel, as the probe's detectors make it: fresh inputs, optional
guard bands, the float64 reference, the launcher, the comparison.

Guard bands need nothing from the user: every tensor input is copied into a padded
allocation (``harness.core.guards.guarded``: poison before and after it), and while the
launcher runs, ``torch.empty`` and friends return tensors inside canary padding whose
own elements hold poison (``harness.core.guards.output``), so a kernel that never heard
of guard bands shows writes past the end, reads of what nobody wrote, and elements it
never wrote.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

PAD = 4096  # guard elements on each side of every tensor


@dataclass
class Call:
    """What one call did."""

    out: object = None  # the result, on the CPU
    ref: object = None  # the float64 reference
    cmp: dict = field(default_factory=dict)  # harness.core.compare.compare
    guard: dict = field(default_factory=dict)  # wrote_past_end, unwritten: {tensor name: count}
    error: BaseException | None = None  # what the launcher raised
    returned: str = ""  # the input the result shares storage with, "" for a new tensor
    bench_launches: int = 0
    kept: list = field(default_factory=list)  # (name, bool mask): launcher-allocated elements still at their fill


def device_of(backend: str) -> str:
    return "cpu" if backend == "interpreter" else "cuda"


def make(target, sizes: dict, seed: int, backend: str) -> dict:
    import torch

    gen = torch.Generator().manual_seed(seed)
    return target.make_inputs(device=device_of(backend), gen=gen, **sizes)


def clone_inputs(inputs: dict) -> dict:
    """Copies of the tensor inputs in the layout they were made in: ``Tensor.clone()`` makes a
    view with gaps (every row of a row-padded buffer, one head of a fused QKV) contiguous, and
    a kernel that wrongly assumes contiguity, or whose offsets overflow only at the real
    strides, would then meet a tensor the user never gives it."""
    import torch

    return {k: same_layout(v) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}


def same_layout(t):
    """A copy of ``t`` with its strides (and the gaps between its elements) kept."""
    import torch

    if t.numel() == 0 or 0 in t.stride():  # empty, or broadcast: nothing to keep that clone loses
        return t.clone()
    try:
        out = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device)
        out.copy_(t)
    except RuntimeError:  # overlapping strides: no copy can keep them
        return t.clone()
    return out


def reference(target, inputs: dict):
    import torch

    from harness.run.worker import call_with

    ref = call_with(target.reference, clone_inputs(inputs))
    return ref.detach().to("cpu", torch.float64) if isinstance(ref, torch.Tensor) else torch.tensor(ref,
                                                                                                     dtype=torch.float64)


_NAN_BITS = {"float32": ("int32", 0x7FC01000), "float64": ("int64", 0x7FF8000000001000),
             "float16": ("int16", 0x7E10), "bfloat16": ("int16", 0x7FC1)}


def _fill_poison(base, salt: int, finite: bool) -> None:
    """Poison with a payload of its own per tensor: a NaN copied from one tensor's band into
    another's still changes the bytes there."""
    import torch

    name = str(base.dtype).replace("torch.", "")
    if base.dtype == torch.bool:
        base.fill_(True)
    elif finite and base.dtype.is_floating_point:
        base.fill_(0.0)
    elif name in _NAN_BITS:
        ity, bits = _NAN_BITS[name]
        base.view(getattr(torch, ity)).fill_(bits + salt)
    elif base.dtype.is_floating_point:
        base.fill_(float("nan"))
    else:
        base.fill_(torch.iinfo(base.dtype).max - salt)


@dataclass
class Band:
    """One tensor input in its padded copy: what the kernel gets, and the bytes around it."""

    name: str
    base: object
    view: object
    pad_mask: object
    before: object  # the padding's bytes before the launch

    def changed(self) -> int:
        """How many padding elements the launch changed."""
        import torch

        now = self.base.view(torch.uint8).view(self.base.numel(), -1)
        return int((now[self.pad_mask] != self.before).any(dim=1).sum())


def padded(name: str, t, salt: int, finite: bool = False) -> Band:
    """``t`` copied into a buffer with PAD poison elements before and after, strides kept."""
    import torch

    span = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride())) if t.numel() else 0
    base = torch.empty(PAD + span + PAD, dtype=t.dtype, device=t.device)
    _fill_poison(base, salt, finite)
    view = base.as_strided(t.shape, t.stride(), PAD)
    view.copy_(t)
    mask = torch.ones(base.numel(), dtype=torch.bool, device=t.device)
    mask.as_strided(t.shape, t.stride(), PAD).fill_(False)
    before = base.view(torch.uint8).view(base.numel(), -1)[mask].clone()
    return Band(name, base, view, mask, before)


def _guard_inputs(inputs: dict, finite: bool = False) -> tuple[dict, list]:
    import torch

    bands = [padded(k, v, i + 1, finite) for i, (k, v) in enumerate(inputs.items())
             if isinstance(v, torch.Tensor) and v.numel() and min(v.stride(), default=1) >= 0]
    given = dict(inputs)
    given.update({b.name: b.view for b in bands})
    return given, bands


@contextlib.contextmanager
def poisoned_allocations(canary=None):
    """``torch.empty``, ``empty_like`` and ``Tensor.new_empty`` return poison inside canary padding
    (``canary``: a function of the dtype giving another fill, for a second run that tells elements
    never written from elements that happen to equal the poison)."""
    import torch

    from harness.core import guards

    originals = {"empty": torch.empty, "empty_like": torch.empty_like}
    new_empty = torch.Tensor.new_empty

    def wrap(original):
        def alloc(*args, **kwargs):
            t = original(*args, **kwargs)
            if kwargs.get("out") is not None or not t.is_contiguous() or t.numel() == 0 or t.requires_grad:
                return t
            fill = guards.default_poison(t.dtype) if canary is None else canary(t.dtype)
            return guards.output(t.shape, t.dtype, t.device, pad=PAD, canary=fill)
        return alloc

    torch.empty, torch.empty_like = wrap(originals["empty"]), wrap(originals["empty_like"])
    torch.Tensor.new_empty = wrap(new_empty)
    try:
        yield
    finally:
        torch.empty, torch.empty_like = originals["empty"], originals["empty_like"]
        torch.Tensor.new_empty = new_empty


def _shares(out, inputs: dict) -> str:
    import torch

    if not isinstance(out, torch.Tensor) or out.device.type == "meta":
        return ""
    ptr = out.untyped_storage().data_ptr()
    return next((k for k, v in inputs.items() if isinstance(v, torch.Tensor) and v.numel()
                 and v.untyped_storage().data_ptr() == ptr), "")


def call(target, inputs: dict, *, backend: str, counter=None, ref=None, finite: bool = False, canary=None) -> Call:
    """The reference, then the launcher on guard-banded copies of ``inputs`` (with torch.empty
    poisoned while it runs), compared; the guard bands checked. ``finite``: bands of 0.0."""
    import torch

    from harness.core import compare, guards
    from harness.run.worker import call_with

    res = Call(ref=reference(target, inputs) if ref is None else ref)
    with guards.collecting(pad=PAD) as gs:
        given, bands = _guard_inputs(inputs, finite)
        if counter is not None:
            counter.clear()
        try:
            with poisoned_allocations(canary):
                out = call_with(target.launcher, given)
            if backend == "gpu":
                from harness.run.worker import sync_all_gpus

                sync_all_gpus()  # a kernel's own error (an illegal address) surfaces here, as the launcher's
        except Exception as e:  # noqa: BLE001  (the user's kernel: any exception is a finding)
            res.error = e
            return res
        res.bench_launches = sum(counter.calls) if counter is not None else 0
        res.returned = _shares(out, given)
        out = out if isinstance(out, torch.Tensor) else torch.as_tensor(out)
        res.out = out.detach().to("cpu")
        rtol, atol = target.tolerance_for(out.dtype)
        res.cmp = compare.compare(res.out, res.ref, rtol, atol)
        res.guard = gs.check()
        res.kept = [(g.name, ~guards._differs_from_fill(g.view.reshape(-1), g.fill).cpu()) for g in gs.guards
                    if g.kind == "output" and g.view.dtype != torch.bool]
        for b in bands:
            if n := b.changed():
                res.guard["wrote_past_end"][b.name] = n
    return res


def second_fill(dtype):
    """A fill unlike the poison, for the second run of an "unwritten" check."""
    return 27183.5 if dtype.is_floating_point else 77


def unwritten_in_place(target, inputs: dict, name: str) -> int:
    """Elements of the input ``name`` (the result) that keep whatever they held before the
    launch: run twice with two different fillings of it and count elements that kept each."""
    import torch

    from harness.core import guards
    from harness.run.worker import call_with

    kept = None
    for fill in (-31337.25, 27183.5):
        given, _ = _guard_inputs(clone_inputs(inputs))
        t = given[name]
        if t.dtype == torch.bool:
            return 0
        t.fill_(fill if t.dtype.is_floating_point else int(fill))
        before = t.clone()
        try:
            with guards.collecting(pad=PAD), poisoned_allocations():
                call_with(target.launcher, given)
        except Exception:  # noqa: BLE001
            return 0
        same = (t.to("cpu") == before.to("cpu"))
        kept = same if kept is None else kept & same
    return int(kept.sum())
