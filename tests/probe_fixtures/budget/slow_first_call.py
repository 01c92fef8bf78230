"""A correct doubling whose first call takes 30 s (as a GPU compilation of a large tile can, at the
file's own sizes): the defaults' run itself does not fit a 20 s budget. The launcher waits in
0.1 s steps, so that a test's clock delivers the budget's alarm within one of them."""

import time

from doubling import double, make_inputs, reference  # noqa: F401  (the probe's make_inputs and reference)

CALLS = []


def launch(x):
    if not CALLS:
        for _ in range(300):  # the slow part: 30 s
            time.sleep(0.1)
    CALLS.append(1)
    return double(x)
