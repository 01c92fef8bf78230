"""A harness command's wall time and CPU seconds, its workers' included (the fork servers' forks too).

    python benchmarks/cpu_time.py detect --all --backend interpreter --json > /dev/null

``time python -m harness ...`` misses most of the work: interpreter workers are forks of a fork server
(``harness.run.zygote``), whose children the shell never waits for. This runs the command in this process,
then closes the fork servers and waits for them, so that ``getrusage(RUSAGE_CHILDREN)`` holds every
process the command started. CPU seconds do not grow with the machine's load as wall time does: the
measure to compare two versions on a shared machine. One line on stderr:
``wall W s, cpu C s (this process S s, its children K s), exit E``.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _reap_all(seconds: float = 30.0) -> None:
    """Wait for every child left (a fork server the command killed at its end is a zombie until then: its
    CPU seconds, and those of the forks it waited for, count only once it is reaped)."""
    import os

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)


def main(argv: list[str]) -> int:
    from harness import cli
    from harness.run import forkserver

    t0 = time.monotonic()
    try:
        rc = cli.main(argv)
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    for server in list(forkserver._SERVERS.values()):  # noqa: SLF001  a measurement's own look inside
        server.close()  # its stdin closed: it ends, having waited for each of its forks
    _reap_all()
    wall = time.monotonic() - t0
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    own, theirs = me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime
    print(f"wall {wall:.1f} s, cpu {own + theirs:.1f} s (this process {own:.1f} s, its children {theirs:.1f} s), "
          f"exit {rc}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
