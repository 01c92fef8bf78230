"""A correct doubling whose make_inputs takes 30 s at the file's own sizes (in 0.1 s steps of
``time.sleep``, which a test points at its own clock): loading the file outlasts a 20 s budget."""

import time

from doubling import double as launch  # noqa: F401  (the probe's launcher)
from doubling import make_inputs as quick_inputs
from doubling import reference  # noqa: F401


def make_inputs(*, device, gen, n=777):
    for _ in range(300):
        time.sleep(0.1)
    return quick_inputs(device=device, gen=gen, n=n)
