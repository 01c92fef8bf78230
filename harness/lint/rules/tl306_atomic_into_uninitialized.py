"""TL306: atomics that accumulate into a tensor the launcher never zeroes."""

from __future__ import annotations

from harness.lint.registry import MEDIUM, rule
from harness.lint.rules._twins import EMPTY_ACCUMULATOR, returned, uninitialised_atomics

BAD = EMPTY_ACCUMULATOR

GOOD = BAD.replace("torch.empty(1,", "torch.zeros(1,")


@rule("TL306", "atomic-into-uninitialized", cases=("atomic-accumulator-empty",), confidence=MEDIUM, bad=BAD,
      good=GOOD,
      summary="tl.atomic_add into a tensor that the launcher made with torch.empty, or took from its caller, "
              "returns as its result and never zeroed")
def check(module):
    """An atomic add is a read-modify-write: the first program adds to whatever the accumulator held.
    ``torch.empty`` does not clear memory (the caching allocator hands back an old block), so the result is
    ``leftover + sum``, right in a fresh process and wrong later. Fires for a torch.empty made in the
    launcher, and for a caller's tensor that the launcher never zeroes and returns as its result (an ``out=``
    argument is overwritten, not added to); quiet when the kernel's autotune zeroes it (reset_to_zero, or a config's
    ``pre_hook=init_to_zero([...])``), when the kernel itself stores into it before its first atomic, or when
    an earlier launch in the launcher stores into it. Only the atomics the launch's specialization holds count:
    one under ``if FUSED:`` (``FUSED`` a ``tl.constexpr``) is not compiled into a launch that passes ``FUSED=0``
    (a literal, a name bound once to one, a module constant, or the parameter's default), nor is one after an
    ``if not FUSED: return``; a flag lint cannot pin down (the caller's, a heuristic's) leaves it in. A caller's
    tensor that the launcher never zeroes and does not return is TL307, a preview rule."""
    for flow, launch, name, param, how in uninitialised_atomics(module):
        if how == "param" and returned(launch.launcher, name):
            yield launch.node, (f"{name} is the caller's, never zeroed here, and {flow.k.name} tl.atomic_adds into "
                                f"it ({param}), and the function returns it as its result: the sum starts from "
                                f"whatever memory it held; zero it first ({name}.zero_())")
        elif how == "empty":
            yield launch.node, (f"{name} comes from torch.empty, and {flow.k.name} tl.atomic_adds into it "
                                f"({param}): the sum starts from whatever memory it held; zero it first "
                                f"({name}.zero_() or torch.zeros)")
