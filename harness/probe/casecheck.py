"""How a detector judges a casebook case's runs (``detect``, ``report``): its ``CaseCheck``.

A probe detector (``harness.probe.detectors.Detector``) runs on a user's kernel; where the casebook scores the
same idea on its cases, the detector also carries one or more ``CaseCheck`` (``Detector.case``) that look
at what one variant did on one backend (its ``Evidence``: the main run's events, and for a ``ProbeCheck``
the probe's own detectors run on the case folder) and
return a ``DetectorResult``: ``flagged``, ``quiet``, ``n/a`` (it does not apply there) or ``not run`` (it
could not run here: no GPU, tool missing), with a one-line reason.

A check *catches* a case when it flags the broken kernel; flagging the fixed kernel is a *false alarm*.
``harness.probe.case_runs`` makes the runs and keeps the records, ``harness.probe.cases`` collects the
checks from the one registry of detectors and scores them, the way a race-detection benchmark scores its
tools. A check that compares the two backends instead of judging one is an ``AcrossCheck``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FLAGGED, QUIET, NA, NOT_RUN = "flagged", "quiet", "n/a", "not run"
MAX_REASON = 160
WHERE = ("both", "gpu", "interpreter", "across")


@dataclass
class DetectorResult:
    status: str
    reason: str
    source: str = ""  # set when the finding comes from an older recorded run

    def to_json(self) -> dict:
        d = {"status": self.status, "reason": self.reason}
        if self.source:
            d["source"] = self.source
        return d

    @classmethod
    def from_json(cls, d: dict) -> "DetectorResult":
        return cls(d.get("status", NOT_RUN), d.get("reason", ""), d.get("source", ""))


@dataclass
class Evidence:
    """What one variant did on one backend: the main run, and the probe's run on the case folder."""

    spec: object  # CaseSpec
    backend: str
    variant: str
    run: object = None  # RunResult of the main run
    probe: object = None  # the probe's run of this variant here (``ProbeCheck``'s evidence: a dict, see
    # ``harness.probe.case_runs.probe_run``), or a str "n/a: why" / "not run: why", or None (no probe run)


class CaseCheck:
    """One detector's check of a case's runs. A subclass sets the attributes and overrides ``check``; the
    rest is optional.

    ``where`` is the backend it runs on: "both", "gpu" or "interpreter" ("across" is
    ``AcrossCheck``'s). ``order`` places it in tables and in the report (smaller first).
    """

    name = ""  # its name on the command line (detect --skip) and in records
    label = ""  # a column header
    where = "both"
    what = ""  # what it checks, one line
    yours = ""  # how to do it for your own kernel, one line
    order = 0

    def applies(self, backend: str) -> bool:
        return self.where in ("both", backend)

    def not_applicable(self, backend: str) -> str | None:
        """Why it says n/a on ``backend``; None where it applies."""
        if self.applies(backend):
            return None
        return f"runs on {'a GPU' if self.where == 'gpu' else 'the CPU interpreter'} only"

    def check(self, ev: Evidence) -> tuple[str, str]:
        """(status, reason) for one variant on one backend."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<case check {self.name}>"


class ProbeCheck(CaseCheck):
    """A check that reads the probe instead of evidence of its own: ``detect`` runs the probe's
    ``reads`` detectors on the case folder (the variant's file, ``case.py`` as its inputs), and the
    check flags the variant where one of them reported a problem (an error or a warning) of ``codes``.

    A detector the probe skipped (it does not apply: ``repeat`` on a kernel with no atomics and no
    autotune) is quiet, with the probe's reason; one whose run of the launcher raised, hung or died
    (P001-P003) has no result to check (n/a), as a main run that crashed; one that failed or was not
    run is ``not run``."""

    reads: tuple = ()  # the probe's detectors it reads (their names in harness.probe.detectors)
    codes: tuple = ()  # the P-codes that flag

    def drop(self, run) -> str | None:
        """``"n/a: why"`` where the variant's main run (``run``: the kernels it compiled) shows there is
        nothing for the probe's ``reads`` to check: ``detect`` then leaves them out of its probe run (a
        sanitizer's run is slow), and the check is n/a with that reason. None (as is) by default."""
        return None

    def check(self, ev: Evidence) -> tuple[str, str]:
        if (why := self.dropped(ev)) is not None:
            return no_result(why)
        return probe_finding(ev, self.reads, self.codes)

    def dropped(self, ev: Evidence) -> str | None:
        """``drop``'s reason for ``ev``'s main run, where there is one (a run that ended without one, a
        hang, has the probe's own reason)."""
        if ev.run is None or isinstance(ev.run, str) or isinstance(ev.probe, str):
            return None
        return self.drop(ev.run)


class AcrossCheck(CaseCheck):
    """A check that compares the GPU with the interpreter, from both backends' verdicts.

    It judges no single backend, so its ``check`` is None; ``compare`` gives one finding
    per variant.
    """

    where = "across"
    check = None

    def compare(self, gpu_verdicts: list | None, interp_verdicts: list | None) -> tuple[str, str]:
        raise NotImplementedError


# --- helpers for checks -----------------------------------------------------------------

def no_result(run, what: str = "run") -> tuple[str, str] | None:
    """The finding when ``run`` (a RunResult, a str saying why not, or None) gave no result to judge."""
    if run is None:
        return NOT_RUN, f"no {what}"
    if isinstance(run, str):
        return (NA if run.startswith("n/a") else NOT_RUN), run.removeprefix("n/a: ").removeprefix("not run: ")
    if run.status == "skip":
        return NA, f"not run on this backend: {run.message}"
    if run.status == "error":
        return NOT_RUN, f"the case failed to set up: {run.message}"
    if not run.trials:
        return NA, f"no result to check: the {what} ended in {run.status} ({run.message})"
    return None


DEAD = ("P001", "P002", "P003")  # the launcher raised, the kernel hung, Triton could not compile it: no result
NO_RESULT_STATUS = ("crash", "hang", "stopped")  # a probe detector's process died or hung in it


def _by(f: dict, detector: str) -> bool:
    """Whether ``detector`` reported ``f`` (a launcher that raises alike in several is one finding naming them)."""
    return detector in [d.strip() for d in str(f.get("detector", "")).split(",")]


def _tools_only(f: dict) -> bool:
    """Whether only tools (a run of the reference detector under triton-viz, compute-sanitizer...) reported ``f``:
    a launcher that raised under a tool says nothing of the kernel without it."""
    from harness.probe.detectors import registry

    by = [d.strip() for d in str(f.get("detector", "")).split(",")]
    return all(registry().get(d) is not None and registry()[d].tool is not None for d in by)


def probe_finding(ev: Evidence, detectors: tuple, codes: tuple) -> tuple[str, str]:
    """(status, reason) of a ``ProbeCheck`` from ``ev.probe``: flagged by a problem of ``codes`` that
    one of ``detectors`` reported."""
    p = ev.probe
    if p is None or isinstance(p, str):
        return no_result(p, "probe run")
    findings = p.get("findings", [])
    hits = [f for f in findings if f.get("code") in codes and f.get("severity") != "info"
            and any(_by(f, d) for d in detectors)]
    if hits:
        f = hits[0]
        more = f" (+{len(hits) - 1} more)" if len(hits) > 1 else ""
        at = f" at {f['line']}" if f.get("line") else ""
        return FLAGGED, f"{f['code']} (the probe's {f['detector']}){at}: {f.get('message', '')}{more}"
    notes = []
    raised = [f for f in findings if f.get("code") in DEAD and f.get("severity") != "info"]
    died = [f for f in raised if not _tools_only(f)]  # the launcher raised without a tool around it
    for d in detectors:
        status = p.get("ran", {}).get(d)
        dead = [f for f in raised if _by(f, d)]
        if status is None:
            return NOT_RUN, f"the probe did not run its {d} detector"
        if dead or status in NO_RESULT_STATUS:
            why = f"{dead[0]['code']} {dead[0].get('message', '')}" if dead else status
            return NA, f"no result to check: the probe's {d} detector: {why}"
        if status.startswith("skipped") and died:  # its reason (no atomics...) says nothing of a launcher that raises
            return NA, f"no result to check: the probe's {d} detector {status}, and its {died[0]['detector']} " \
                       f"detector: {died[0]['code']} {died[0].get('message', '')}"
        if status.startswith("skipped"):
            notes.append(f"the probe's {d} detector {status}")
        elif status != "done":
            failed = next((f.get("message", "") for f in findings if _by(f, d) and f.get("code") == "P000"), "")
            return NOT_RUN, f"the probe's {d} detector: {status}" + (f": {failed}" if failed else "")
    info = [f for f in findings if f.get("code") in codes and any(_by(f, d) for d in detectors)]
    notes += [f"information only: {f['code']} {f.get('message', '')}" for f in info[:1]]
    said = "; ".join(notes)
    return QUIET, f"no {'/'.join(codes)} finding" + (f" ({said})" if said else "")


def count(n: int, noun: str, plural: str = "s") -> str:
    return f"{n} {noun}{'' if n == 1 else plural}"


def _unwrap(text: str) -> str:
    """``E('E(\\'NameError("x")\\')')`` (an exception re-raised in layers) to ``NameError: x``."""
    found = list(re.finditer(r"(\w+(?:Error|Exception))\(\\*([\"'])", text))
    if len(found) < 2:
        return text
    plain = text.replace("\\", "")
    m = list(re.finditer(r"(\w+(?:Error|Exception))\(([\"'])", plain))[-1]
    rest = plain[m.end():]
    end = rest.find(m.group(2) + ")")
    return f"{plain[:found[0].start()]}{m.group(1)}: {rest[:end] if end >= 0 else rest}"


def short(text: str, n: int = MAX_REASON) -> str:
    """One line of at most ``n`` characters, nested exceptions unwrapped."""
    text = " ".join(_unwrap(str(text)).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def no_shared_memory(run, name: str) -> str | None:
    """Why a shared-memory tool (``name``) has nothing to check in ``run``'s compiled kernels,
    or None (some kernel uses shared memory, or the kernels are not known)."""
    if run.kernels is None or any(k.get("shared") for k in run.kernels):
        return None
    if not run.kernels:
        detail = f": {run.message}" if run.message else ""
        return f"n/a: no kernel was compiled (the main run: {run.status}{detail}), so nothing for {name} to check"
    return (f"n/a: the kernel uses no shared memory (0 bytes in {count(len(run.kernels), 'compiled kernel')}), "
            f"the only memory {name} checks")
