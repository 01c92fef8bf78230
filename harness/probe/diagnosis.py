"""Differential diagnosis: from what the probe observed to the trap it most likely is.

The probe's detectors and experiments (``harness.probe.detectors``, the ``diagnose``
detector's experiments) each establish *evidence*, named in ``harness.core.spec.EVIDENCE``
("tail": wrong off a block multiple and right at the multiples beside it; "layout": right
with contiguous copies of the inputs; ...), each with the observation that shows it. This
module turns evidence into a ranked diagnosis:

- ``RULES``: for each defect class, the evidence that points to it (all of ``needs``, none
  of ``unless``) and how strongly (a direct observation at the line, like an out-of-bounds
  store, counts more than a differential one, like a result that changes with the layout);
- each case's ``[diagnosis] evidence`` in its case.toml: a case is named when everything it
  declares was observed; the case that declares the most of what was observed comes first.

The result is a list, best first, of ``{"defect", "case", "title", "evidence", "confidence"}``;
when the kernel failed and no rule applies, one entry with defect and case null says that no
known trap matches. A kernel that does not compile gets only that, and names no case.

What each piece of evidence can explain decides the order before its strength does (``SCOPES``).
A rule's confidence says how strongly its evidence points to a defect; it says nothing about
*which* failure that evidence was seen at, and one kernel may have several defects, each shown
somewhere else. So evidence is taken in three scopes, and a defect is ranked by the first scope
whose evidence names it (then by confidence), each scope's rules vetoed only by evidence of that
scope and the ones before it:

1. the failure at the user's own inputs: an error at the default sizes with the inputs as the
   user's file makes them (the reference, the guard bands, memcheck, the races and orders there),
   the experiments where they took that failure apart, and what the kernels' source says
   (``FACTS``: true at every size), and what a warning at the user's inputs shows that loses values
   in any order (``IN_ANY_ORDER``: lanes of a program reading, changing and storing back what other
   lanes of it stored). This is the failure the user meets; what explains it comes first;
2. a failure only at other inputs (``OTHER_INPUTS``: shape fuzzing's sizes, memcheck's tails,
   another layout, special values, a sentinel, another value of an argument): an access outside a
   tensor seen there (a store past a tensor at n=3) is a defect there and explains nothing of a
   wrong value at the user's inputs, whose own runs check every access (guard bands, memcheck) and
   saw none (``OUTSIDE``); nor does a layout finding (wrong at a view the user did not pass, right
   contiguous): each is a second defect, listed after what explains the first, and vetoing none of
   it. Any other mechanism seen at other inputs (a tail, a race, an order) is not shown absent at
   the user's, and the same bug most often shows at both: it counts in the first scope too. What
   shows only at sizes the user's own are not (``SIZE_BOUND``: offsets past 2**31, a grid past the
   hardware's limit, a size of 0) explains nothing there, and among the errors it comes last: a
   defect shown at sizes the user runs (a row of large values at the defaults) is named before one
   that needs 2**31 elements (gemlite's a16w8 GEMM, mamba's chunk-cumsum backward: their wrong
   formula was named after an int32 wrap both versions share);
3. a hazard: a warning's evidence (a layout the launcher neither handles nor refuses, float
   atomics' last bits, masked lanes that 0 makes right, TF32 left at Triton's default) shows no
   wrong result at all. Where the probe found an error it explains none: it is listed after every
   defect an error shows, and vetoes none of them. Where there is no error, the warnings are all
   there is, and they are ranked among themselves as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.probe.findings import ERROR, WARNING


@dataclass(frozen=True)
class Rule:
    defect: str
    needs: frozenset
    confidence: float
    unless: frozenset = frozenset()


def _r(defect: str, needs: str, confidence: float, unless: str = "") -> Rule:
    return Rule(defect, frozenset(needs.split()), confidence, frozenset(unless.split()))


# every mechanism the detectors and experiments can show: a formula is blamed only when none did
NO_MECHANISM = ("tail many-programs layout equal-sizes oob-store oob-load unwritten race order "
                "autotune-first-call first-call-right special-value fill-kept tf32 accumulated grid-limit large-only uninitialized masked-undefined "
                "error-grows autotuned-atomics autotune-reuse atomic-order empty hang nonfinite-input zero-input zero-row magnitude one-sign-row "
                "wider-dtype block-repeat lane-collision lost-rmw cross-lane other-stream config-value narrow-result "
                "narrow-fraction")

RULES = (
    # an access outside that contiguous copies of the inputs make go away is the stride assumption's doing
    # a stray store is put right in the order where the owner writes last; elements wrong in every
    # order beside a load outside were computed from what that load read
    _r("out-of-bounds-write", "oob-store", 0.9, "layout wrong-any-order"),
    _r("out-of-bounds-write", "oob-store wrong-any-order", 0.6, "layout"),
    # one tensor loaded and stored past the same end: a read-modify-write with no mask, whose
    # load only feeds the store that corrupts
    _r("out-of-bounds-write", "oob-store oob-rmw", 0.9, "layout"),
    _r("out-of-bounds-read", "oob-load oob-store wrong-any-order", 0.9, "layout oob-rmw"),
    _r("out-of-bounds-read", "oob-load", 0.85, "oob-store layout"),
    _r("out-of-bounds-read", "oob-load oob-store", 0.6, "layout"),
    # a read outside whose lanes do not reach the result: true, but not why the values are wrong
    _r("out-of-bounds-read", "oob-load-unused", 0.15, "layout"),
    # an access outside that appears only once the contract's sentinel is in an index input (the layout and sizes
    # of a right run): the kernel reads or writes through the sentinel (a layout hazard beside it is not the cause)
    _r("out-of-bounds-read", "sentinel-access oob-load", 0.9, "oob-store"),
    _r("out-of-bounds-write", "sentinel-access oob-store", 0.9),
    _r("degenerate-size", "grid-limit", 0.9),  # "past a hardware limit" (DEFECTS)
    _r("overflow", "large-only", 0.9),
    # an int32 offset in the source (a warning: not shown wrong): named only where nothing else is
    _r("overflow", "int32-offset", 0.1),
    _r("overflow", "debug-assert", 0.8),
    # the launcher's result is an integer tensor whose type cannot hold the reference's values (a dequantized
    # product stored into an int8 output made like its operands): past its range, the store wraps whatever the
    # kernel computed; only fractions dropped, a loss of precision (below)
    _r("overflow", "narrow-result", 0.85, "oob-load oob-store layout"),
    # an overflow that needs the length too is a running sum in too narrow a type: precision (below)
    _r("overflow", "nonfinite magnitude", 0.85, "oob-load oob-store layout length"),
    # finite values far off at large inputs that the reference's own formula in float32 handles, right where the
    # row's magnitude overflows nothing: an intermediate overflowed (1/inf = 0), or underflowed
    _r("overflow", "magnitude", 0.6, "oob-load oob-store layout length nonfinite"),
    # the same, not run again where nothing overflows (the budget's end): an overflow is likelier than a branch
    # (more formulas overflow than branch at large values), but it was not shown; anything shown comes first
    _r("overflow", "large-row", 0.25, "oob-load oob-store layout length nonfinite"),
    # finite values off at large inputs, and off too where the row's magnitude overflows nothing: no overflow is the
    # cause; the branch that large values take (softplus's linear part past its threshold, a clamp) computes
    # another value than the reference's
    _r("wrong-formula", "large-values", 0.5, "oob-load oob-store layout nonfinite"),
    # a row of zeros put in, NaN or Inf out where the reference (its eps, its where) stays finite: an x/0 or 0/0
    # the kernel does not guard. The casebook files NaN/Inf where the reference is finite under overflow (P202);
    # its 0/0 lesson, padding-division-by-zero, is padding's (its zeros are masked lanes, these are data)
    _r("overflow", "nonfinite zero-row", 0.8, "oob-load oob-store layout"),
    _r("overflow", "nonfinite", 0.25, "tail masked-undefined oob-load layout many-programs nonfinite-input zero-input"),
    _r("autotune-accumulation", "autotune-first-call", 0.85),
    _r("unwritten-output", "first-call-right", 0.85),
    _r("autotune-accumulation", "autotuned-atomics accumulated", 0.9),
    _r("autotune-accumulation", "autotuned-atomics uninitialized", 0.85),
    _r("autotune-accumulation", "autotuned-atomics", 0.55, "oob-store oob-load layout tail many-programs"),
    # beside a stray store the unreset atomics are still a trap of their own: listed below it
    _r("autotune-accumulation", "autotuned-atomics oob-store", 0.3, "layout"),
    _r("autotune-accumulation", "accumulated", 0.5, "many-programs"),
    _r("autotune-config-reuse", "autotune-reuse", 0.85),
    # a tile of the launcher's that the result depends on: a config that is wrong for some inputs (an access
    # outside at that tile is named first by its own rule)
    _r("autotune-config-reuse", "config-value", 0.6),
    _r("stride-assumption", "layout", 0.85),
    _r("mask-misalignment", "equal-sizes", 0.55, "tail layout oob-store oob-load many-programs many-iterations"),
    # (a stream race is wrong in some runs only: a wider type's run that happened to be right is no
    # evidence of rounding once ordering the streams made every run right)
    _r("precision-loss", "tf32", 0.9),
    _r("precision-loss", "narrow-fraction", 0.7, "oob-load oob-store layout"),
    _r("precision-loss", "error-grows small-error", 0.7, "tail layout other-stream"),
    _r("precision-loss", "wider-dtype small-error", 0.8, "tail layout other-stream"),
    # right one type wider and at a quarter of the length, wrong with the largest values clipped: a running
    # sum in too narrow a type, whose rounding also differs off a block multiple (one more narrow step for
    # the partial block), so a tail beside it does not veto it (fp16-accumulation on an H100)
    _r("precision-loss", "wider-dtype length", 0.9, "layout oob-load oob-store other-stream"),
    _r("unwritten-output", "unwritten", 0.8, "oob-store"),
    _r("unwritten-output", "fill-kept", 0.75, "oob-store"),
    _r("unwritten-output", "unwritten oob-store", 0.5),  # a stray store may leave its own element unwritten
    _r("store-race", "race", 0.8, "read-write-race"),
    _r("store-race", "lane-collision", 0.8),  # lanes of one store: which lands is the GPU's choice
    # lanes of one program each load, add to and store back overlapping addresses: every update but the last
    # store's is lost, in any order (a read-modify-write is what lost-update is; the lanes' race beside it)
    _r("lost-update", "lost-rmw", 0.85),
    _r("missing-barrier", "cross-lane", 0.85),  # beside what stale reads leave behind (never-written elements)
    _r("stream-race", "other-stream", 0.95),  # right once the launcher's side streams are the current one:
    # what an unordered stream leaves looks like anything else
    _r("lost-update", "race read-write-race", 0.8),
    _r("store-race", "race read-write-race", 0.6),
    _r("store-race", "order", 0.6, "race atomics"),
    _r("memory-ordering", "order atomics", 0.65, "race"),
    _r("atomic-nondeterminism", "atomic-order", 0.6, "autotune-first-call autotuned-atomics"),
    # float atomics' order moving the last bits, a warning: it cannot explain an error beyond tolerance
    _r("atomic-nondeterminism", "atomic-rounding", 0.15),
    _r("padding-contamination", "masked-undefined", 0.75),
    # wrong only once every value of a row has one sign, the plain run right: a value that is not in the row (a
    # padded lane read as 0, a max started at 0) wins its max, min or argmax (softmax-mask-fill-zero's "if every
    # logit is negative, 0 becomes the row max"); NaN/Inf there too (a log of the sum of exp(x - 0) underflowing)
    _r("padding-contamination", "one-sign-row", 0.8, "oob-load oob-store"),
    _r("padding-contamination", "nonfinite zero-input", 0.75, "oob-load oob-store"),
    _r("padding-contamination", "nonfinite-input", 0.7, "oob-load oob-store"),
    _r("padding-contamination", "tail nonfinite", 0.7, "oob-load oob-store unwritten magnitude fill-kept"),
    _r("padding-contamination", "tail", 0.6, "oob-load oob-store unwritten magnitude fill-kept"),
    # parts of a reduction lost or combined wrong are far off; a small error that grows is rounding
    # which parts reach the result: none past the first block (left out), or all of them (combined wrong);
    # where the order of the programs decides it (a store race: the last writer's block wins) it is the race
    _r("partial-reduction", "many-programs ignored-part", 0.75, "tail race order layout small-error"),
    _r("wrong-combine", "many-programs all-parts", 0.7, "tail race order layout small-error ignored-part"),
    _r("partial-reduction", "many-programs", 0.55, "tail race layout small-error"),
    _r("wrong-combine", "many-programs", 0.45, "tail race layout small-error"),
    _r("uninitialized-accumulator", "uninitialized", 0.7),
    _r("rng-reuse", "block-repeat", 0.85),
    # right for one trip of a loop, wrong for more, with no more programs: a step carried between trips
    _r("wrong-formula", "many-iterations", 0.45, "tail layout race oob-store oob-load"),
    _r("degenerate-size", "empty", 0.6),
    _r("degenerate-size", "special-value", 0.7, "oob-load oob-store"),  # an empty segment's -inf, mishandled
    _r("deadlock", "hang", 0.4),
    # what is left when the experiments show no mechanism: wrong values (most of them: more likely)
    _r("wrong-formula", "wrong-everywhere", 0.3, NO_MECHANISM),
    _r("wrong-formula", "wrong-values", 0.2, NO_MECHANISM),
    # right at the default inputs, wrong once the contract's sentinel is in an index input, no access outside:
    # what is counted or skipped is not what the reference counts (a mean dividing by every token); the
    # finding isolates the values that make the difference (the plain run of the same layout and sizes is right),
    # so it outranks a layout warning beside it (a hazard, 0.85 and its case's 0.05). A whole row at the sentinel
    # that gives NaN where the reference is finite is the mean over nothing, 0/0: the degenerate size of the count,
    # as isolated (the same strength; where the scattered run is wrong too, the formula comes first)
    _r("wrong-formula", "sentinel-value", 0.9, "oob-load oob-store"),
    _r("degenerate-size", "sentinel-row", 0.9, "oob-load oob-store"),
    # wrong only in the branch a flag of the launcher's takes, which the reference defines too: what is computed
    # there is not what the reference computes (no mechanism shown)
    _r("wrong-formula", "branch-value", 0.3, NO_MECHANISM),
    # finite values off beyond the floor once a row of zeros is put into an input, the plain run right, no NaN or
    # Inf: the kernel's result does not follow that input's values as the reference's does (an input dropped from
    # the formula, a per-row factor taken as 1): what is computed is not the reference's formula (no mechanism
    # shown; a zero row that gives NaN/Inf is the unguarded 0/0 above)
    _r("wrong-formula", "zero-row", 0.35, " ".join(w for w in NO_MECHANISM.split() if w != "zero-row")),
)

RULE_DEFECTS = frozenset(r.defect for r in RULES)

# finding code -> the evidence it is
CODE_EVIDENCE = {
    "P101": "oob-store", "P103": "oob-store", "P111": "oob-store", "P102": "oob-load", "P112": "oob-load",
    "P113": "unwritten", "P114": "uninitialized", "P202": "nonfinite", "P203": "masked-undefined", "P204": "tf32",
    "P206": "layout", "P301": "race", "P302": "order", "P303": "atomic-order", "P501": "atomic-order", "P502": "autotune-first-call",
    "P402": "empty", "P403": "grid-limit", "P404": "large-only", "P406": "int32-offset", "P602": "debug-assert", "P002": "hang",
    "P001": "crash", "P304": "lane-collision", "P305": "cross-lane",
}


# the special value a P207 finding names (its message's start: detectors/special.py) -> the evidence it is
SPECIAL_EVIDENCE = {"with a row of zeros": "zero-row", "with a row of large finite values": "magnitude",
                    "with a row of negative values": "one-sign-row", "with a row of positive values": "one-sign-row",
                    "with +inf": "nonfinite-input", "with -inf": "nonfinite-input", "with NaN": "nonfinite-input"}

# the words of a P207 warning for a NaN/Inf carried along a path the kernel has (detectors/special.py's PROPAGATES)
SPECIAL_PROPAGATES = "propagates through a shared row/group value such as a scale"
# the words of a P207 error at a large row that is off at a magnitude no intermediate overflows at too
# (detectors/special.py's BRANCH): the evidence "large-values", not "magnitude"
SPECIAL_BRANCH = "a branch of the formula that large values take computes another value"
# the words of a P207 error at a large row that was not run again where nothing overflows (detectors/special.py's
# UNTOLD): the evidence "large-row", which shows neither an overflow nor a branch
SPECIAL_UNTOLD = "overflow not told apart from a branch of the formula"

# the words of a P304 whose overwriting lanes had read the address they store over (detectors/race.py): the
# evidence "lost-rmw", a read-modify-write whose read missed the other lane's store
LOST_RMW = "read-modify-write from a read made before the other lane's store or after it unordered"

# the defect a P209 finding names (detectors/sentinel.py: what the sentinel showed) -> the evidence it is
SENTINEL_EVIDENCE = {"out-of-bounds-read": "oob-load", "out-of-bounds-write": "oob-store",
                     "degenerate-size": "sentinel-row", "wrong-formula": "sentinel-value"}

# the words of a P208 whose wrong run, made once more with the int wrap check (experiments/intwrap.py's), saw a
# signed integer of 32 bits or fewer wrap, or an integer shifted past its width (detectors/scalars.py):
# evidence "debug-assert" at that value
INT_WRAPS = "an integer wraps at"

# the words of shape fuzzing's P401 whose smallest failing sizes leave an input with no element (detectors/shapes.py):
# evidence "empty". A size of 0 alone is not: a keyword at 0 may be an axis (dim=0) or a switch (causal=0)
EMPTY_THERE = "an input holds no element there"

# the words of a finding whose wrong elements all keep the output's fill (context.fill_kept): evidence "fill-kept"
KEPT_FILL = "never written, they keep what the output was filled with"

# what shape fuzzing's P401 can be evidence of (its message names which)
P401_EVIDENCE = frozenset({"oob-store", "unwritten", "nonfinite", "crash", "empty"})


def _failed_empty(f, at: dict | None) -> bool:
    """Whether ``f`` failed where an input is empty: shape fuzzing says so (P401, ``EMPTY_THERE``: its sizes may hold
    an axis or a switch at 0, which empties nothing); a crash at sizes with a 0 among them (the defaults' own, as
    empty-input's n_rows=0, or those its message names)."""
    if f.severity == "info":
        return False
    return (f.code == "P401" and EMPTY_THERE in f.message
            or f.code == "P001" and 0 in (at or {}).values())


def evidence_of(findings: list, observed: dict | None = None, defaults: dict | None = None) -> dict[str, list[str]]:
    """Evidence name -> the observations that show it: from the findings (each a line), and
    from the experiments (``observed``: name -> text)."""
    out: dict[str, list[str]] = {}
    for f in findings:
        if f.code == "P401" and "(GPU_SIZES" in f.message and "illegal memory access" in f.message:
            name = "large-only"  # an address past the tensors at the GPU's (large) sizes, none at the defaults
        elif f.code == "P401":  # shape fuzzing's reason names the mechanism
            name = "oob-store" if "wrote outside" in f.message else "unwritten" if "never written" in f.message \
                else "nonfinite" if "non-finite" in f.message else "crash" if "raised" in f.message else ""
        elif f.code == "P208":  # the launcher's argument at another value: a tile or a branch, and how
            name = _p208(f, out)
        elif f.code == "P209":  # the contract's sentinel put in: what it showed is the finding's defect
            name = SENTINEL_EVIDENCE.get(f.defect, "")
            if name in ("oob-load", "oob-store") and f.severity != "info":
                out.setdefault("sentinel-access", []).append(f"{f.detector}: {f.message}"[:300])
        elif f.code == "P301" and ", a load at" in f.message:
            out.setdefault("read-write-race", []).append(f"{f.detector}: {f.message}"[:300])
            name = "race"
        elif f.code == "P502" and f.message.startswith("the second call is wrong"):
            name = "first-call-right"  # autotune's benchmarking runs did what the tuned config alone does not
        elif f.code == "P501" and "are wrong" in f.message:  # wrong in some runs: scheduling, not rounding
            name = "order"
        elif f.code in ("P303", "P501"):  # float atomics' order: an error where the kernel declares itself
            name = "atomic-order" if f.severity == ERROR else "atomic-rounding"  # deterministic, else a warning
        elif f.code == "P207":  # the special value named first, then what it did
            name = "nonfinite" if "NaN/Inf where the float64 reference is finite" in f.message else ""
            kind = next((e for start, e in SPECIAL_EVIDENCE.items() if f.message.startswith(start)), "")
            if kind == "magnitude" and SPECIAL_BRANCH in f.message:  # off where nothing overflows: no overflow
                kind = "large-values"
            elif kind == "magnitude" and SPECIAL_UNTOLD in f.message:  # not run where nothing overflows: unknown
                kind = "large-row"
            if SPECIAL_PROPAGATES in f.message:  # IEEE propagation along the kernel's own data path: no defect
                name = kind = ""
            if kind and f.severity != "info":
                out.setdefault(kind, []).append(f"{f.detector}: {f.message}"[:300])
        elif f.code == "P304":  # lanes' stores over each other; a read-modify-write among them loses updates
            name = "lane-collision"
            if LOST_RMW in f.message and f.severity != "info":
                out.setdefault("lost-rmw", []).append(f"{f.detector}: {f.message}"[:300])
        elif f.code == "P601":
            m = f.message.lower()
            name = "oob-store" if "write" in m else "oob-load" if "read" in m else ""
        else:
            name = CODE_EVIDENCE.get(f.code, "")
        # it failed at a size of 0 (a crash whose message names the default sizes is at them: ``defaults``)
        at = sizes_of(f)
        at = defaults if defaults is not None and at and at_sizes(at, defaults) else f.sizes
        if _failed_empty(f, at):
            out.setdefault("empty", []).append(f"{f.detector}: {f.message}"[:300])
        if name and f.severity != "info":
            where = f" at {f.line}" if f.line else ""
            out.setdefault(name, []).append(f"{f.detector}: {f.message}{where}"[:300])
    for name, text in (observed or {}).items():
        out.setdefault(name, []).append(text)
    if rmw := _read_modify_write(out.get("oob-load", []), out.get("oob-store", [])):
        out["oob-rmw"] = rmw
    return out


def _p208(f, out: dict) -> str:
    """A P208's evidence: a tile or a branch, what its wrong elements hold (the output's fill: "fill-kept", kept in
    ``out``), an access outside a tensor it names and a signed integer it saw wrap ("debug-assert"), kept in
    ``out``."""
    if f.severity != "info" and KEPT_FILL in f.message:  # its wrong elements hold the output's fill
        out.setdefault("fill-kept", []).append(f"{f.detector}: {f.message}"[:300])
    if f.severity != "info" and (more := _p208_access(f.message)):
        out.setdefault(more, []).append(f"{f.detector}: {f.message}"[:300])
    if f.severity != "info" and INT_WRAPS in f.message:  # an index, offset or counter past its type at that value
        out.setdefault("debug-assert", []).append(f"{f.detector}: {f.message[f.message.index(INT_WRAPS):]}"[:300])
    return "config-value" if "(a tile of the kernel" in f.message else "branch-value"


def _p208_access(message: str) -> str:
    """The access outside a tensor a P208 names ("wrote outside", memcheck's "store past the end of"), or ""."""
    if "wrote outside" in message or re.search(r": (store|atomic) (past the end|before the start) of", message):
        return "oob-store"
    return "oob-load" if re.search(r": load (past the end|before the start) of", message) else ""


_PAST = re.compile(r"\b(load|store) (past the end|before the start) of '([^']+)'")


def _read_modify_write(loads: list, stores: list) -> list:
    """The tensors that a load and a store both reach past the same end (memcheck's words), each
    named once: a read-modify-write with no mask."""
    def ends(texts, op):
        return {(m[2], m[3]) for t in texts for m in _PAST.finditer(t) if m[1] == op}

    both = sorted(ends(loads, "load") & ends(stores, "store"), key=lambda e: e[1])
    return [f"'{name}': loaded and stored {side} of it, in the same run" for side, name in both]


def _cases() -> list[dict]:
    from harness.probe.findings import case_specs

    return [{"slug": spec.slug, "title": spec.title, "defect": spec.defect, "evidence": frozenset(spec.diagnosis)}
            for spec, _ in case_specs() if spec.diagnosis and not spec.calibration]


# what the kernels' source says (the diagnose detector reads it): true at every size, so evidence in every scope
FACTS = frozenset({"atomics", "autotuned-atomics"})
# an access outside a tensor: the default sizes' own runs check every access (guard bands, memcheck), so one seen
# only at other sizes is shown absent at the defaults and cannot explain their wrong result. Any other mechanism
# seen at other sizes (a tail, a race, the programs' order) is not shown absent there, and the same bug most often
# shows at both: it counts for the defaults too.
OUTSIDE = frozenset({"oob-store", "oob-load", "oob-rmw", "oob-load-unused"})
# the findings of a run on inputs other than the user's own at the default sizes: other sizes (shape fuzzing, the
# run past 2**31 elements), other layouts (a layout finding's "layout" is shown at a view the user did not pass:
# it cannot be why the user's own layout is wrong), other values (special values, a sentinel, another value of a
# launcher's argument)
OTHER_INPUTS = frozenset({"P401", "P404", "P206", "P207", "P208", "P209"})
# what shows only at sizes the user's own are not: an offset past 2**31 (the run past 2**31 elements), a grid past
# the hardware's limit, a size of 0. Seen at other sizes, it explains no wrong value at the defaults (whose sizes
# are none of these), nor comes before a defect shown at sizes the user can run: it is ranked after every other
# error's evidence (a defect of its own, listed), and vetoes none of it
SIZE_BOUND = frozenset({"large-only", "grid-limit", "empty"})

# what a warning shows that loses values in every order and on every backend, where it was seen at the default
# inputs: lanes of a program each reading, changing and storing back addresses other lanes of it stored (every
# update but one lost). The finding stays a warning (which lane's store lands is the GPU's choice), but where the
# result at the defaults is wrong it is a mechanism shown there, not a hazard: it counts in the first scope
IN_ANY_ORDER = frozenset({"lost-rmw"})


def _merged(a: dict, b: dict) -> dict:
    """Two evidence dicts in one, each name's observations from both (``a``'s first)."""
    out = {k: list(v) for k, v in a.items()}
    for k, v in b.items():
        out.setdefault(k, []).extend(x for x in v if x not in out[k])
    return out


_AT_SIZES = re.compile(r"\bat sizes ((?:\w+=-?\d+(?:, )?)+)")


def sizes_of(f) -> dict:
    """The sizes a finding showed at: its own, else those its message names ("at sizes n=3, k=4": a crash's), else
    {} (none known)."""
    if f.sizes:
        return dict(f.sizes)
    m = _AT_SIZES.search(f.message)
    return {k: int(v) for k, v in (kv.split("=") for kv in m[1].split(", ") if "=" in kv)} if m else {}


def at_sizes(sizes: dict | None, defaults: dict | None) -> bool:
    """Whether a finding's ``sizes`` are the default sizes (no sizes, or no defaults known: taken as them)."""
    return not sizes or defaults is None or all(defaults.get(k) == v for k, v in sizes.items())


def scopes(findings: list, observed: dict | None = None, elsewhere: dict | None = None,
           defaults: dict | None = None) -> list[dict[str, list[str]]]:
    """The evidence of each scope that has any (the module's docstring), each holding the ones before it: the
    failure at the default sizes (errors at ``defaults``; ``observed``, the experiments' evidence there, and the
    source's facts), every error (and ``elsewhere``, the experiments' evidence at other sizes), then the warnings
    too. Where nothing is an error, the one scope of all the evidence."""
    errors = [f for f in findings if f.severity == ERROR]
    observed, elsewhere = dict(observed or {}), dict(elsewhere or {})
    observed.update({k: v for k, v in elsewhere.items() if k in FACTS and k not in observed})
    elsewhere = {k: v for k, v in elsewhere.items() if k not in FACTS}
    here = [f for f in errors if f.code not in OTHER_INPUTS and at_sizes(sizes_of(f), defaults)]
    out = []
    if here:  # what explains the defaults: their own evidence, and what other inputs showed that is not shown
        # absent at the user's own (an access outside; a layout the user did not pass; a size the defaults are not)
        there = evidence_of([f for f in errors if f not in here], None, defaults)
        there = {k: v for k, v in there.items() if k not in OUTSIDE | SIZE_BOUND and k != "layout"}
        seen = {k: v for k, v in evidence_of([], elsewhere).items() if k not in OUTSIDE | SIZE_BOUND}
        warned = [f for f in findings if f.severity == WARNING and at_sizes(sizes_of(f), defaults)]
        seen.update({k: v for k, v in evidence_of(warned, None, defaults).items() if k in IN_ANY_ORDER})
        out.append(_merged(evidence_of(here, observed, defaults), _merged(there, seen)))
    if errors:
        both = evidence_of(errors, {**elsewhere, **observed}, defaults)
        if reachable := {k: v for k, v in both.items() if k not in SIZE_BOUND}:
            out.append(reachable)  # the errors at sizes the user can run first (SIZE_BOUND)
        out.append(both)
    out.append(evidence_of(findings, {**elsewhere, **observed}, defaults))
    return out


def _matched(have: set, cases: list) -> dict[str, dict]:
    """Defect -> its strongest rule whose evidence is all in ``have`` and none of whose vetoes is, or a case
    whose declared evidence is (a defect no rule names)."""
    best: dict[str, dict] = {}
    for rule in RULES:
        if rule.needs <= have and not (rule.unless & have):
            d = best.get(rule.defect)
            if d is None or rule.confidence > d["confidence"]:
                best[rule.defect] = {"defect": rule.defect, "confidence": rule.confidence, "needs": rule.needs}
    for c in cases:  # a case whose declared evidence was all observed names its defect even without a rule
        if c["evidence"] <= have and c["defect"] not in best and c["defect"] not in RULE_DEFECTS:
            best[c["defect"]] = {"defect": c["defect"], "confidence": 0.5, "needs": c["evidence"]}
    return best


def diagnose(findings: list, observed: dict | None = None, cases: list | None = None, *,
             elsewhere: dict | None = None, defaults: dict | None = None, lint: list | None = None) -> list[dict]:
    """The ranked diagnosis (see the module's docstring). ``observed``: the experiments' evidence where they took
    apart the failure at the default sizes (or where that is not known), ``elsewhere``: where they took apart one
    at other sizes; ``defaults``: the default sizes (None: every finding taken as at them); ``lint``: lint's
    findings of the same kernels (``agreeing``)."""
    errors = [f for f in findings if f.severity == ERROR]
    compile_errors = [f for f in findings if f.code == "P003"]
    if compile_errors:
        return [{"defect": None, "case": None, "title": "the kernel does not compile",
                 "evidence": [compile_errors[0].message], "confidence": 1.0}]
    if not any(f.severity in (ERROR, WARNING) for f in findings):
        return []  # nothing wrong, nothing undefined relied on: information alone names no trap
    cases = _cases() if cases is None else cases
    out, named = [], set()
    for tier, ev in enumerate(scopes(findings, observed, elsewhere, defaults)):
        have = set(ev)
        for d in _matched(have, cases).values():
            if d["defect"] in named:
                continue
            named.add(d["defect"])
            matching = sorted((c for c in cases if c["defect"] == d["defect"] and c["evidence"] <= have),
                              key=lambda c: (-len(c["evidence"]), c["slug"]))
            case = matching[0] if matching else None
            used = d["needs"] | (case["evidence"] if case else frozenset())
            score = d["confidence"] + (0.05 * len(case["evidence"]) if case else 0.0)
            out.append({"defect": d["defect"], "case": case["slug"] if case else None,
                        "title": case["title"] if case else None,
                        "evidence": [f"{name}: {text}" for name in sorted(used) for text in ev.get(name, [])[:2]],
                        "confidence": round(min(score, 0.99), 2), "rule": d["confidence"], "tier": tier})
    out = agreeing(out, lint or [])
    for d in out:
        d.pop("rule"), d.pop("tier")
    if not out and errors:
        out.append({"defect": None, "case": None, "title": "no known trap matches",
                    "evidence": [f"{f.detector}: {f.message}"[:300] for f in errors[:3]], "confidence": 0.0})
    return out


LINT_AGREES = 0.05  # confidence a diagnosis entry gains when the source alone points to the same trap


def agreeing(diagnosis: list, lint: list) -> list:
    """A diagnosis entry that a lint finding agrees with (the same case, or a case of the same defect class) says
    so in its evidence, and gains LINT_AGREES: two independent sources, the runs and the source, name it. Where
    entries of one scope were level, it goes first; it never passes an entry of an earlier scope (the module's
    docstring). At the cap, the stronger mechanism first."""
    if lint and diagnosis:
        from harness.probe.findings import case_specs

        defect = {spec.slug: spec.defect for spec, _ in case_specs()}
        for d in diagnosis:
            for x in lint:
                if d["case"] in x["cases"] or (d["defect"] and d["defect"] in {defect.get(c) for c in x["cases"]}):
                    d["evidence"].append(f"lint agrees: {x['code']} at {x['path']}:{x['line']}: {x['message']}"[:300])
                    d["confidence"] = round(min(d["confidence"] + LINT_AGREES, 0.99), 2)
                    break
    return sorted(diagnosis, key=lambda d: (d.get("tier", 0), -d["confidence"], -d.get("rule", 0)))


def text(diagnosis: list) -> list[str]:
    """The diagnosis as the lines the probe's text output leads with."""
    if not diagnosis:
        return []
    lines = ["diagnosis, most likely first:"]
    for i, d in enumerate(diagnosis, 1):
        what = d["defect"] or d["title"]
        like = f", like cases/{d['case']} ({d['title']})" if d["case"] else ""
        lines.append(f"  {i}. {what}{like}  [confidence {d['confidence']:.2f}]")
        lines += [f"       - {e}" for e in d["evidence"][:4]]
    return lines
