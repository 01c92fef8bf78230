"""TL704: a load, an update and a store at data-dependent addresses, not atomic."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import MEDIUM, rule
from harness.lint.rules._common import memory_ops, value_chain

BAD = '''
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

GOOD = BAD.replace("""    counts = tl.load(hist_ptr + bins, mask=mask)
    tl.store(hist_ptr + bins, counts + 1, mask=mask)""", "    tl.atomic_add(hist_ptr + bins, 1, mask=mask)")


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


@rule("TL704", "scatter-read-modify-write", cases=("histogram-lost-updates",), confidence=MEDIUM, bad=BAD,
      good=GOOD,
      summary="tl.load and tl.store of the same address computed from loaded indices, the stored value the loaded "
              "one plus a number (hist[idx] += 1 written as load, add, store)")
def check(module):
    """Indices loaded from data repeat: lanes with the same index all load the same old value and all store
    ``old + 1``, and other programs race on the same addresses. One ``tl.atomic_add(ptr + idx, 1)`` per
    lane loses nothing. Fires only for a block of indices (loaded at ``tl.arange`` offsets) and a count: the
    stored value is the loaded one changed by a number or a scalar argument, the same for every lane, which
    is worth counting only because the indices repeat. An update by other data (``out[idx] += src``,
    an index-add, a state slot per request) is TL707, a preview rule: an API that promises unique indices
    (xformers' scaled_index_add says so) makes it correct, and lint cannot see the promise."""
    for flow, call, pointer, load in scatter_updates(module):
        if is_count(flow, call, load):
            yield call, (f"{pointer} is loaded (line {load.lineno}), counted and stored back at indices read from "
                         f"memory: lanes and programs with the same index lose each other's updates; use "
                         f"tl.atomic_add")
