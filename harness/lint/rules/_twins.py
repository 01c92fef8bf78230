"""What a rule and its preview twin share: the analysis both run, at two confidences, and the example
the twin's is made from (TL101 and TL106, TL201 and TL202, TL306 and TL307, TL502 and TL503, TL704 and
TL707). A rule module never imports another (tests/test_plugin_imports.py): what two share is here."""

from __future__ import annotations

import ast

from harness.lint.fixes import Fix, insert_keyword
from harness.lint.flow import arg, flows
from harness.lint.rules._common import (REDUCE_MAX, divisibility_checked, exact_width, is_none, is_zero, masked_loads,
                                        memory_ops, padded_allocation, partial_block_evidence, pointer_param, under_if,
                                        value_chain)
from harness.lint.rules._launch import dead_for


# -- TL101 and its twin ----------------------------------------------------------------------------

def unmasked_tiles(module, strength: str):
    """The hits of TL101 (``strength`` "strong") or TL106 ("weak"): see partial_block_evidence."""
    for flow in flows(module):
        for call, kind, pointer, mask in memory_ops(flow):
            if under_if(flow, call):
                continue
            tiles = {a[1] for a in flow.atoms(pointer) if a[0] == "tile" and not exact_width(flow, a[1])
                     and not divisibility_checked(flow, a[1]) and partial_block_evidence(flow, call, a[1]) == strength}
            if tiles:  # a buffer the launcher allocates in whole blocks holds the last block whole, read or written
                param = pointer_param(flow, pointer)
                tiles = {b for b in tiles if not padded_allocation(flow, param, b, pointer)}
            if not tiles:
                continue
            if is_none(mask):
                like = "matmul-k-tail" if flow.in_loop(call) else "add-missing-mask"
                yield call, (f"tl.{kind} of block offsets (tl.arange(0, {sorted(tiles)[0]}) stepped per program or "
                             f"iteration) with no mask: the last, partial block {'reads' if kind == 'load' else 'writes'}"
                             f" past the end of the tensor"), like
                continue
            covered = {a[1] for a in flow.atoms(mask) if a[0] in ("arange", "tile")}
            missing = sorted(tiles - covered)
            if covered and missing:
                axis = f"tl.arange(0, {missing[0]})"
                yield call, (f"the mask of this tl.{kind} does not cover the block axis {axis}: lanes past the end "
                             f"of that axis are still {'read' if kind == 'load' else 'written'}"), "conv2d-channel-mask"


# -- TL201 and its twin ----------------------------------------------------------------------------

def neutral_other(load: ast.Call, reduction: str) -> Fix:
    """``other=`` the neutral element of the max or min that reduces the load: -inf or +inf."""
    value = 'float("-inf")' if reduction in ("max", "argmax") else 'float("inf")'
    return insert_keyword(load, "other", value, f"other={value} on the tl.load on line {load.lineno}", index=2)


def padded_reductions(module, explicit_zero: bool):
    """(flow, reduction call, load call) where what a max/min/argmax/argmin reduces *is* a masked load whose
    padding is 0 (``other=0`` given when ``explicit_zero``, no ``other=`` otherwise), give or take a scale
    or an offset by a number (``value_chain``): not through tl.where, a call (tl.abs, tl.exp: never
    negative), nor arithmetic with another block."""
    for flow in flows(module):
        loads = {id(c): c for c, other in masked_loads(flow)
                 if (not is_none(other) and is_zero(other)) == explicit_zero and (explicit_zero or other is None)}
        if not loads:
            continue
        for red in flow.calls(*REDUCE_MAX):
            value = arg(red, 0, "input")
            if value is None:
                continue
            for n in value_chain(flow, value):
                if id(n) in loads:
                    yield flow, red, loads[id(n)]
                    break


# -- TL306 and its twin ----------------------------------------------------------------------------

EMPTY_ACCUMULATOR = '''
import torch
import triton
import triton.language as tl

@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))

def vector_sum(x):
    out = torch.empty(1, device=x.device)
    sum_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out
'''


ZEROING = {"zero_", "fill_", "copy_", "zeros", "zeros_like", "new_zeros", "full", "full_like", "new_full", "ones",
           "ones_like", "tensor", "clone"}


def initialised(launcher: ast.FunctionDef, name: str, before: int) -> str:
    """'empty' if ``name`` is a torch.empty the launcher made (every assignment of it before the launch is one),
    'param' if it came from the caller and the launcher never fills it, '' if it is filled (zeros, zero_(),
    fill_(), an assignment into it)."""
    made = []  # every assignment before the launch: an if/else may make it with torch.zeros in one branch
    for n in ast.walk(launcher):
        if getattr(n, "lineno", before) >= before:
            continue
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            made.append(n.value)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ZEROING and \
                isinstance(n.func.value, ast.Name) and n.func.value.id == name:
            return ""
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Subscript) and ast.unparse(t.value) == name
                                             for t in n.targets):
            return ""
    if not made:
        return "param" if name in {a.arg for a in launcher.args.args} else ""
    kinds = {ast.unparse(m.func).rsplit(".", 1)[-1] if isinstance(m, ast.Call) else "" for m in made}
    return "empty" if kinds <= {"empty", "empty_like", "new_empty"} else ""


def stored_params(flow, launch=None) -> dict[str, int]:
    """The kernel's pointer arguments it stores into, with the line of the first store; with ``launch``, only the
    stores that launch's specialization holds (not those under an ``if`` on a constexpr it turns off)."""
    out = {}
    for call, kind, pointer, _ in memory_ops(flow):
        param = pointer_param(flow, pointer) if kind == "store" and not dead_for(flow, launch, call) else None
        if param and param not in out:
            out[param] = call.lineno
    return out


def filled_before(module, launch) -> set[str]:
    """The launcher's names that an earlier launch in it passes to a kernel that stores into them (a prep
    kernel that writes zeros, or the counts, before the atomics start), in that earlier launch's specialization."""
    by_kernel = {id(f.k): f for f in flows(module)}
    out = set()
    for other in module.launches:
        earlier = other.launcher is launch.launcher and other.node.lineno < launch.node.lineno
        if earlier and id(other.kernel) in by_kernel:
            stores = stored_params(by_kernel[id(other.kernel)], other)
            out |= {v.id for p, v in other.args.items() if isinstance(v, ast.Name) and p in stores}
    return out


def accumulators(flow, launch) -> set[str]:
    """The pointer arguments the kernel atomically adds into in the specialization ``launch`` compiles (an atomic
    under ``if FLAG:`` with the launch's ``FLAG=0`` is not in it), less those the kernel itself stores into before
    its first such atomic, and those its autotune's pre-hook or ``reset_to_zero`` zeroes."""
    atomics = [c for c in flow.calls("atomic_add", "atomic_sub")
               if arg(c, 0, "pointer") is not None and not dead_for(flow, launch, c)]
    if not atomics:
        return set()
    stores = stored_params(flow, launch)
    first = min(a.lineno for a in atomics)
    targets = {p for c in atomics if (p := pointer_param(flow, arg(c, 0, "pointer")))
               and not (p in stores and stores[p] < first)}  # the kernel zeroes it
    if flow.k.autotune is not None:  # a config's pre_hook (init_to_zero) zeroes before every launch
        targets = {t for t in targets if not flow.k.autotune.resets(t)}
    return targets


def uninitialised_atomics(module):
    """(launch, name passed, kernel parameter, 'empty' | 'param') for each atomic accumulator nobody zeroes."""
    for flow in flows(module):
        if not any(arg(c, 0, "pointer") is not None for c in flow.calls("atomic_add", "atomic_sub")):
            continue
        for launch in flow.k.launches:
            if launch.launcher is None:
                continue
            targets = accumulators(flow, launch)
            filled = filled_before(module, launch) if targets else set()
            for param in sorted(targets):
                passed = launch.args.get(param)
                if not isinstance(passed, ast.Name) or passed.id in filled:
                    continue
                how = initialised(launch.launcher, passed.id, launch.node.lineno)
                if how:
                    yield flow, launch, passed.id, param, how


def returned(launcher, name: str) -> bool:
    """The function returns ``name`` (alone or in a tuple): the tensor is its result, computed, not added to."""
    for n in ast.walk(launcher):
        if isinstance(n, ast.Return) and n.value is not None:
            values = n.value.elts if isinstance(n.value, ast.Tuple) else [n.value]
            if any(isinstance(v, ast.Name) and v.id == name for v in values):
                return True
    return False


# -- TL502 and its twin ----------------------------------------------------------------------------

RNG = ("rand", "randn", "randint", "randint4x", "rand4x", "randn4x", "philox")


# -- TL704 and its twin ----------------------------------------------------------------------------

SCATTER_COUNT = '''
import triton
import triton.language as tl

@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bins = tl.load(x_ptr + offs, mask=mask, other=0)
    counts = tl.load(hist_ptr + bins, mask=mask)
    tl.store(hist_ptr + bins, counts + 1, mask=mask)
'''


def vector_of_indices(flow, pointer) -> bool:
    """The address holds a block of indices loaded from memory (``hist_ptr + bins``, ``bins`` a loaded
    block), not one loaded offset per program (a row start), where lanes cannot collide."""
    stop = lambda n: flow.m.tl_call(n) == "load"  # noqa: E731
    for n in flow.sources(pointer, stop):
        if flow.m.tl_call(n) == "load" and n is not None:
            inner = arg(n, 0, "pointer")
            if inner is not None and any(a[0] in ("arange", "tile") for a in flow.atoms(inner)):
                return True
    return False


def scatter_updates(module):
    """(flow, store, pointer text, load) for each store back to loaded indices of a value computed from what the
    load read there (not the loaded value itself put back)."""
    for flow in flows(module):
        loads = {}
        for call, kind, pointer, _ in memory_ops(flow):
            indirect = vector_of_indices(flow, pointer)
            if kind == "load" and indirect:
                loads[ast.unparse(pointer)] = call
            elif kind == "store" and indirect and ast.unparse(pointer) in loads:
                value = arg(call, 1, "value")
                load = loads[ast.unparse(pointer)]
                if value is not None and any(n is load for n in flow.sources(value)) and not restored(flow, value, load):
                    yield flow, call, ast.unparse(pointer), load


def restored(flow, value, load) -> bool:
    """The value stored is the loaded one unchanged (saved, then put back): nothing to lose."""
    chain = list(value_chain(flow, value))
    return any(n is load for n in chain) and not any(isinstance(n, ast.BinOp) for n in chain)


def is_count(flow, store, load) -> bool:
    """The stored value is the loaded one changed by a number or a scalar (``counts + 1``), the same for every
    lane: a count, which is only worth keeping where the indices repeat."""
    value = arg(store, 1, "value")
    return any(n is load for n in value_chain(flow, value))
