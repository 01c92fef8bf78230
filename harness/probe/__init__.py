"""Probe your own kernel: every detector on any Triton kernel, at the kernel's line,
with the casebook cases that fell into the same trap.

``python -m harness probe FILE`` on the command line, ``harness.probe(FILE)`` in a test::

    from harness import probe

    def test_my_kernel():
        report = probe("my_kernel_probe.py")
        assert report.ok, report.text()

FILE holds a launcher (``launch``, or ``launcher=``), ``make_inputs(*, device, gen,
**sizes)`` and ``reference(...)`` (or ``inputs=OTHER.py`` holds those two); see
``harness.probe.target`` for the optional declarations (SIZES, FUZZ, TOLERANCE,
DETERMINISTIC). Each detector runs in a process of its own (``runner``, ``worker``);
``checks`` and ``shapes`` are the detectors, ``findings`` their codes and output,
``harness.run.interp_instrument`` the instrumented interpreter under them.
"""

from harness.probe.findings import CODES, Finding  # noqa: F401
from harness.probe.runner import ProbeInputError, ProbeReport, probe  # noqa: F401

__all__ = ["probe", "ProbeReport", "ProbeInputError", "Finding", "CODES"]


def _callable_package() -> None:
    """``harness.probe`` the package is also ``probe`` the function: ``from harness import probe``
    gives the package once it is imported (Python binds a subpackage to its parent), so the
    package itself must be callable."""
    import sys
    import types

    class _Package(types.ModuleType):
        def __call__(self, *args, **kwargs):
            return probe(*args, **kwargs)

    sys.modules[__name__].__class__ = _Package


_callable_package()
