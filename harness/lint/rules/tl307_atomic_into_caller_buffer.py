"""TL307 (preview): atomics that accumulate into a caller's tensor that the launcher never zeroes."""

from __future__ import annotations

from harness.lint.registry import LOW, rule
from harness.lint.rules._twins import EMPTY_ACCUMULATOR as EMPTY, returned, uninitialised_atomics

BAD = EMPTY.replace("def vector_sum(x):\n    out = torch.empty(1, device=x.device)\n", "def vector_sum(x, out):\n"
                    ).replace("    return out", "    return x")

GOOD = BAD.replace("def vector_sum(x, out):\n", "def vector_sum(x, out):\n    out.zero_()\n")


@rule("TL307", "atomic-into-caller-buffer", cases=("atomic-accumulator-empty",), confidence=LOW, preview=True,
      bad=BAD, good=GOOD,
      summary="tl.atomic_add into a tensor the launcher takes from its caller, never zeroes and does not return")
def check(module):
    """TL306's trap when the accumulator is the caller's and the function does not return it: if the caller
    made it with ``torch.empty``, the sum starts from leftover memory. Preview: a function that adds into its caller's running total (a load
    recorder, a gradient accumulator) is meant to, and nothing in the file says which it is."""
    for flow, launch, name, param, how in uninitialised_atomics(module):
        if how == "param" and not returned(launch.launcher, name):
            yield launch.node, (f"{name} is the caller's, never zeroed here, and {flow.k.name} tl.atomic_adds into "
                                f"it ({param}): unless the caller zeroed it, the sum starts from whatever memory it "
                                f"held; zero it first ({name}.zero_()) or say that it accumulates")
