"""A worker, and everything it starts, ends with the process that started it.

The harness starts each worker under a keeper: a small process in a session of its own
(its process group can be killed as one, and it is detached from the terminal's signals)
whose only child is the worker. The keeper is a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``): a process the worker started that lost its parent (a
double fork, a daemon) is adopted by the keeper, not by init, so whatever the worker
started, in its own session or not, stays below the keeper. When the worker ends, for any
reason (its end, a crash, the harness's SIGTERM on a timeout or an interrupt, the harness
dying), the keeper kills every process below it, reaps them, and ends the way the worker
ended (its exit status, or the signal that killed it). A kernel's launcher that runs
``subprocess.Popen(["sleep", "1234"])``, forks or calls ``setsid()`` leaves nothing behind.

When the harness itself is killed with SIGKILL nothing runs in it to clean up. Linux can
signal a process when its parent dies (``prctl(PR_SET_PDEATHSIG)``): the keeper asks for
SIGTERM (and cleans up), the worker for SIGKILL. Elsewhere than Linux none of this exists:
``keep`` runs the worker in the caller's process group and the harness kills that group.

``python -S harness/run/parent.py CMD...`` runs CMD under a keeper (the harness's fresh
workers); ``harness.run.zygote`` calls ``keep`` in each fork. Only the standard library here:
the keeper must start in milliseconds.
"""

from __future__ import annotations

import os
import signal
import sys
import time

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
STOP = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)  # the keeper's "end the worker, clean up, go"
CLEANUP_SECONDS = 5.0  # how long the keeper keeps killing what is left below it before it gives up
LINUX = sys.platform.startswith("linux")


def _prctl(option: int, value: int) -> bool:
    if not LINUX:
        return False
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _on_parent_death(sig: int) -> tuple[bool, bool]:
    """Ask the kernel for ``sig`` when the parent dies: (asked, the parent changed meanwhile: it died
    before the request took effect). A parent that is PID 1 (the harness as a container's first
    process) counts as alive."""
    parent = os.getppid()
    asked = _prctl(PR_SET_PDEATHSIG, int(sig))
    return asked, os.getppid() != parent


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel for ``sig`` when the parent dies; exit now if it already has. True if set."""
    parent = os.getppid()
    asked, changed = _on_parent_death(sig)
    if asked and (changed or parent == 1):  # it died before the request took effect: adopted by init
        os._exit(1)
    return asked


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (zombies included), from /proc; [] where there is none."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # ended meanwhile
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            out.append(child)
            todo.append(child)
    return out


def kill_all(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def reaped():
    """Collect every child of this process that has ended: (pid, wait status) for each."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        yield pid, status


def end_everything_below(seconds: float = CLEANUP_SECONDS) -> None:
    """Kill every process below this one, and reap them, until none is left (this process must be
    a subreaper: what a killed process leaves comes back to it). Gives up after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        found = descendants(os.getpid())
        kill_all(found)
        list(reaped())
        if not found or time.monotonic() > deadline:
            return
        time.sleep(0.005)


def _end_like(status: int):
    """End this process as the worker ended: its exit status, or the signal that killed it."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the worker's core dump, if any, is its own
            if sig not in (signal.SIGKILL, signal.SIGSTOP):  # (those two cannot be caught or blocked)
                signal.signal(sig, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
            os.kill(os.getpid(), sig)
        except (OSError, ValueError):
            pass
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def keep(worker) -> None:
    """Fork; the child calls ``worker()`` (which must not return: it execs or exits); this process
    becomes its keeper (see the module's doc) and ends as the worker ended. Never returns."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP)  # no stop request between the fork and its handler
    asked, gone = _on_parent_death(signal.SIGTERM)  # the harness gone: clean up as for a stop request
    pid = os.fork()
    if pid == 0:
        try:
            for sig in STOP:
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP)
            die_with_parent()
            worker()
        finally:
            os._exit(127)
    for sig in STOP:
        signal.signal(sig, lambda *_: kill_all([pid]))
    if asked and gone:
        kill_all([pid])
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP)
    while True:
        try:
            ended, status = os.waitpid(-1, 0)
        except ChildProcessError:
            status = 1 << 8
            break
        if ended == pid:
            break
    end_everything_below()  # without a subreaper (an old kernel): what is still attached to this process
    _end_like(status)


def main(argv: list[str]) -> None:
    """``python -S parent.py CMD...``: CMD under a keeper, in this process's session."""
    if not argv:
        print("usage: python -S harness/run/parent.py CMD...", file=sys.stderr)
        os._exit(2)

    def run():
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            print(f"error: cannot run {argv[0]}: {e.strerror}", file=sys.stderr, flush=True)
            os._exit(127)

    keep(run)


if __name__ == "__main__":
    main(sys.argv[1:])
