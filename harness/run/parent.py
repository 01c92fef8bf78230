"""A worker that dies with the process that started it.

The harness starts each worker in a session of its own (its process group can then be killed
as one), which also detaches it from the terminal's signals. When the harness itself is killed
with SIGKILL (an OOM killer, a CI timeout, ``kill -9``) nothing runs in it to clean up, and a
worker would live on. Linux can deliver a signal to a process when its parent dies
(``prctl(PR_SET_PDEATHSIG)``); a worker asks for SIGKILL first thing. Elsewhere this does nothing.
"""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent() -> bool:
    """Ask the kernel for SIGKILL when the parent dies; exit now if it already has. True if set."""
    if not sys.platform.startswith("linux"):
        return False
    parent = os.getppid()
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if parent == 1 or os.getppid() != parent:  # it died before the request took effect
        os._exit(1)
    return True
