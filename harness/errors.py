"""Errors and exit codes: the leaf every layer may import, and that imports nothing.

Exit codes (the same for every command):

- ``0``  everything behaved as declared (or, for ``list``/``new``, the command did its job)
- ``1``  a kernel did not behave as its case declares, or a detector found something
- ``2``  bad input: an unknown or malformed case, a bad option, no GPU for ``--backend gpu``,
         an unsupported Triton, a file that cannot be written
- ``130`` interrupted (Ctrl-C), ``143`` terminated (SIGTERM)
"""

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


def error_line(e: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    text = str(e).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(e).__name__}: {first}" if first else type(e).__name__
