"""A correct doubling whose first call spends 40 s where the worker's alarm cannot reach it, as a GPU
compilation in Triton's C++ passes or LLVM, or a CUDA call, does (SIGALRM's Python handler runs only
once such code returns): the launcher blocks SIGALRM while it waits. Under a budget the worker's own
stop cannot end it; the parent must (``Budget.kill_at``). Used by benchmarks/probe_overrun.py, which
times it; no test waits for it."""

import signal
import time

from doubling import double, make_inputs, reference  # noqa: F401  (the probe's make_inputs and reference)

CALLS = []


def launch(x):
    if not CALLS:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        try:
            time.sleep(40.0)  # the part the alarm cannot interrupt
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})
    CALLS.append(1)
    return double(x)
