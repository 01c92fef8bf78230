"""What a case's ``make_inputs`` builds its tensors with: inputs and outputs in guard bands.

- ``guarded(t, device)``: a copy of ``t`` inside NaN (or sentinel) padding;
- ``output(shape, dtype, device)``: an output whose elements and padding hold a canary.

The implementation lives in ``harness.core.guards``; this module is the stable name
cases import.
"""

from harness.core.guards import DEFAULT_PAD, guarded, output

__all__ = ["DEFAULT_PAD", "guarded", "output"]
