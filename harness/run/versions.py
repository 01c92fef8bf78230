"""Which Triton is installed, and whether the casebook was tested with it.

Read from the package metadata (``importlib.metadata``), so asking costs no import of
Triton or torch. ``SUPPORTED`` names the oldest and the newest Triton that the CPU
suite passes on (README.md, "Triton versions"; .ci/run runs the interpreter cases on
both). A patch release of a tested minor version counts as tested.

- below the oldest: ``check()`` returns an error line, and every command that runs
  kernels exits 2 with it (the harness reaches into Triton's interpreter and
  autotuner, and older Tritons make every kernel "crash" for the harness's reasons,
  not the kernel's);
- above the newest: a warning line; the command runs;
- in between: nothing.
"""

from __future__ import annotations

import re
from importlib import metadata

SUPPORTED = ("3.4.0", "3.9.0")
# Every release the whole CPU suite has passed on, each in a venv of its own
# (docs/measurements/versions/pytest-triton-*.log; 3.7.1 is the one constraints.txt pins).
TESTED = ("3.4.0", "3.5.1", "3.6.0", "3.7.1", "3.8.0", "3.9.0")
# The distributions that install the ``triton`` package: PyPI's, and the ones PyTorch's
# own indexes ship (nightlies, ROCm, XPU).
DISTRIBUTIONS = ("triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu", "triton-xpu")


def installed_triton() -> str | None:
    """The installed Triton's version string, or None when no distribution provides it."""
    for name in DISTRIBUTIONS:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def minor(version: str) -> tuple[int, int] | None:
    """``"3.6.0+git1234"`` -> ``(3, 6)``; None when the string does not start with N.N."""
    m = re.match(r"\s*v?(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def supported_range() -> str:
    return f"{SUPPORTED[0]} to {SUPPORTED[1]}"


def check(version: str | None = None) -> tuple[str | None, str | None]:
    """``(error, warning)`` for ``version`` (default: the installed one); each None or one line."""
    version = installed_triton() if version is None else version
    if version is None:
        return (f"triton is not installed; the casebook runs its kernels with triton {supported_range()} "
                f"(python -m pip install -e . -c constraints.txt)"), None
    have, oldest, newest = minor(version), minor(SUPPORTED[0]), minor(SUPPORTED[1])
    if have is None:
        return None, f"warning: cannot read triton's version '{version}'; the casebook is tested with {supported_range()}"
    if have < oldest:
        return (f"triton {version} is older than the casebook supports ({supported_range()}): "
                f"install a supported one, e.g. python -m pip install -e . -c constraints.txt"), None
    if have > newest:
        return None, (f"warning: triton {version} is newer than the casebook was tested with "
                      f"({supported_range()}); results may differ")
    return None, None
