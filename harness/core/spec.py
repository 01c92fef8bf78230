"""The case contract: what a case folder holds and what its ``case.toml`` may say.

A case is a folder ``cases/<slug>/`` with

- ``case.toml``  the metadata this module parses (title, category, expectations ...)
- ``case.py``    ``make_inputs(...)`` and ``reference(...)``, shared by both kernels
- ``broken.py``  the broken kernel and its launcher
- ``fixed.py``   the fixed kernel and the same launcher
- ``README.md``  the write-up

Parsing needs neither torch nor triton, so ``list`` and ``check`` stay fast.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

BACKENDS = ("gpu", "interpreter")
VARIANTS = ("broken", "fixed")
OPTIONAL_VARIANTS = ("fast",)  # fast.py: a faster or more deterministic correct kernel, checked like fixed.py
REQUIRED_FILES = ("case.toml", "case.py", "broken.py", "fixed.py", "README.md")

# What a broken kernel may be declared to do on a backend.
BEHAVIOURS = {
    "wrong": "differs from the reference on every run",
    "flaky": "gives different results from run to run (compared bitwise)",
    "crash": "the process dies or the launch raises",
    "hang": "does not finish within the timeout",
    "hidden": "the bug does not show on this backend: the result matches the reference",
    "ok": "matches the reference (for a call where the bug is not expected to show)",
    "skip": "not run on this backend (say why in skip_reason)",
}
# A declaration may name several behaviours, 'wrong|crash', where the hardware or the
# memory layout decides which one shows; [expect] <backend>_why says why.

CATEGORIES = {
    "reduction": "a reduction that covers the wrong scope or combines partials wrongly",
    "race": "programs write the same memory without ordering",
    "atomics": "atomic read-modify-writes that accumulate too much or in varying order",
    "autotune": "side effects of @triton.autotune's benchmarking runs, and of its config cache",
    "bounds": "masks, grids and strides that read or write past the data",
    "precision": "number formats and accumulation that lose accuracy",
    "numerics": "overflow, underflow and cancellation",
    "rng": "random numbers that repeat or correlate",
    "indexing": "offsets and strides computed wrongly",
}

# DataRaceBench-style labels: what kind of defect, so tools can be scored against it.
DEFECTS = {
    "partial-reduction": "a block-local reduction used as if it were global",
    "store-race": "many programs store to one address; the last writer wins",
    "lost-update": "read-modify-write without atomics loses updates",
    "autotune-accumulation": "atomics or in-place updates repeated by autotune benchmarking",
    "wrong-combine": "partials combined with the wrong operator",
    "atomic-nondeterminism": "floating-point atomics add in a different order each run",
    "out-of-bounds-read": "a load past the end of the data",
    "out-of-bounds-write": "a store past the end of the data",
    "unwritten-output": "part of the output is never written",
    "padding-contamination": "masked lanes take a value that enters the result",
    "stride-assumption": "the kernel assumes a contiguous layout",
    "precision-loss": "a lower precision than the result needs",
    "overflow": "a value or an offset overflows its type",
    "rng-reuse": "the same random stream reused where it must differ",
    "wrong-formula": "a constant, base or index formula that computes something else",
    "degenerate-size": "a size the launcher cannot handle: zero, one, or past a hardware limit",
    "uninitialized-accumulator": "accumulating into memory nobody initialised",
    "device-mismatch": "a tensor on another device than the one the kernel launches on",
    "memory-ordering": "accesses between programs or lanes with no barrier, fence or release/acquire",
    "autotune-config-reuse": "a config tuned for one input reused for another it is wrong for",
    "deadlock": "a program waits for a signal that cannot arrive: the kernel hangs",
    "missing-barrier": "lanes of one program read global memory other lanes wrote, with no barrier",
    "stream-race": "a kernel reads data produced on another stream without waiting for it",
    "mask-misalignment": "a mask built against the wrong origin, so the wrong elements are kept",
}

# What input or situation exposes the bug: what a test must include to see it.
TRIGGERS = {
    "any-input": "every input shows it: any test against a reference catches it",
    "tail": "a size that is not a multiple of the block size",
    "large-size": "a size past a limit: 2**31 elements, 65535 programs in a grid dimension, ...",
    "empty-input": "an input with zero elements",
    "non-contiguous": "a strided or transposed view instead of a contiguous tensor",
    "second-device": "a tensor on another GPU than the current device",
    "autotune": "@triton.autotune's benchmarking runs, or its config cache",
    "repetition": "running the same kernel on the same inputs several times",
    "many-programs": "a grid of more than one program (the bug hides in a single block)",
    "shape-mismatch": "two sizes that usually agree but need not (seqlen_q != seqlen_k, ...)",
    "value-range": "inputs with large, small, negative or special values",
    "precision": "an input dtype or a hardware default (TF32, bf16) narrower than the result needs",
    "concurrency": "streams, CUDA graphs or other work running beside the kernel",
    "duplicate-indices": "an index tensor in which some values repeat",
}

# What the probe can observe about a failing kernel (harness.probe.diagnosis): a case's
# [diagnosis] evidence names those that tell its trap apart; the probe names the case when
# it observes all of them.
EVIDENCE = {
    "oob-store": "a store or atomic outside its tensor (memcheck, guard bands, compute-sanitizer)",
    "oob-load": "a load outside its tensor (memcheck, poison read from a guard band, compute-sanitizer)",
    "oob-rmw": "one tensor loaded and stored past the same end (memcheck): a read-modify-write with no mask",
    "unwritten": "output elements keep their contents under two different fills",
    "fill-kept": "the wrong elements all hold one sentinel (-1, or 2**30 and past) where the reference varies: the fill the output was made with",
    "uninitialized": "the result depends on what a torch.empty buffer held",
    "masked-undefined": "wrong with poison in masked lanes of a load without other=, right with 0",
    "tail": "wrong at a size off a block multiple, right at the block multiples beside it",
    "many-programs": "right when one program covers a size, wrong with several (and no tail)",
    "ignored-part": "doubling the inputs on one side of a block boundary along a reduced size moves the reference, not the result (beyond the tolerance)",
    "all-parts": "the result moves with the inputs on both sides of a block boundary along a reduced size: every part is read",
    "block-repeat": "with the inputs' second block a copy of the first the result's is too, the reference's not: the same random numbers in every program",
    "many-iterations": "right when a loop inside each program runs once, wrong when it runs more (no more programs, no tail)",
    "oob-load-unused": "a load outside its tensor at the failing sizes whose lanes do not reach the result (poison there changes no bit)",
    "equal-sizes": "right once two sizes that differ are made equal: one used where the other belongs",
    "layout": "right with contiguous copies of the inputs, wrong with the given strides",
    "nonfinite": "NaN or Inf where the reference is finite",
    "nonfinite-input": "wrong with the NaN or Inf the inputs hold, right once they are replaced by 0 (which the reference does not notice)",
    "special-value": "wrong with NaN or Inf inputs the reference gives a meaning (its result changes when they are 0): an empty segment's -inf",
    "zero-input": "NaN or Inf that go away when the exact zeros in the inputs are moved off 0 (0/0, 0 * log 0)",
    "magnitude": "NaN or Inf that go away with the float inputs scaled down: an intermediate overflows",
    "large-values": "finite values off beyond the floor with a row of large finite values put into an input, and "
                    "off too where that row's magnitude overflows nothing (half ln of the format's largest value): "
                    "a branch of the formula that only large inputs take (past a threshold, a clamp) computes "
                    "another value",
    "large-row": "finite values off beyond the floor with a row of large finite values put into an input, not "
                 "run again at a magnitude where nothing overflows (the budget's end, or that run could not be "
                 "made): an overflow not told apart from a formula's branch",
    "zero-row": "NaN or Inf where the reference is finite, with a row of zeros put into an input (0/0 or x/0 that the reference guards)",
    "one-sign-row": "wrong once every value of a row of the largest input has one sign (-|x|, or |x|), "
                    "right as made: a value not in the row (a padded lane read as 0, a max started at 0) wins its "
                    "max, min or argmax",
    "small-error": "close to the reference but outside the tolerance (relative error under 5%)",
    "error-grows": "the error grows with the size",
    "wider-dtype": "right with every float tensor one type wider (fp16/bf16 to fp32, fp32 to fp64), the same values",
    "length": "with wider-dtype: right at a quarter (or a sixteenth) of the longest size, still wrong with the largest inputs clipped: the error builds up along it",
    "tf32": "right once tl.dot's TF32 rounding is off",
    "race": "a store to an address another program of the launch touches",
    "read-write-race": "a program loads an address another program stores to (read-modify-write, no atomics)",
    "order": "the result depends on the order the programs run in",
    "lane-collision": "lanes of one tl.store, or of two with no barrier between, write one address with different values (which lands is unspecified on a GPU)",
    "lost-rmw": "lanes of one program load, change and store back addresses that other lanes of it stored, with no "
                "barrier between: every update but one is lost",
    "cross-lane": "a tl.load reads what other lanes of its program stored, with no tl.debug_barrier() between",
    "other-stream": "wrong in plain runs, right with every torch.cuda.Stream() the launcher makes standing for the current stream (GPU)",
    "wrong-any-order": "result elements wrong with the programs in order and in reverse: computed wrong by their own program, not overwritten",
    "atomic-order": "float atomics: results differ between orders or runs in their last bits",
    "atomic-rounding": "float atomics: orders that differ in their last bits, within tolerance (a warning, not an error's cause)",
    "autotune-first-call": "the first call (autotune's) is wrong and later calls right, or the other way round",
    "first-call-right": "the first call (autotune's) is right and later calls wrong: the benchmarking runs did part of the work",
    "accumulated": "the result is a whole multiple of the reference: added several times",
    "atomics": "the kernels use atomics (the order of their updates is the hardware's)",
    "autotune-reuse": "right when every launch tunes afresh: a tuned config reused where its key matched",
    "autotuned-atomics": "an autotuned kernel with atomics and no reset_to_zero: benchmarking runs add up",
    "empty": "a size of 0 is handled wrong",
    "config-value": "right at the default sizes, wrong at another value of a tile the launcher passes (a block size the reference does not take, which the result must not depend on)",
    "branch-value": "right at the default sizes, wrong at another value of a launcher's flag or integer that the reference takes too (the branch the default does not take)",
    "sentinel-value": "right at the default inputs, wrong with the sentinel the contract names (a loss's ignore_index, a -1 a parameter names) put into an integer index input, no access outside: a skipped element counted or read",
    "sentinel-row": "NaN or Inf where the reference is finite, with a whole row of an index input at the contract's sentinel: a mean over nothing (0/0) that the reference guards",
    "sentinel-access": "an access outside a tensor only once the contract's sentinel is in an integer index input (the same layout and sizes as a right run): a gather or a store through it",
    "grid-limit": "a grid axis past CUDA's limit at the sizes a GPU meets",
    "large-only": "wrong only past 2**31 elements or bytes",
    "int32-offset": "a launched kernel's address holds a program id (or an index loaded from a 32-bit tensor) times a runtime size in int32, never widened "
                    "(a hazard past 2**31 elements, from the source)",
    "debug-assert": "TRITON_DEBUG's overflow checks (on a GPU, or their emulation under the interpreter) or a device assert fired",
    "narrow-result": "the launcher's result comes back as an integer type whose range the reference's values pass",
    "narrow-fraction": "the launcher's result comes back as an integer type and the reference's values have fractions",
    "hang": "the kernel does not return",
    "crash": "the launcher raised or the process died",
    "wrong-everywhere": "most output elements are wrong at every size tried",
    "wrong-values": "some output elements are wrong and finite (no mechanism shown: a formula's mistake)",
}

DEFAULT_TRIALS = {"gpu": 10, "interpreter": 3}
DEFAULT_TIMEOUT = {"gpu": 300, "interpreter": 300}
SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class SpecError(ValueError):
    """A problem with a case folder; the message is one line naming the file."""


@dataclass
class CaseSpec:
    slug: str
    path: Path
    title: str
    category: str
    defect: str
    summary: str
    launcher: str
    expect: dict  # backend -> list of behaviours, one per call
    skip_reason: dict  # backend -> str
    why: dict  # backend -> str: why a backend declares several behaviours ('wrong|crash')
    rtol: float
    atol: float
    deterministic: bool
    calls: int
    trials: dict  # backend -> int
    timeout: dict  # backend -> seconds
    sizes: dict  # backend -> kwargs for make_inputs
    seen_in: list = field(default_factory=list)
    triggers: list = field(default_factory=list)  # keys of TRIGGERS
    diagnosis: list = field(default_factory=list)  # [diagnosis] evidence: keys of EVIDENCE
    calibration: bool = False  # looks like a bug and is not: both kernels must match, every detector stay quiet
    gpus: int = 1  # GPUs the case needs; with fewer it is skipped
    sanitizer_sizes: dict = field(default_factory=dict)  # [sizes.sanitizer]: small sizes for compute-sanitizer
    bench: dict | None = None  # [bench]: unit, torch, sizes (a list of make_inputs arguments)
    raw: dict = field(default_factory=dict)

    @property
    def variants(self) -> tuple[str, ...]:
        """broken and fixed, and fast where the case has a fast.py."""
        return VARIANTS + tuple(v for v in OPTIONAL_VARIANTS if (self.path / f"{v}.py").is_file())

    def small_sizes(self) -> dict:
        """Sizes for the detectors' slow runs: [sizes.sanitizer], else the interpreter's, else the GPU's."""
        return self.sanitizer_sizes or self.sizes["interpreter"] or self.sizes["gpu"]

    def expected(self, variant: str, backend: str) -> list[str]:
        """The behaviour declared for each call of ``variant`` on ``backend``."""
        if self.expect[backend][0] == "skip":
            return ["skip"] * self.calls
        if variant != "broken":
            return ["ok"] * self.calls
        return list(self.expect[backend])

    def expect_text(self, backend: str) -> str:
        exp = self.expect[backend]
        if len(set(exp)) == 1:
            return exp[0]
        return " / ".join(f"call {i + 1}: {e}" for i, e in enumerate(exp))


# ---------------------------------------------------------------- the one validator of case.toml
#
# ``validate`` walks the parsed dict once and returns every bad field, each on its own;
# a field whose check depends on another (``[expect]`` on ``[run] calls``) uses it only
# when that one is good. ``parse_spec`` raises the first error, for the commands that
# run a case; ``check`` shows them all. Each error has a kind, which picks check's rule:
# a missing field (C202), a wrong type (C203), a value out of its vocabulary or range
# (C204), a key a table does not know (C205).

MISSING, TYPE, VALUE, KEY = "missing", "type", "value", "key"
FIELDS = ("title", "category", "defect", "summary", "launcher", "seen_in", "triggers", "calibration",
          "expect", "run", "compare", "sizes", "bench", "diagnosis")
RUN_KEYS = ("calls", "trials", "timeout", "gpus")
LIMITS = {"calls": 100, "trials": 1000, "timeout": 3600, "gpus": 64}  # [run]: the most each may be
COMPARE_KEYS = ("rtol", "atol", "deterministic")
BENCH_KEYS = ("unit", "torch", "sizes")
SIZE_TABLES = BACKENDS + ("sanitizer",)
REFERENCE = "see the case.toml reference in CONTRIBUTING.md"
HINTS = {  # how to fix a bad field, by its top-level key
    "title": 'title = "one line that names the trap"',
    "category": "'python -m harness new --help' lists the categories and what each means",
    "defect": "'python -m harness new --help' lists the defects and what each means",
    "summary": 'summary = "one sentence: what goes wrong"',
    "launcher": "the name of the function that broken.py and fixed.py both define",
    "seen_in": 'seen_in = ["https://github.com/..."]',
    "expect": "[expect] says what the broken kernel does: gpu = .. and interpreter = .., from "
              + " | ".join(BEHAVIOURS),
    "sizes": "[sizes.gpu] and [sizes.interpreter] hold make_inputs' keyword arguments",
    "bench": "[bench] unit, torch and sizes: " + REFERENCE,
    "triggers": "triggers = [...], from: " + ", ".join(TRIGGERS),
    "calibration": "calibration = true or false",
    "diagnosis": "[diagnosis] evidence = [...], from: " + ", ".join(EVIDENCE),
}


@dataclass(frozen=True)
class FieldError:
    """One bad field of a case.toml: where (dotted: 'run.trials'), its kind, and what is wrong."""

    field: str
    kind: str  # MISSING, TYPE, VALUE or KEY
    what: str

    @property
    def fix(self) -> str:
        return HINTS.get(self.field.split(".")[0], REFERENCE)


def is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def validate(meta: dict) -> list[FieldError]:
    """Every bad field of ``meta`` (a parsed case.toml), at most one per field, in file order."""
    out: list[FieldError] = []
    out += _identity(meta)
    calls = _run_table(meta, out)
    expect = _expect_table(meta, calls, out)
    out += _tags(meta)
    calibration = meta.get("calibration", False)
    if expect is not None and isinstance(calibration, bool):
        shows = [v for vals in expect.values() for v in vals if not set(v.split("|")) <= {"ok", "hidden", "skip"}]
        if calibration and shows:
            out.append(FieldError("expect", VALUE, "a calibration case declares ok on every backend (it is not a bug)"))
        if not calibration and not shows:
            out.append(FieldError("expect", VALUE, "[expect] declares no backend where the bug shows "
                                                   "(all ok/hidden/skip)"))
    out += _sizes_table(meta) + _compare_table(meta) + _bench_table(meta)
    return out


def _identity(meta: dict) -> list[FieldError]:
    """title, category, defect, summary and launcher: strings, from their vocabularies."""
    out = []
    for key in ("title", "category", "defect", "summary", "launcher"):
        val = meta.get(key)
        vocab = {"category": CATEGORIES, "defect": DEFECTS}.get(key)
        if key not in meta:
            out.append(FieldError(key, MISSING, f"missing field '{key}'"))
        elif not isinstance(val, str):
            out.append(FieldError(key, TYPE, f"field '{key}' must be str, got {type(val).__name__}"))
        elif vocab is not None and val not in vocab:
            out.append(FieldError(key, VALUE, f"{key} '{val}' is not one of {', '.join(sorted(vocab))}"))
        elif key == "launcher" and not val.isidentifier():
            out.append(FieldError(key, VALUE, f"launcher '{val}' is not a Python identifier"))
        elif key in ("title", "summary") and "\n" in val.strip():
            out.append(FieldError(key, VALUE, f"{key} must be one line"))
    return out


def _table(meta: dict, key: str, out: list, keys: tuple | None = None) -> dict | None:
    """``[key]`` ({} when absent), or None after noting that it is not a table; a key it does not know is noted."""
    val = meta.get(key, {})
    if not isinstance(val, dict):
        out.append(FieldError(key, TYPE, f"[{key}] must be a table, got {type(val).__name__}"))
        return None
    unknown = sorted(set(val) - set(keys)) if keys is not None else []
    if unknown:
        out.append(FieldError(f"{key}.{unknown[0]}", KEY, f"[{key}] has unknown key '{unknown[0]}' "
                                                           f"({', '.join(keys)})"))
    return val


def _count(run: dict, name: str, floor: str = "") -> FieldError | None:
    """``[run] <name>``: a whole number from 1 to its limit, or (trials, timeout) a table {gpu = .., interpreter = ..}."""
    value, field, top = run.get(name), f"run.{name}", LIMITS[name]
    if value is None:
        return None
    if isinstance(value, dict) and name in ("trials", "timeout"):
        for k, v in value.items():
            if k not in BACKENDS:
                return FieldError(field, KEY, f"[run] {name} has unknown backend '{k}' (use gpu, interpreter)")
            if not is_int(v):
                return FieldError(field, TYPE, f"[run] {name}.{k} must be int")
        values = list(value.values())
    elif is_int(value):
        values = [value]
    elif name in ("trials", "timeout"):
        return FieldError(field, TYPE, f"[run] {name} must be a number or a table {{gpu = .., interpreter = ..}}")
    else:
        return FieldError(field, TYPE, f"[run] {name} must be a whole number from 1 to {top}")
    if values and not all(1 <= v <= top for v in values):
        return FieldError(field, VALUE, f"[run] {name} must be from 1 to {top}{floor}")
    return None


def _run_table(meta: dict, out: list) -> int | None:
    """Check ``[run]``; return ``calls`` when it is good (None when it is not)."""
    run = _table(meta, "run", out, RUN_KEYS)
    if run is None:
        return None
    errors = [_count(run, "calls"), _count(run, "trials"), _count(run, "timeout", " seconds"), _count(run, "gpus")]
    out += [e for e in errors if e]
    return None if errors[0] else run.get("calls", 1)


def _behaviours(b: str, val, calls: int | None) -> tuple[list[str] | None, FieldError | None]:
    """One backend's declaration: a behaviour per call; 'wrong|crash' declares either."""
    field = f"expect.{b}"
    vals = [val] * (calls or 1) if isinstance(val, str) else val
    if not isinstance(vals, list) or not all(isinstance(v, str) for v in vals):
        return None, FieldError(field, TYPE, f"[expect] {b} must be a behaviour or a list of them, one per call")
    if calls is not None and len(vals) != calls:
        return None, FieldError(field, VALUE, f"[expect] {b} lists {len(vals)} behaviours but [run] calls = {calls}")
    for v in vals:
        if any(alt not in BEHAVIOURS for alt in v.split("|")):
            return None, FieldError(field, VALUE, f"[expect] {b} = '{v}' is not one of {', '.join(BEHAVIOURS)} "
                                                  f"(or several joined by '|')")
    return vals, None


def _reason(exp: dict, b: str, vals: list[str]) -> FieldError | None:
    """A 'skip' needs <b>_skip_reason, several behaviours ('wrong|crash') need <b>_why."""
    if "skip" in vals and set(vals) != {"skip"}:
        return FieldError(f"expect.{b}", VALUE, f"[expect] {b}: 'skip' applies to every call or none")
    needs = []
    if "skip" in vals:
        needs.append((f"{b}_skip_reason", f"{b} = 'skip'"))
    if any("|" in v for v in vals):
        needs.append((f"{b}_why", f"{b} = '{'/'.join(vals)}' (several behaviours)"))
    for key, what in needs:
        text = exp.get(key)
        if not isinstance(text, str) or not text.strip():
            return FieldError(f"expect.{key}", MISSING, f"[expect] {what} needs {key} = \"why\"")
    return None


def _expect_table(meta: dict, calls: int | None, out: list) -> dict | None:
    """Check ``[expect]``; return {backend: behaviours} when every backend is good."""
    exp = meta.get("expect")
    if not isinstance(exp, dict):
        kind = MISSING if exp is None else TYPE
        out.append(FieldError("expect", kind, "missing table [expect] with gpu = .. and interpreter = .."))
        return None
    _table(meta, "expect", out, BACKENDS + tuple(f"{b}_{k}" for b in BACKENDS for k in ("skip_reason", "why")))
    good = {}
    for b in BACKENDS:
        if b not in exp:
            out.append(FieldError(f"expect.{b}", MISSING, f"[expect] has no entry for backend '{b}'"))
            continue
        vals, err = _behaviours(b, exp[b], calls)
        err = err or _reason(exp, b, vals)
        if err:
            out.append(err)
        else:
            good[b] = vals
    return good if len(good) == len(BACKENDS) and calls is not None else None


def _names(value, field: str, vocab: dict, what: str) -> FieldError | None:
    """A list of names from ``vocab`` (triggers, [diagnosis] evidence)."""
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        return FieldError(field, TYPE, f"{what} must be a list of names")
    bad = [t for t in value if t not in vocab]
    if bad:
        return FieldError(field, VALUE, f"{what.removesuffix('s')} '{bad[0]}' is not one of {', '.join(vocab)}")
    return None


def _tags(meta: dict) -> list[FieldError]:
    """triggers, calibration, seen_in and [diagnosis] evidence."""
    out = [e for e in [_names(meta.get("triggers", []), "triggers", TRIGGERS, "triggers")] if e]
    if not isinstance(meta.get("calibration", False), bool):
        out.append(FieldError("calibration", TYPE, "calibration must be true or false"))
    seen_in = meta.get("seen_in", [])
    if not isinstance(seen_in, list) or not all(isinstance(u, str) for u in seen_in):
        out.append(FieldError("seen_in", TYPE, "seen_in must be a list of links"))
    diagnosis = _table(meta, "diagnosis", out, ("evidence",))
    if diagnosis is not None:
        err = _names(diagnosis.get("evidence", []), "diagnosis.evidence", EVIDENCE, "[diagnosis] evidence")
        out += [err] if err else []
    return out


def _sizes_table(meta: dict) -> list[FieldError]:
    out: list[FieldError] = []
    sizes = _table(meta, "sizes", out)
    if sizes is None:
        return out
    for b in SIZE_TABLES:
        s = sizes.get(b, {})
        if not isinstance(s, dict) or not all(isinstance(k, str) and k.isidentifier() for k in s):
            out.append(FieldError(f"sizes.{b}", TYPE, f"[sizes.{b}] must be a table of make_inputs arguments"))
    unknown = sorted(set(sizes) - set(SIZE_TABLES))
    if unknown:
        out.append(FieldError(f"sizes.{unknown[0]}", KEY, f"[sizes] has unknown table '{unknown[0]}' "
                                                           f"({', '.join(SIZE_TABLES)})"))
    return out


def _compare_table(meta: dict) -> list[FieldError]:
    out: list[FieldError] = []
    cmp_ = _table(meta, "compare", out, COMPARE_KEYS)
    if cmp_ is None:
        return out
    for name, default in (("rtol", 1e-5), ("atol", 1e-6)):
        v = cmp_.get(name, default)
        if not is_number(v) or not 0 <= v < float("inf"):
            out.append(FieldError(f"compare.{name}", VALUE if is_number(v) else TYPE,
                                  f"[compare] {name} must be a number >= 0"))
    if not isinstance(cmp_.get("deterministic", False), bool):
        out.append(FieldError("compare.deterministic", TYPE, "[compare] deterministic must be true or false"))
    return out


def _bench_table(meta: dict) -> list[FieldError]:
    """``[bench]``: unit (GB/s or TFLOP/s), the torch function it is timed against, and sizes."""
    out: list[FieldError] = []
    if "bench" not in meta or (bench := _table(meta, "bench", out, BENCH_KEYS)) is None:
        return out
    unit, sizes = bench.get("unit", "GB/s"), bench.get("sizes")
    if unit not in ("GB/s", "TFLOP/s"):
        out.append(FieldError("bench.unit", VALUE, f"[bench] unit must be \"GB/s\" or \"TFLOP/s\", got {unit!r}"))
    if not isinstance(sizes, list) or not sizes or not all(isinstance(s, dict) for s in sizes):
        out.append(FieldError("bench.sizes", TYPE if sizes else MISSING,
                              "[bench] sizes must be a list of tables of make_inputs arguments"))
    if not isinstance(bench.get("torch", "PyTorch"), str):
        out.append(FieldError("bench.torch", TYPE, "[bench] torch must be a string (what the fixed kernel is timed against)"))
    return out


def _per_backend(value, default: dict) -> dict:
    """A validated ``[run] trials`` or ``timeout``: one number for both backends, or a table over the defaults."""
    if value is None:
        return dict(default)
    return {**default, **value} if isinstance(value, dict) else {b: value for b in BACKENDS}


def parse_spec(slug: str, path: Path, meta: dict) -> CaseSpec:
    """Check ``meta`` (the parsed case.toml) with ``validate`` and build a CaseSpec; SpecError names the first error."""
    where = f"cases/{slug}/case.toml"
    errors = validate(meta)
    if errors:
        raise SpecError(f"{where}: {errors[0].what}")
    run, exp, cmp_, sizes, bench = (meta.get(k, {}) for k in ("run", "expect", "compare", "sizes", "bench"))
    calls = run.get("calls", 1)
    expect = {b: [exp[b]] * calls if isinstance(exp[b], str) else list(exp[b]) for b in BACKENDS}
    return CaseSpec(
        slug=slug, path=path, **{k: meta[k] for k in ("title", "category", "defect", "summary", "launcher")},
        expect=expect, skip_reason={b: exp[f"{b}_skip_reason"] for b in BACKENDS if "skip" in expect[b]},
        why={b: exp[f"{b}_why"] for b in BACKENDS if any("|" in v for v in expect[b])},
        rtol=float(cmp_.get("rtol", 1e-5)), atol=float(cmp_.get("atol", 1e-6)),
        deterministic=cmp_.get("deterministic", False), calls=calls,
        trials=_per_backend(run.get("trials"), DEFAULT_TRIALS), timeout=_per_backend(run.get("timeout"), DEFAULT_TIMEOUT),
        gpus=run.get("gpus", 1), sizes={b: sizes.get(b, {}) for b in BACKENDS}, sanitizer_sizes=sizes.get("sanitizer", {}),
        bench={"unit": bench.get("unit", "GB/s"), "torch": bench.get("torch", "PyTorch"), "sizes": bench["sizes"]}
        if "bench" in meta else None,
        seen_in=meta.get("seen_in", []), triggers=meta.get("triggers", []),
        diagnosis=meta.get("diagnosis", {}).get("evidence", []), calibration=meta.get("calibration", False), raw=meta)


def load_spec(path: Path) -> CaseSpec:
    """Read and check ``path/case.toml``; raise SpecError with a one-line message."""
    slug = path.name
    if not SLUG_RE.match(slug):
        raise SpecError(f"cases/{slug!r}: the slug must be lowercase words joined by '-'")
    for f in REQUIRED_FILES:
        if not (path / f).is_file():
            raise SpecError(f"cases/{slug}/{f}: missing (every case needs {', '.join(REQUIRED_FILES)})")
    try:
        meta = tomllib.loads((path / "case.toml").read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        raise SpecError(f"cases/{slug}/case.toml: not UTF-8 text (byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"cases/{slug}/case.toml: not valid TOML ({' '.join(str(e).split())})") from None
    except OSError as e:
        raise SpecError(f"cases/{slug}/case.toml: cannot be read ({e.strerror})") from None
    return parse_spec(slug, path, meta)
