"""TL702: a program spins on a flag another program sets, chosen by tl.program_id."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule

BAD = '''
import triton
import triton.language as tl

@triton.jit
def chained_kernel(x_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    blk = tl.program_id(0)
    ready = tl.atomic_add(flag_ptr + blk - 1, 0)
    while ready == 0:
        ready = tl.atomic_add(flag_ptr + blk - 1, 0)
    tl.atomic_xchg(flag_ptr + blk, 1)
'''

GOOD = BAD.replace("blk = tl.program_id(0)", "blk = tl.atomic_add(flag_ptr + n, 1)  # a ticket: blocks in start order")

POLLS = ("atomic_add", "atomic_cas", "atomic_or", "atomic_and", "atomic_xchg", "atomic_max", "atomic_min", "load")


def innermost(flow, node):
    """The nearest ``while`` loop around ``node``: a spin is reported at the loop that polls, not at the loops
    around it."""
    return next((a for a in flow.ancestors(node) if isinstance(a, ast.While)), None)


def draws(flow, call: ast.Call) -> bool:
    """``tl.atomic_add(counter, k)`` with ``k`` a nonzero literal: every call moves the counter itself, so a loop
    that runs while the number drawn is below a bound ends by its own draws (a work queue); a poll that waits
    for another program reads without moving it (``atomic_add(flag, 0)``, a volatile load, ``atomic_cas``)."""
    if flow.m.tl_call(call) != "atomic_add":
        return False
    step = arg(call, 1, "val")
    return isinstance(step, ast.Constant) and isinstance(step.value, (int, float)) and step.value > 0


@rule("TL702", "spin-wait-on-program-order", cases=("spin-lock-no-ordering",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="a while loop that polls an address derived from tl.program_id (a flag another program sets)")
def check(module):
    """Nothing guarantees that program ``i + 1`` (or ``i - 1``) has started, or ever will while program ``i``
    occupies its SM: a chain of programs that wait on each other by program id can hang. Take the order
    from a ticket (``tl.atomic_add(counter, 1)``), which only running programs can draw. A poll is an atomic,
    or a volatile load, re-read inside the loop, whose value the loop's condition (or an ``if ...: break`` in
    it) reads; it is reported at the innermost loop that polls. Quiet when the polled address comes from an
    atomic ticket or the poll draws one itself (``t = tl.atomic_add(counter, 1)`` until ``t`` passes a bound: a
    work queue), and for a mutex (``atomic_cas(lock, 0, 1)`` until taken, ``atomic_xchg(lock, 0)`` on the same
    address to give it back): whoever holds it is running."""
    for flow in flows(module):
        for loop in (n for n in flow.nodes if isinstance(n, ast.While)):
            inside = lambda c, loop=loop: loop.lineno <= c.lineno <= loop.end_lineno  # noqa: E731
            tests = [loop.test] + [n.test for n in ast.walk(loop) if isinstance(n, ast.If) and innermost(flow, n) is loop
                                   and any(isinstance(b, ast.Break) for b in n.body)]  # if ready: break
            polls = [c for t in tests for c in ast.walk(t) if flow.m.tl_call(c) in POLLS and
                     (flow.m.tl_call(c) != "load" or any(k.arg == "volatile" for k in c.keywords))]
            polls += [v for t in tests for n in ast.walk(t) if isinstance(n, ast.Name) for v, _ in flow.env.get(n.id, ())
                      if flow.m.tl_call(v) in POLLS and inside(v)]  # re-read on every turn: a spin
            released = {ast.unparse(arg(c, 0, "pointer")) for c in flow.calls("atomic_xchg") if arg(c, 0, "pointer") is not None}
            for c in polls:
                pointer = arg(c, 0, "pointer")
                if draws(flow, c):
                    continue  # a work queue: each turn takes the next number itself, whoever else takes some
                if flow.m.tl_call(c) == "atomic_cas" and pointer is not None and ast.unparse(pointer) in released:
                    continue  # a mutex: taken with atomic_cas, given back with atomic_xchg; its holder is running
                nodes = list(flow.sources(pointer)) if pointer is not None else []
                by_pid = any(flow.m.tl_call(n) == "program_id" for n in nodes)
                ticket = any((flow.m.tl_call(n) or "").startswith("atomic_") for n in nodes)
                if by_pid and not ticket:
                    yield loop, (f"spins on {ast.unparse(pointer)}, set by another program chosen by its program id: "
                                 f"programs are not started in order, so the one it waits for may never run; take "
                                 f"the order from an atomic ticket instead")
                    break
