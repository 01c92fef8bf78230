"""A correct doubling whose every call takes 0.3 s (the launcher waits, as a slow kernel would):
shape fuzzing cannot try all its sizes in a short budget, and the budget's end stops it mid-size."""

import time

from doubling import double, make_inputs, reference  # noqa: F401  (the probe's make_inputs and reference)


def launch(x):
    time.sleep(0.3)  # the slow part
    return double(x)
