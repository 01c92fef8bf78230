"""Large random draws made on the GPU: the inputs of the probe's run past 2**31 elements.

A probe file's ``make_inputs`` draws its values on the CPU, as torch code that wants the same values on
every machine does (``torch.randn(n, d, generator=gen).to(device)``: a CPU generator). At the sizes of
the large detector's run (a tensor past 2**31 elements) that draw is the run's whole cost: torch's CPU
generator draws one value after another whatever the cores, so make_inputs took most of a 20 s budget at
those sizes on the H200 machine's 16 cores, and copying the draws there and back half of it
(docs/measurements/large-run-cost-h200.md): the run past 2**31 elements, the one run that shows an int32
offset wrapping, never fitted.

Inside ``drawn_on(device)`` a draw of ``torch.randn``, ``torch.rand`` or ``torch.randint`` that asks for a
CPU tensor of at least ``THRESHOLD`` elements is made by ``device``'s generator (seeded from the CPU
generator's seed, one per CPU generator, so the draws stay reproducible and successive draws differ) and
copied to the CPU: the same distribution, dtype, shape and device the caller asked for, other values
(or, with ``keep``, left on ``device``: make_inputs moves its tensors there anyway).
That is fair where it is used: the run past 2**31 elements asks whether the kernel's addresses wrap,
which no value changes, and checks sampled rows against the reference of the same inputs. Smaller draws
(the ordinary runs, every other detector) are never touched, and the patches are undone on leaving.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Iterator

THRESHOLD = 1 << 22  # elements: below, the CPU draw takes milliseconds and is left as it is


def _shape(value) -> tuple | None:
    import torch

    if isinstance(value, int):
        return (value,)
    if isinstance(value, (tuple, list, torch.Size)) and all(isinstance(v, int) for v in value):
        return tuple(value)
    return None


def _cpu(kw: dict) -> bool:
    import torch

    dev = kw.get("device")
    if dev is None:
        dev = torch.get_default_device() if hasattr(torch, "get_default_device") else "cpu"
    return torch.device(dev).type == "cpu"


@contextmanager
def made_on(device) -> Iterator[None]:
    """Within the block, make_inputs' whole work on ``device``: every draw of torch.randn/rand/randint made there
    (``drawn_on``'s generators, whatever its size) and kept there, and torch's factories given no device
    (``torch.zeros``, ``torch.arange``, ``torch.tensor``: torch's default device) making their tensors there too.
    make_inputs' own CPU work between its draws and its ``.to(device)`` (a dtype conversion, a ``cat``, an
    ``argsort`` of routing scores, a row-id map) is what costs at these sizes once the draws are made on the device:
    14 s of a 16 s run for a gated activation whose make_inputs mixes a per-row CPU draw with large ones (that mix
    raises under ``drawn_on``'s ``keep``, and the draws are copied back to the CPU:
    docs/measurements/large-cost-s26/). What make_inputs cannot do on the device (``.numpy()``, a CPU generator
    given to a function not patched here) raises, and a tensor it means to keep on the CPU lands on the device:
    the caller compares where each tensor it gets sits with where make_inputs puts it normally, and makes the
    inputs the plain way otherwise."""
    import torch

    with drawn_on(device, threshold=0, keep=True, unplaced=True), torch.device(device):
        yield


@contextmanager
def drawn_on(device, threshold: int | None = None, keep: bool = False, unplaced: bool = False) -> Iterator[None]:
    """Within the block, large CPU draws of torch.randn/rand/randint are made on ``device`` (module docstring);
    ``keep``: left there, not copied to the CPU (the caller moves them to ``device`` anyway, as make_inputs does:
    the copy there and back, and the CPU's dtype conversion between, cost as much as the draw itself; code that
    mixes the draw with CPU tensors raises, and the caller makes the inputs again without ``keep``);
    ``unplaced``: a draw given no device counts as a CPU draw whatever torch's default device (``made_on`` sets
    that default to ``device``: code written for the CPU's default draws there)."""
    import torch

    from harness.run.patching import Patcher

    least = THRESHOLD if threshold is None else threshold
    gens: dict = {}

    def on_cpu(kw: dict) -> bool:
        return _cpu(kw) or (unplaced and kw.get("device") is None)

    def generator(cpu_gen):
        key = id(cpu_gen) if cpu_gen is not None else None
        if key not in gens:
            g = torch.Generator(device=device)
            g.manual_seed(cpu_gen.initial_seed() if cpu_gen is not None else torch.initial_seed())
            gens[key] = (g, cpu_gen)  # the CPU generator kept alive, so its id is not reused
        return gens[key][0]

    def moved(orig, lead: tuple, size: tuple, kw: dict):
        rest = {k: v for k, v in kw.items() if k not in ("generator", "device", "requires_grad", "pin_memory",
                                                          "size")}
        out = orig(*lead, size, generator=generator(kw.get("generator")), device=device, **rest)
        out = out if keep else out.to("cpu")
        return out.requires_grad_() if kw.get("requires_grad") else out

    def sized(orig):  # randn, rand: (*size) or (size) or size=
        def draw(*args, **kw):
            size = _shape(kw["size"]) if "size" in kw else _shape(args[0]) if len(args) == 1 else _shape(args)
            if size is None or kw.get("out") is not None or not on_cpu(kw) or math.prod(size) < least:
                return orig(*args, **kw)
            return moved(orig, (), size, kw)
        return draw

    def ints(orig):  # randint: (high, size) or (low, high, size), size= allowed
        def draw(*args, **kw):
            lead, size = list(args), kw.get("size")
            if size is None and lead:
                size = lead.pop()
            size = _shape(size)
            if (size is None or not lead or kw.get("out") is not None or not on_cpu(kw)
                    or math.prod(size) < least):
                return orig(*args, **kw)
            return moved(orig, tuple(lead), size, kw)
        return draw

    with Patcher() as p:
        p.setattr(torch, "randn", sized(torch.randn))
        p.setattr(torch, "rand", sized(torch.rand))
        p.setattr(torch, "randint", ints(torch.randint))
        yield
