"""What a probe finds: findings as plain data with stable codes, the casebook cases that
match each, and the table and JSON they are printed as. The table shows every path one way
(``shown_path``: relative to the current directory when inside it, else absolute) and each
finding's program ids one way; the JSON keeps them as the detectors wrote them.

Codes are stable, like a linter's: the first digit is the family.

- P0xx the kernel or the probe itself could not run (crash, hang)
- P1xx memory: out-of-bounds reads and writes, output never written
- P2xx results: wrong at the default sizes, NaN, masked lanes, TF32, another layout
- P3xx programs: races, order dependence
- P4xx sizes: shape fuzzing, CUDA's grid limits at the GPU's sizes
- P5xx calls: repeat runs, first call against later calls (autotune)
- P6xx tools: compute-sanitizer (memcheck, racecheck), TRITON_DEBUG, triton-viz, Triton's sanitizers
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field

ERROR, WARNING, INFO = "error", "warning", "info"

# code -> (title, defect class in harness.core.spec.DEFECTS or "")
CODES = {
    "P000": ("the detector itself failed", ""),
    "P001": ("the kernel crashed", ""),
    "P002": ("the kernel hung", ""),
    "P003": ("the kernel does not compile", ""),
    "P101": ("out-of-bounds store", "out-of-bounds-write"),
    "P102": ("out-of-bounds load", "out-of-bounds-read"),
    "P103": ("out-of-bounds atomic", "out-of-bounds-write"),
    "P111": ("wrote into the guard band", "out-of-bounds-write"),
    "P112": ("read poison from the guard band", "out-of-bounds-read"),
    "P113": ("output elements never written", "unwritten-output"),
    "P114": ("read memory nobody initialised", "uninitialized-accumulator"),
    "P201": ("wrong result at the default sizes", ""),
    "P202": ("NaN or Inf where the reference is finite", "overflow"),
    "P203": ("masked lanes without other= enter the result", "padding-contamination"),
    "P204": ("TF32 rounding of an fp32 tl.dot", "precision-loss"),
    "P205": ("the GPU and the interpreter disagree", ""),
    "P206": ("wrong for an input in another memory layout", "stride-assumption"),
    "P207": ("wrong with special values in the inputs (zeros, large, inf, NaN)", "overflow"),
    "P208": ("wrong at another value of a launcher's integer or bool argument", ""),
    "P209": ("wrong with the contract's sentinel (ignore_index, -1) in an integer index input", ""),
    "P301": ("store race between programs", "store-race"),
    "P302": ("result depends on the program order", "store-race"),
    "P303": ("float atomics: result depends on the order", "atomic-nondeterminism"),
    "P304": ("lanes of one tl.store write one address with different values", "store-race"),
    "P305": ("a load reads what another lane of the program stored, with no barrier between", "missing-barrier"),
    "P401": ("wrong at other sizes (shape fuzzing)", ""),
    "P402": ("empty input mishandled", "degenerate-size"),
    "P403": ("grid past CUDA's limit on an axis", "degenerate-size"),
    "P404": ("wrong past 2**31 elements (int32 offsets)", "overflow"),
    "P405": ("the launcher or Triton raised at a fuzzed size", ""),
    "P406": ("an int32 offset that grows with a size (a hazard past 2**31 elements)", "overflow"),
    "P501": ("repeat runs differ", "atomic-nondeterminism"),
    "P502": ("first call differs from later calls", "autotune-accumulation"),
    "P601": ("compute-sanitizer reported errors", ""),
    "P602": ("TRITON_DEBUG assertion fired", "overflow"),
    "P603": ("triton-viz found an access that can leave its tensor", ""),
    "P604": ("compute-sanitizer's racecheck reported a shared-memory hazard", ""),
    "P605": ("Triton's ConSan reported a hazard between asynchronous operations", ""),
    "P606": ("Triton's GSan reported a race on global memory", "store-race"),
    "P607": ("Triton's FpSan reported a floating-point exception", ""),
    "P608": ("Triton's IISan reported integer overflow", "overflow"),
}


@dataclass(frozen=True)
class Code:
    """A code as a detector declares it (``Detector.codes``): the tables of README.md and docs/detectors.md
    are generated from these declarations (``python -m harness.probe.codes``), and a test fails on a code
    emitted anywhere in ``harness/probe`` or ``harness/sanitize`` that no one declares."""

    code: str
    severity: str  # what it is, usually: error, warning or info
    meaning: str  # one line
    cases: tuple = ()  # the casebook cases that teach it (slugs)
    otherwise: str = ""  # when it has another severity, one line ("a warning where ...")
    sanitize: str = ""  # the severity ``harness sanitize`` reports it with ("": sanitize never does)
    sanitize_otherwise: str = ""  # as ``otherwise``, for ``sanitize``
    flag: str = ""  # the ``sanitize`` option that turns it on ("": always on)


# Codes several modules emit (the runner and worker for any detector, ``context`` for any launcher call, or
# two detectors): declared here once; each detector that can emit one lists it in its ``codes``.
NONDETERMINISM = "by DETERMINISTIC: an error where declared True, a warning where undeclared, info where False"
P000 = Code("P000", INFO, "the detector itself stopped, failed or was not run (the budget's end, no sizes to "
                          "fuzz, too many accesses recorded, the probe's own analysis raised in a launch: never "
                          "the kernel's error); the line says why", otherwise="an error where the "
                                                                                       "detector failed")
P001 = Code("P001", ERROR, "the launcher raised (the launcher, Triton or the kernel: what the probe's own "
                           "instrumentation raises is P000), or the worker process died (on a GPU an illegal address "
                           "is an exception)", ("empty-input", "attention-seq-tail"),
            otherwise="info where the worker ran out of the address space the probe gives it",
            sanitize=INFO, sanitize_otherwise="a launch that raised: not checked, counted apart")
P002 = Code("P002", ERROR, "no result before the detector's timeout: the kernel hung", ("spin-lock-no-ordering",),
            otherwise="info on the interpreter once the GPU's side hung (the spin lock spins there too); a warning "
                      "where the probe's budget ended the call before the detector's own timeout (a long call, not "
                      "shown to hang)")
P003 = Code("P003", ERROR, "Triton could not compile the kernel (its own message)")
P112 = Code("P112", ERROR, "non-finite results where the NaN guard bands around the tensors were read: the kernel "
                           "read outside a tensor", ("matmul-k-tail", "c-style-division-negative"))
P203 = Code("P203", WARNING, "masked-off lanes of a `tl.load` without `other=` change the result: it relies on what "
                             "Triton leaves undefined (right with the 0 today's GPUs give)", ("masked-load-no-other",),
            otherwise="an error where the result is wrong with 0 in those lanes too", sanitize=WARNING)
P204 = Code("P204", WARNING, "an fp32 `tl.dot` rounded like TF32, the GPU's default precision (the probe: where the "
                             "result is right only without that rounding)", ("matmul-tf32-default",),
            otherwise="info where the source asks for TF32 (input_precision=\"tf32\")", sanitize=INFO, flag="--tf32")
P205 = Code("P205", INFO, "the GPU and the interpreter disagree: a detector found problems on one backend only")
P403 = Code("P403", ERROR, "a grid past CUDA's limit on an axis (the launch raises, as on a GPU)",
            ("grid-y-over-65535",), otherwise="info at sizes only the grid check tried", sanitize=ERROR)
# every detector's launcher calls (``context.crash``), and the runner and worker around every detector
EVERY_DETECTOR = (P000, P001, P002, P003, P403)
P205_BY = "backends"  # the name P205's findings carry as their detector: the runner's comparison of the backends


def nondeterminism_severity(target) -> tuple[str, str]:
    """The severity of results that differ between runs only in float atomics' order, and why."""
    if target.deterministic is None:
        return WARNING, " (DETERMINISTIC not declared: a warning; declare it True or False)"
    if target.deterministic:
        return ERROR, ""
    return INFO, " (declared DETERMINISTIC = False: information)"


@dataclass
class Finding:
    code: str
    detector: str
    backend: str
    message: str  # the evidence, one line
    severity: str = ERROR
    line: str = ""  # file:line of the kernel, where known
    kernel: str = ""
    programs: list = field(default_factory=list)  # program ids involved, where known
    defect: str = ""  # overrides the code's defect class
    cases: list = field(default_factory=list)  # matching casebook cases: {"slug", "title", "readme"}
    sizes: dict = field(default_factory=dict)  # the sizes it showed at, where it is a wrong result

    @property
    def title(self) -> str:
        return CODES.get(self.code, ("?", ""))[0]

    @property
    def defect_class(self) -> str:
        return self.defect or CODES.get(self.code, ("", ""))[1]

    def to_json(self) -> dict:
        d = asdict(self)
        d["title"], d["defect"] = self.title, self.defect_class
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Finding":
        keys = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in keys})


def case_specs() -> list:
    """The casebook's cases that load (a broken case.toml is left out), each with ``readme``: the
    link to its write-up."""
    from harness.core import discovery
    from harness.core.spec import SpecError, load_spec

    out = []
    for folder in discovery.case_folders():
        try:
            spec = load_spec(folder)
        except (SpecError, OSError):
            continue
        readme = str((folder / "README.md").relative_to(discovery.REPO_ROOT)) \
            if folder.is_relative_to(discovery.REPO_ROOT) else str(folder / "README.md")
        out.append((spec, readme))
    return out


def _case_index() -> dict[str, list[dict]]:
    """defect class -> the casebook's cases of that class (slug, title, link to the write-up)."""
    out: dict[str, list[dict]] = {}
    for spec, readme in case_specs():
        out.setdefault(spec.defect, []).append({"slug": spec.slug, "title": spec.title, "readme": readme})
    return out


def attach_cases(findings: list[Finding]) -> None:
    """Name, on each finding, the cases with its defect class."""
    index = None
    for f in findings:
        if f.defect_class:
            index = _case_index() if index is None else index
            f.cases = index.get(f.defect_class, [])


def problems(findings: list[Finding]) -> list[Finding]:
    """The findings that are not information (errors and warnings): what makes a probe fail."""
    return [f for f in findings if f.severity != INFO]


def shown_path(path: str) -> str:
    """A path as the probe's text shows every path: relative to the current directory when it is inside
    it, else absolute. A relative ``path`` is the current directory's (the workers run in it: the
    user's working directory)."""
    full = os.path.abspath(path)
    rel = os.path.relpath(full)
    return full if rel == ".." or rel.startswith(".." + os.sep) else rel


_FILE_LINE = re.compile(r"(?<![\w/.\\-])((?:/|\.{1,2}/)?(?:[\w.-]+/)*[\w.-]+\.py):(\d+)")


def shown_paths(text: str) -> str:
    """``text`` with each ``file.py:line`` in it shown as ``shown_path`` shows it."""
    return _FILE_LINE.sub(lambda m: f"{shown_path(m.group(1))}:{m.group(2)}", text)


def shown_programs(f: Finding) -> str:
    """``f.message`` with its program ids written one way: where one is a tuple ``(x, y, z)`` (a grid of
    several axes), every one is, ``1`` becoming ``(1, 0, 0)``."""
    ids = [str(p) for p in f.programs]
    tuples = [p for p in ids if p.startswith("(")]
    if not tuples or len(tuples) == len(ids):
        return f.message
    axes = max(len(p.strip("()").split(",")) for p in tuples)
    one_way = [p if p.startswith("(") else "(" + ", ".join([p] + ["0"] * (axes - 1)) + ")" for p in ids]
    return f.message.replace("programs " + " and ".join(ids), "programs " + " and ".join(one_way), 1)


def table(findings: list[Finding], max_cases: int = 3) -> str:
    from tabulate import tabulate

    if not findings:
        return "no findings"
    rows = []
    for f in findings:
        cases = ", ".join(c["slug"] for c in f.cases[:max_cases]) + (" ..." if len(f.cases) > max_cases else "")
        rows.append([f.code, f.severity, f.detector, f.backend, shown_paths(f.line or ""),
                     shown_paths(shown_programs(f)), cases])
    return tabulate(rows, headers=["code", "severity", "detector", "backend", "kernel line", "evidence",
                                   "like these cases"],
                    tablefmt="simple", maxcolwidths=[None, None, None, None, 34, 70, 36], disable_numparse=True)


def case_links(findings: list[Finding]) -> list[str]:
    """One line per matching case, each linked once: "cases/<slug>/README.md: title"."""
    seen, lines = set(), []
    for f in findings:
        for c in f.cases:
            if c["slug"] not in seen:
                seen.add(c["slug"])
                lines.append(f"{_shown_readme(c['readme'])}: {c['title']} ({f.code})")
    return lines


def _shown_readme(readme: str) -> str:
    """A case's write-up (kept relative to the casebook's root) as ``shown_path`` shows paths."""
    from harness.core.discovery import REPO_ROOT

    return shown_path(os.path.join(REPO_ROOT, readme))


def dumps(payload) -> str:
    """Strict JSON, like every JSON the harness writes (non-finite numbers as strings)."""
    from harness.core.table import strict

    return json.dumps(strict(payload), indent=2, default=str, allow_nan=False)
