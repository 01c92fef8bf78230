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
    "unwritten": "output elements keep their contents under two different fills",
    "uninitialized": "the result depends on what a torch.empty buffer held",
    "masked-undefined": "wrong with poison in masked lanes of a load without other=, right with 0",
    "tail": "wrong at a size off a block multiple, right at the block multiples beside it",
    "many-programs": "right when one program covers a size, wrong with several (and no tail)",
    "equal-sizes": "right once two sizes that differ are made equal: one used where the other belongs",
    "layout": "right with contiguous copies of the inputs, wrong with the given strides",
    "nonfinite": "NaN or Inf where the reference is finite",
    "nonfinite-input": "wrong with the NaN or Inf the inputs hold, right once they are replaced by 0",
    "zero-input": "NaN or Inf that go away when the exact zeros in the inputs are moved off 0 (0/0, 0 * log 0)",
    "magnitude": "NaN or Inf that go away with the float inputs scaled down: an intermediate overflows",
    "small-error": "close to the reference but outside the tolerance (relative error under 5%)",
    "error-grows": "the error grows with the size",
    "tf32": "right once tl.dot's TF32 rounding is off",
    "race": "a store to an address another program of the launch touches",
    "read-write-race": "a program loads an address another program stores to (read-modify-write, no atomics)",
    "order": "the result depends on the order the programs run in",
    "atomic-order": "float atomics: results differ between orders or runs in their last bits",
    "autotune-first-call": "the first call (autotune's) is wrong and later calls right, or the other way round",
    "first-call-right": "the first call (autotune's) is right and later calls wrong: the benchmarking runs did part of the work",
    "accumulated": "the result is a whole multiple of the reference: added several times",
    "atomics": "the kernels use atomics (the order of their updates is the hardware's)",
    "autotune-reuse": "right when every launch tunes afresh: a tuned config reused where its key matched",
    "autotuned-atomics": "an autotuned kernel with atomics and no reset_to_zero: benchmarking runs add up",
    "empty": "a size of 0 is handled wrong",
    "grid-limit": "a grid axis past CUDA's limit at the sizes a GPU meets",
    "large-only": "wrong only past 2**31 elements or bytes",
    "debug-assert": "TRITON_DEBUG's overflow checks or a device assert fired",
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


def _need(meta: dict, key: str, typ, where: str):
    if key not in meta:
        raise SpecError(f"{where}: missing field '{key}'")
    val = meta[key]
    if not isinstance(val, typ) or isinstance(val, bool) and typ is not bool:
        raise SpecError(f"{where}: field '{key}' must be {typ.__name__}, got {type(val).__name__}")
    return val


def _per_backend(value, default: dict, typ, name: str, where: str) -> dict:
    if value is None:
        return dict(default)
    if isinstance(value, typ) and not isinstance(value, bool):
        return {b: value for b in BACKENDS}
    if isinstance(value, dict):
        out = dict(default)
        for k, v in value.items():
            if k not in BACKENDS:
                raise SpecError(f"{where}: [run] {name} has unknown backend '{k}' (use gpu, interpreter)")
            if not isinstance(v, typ) or isinstance(v, bool):
                raise SpecError(f"{where}: [run] {name}.{k} must be {typ.__name__}")
            out[k] = v
        return out
    raise SpecError(f"{where}: [run] {name} must be a number or a table {{gpu = .., interpreter = ..}}")


def parse_bench(bench, where: str) -> dict | None:
    """``[bench]``: unit (GB/s or TFLOP/s), the torch function it is timed against, and sizes."""
    if bench is None:
        return None
    if not isinstance(bench, dict):
        raise SpecError(f"{where}: [bench] must be a table")
    unit = bench.get("unit", "GB/s")
    if unit not in ("GB/s", "TFLOP/s"):
        raise SpecError(f"{where}: [bench] unit must be \"GB/s\" or \"TFLOP/s\", got {unit!r}")
    sizes = bench.get("sizes")
    if not isinstance(sizes, list) or not sizes or not all(isinstance(s, dict) for s in sizes):
        raise SpecError(f"{where}: [bench] sizes must be a list of tables of make_inputs arguments")
    torch_name = bench.get("torch", "PyTorch")
    if not isinstance(torch_name, str):
        raise SpecError(f"{where}: [bench] torch must be a string (what the fixed kernel is timed against)")
    return {"unit": unit, "torch": torch_name, "sizes": sizes}


def _table(meta: dict, key: str, where: str) -> dict:
    """``[key]`` as a dict ({} when absent); a SpecError when it is there but not a table."""
    val = meta.get(key, {})
    if not isinstance(val, dict):
        raise SpecError(f"{where}: [{key}] must be a table, got {type(val).__name__}")
    return val


def _identity(meta: dict, where: str) -> dict:
    out = {k: _need(meta, k, str, where) for k in ("title", "category", "defect", "summary", "launcher")}
    for key, vocab in (("category", CATEGORIES), ("defect", DEFECTS)):
        if out[key] not in vocab:
            raise SpecError(f"{where}: {key} '{out[key]}' is not one of {', '.join(sorted(vocab))}")
    if not out["launcher"].isidentifier():
        raise SpecError(f"{where}: launcher '{out['launcher']}' is not a Python identifier")
    for key in ("title", "summary"):
        if "\n" in out[key].strip():
            raise SpecError(f"{where}: {key} must be one line")
    return out


def _run(meta: dict, where: str) -> dict:
    run = _table(meta, "run", where)
    calls = run.get("calls", 1)
    if not isinstance(calls, int) or isinstance(calls, bool) or calls < 1:
        raise SpecError(f"{where}: [run] calls must be a whole number >= 1")
    trials = _per_backend(run.get("trials"), DEFAULT_TRIALS, int, "trials", where)
    if min(trials.values()) < 1:
        raise SpecError(f"{where}: [run] trials must be >= 1")
    timeout = _per_backend(run.get("timeout"), DEFAULT_TIMEOUT, int, "timeout", where)
    if min(timeout.values()) < 1:
        raise SpecError(f"{where}: [run] timeout must be >= 1 second")
    gpus = run.get("gpus", 1)
    if not isinstance(gpus, int) or isinstance(gpus, bool) or gpus < 1:
        raise SpecError(f"{where}: [run] gpus must be a whole number >= 1")
    unknown = sorted(set(run) - {"calls", "trials", "timeout", "gpus"})
    if unknown:
        raise SpecError(f"{where}: [run] has unknown key '{unknown[0]}' (calls, trials, timeout, gpus)")
    return {"calls": calls, "trials": trials, "timeout": timeout, "gpus": gpus}


def _behaviours(b: str, val, calls: int, where: str) -> list[str]:
    """One backend's declaration: a behaviour per call; 'wrong|crash' declares either."""
    vals = [val] * calls if isinstance(val, str) else val
    if not isinstance(vals, list) or not all(isinstance(v, str) for v in vals):
        raise SpecError(f"{where}: [expect] {b} must be a behaviour or a list of them, one per call")
    if len(vals) != calls:
        raise SpecError(f"{where}: [expect] {b} lists {len(vals)} behaviours but [run] calls = {calls}")
    for v in vals:
        for alt in v.split("|"):
            if alt not in BEHAVIOURS:
                raise SpecError(f"{where}: [expect] {b} = '{v}' is not one of {', '.join(BEHAVIOURS)} "
                                f"(or several joined by '|')")
    return vals


def _expect(meta: dict, calls: int, where: str) -> tuple[dict, dict, dict]:
    table = meta.get("expect")
    if not isinstance(table, dict):
        raise SpecError(f"{where}: missing table [expect] with gpu = .. and interpreter = ..")
    known = set(BACKENDS) | {f"{b}_{k}" for b in BACKENDS for k in ("skip_reason", "why")}
    unknown = sorted(set(table) - known)
    if unknown:
        raise SpecError(f"{where}: [expect] has unknown key '{unknown[0]}' ({', '.join(sorted(known))})")
    expect, skip_reason, why = {}, {}, {}
    for b in BACKENDS:
        if b not in table:
            raise SpecError(f"{where}: [expect] has no entry for backend '{b}'")
        vals = expect[b] = _behaviours(b, table[b], calls, where)
        if "skip" in vals:
            if set(vals) != {"skip"}:
                raise SpecError(f"{where}: [expect] {b}: 'skip' applies to every call or none")
            skip_reason[b] = _reason(table, f"{b}_skip_reason", f"{b} = 'skip'", where)
        if any("|" in v for v in vals):
            why[b] = _reason(table, f"{b}_why", f"{b} = '{'/'.join(vals)}' (several behaviours)", where)
    return expect, skip_reason, why


def _reason(table: dict, key: str, what: str, where: str) -> str:
    reason = table.get(key)
    if not isinstance(reason, str) or not reason.strip():
        raise SpecError(f"{where}: [expect] {what} needs {key} = \"why\"")
    return reason


def _compare(meta: dict, where: str) -> dict:
    cmp_ = _table(meta, "compare", where)
    rtol, atol = cmp_.get("rtol", 1e-5), cmp_.get("atol", 1e-6)
    for name, v in (("rtol", rtol), ("atol", atol)):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v < float("inf"):
            raise SpecError(f"{where}: [compare] {name} must be a number >= 0")
    deterministic = cmp_.get("deterministic", False)
    if not isinstance(deterministic, bool):
        raise SpecError(f"{where}: [compare] deterministic must be true or false")
    return {"rtol": float(rtol), "atol": float(atol), "deterministic": deterministic}


def _sizes(meta: dict, where: str) -> tuple[dict, dict]:
    sizes = _table(meta, "sizes", where)
    out = {}
    for b in BACKENDS + ("sanitizer",):
        s = sizes.get(b, {})
        if not isinstance(s, dict) or not all(isinstance(k, str) and k.isidentifier() for k in s):
            raise SpecError(f"{where}: [sizes.{b}] must be a table of make_inputs arguments")
        out[b] = s
    unknown = sorted(set(sizes) - set(out))
    if unknown:
        raise SpecError(f"{where}: [sizes] has unknown table '{unknown[0]}' (gpu, interpreter, sanitizer)")
    return {b: out[b] for b in BACKENDS}, out["sanitizer"]


def _tags(meta: dict, where: str) -> dict:
    triggers = meta.get("triggers", [])
    if not isinstance(triggers, list) or not all(isinstance(t, str) for t in triggers):
        raise SpecError(f"{where}: triggers must be a list of names")
    for t in triggers:
        if t not in TRIGGERS:
            raise SpecError(f"{where}: trigger '{t}' is not one of {', '.join(TRIGGERS)}")
    calibration = meta.get("calibration", False)
    if not isinstance(calibration, bool):
        raise SpecError(f"{where}: calibration must be true or false")
    seen_in = meta.get("seen_in", [])
    if not isinstance(seen_in, list) or not all(isinstance(u, str) for u in seen_in):
        raise SpecError(f"{where}: seen_in must be a list of links")
    diag = meta.get("diagnosis", {})
    if not isinstance(diag, dict) or set(diag) - {"evidence"}:
        raise SpecError(f"{where}: [diagnosis] takes one key, evidence = [names]")
    evidence = diag.get("evidence", [])
    if not isinstance(evidence, list) or not all(isinstance(t, str) for t in evidence):
        raise SpecError(f"{where}: [diagnosis] evidence must be a list of names")
    for t in evidence:
        if t not in EVIDENCE:
            raise SpecError(f"{where}: [diagnosis] evidence '{t}' is not one of {', '.join(EVIDENCE)}")
    return {"triggers": triggers, "calibration": calibration, "seen_in": seen_in, "diagnosis": evidence}


def parse_spec(slug: str, path: Path, meta: dict) -> CaseSpec:
    """Check ``meta`` (the parsed case.toml) against the contract and build a CaseSpec."""
    where = f"cases/{slug}/case.toml"
    ident = _identity(meta, where)
    run = _run(meta, where)
    expect, skip_reason, why = _expect(meta, run["calls"], where)
    tags = _tags(meta, where)
    shows = [v for vals in expect.values() for v in vals if not set(v.split("|")) <= {"ok", "hidden", "skip"}]
    if tags["calibration"] and shows:
        raise SpecError(f"{where}: a calibration case declares ok on every backend (it is not a bug)")
    if not tags["calibration"] and not shows:
        raise SpecError(f"{where}: [expect] declares no backend where the bug shows (all ok/hidden/skip)")
    sizes, sanitizer = _sizes(meta, where)
    return CaseSpec(slug=slug, path=path, **ident, expect=expect, skip_reason=skip_reason, why=why,
                    **_compare(meta, where), calls=run["calls"], trials=run["trials"], timeout=run["timeout"],
                    gpus=run["gpus"], sizes=sizes, sanitizer_sizes=sanitizer, bench=parse_bench(meta.get("bench"), where),
                    **tags, raw=meta)


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
