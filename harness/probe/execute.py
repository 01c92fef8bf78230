"""One call of the user's kernel, as the probe's detectors make it: fresh inputs, optional
guard bands, the float64 reference, the launcher, the comparison.

Guard bands need nothing from the user: every tensor input is copied into a padded
allocation (``harness.core.guards.guarded``: poison before and after it), and while the
launcher runs, ``torch.empty`` and friends return tensors inside canary padding whose
own elements hold poison (``harness.core.guards.output``), so a kernel that never heard
of guard bands shows writes past the end, reads of what nobody wrote, and elements it
never wrote.

What the launcher returns is compared with what ``reference`` returns (the rules are in
``harness.probe.target``'s docstring): one tensor (or a Python number) as it is; a tuple,
list or dict of them part by part, each with the tolerance of its own dtype, the parts then
flattened into one float64 vector (``Call.parts`` names them); None (an in-place launcher)
by the tensor inputs the launch changed.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field

from harness.run.patching import Patcher

PAD = 4096  # guard elements on each side of every tensor, unless the run says otherwise (Context.pad)


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
    allocated: int = 0  # tensors the launcher made with torch.empty (and friends): poison, not zeros
    parts: list = field(default_factory=list)  # (name, shape) of each output compared, where there are several
    dtypes: list = field(default_factory=list)  # the dtype of each of ``parts``, as the launcher returned it
    programs: int | None = None  # programs launched in all (the instrumented interpreter counts them)
    loads: int | None = None  # tl.load calls made in all (likewise)
    changed: list = field(default_factory=list)  # the tensor inputs the launch changed (``call(changed=True)``)
    oob: dict = field(default_factory=dict)  # the bounds check's record where one watched the call (Recorder.oob)
    wraps: list = field(default_factory=list)  # the int wrap check's, likewise (Recorder.wraps)
    seconds: float = 0.0  # how long the call took, where the caller timed it
    views: dict = field(default_factory=dict)  # each tensor input's view as given to the launcher: (first byte, end)


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
    """The reference in float64 on the CPU. A tuple, list or dict of outputs becomes one flat
    vector, with ``.parts`` (name, shape) and ``.keyed`` (a dict: names of inputs changed in place).
    It keeps what its error floor needs (``harness.probe.floor``), estimated only where a comparison
    fails the fixed tolerance."""
    from harness.probe import floor

    from harness.run.worker import call_with

    raw = call_with(target.reference, clone_inputs(inputs))
    ref = as_reference(raw)
    narrow = floor.narrow(raw)  # computed in the inputs' narrower formats: its float64 self is the answer (floor.py)

    def fresh() -> dict:  # the inputs the floor's runs give the reference: float64 copies for a narrow one
        return floor.widened(clone_inputs(inputs)) if narrow else clone_inputs(inputs)

    floor.remember(ref, inputs, lambda rounded: as_reference(rounded(functools.partial(call_with, target.reference,
                                                                                         fresh()))),
                   wide=(lambda: as_reference(call_with(target.reference, fresh()))) if narrow else None)
    return ref


def reads(target, inputs: dict) -> tuple[set, bool]:
    """The inputs the reference takes (``call_with``'s rule), and whether it takes any (``**kwargs``)."""
    import inspect

    params = inspect.signature(target.reference).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return set(inputs), True
    return {k for k in inputs if k in params}, False


def reference_value(target, inputs: dict):
    """``reference`` of these very ``inputs`` (not copied), without the floor's record."""
    from harness.run.worker import call_with

    return as_reference(call_with(target.reference, inputs))


def as_reference(ref):
    """What the user's ``reference`` returned, as ``reference`` returns it (float64 on the CPU, flat)."""
    import torch

    if isinstance(ref, torch.Tensor):
        return ref.detach().to("cpu", torch.float64)
    if isinstance(ref, (tuple, list, dict)):
        parts = flat_parts(ref)
        flat = _flatten([t for _, t in parts])
        flat.parts, flat.keyed = [(n, tuple(t.shape)) for n, t in parts], isinstance(ref, dict)
        return flat
    return torch.tensor(ref, dtype=torch.float64)


def flat_parts(value, name: str = "") -> list:
    """(name, tensor) of each tensor in a tuple, list or dict (nested too): ``[0]``, ``[1]``, a
    dict's keys; numbers become tensors; None is left out."""
    import torch

    if isinstance(value, dict):
        return [p for k, v in value.items() for p in flat_parts(v, f"{name}.{k}" if name else str(k))]
    if isinstance(value, (tuple, list)):
        return [p for i, v in enumerate(value) for p in flat_parts(v, f"{name}[{i}]")]
    if value is None:
        return []
    return [(name, value if isinstance(value, torch.Tensor) else torch.as_tensor(value))]


def _flatten(tensors: list):
    import torch

    if not tensors:
        return torch.zeros(0, dtype=torch.float64)
    return torch.cat([t.detach().to("cpu", torch.float64).reshape(-1) for t in tensors])


def compile_error(e: BaseException | None) -> str | None:
    """Triton's own message (its first line or two) when ``e`` says the kernel does not compile,
    else None. That is a ``CompilationError`` (a GPU compile: Triton prints the source and a
    caret first, then the error, which is what this returns), or, under the interpreter, an
    error raised while the kernel's body was traced by ``triton.language`` or
    ``triton.compiler`` (``tl.arange(0, 10)``: not a power of 2; a pointer added to a float; a
    shape mismatch), or a name the kernel's body does not define: each is an error a GPU
    compile raises too. A failed ``tl.device_assert``, an out-of-bounds access, or an error of
    the launcher's own Python is not."""
    import os

    import triton

    chain, seen = [], 0
    while e is not None and seen < 12:
        chain.append(e)
        e, seen = e.__cause__ or (e.__context__ if not e.__suppress_context__ else None), seen + 1
    for err in chain:
        if any(c.__name__ == "CompilationError" for c in type(err).__mro__):
            inner = [x for x in chain if any(c.__name__ == "CompilationError" for c in type(x).__mro__)
                     and getattr(x, "error_message", None)]
            msg = inner[-1].error_message if inner else str(err)
            return _first_lines(msg, skip_source=not inner)
    interpreted = any(type(x).__name__ == "InterpreterError" for x in chain)
    if not interpreted or len(chain) < 2:
        return None
    cause = chain[-1]
    if isinstance(cause, (AssertionError, KeyboardInterrupt)) or type(cause).__name__ == "GridLimitError":
        return None
    root = os.path.dirname(triton.__file__)
    where = innermost_file(cause)
    traced = any(where.startswith(os.path.join(root, d) + os.sep) for d in ("language", "compiler"))
    if traced or isinstance(cause, (NameError, UnboundLocalError)):
        return _first_lines(f"{type(cause).__name__}: {cause}")
    return None


def innermost_file(e: BaseException) -> str:
    """The file of the innermost frame of ``e``, or of the error it wraps (the interpreter
    re-raises what a kernel raised as an InterpreterError)."""
    import os

    while e.__cause__ is not None or (e.__context__ is not None and not e.__suppress_context__):
        e = e.__cause__ or e.__context__
    tb = e.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.abspath(tb.tb_frame.f_code.co_filename)


def _first_lines(msg: str, skip_source: bool = False, n: int = 2) -> str:
    lines = [ln.strip() for ln in str(msg).strip().splitlines() if ln.strip()]
    if skip_source and lines:  # "at 5:13:", the source, a caret line, then the error
        carets = [i for i, ln in enumerate(lines) if set(ln) == {"^"}]
        lines = lines[carets[-1] + 1:] if carets else lines[-1:]
    return " ".join(lines[:n])[:300] if lines else "CompilationError"


_NAN_BITS = {"float32": ("int32", 0x7FC01000), "float64": ("int64", 0x7FF8000000001000),
             "float16": ("int16", 0x7E10), "bfloat16": ("int16", 0x7FC1)}


def _fill_poison(base, salt: int, finite: bool | float) -> None:
    """Poison with a payload of its own per tensor: a NaN copied from one tensor's band into
    another's still changes the bytes there."""
    import torch

    name = str(base.dtype).replace("torch.", "")
    if base.dtype == torch.bool:
        base.fill_(True)
    elif finite is not False:  # the second fill of a comparison: 0 (an int8 tensor's band must differ from the
        # poison too), or the finite value given for a float band
        base.fill_(finite if base.dtype.is_floating_point and finite is not True else 0)
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

        now = self.base.view(torch.uint8).view(self.base.numel(), -1).cpu()
        return int((now[self.pad_mask] != self.before).any(dim=1).sum())


def padded(name: str, t, salt: int, finite: bool | float = False, pad: int = PAD) -> Band:
    """``t`` copied into a buffer with ``pad`` poison elements before and after, strides kept."""
    import torch

    span = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride())) if t.numel() else 0
    if 0 in t.stride():  # a broadcast: the memory a contiguous tensor of its shape takes is there (poison), so a
        span = max(span, t.numel())  # kernel that reads it as contiguous reads poison, on a GPU too, not past the end
    base = torch.empty(pad + span + pad, dtype=t.dtype, device=t.device)
    _fill_poison(base, salt, finite)
    view = base.as_strided(t.shape, t.stride(), pad)
    src, dst = t, view
    for d, st in enumerate(t.stride()):  # a broadcast (stride 0) dim: its one element copied, not its repeats
        if st == 0:
            src, dst = src.narrow(d, 0, 1), dst.narrow(d, 0, 1)
    dst.copy_(src)
    # the mask and the bytes before, on the host: a kernel that stores far outside its tensors
    # (past the bands too) must not rewrite the record it is checked against
    mask = torch.ones(base.numel(), dtype=torch.bool)
    mask.as_strided(t.shape, t.stride(), pad).fill_(False)
    before = base.view(torch.uint8).view(base.numel(), -1).cpu()[mask].clone()
    return Band(name, base, view, mask, before)


def _guard_inputs(inputs: dict, finite: bool | float = False, pad: int = PAD) -> tuple[dict, list]:
    import torch

    bands = [padded(k, v, i + 1, finite, pad) for i, (k, v) in enumerate(inputs.items())
             if isinstance(v, torch.Tensor) and v.numel() and min(v.stride(), default=1) >= 0]
    given = dict(inputs)
    given.update({b.name: b.view for b in bands})
    return given, bands


def band_fill(dtype):
    """The guard bands' fill around a zeroed allocation: finite and small for floats, so that an
    atomic_add past the end changes it (a NaN absorbs the add; a large value, -31337 in fp16 with
    its ulp of 16, absorbs a small one), and an odd power of two no result is likely to store."""
    from harness.core import guards

    return -0.0078125 if dtype.is_floating_point else guards.CANARY.get(dtype, guards.default_poison(dtype))


@contextlib.contextmanager
def poisoned_allocations(canary=None, pad: int = PAD):
    """``torch.empty``, ``empty_like`` and ``Tensor.new_empty`` return poison inside canary padding
    (``canary``: a function of the dtype giving another fill, for a second run that tells elements
    never written from elements that happen to equal the poison); ``torch.zeros``, ``zeros_like``
    and ``Tensor.new_zeros`` return zeros inside poison guard bands (a write past a zeroed
    accumulator, an atomic_add output, shows as a write outside; 0 is what it holds, so it is never
    "never written")."""
    import torch

    from harness.core import guards

    def plain(t, kwargs) -> bool:
        return kwargs.get("out") is not None or not t.is_contiguous() or t.numel() == 0 or t.requires_grad

    made = {"empty": 0}

    def wrap(original):
        def alloc(*args, **kwargs):
            t = original(*args, **kwargs)
            if plain(t, kwargs):
                return t
            made["empty"] += 1
            fill = guards.default_poison(t.dtype) if canary is None else canary(t.dtype)
            return guards.output(t.shape, t.dtype, t.device, pad=pad, canary=fill)
        return alloc

    def wrap_zeros(original):  # zeros inside guard bands: a write past them shows, like an input's
        def alloc(*args, **kwargs):
            t = original(*args, **kwargs)
            return t if plain(t, kwargs) else guards.guarded(t, t.device, pad=pad, poison=band_fill(t.dtype))
        return alloc

    with Patcher() as patcher:
        for obj, name, how in ((torch, "empty", wrap), (torch, "empty_like", wrap), (torch, "zeros", wrap_zeros),
                               (torch, "zeros_like", wrap_zeros), (torch.Tensor, "new_empty", wrap),
                               (torch.Tensor, "new_zeros", wrap_zeros)):
            patcher.setattr(obj, name, how(getattr(obj, name)))
        yield made


def _shares(out, inputs: dict) -> str:
    import torch

    if not isinstance(out, torch.Tensor) or out.device.type == "meta":
        return ""
    ptr = out.untyped_storage().data_ptr()
    return next((k for k, v in inputs.items() if isinstance(v, torch.Tensor) and v.numel()
                 and v.untyped_storage().data_ptr() == ptr), "")


@dataclass
class Watch:
    """What a probe worker watches around each call of the launcher (None elsewhere): ``emit`` gets
    "calling" and "called" marks, so that the parent tells a kernel that does not return from a slow
    step between calls (harness.probe.runner._hang_until); ``counter`` (``triton_compat.patched``'s
    TuningCounter, whose ``seconds`` grow while autotune benchmarks its configs) measures each
    call's tuning into ``budget`` (``Budget.tuned``: what a run at a new key repeats)."""

    emit: object = None
    counter: object = None
    budget: object = None

    def mark(self, kind: str) -> None:
        if self.emit is not None:
            self.emit(event=kind)

    def tuning(self) -> float:
        return self.counter.seconds if self.counter is not None else 0.0


def call(target, inputs: dict, *, backend: str, counter=None, ref=None, finite: bool | float = False, canary=None,
         pad: int = PAD, on_device: bool = False, watch: Watch | None = None, changed: bool = False) -> Call:
    """The reference, then the launcher on guard-banded copies of ``inputs`` (with torch.empty
    poisoned while it runs), compared; the guard bands checked. ``finite``: bands of 0.0 (True) or of
    that float value (float bands; integer ones 0); ``pad``:
    guard elements on each side (0: none, under a GPU tool that checks accesses itself);
    ``on_device``: a single output compared where it lies (the GPU: a second where the host takes
    seconds for 16 million elements), for an experiment that repeats one call many times; ``watch``:
    the worker's marks and tuning clock (``Watch``); ``changed``: name the tensor inputs the launch
    changed (``Call.changed``: outputs and in-place arguments)."""
    import torch

    from harness.core import guards
    from harness.run.analyses.base import view_span
    from harness.run.worker import call_with

    res = Call(ref=reference(target, inputs) if ref is None else ref)
    with guards.collecting(pad=pad) as gs:
        given, bands = _guard_inputs(inputs, finite, pad)
        if counter is not None:
            counter.clear()
        watch = watch or Watch()
        tuned = watch.tuning()
        try:
            watch.mark("calling")
            with poisoned_allocations(canary, pad) as made:
                out = call_with(target.launcher, given)
            res.allocated = made["empty"]
            if backend == "gpu":
                from harness.run.worker import sync_all_gpus

                sync_all_gpus()  # a kernel's own error (an illegal address) surfaces here, as the launcher's
        except Exception as e:  # noqa: BLE001  (the user's kernel: any exception is a finding)
            res.error = e
            return res
        finally:
            watch.mark("called")
            if watch.budget is not None:
                watch.budget.tuned(watch.tuning() - tuned)
        res.bench_launches = sum(counter.calls) if counter is not None else 0
        _compare(res, target, out, given, inputs, on_device)
        if changed:
            res.changed = [k for k, v in given.items() if isinstance(v, torch.Tensor) and _changed(v, inputs.get(k))]
        res.guard = gs.check()
        res.views = {k: view_span(v) for k, v in given.items() if isinstance(v, torch.Tensor)}
        res.kept = [(g.name, ~guards.differs_from_fill(g.view.reshape(-1), g.fill).cpu()) for g in gs.guards
                    if g.kind == "output" and g.view.dtype != torch.bool]
        for b in bands:
            if n := b.changed():
                res.guard["wrote_past_end"][b.name] = n
    return res


def _compare(res: Call, target, out, given: dict, inputs: dict, on_device: bool = False) -> None:
    """``res.out``, ``res.cmp`` (``compare.compare``'s keys), ``res.returned`` and ``res.parts`` from
    what the launcher returned (``out``) and ``res.ref``."""
    import torch

    ref = res.ref
    ref_parts = getattr(ref, "parts", None)
    if out is None:
        outs, problem = _changed_in_place(ref, given, inputs)
    else:
        outs, problem = flat_parts(out) if isinstance(out, (tuple, list, dict)) else [("", out)], ""
    if not problem and ref_parts is None and len(outs) == 1:
        return _compare_one(res, target, outs[0][1], ref, given, on_device, ref)
    if not problem and ref_parts is not None and len(ref_parts) == 1 and len(outs) == 1:
        return _compare_one(res, target, outs[0][1], ref.reshape(ref_parts[0][1]), given, on_device, ref)
    names = [n for n, _ in ref_parts] if ref_parts is not None else [""]
    if not problem and [n for n, _ in outs] != names:
        problem = (f"{_structure([n for n, _ in outs])}", f"{_structure(names)}")
    res.parts = [(n, tuple(t.shape)) for n, t in outs]
    res.dtypes = [t.dtype if isinstance(t, torch.Tensor) else torch.float64 for _, t in outs]
    res.out = _flatten([t for _, t in outs])
    if problem:
        res.cmp = {"close": False, "n": int(ref.numel()), "n_bad": int(ref.numel()), "max_abs": float("inf"),
                   "max_rel": float("inf"), "nonfinite": 0, "first_bad": None,
                   "result": problem[0], "reference": problem[1]}
        return None
    res.cmp = _compare_parts(target, outs, ref)
    shared = [(n, _shares(t, given)) for n, t in outs]
    bad = res.cmp.pop("bad_part", None)
    res.returned = next((s for n, s in shared if s and n == bad), "") or next((s for _, s in shared if s), "")
    return None


def _compare_one(res: Call, target, out, ref, given: dict, on_device: bool = False, flat_ref=None) -> None:
    """One output against ``ref`` (``flat_ref``: the reference as ``reference`` made it, where ``ref``
    is it reshaped), by the fixed tolerance of its dtype, then, where that fails, beyond the error
    floor of the computation (``harness.probe.floor``)."""
    import torch

    from harness.core import compare

    res.returned = _shares(out, given)
    out = out if isinstance(out, torch.Tensor) else torch.as_tensor(out)
    res.out, res.ref = out.detach().to("cpu"), ref
    rtol, atol = target.tolerance_for(out.dtype, ref)
    res.cmp = compare.compare(out.detach() if on_device else res.out, ref, rtol, atol)
    if not res.cmp["close"] and (allow := _floor(out, flat_ref, ref.numel())) is not None:
        res.cmp = compare.compare(out.detach() if on_device else res.out, ref, rtol, atol, allow)


def _compare_parts(target, outs: list, ref) -> dict:
    """Each part against its slice of the flat reference, with its dtype's tolerance; one dict of
    ``compare.compare``'s keys for them all (indices into the flat vector), naming the first part
    that differs (``bad_part``)."""
    from harness.core import compare

    merged = {"close": True, "n": 0, "n_bad": 0, "max_abs": 0.0, "max_rel": 0.0, "nonfinite": 0, "first_bad": None,
              "bad_part": None}
    at = 0
    for (name, t), (_, shape) in zip(outs, ref.parts):
        size = 1
        for d in shape:
            size *= d
        r = ref[at:at + size].reshape(shape)
        o = t.detach().to("cpu")
        rtol, atol = target.tolerance_for(o.dtype, r)
        c = compare.compare(o, r, rtol, atol)
        if not c["close"] and (allow := _floor(o, ref, ref.numel(), at)) is not None:
            c = compare.compare(o, r, rtol, atol, allow[at:at + size])
        merged["n"] += c["n"]
        merged["n_bad"] += c["n_bad"]
        merged["max_abs"] = max(merged["max_abs"], c["max_abs"])
        merged["max_rel"] = max(merged["max_rel"], c["max_rel"])
        merged["nonfinite"] += c["nonfinite"]
        if not c["close"] and merged["close"]:
            merged.update(close=False, bad_part=name, result=f"{name}: {c['result']}",
                          reference=f"{name}: {c['reference']}",
                          first_bad=None if c["first_bad"] is None else at + c["first_bad"])
        at += size
    if merged["close"]:
        merged["result"] = f"all {merged['n']} match ({len(outs)} outputs: {', '.join(n for n, _ in outs)})"
        merged["reference"] = ", ".join(f"{n} shape {s}" for n, s in ref.parts)
    return merged


def _floor(out, flat_ref, numel: int, at: int = 0):
    """The error floor's allowance for the flat reference (``harness.probe.floor.allowance``; for an
    integer result ``floor.integer_allowance``: a code off only where the reference's own roundings move
    it), or None: a bool result is exact, and a reference that kept no record has none. ``at``: where
    ``out`` (one part of the result) starts in the flat reference."""
    import torch

    from harness.probe import floor

    if flat_ref is None or not isinstance(out, torch.Tensor) or out.dtype == torch.bool or out.dtype.is_complex:
        return None
    if out.dtype.is_floating_point:
        allow = floor.allowance(flat_ref)
        if (kept := floor.stored(out, flat_ref, at, numel)) is not None:  # a narrower format's rounding, widened
            allow = kept if allow is None or allow.numel() != numel else allow + kept
    else:  # the whole flat result, this part in its place and the reference's own values elsewhere
        whole = flat_ref.detach().to("cpu", torch.float64).reshape(-1).clone()
        whole[at:at + out.numel()] = out.detach().to("cpu", torch.float64).reshape(-1)
        allow = floor.integer_allowance(flat_ref, whole)
    return allow if allow is not None and allow.numel() == numel else None


def _structure(names: list) -> str:
    if names == [""]:
        return "one tensor"
    return f"{len(names)} outputs ({', '.join(names)})"


def _changed_in_place(ref, given: dict, inputs: dict) -> tuple[list, tuple | str]:
    """The launcher returned None: the inputs it changed are its result. With a dict reference,
    the inputs it names; with one tensor, the one input the launch changed (of the reference's
    size, where it changed several; the one input of the reference's shape, where it changed
    none). ``(parts, "")``, or ``([], (result, reference))`` saying why there is nothing to compare."""
    import torch

    tensors = {k: v for k, v in given.items() if isinstance(v, torch.Tensor)}
    if getattr(ref, "keyed", False):
        missing = [n for n, _ in ref.parts if n not in tensors]
        if missing:
            return [], (f"None (in place); no input named {', '.join(map(repr, missing))}",
                        f"a dict of {', '.join(n for n, _ in ref.parts)}")
        return [(n, tensors[n]) for n, _ in ref.parts], ""
    changed = [k for k, v in tensors.items() if _changed(v, inputs.get(k))]
    numel = ref.numel()
    pick = changed if len(changed) == 1 else [k for k in changed if tensors[k].numel() == numel]
    if not changed:
        pick = [k for k, v in tensors.items() if tuple(v.shape) == tuple(ref.shape)]
    if len(pick) == 1:
        return [("", tensors[pick[0]])], ""
    what = f"changed {', '.join(map(repr, changed))}" if changed else "changed no input"
    return [], (f"None (in place) and {what}: return a dict {{input name: tensor}} from reference to say which "
                f"input holds the result", f"one tensor of shape {tuple(ref.shape)}")


def _changed(after, before) -> bool:
    """Whether the launch changed the tensor (NaN where NaN was is no change)."""
    import torch

    if not isinstance(before, torch.Tensor) or after is before or after.shape != before.shape or not after.numel():
        return False
    a, b = after.detach(), before.detach().to(after.device)
    differ = a != b
    if a.dtype.is_floating_point or a.dtype.is_complex:
        differ &= ~(torch.isnan(a) & torch.isnan(b))
    return bool(differ.any())


def second_fill(dtype):
    """A fill unlike the poison, for the second run of an "unwritten" check."""
    return 27183.5 if dtype.is_floating_point else 77


def unwritten_in_place(target, inputs: dict, name: str, pad: int = PAD) -> int:
    """Elements of the input ``name`` (the result) that keep whatever they held before the
    launch: run twice with two different fillings of it and count elements that kept each."""
    import torch

    from harness.core import guards
    from harness.run.worker import call_with

    kept = None
    dtype = inputs[name].dtype
    if dtype == torch.bool:
        return 0
    if dtype.is_floating_point:
        fills = (-31337.25, 27183.5) if torch.finfo(dtype).max > 65504 else (-3.25, 2.75)  # fp8 and fp16 hold these
    else:  # two values inside the integer type's range (a uint8 result holds neither -31337 nor 27183)
        info = torch.iinfo(dtype)
        fills = (info.min + 3, info.max - 3)
    for fill in fills:
        given, _ = _guard_inputs(clone_inputs(inputs), pad=pad)
        t = given[name]
        t.fill_(fill)
        before = t.clone()
        try:
            with guards.collecting(pad=pad), poisoned_allocations(pad=pad):
                call_with(target.launcher, given)
        except Exception:  # noqa: BLE001
            return 0
        same = (t.to("cpu") == before.to("cpu"))
        kept = same if kept is None else kept & same
    return int(kept.sum())
