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

CATEGORIES = {
    "reduction": "a reduction that covers the wrong scope or combines partials wrongly",
    "race": "programs write the same memory without ordering",
    "atomics": "atomic read-modify-writes that accumulate too much or in varying order",
    "autotune": "side effects of @triton.autotune's benchmarking runs",
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
}

# What input or situation exposes the bug: what a test must include to see it.
TRIGGERS = {
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
    rtol: float
    atol: float
    deterministic: bool
    calls: int
    trials: dict  # backend -> int
    timeout: dict  # backend -> seconds
    sizes: dict  # backend -> kwargs for make_inputs
    seen_in: list = field(default_factory=list)
    triggers: list = field(default_factory=list)  # keys of TRIGGERS
    calibration: bool = False  # looks like a bug and is not: both kernels must match, every detector stay quiet
    gpus: int = 1  # GPUs the case needs; with fewer it is skipped
    sanitizer_sizes: dict = field(default_factory=dict)  # [sizes.sanitizer]: small sizes for compute-sanitizer
    bench: dict | None = None  # [bench]: unit, torch, sizes (a list of make_inputs arguments)
    raw: dict = field(default_factory=dict)

    def small_sizes(self) -> dict:
        """Sizes for the detectors' slow runs: [sizes.sanitizer], else the interpreter's, else the GPU's."""
        return self.sanitizer_sizes or self.sizes["interpreter"] or self.sizes["gpu"]

    def expected(self, variant: str, backend: str) -> list[str]:
        """The behaviour declared for each call of ``variant`` on ``backend``."""
        if self.expect[backend][0] == "skip":
            return ["skip"] * self.calls
        if variant == "fixed":
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


def parse_spec(slug: str, path: Path, meta: dict) -> CaseSpec:
    """Check ``meta`` (the parsed case.toml) against the contract and build a CaseSpec."""
    where = f"cases/{slug}/case.toml"
    title = _need(meta, "title", str, where)
    category = _need(meta, "category", str, where)
    if category not in CATEGORIES:
        raise SpecError(f"{where}: category '{category}' is not one of {', '.join(sorted(CATEGORIES))}")
    defect = _need(meta, "defect", str, where)
    if defect not in DEFECTS:
        raise SpecError(f"{where}: defect '{defect}' is not one of {', '.join(sorted(DEFECTS))}")
    summary = _need(meta, "summary", str, where)
    launcher = _need(meta, "launcher", str, where)
    if not launcher.isidentifier():
        raise SpecError(f"{where}: launcher '{launcher}' is not a Python identifier")

    run = meta.get("run", {})
    calls = run.get("calls", 1)
    if not isinstance(calls, int) or isinstance(calls, bool) or calls < 1:
        raise SpecError(f"{where}: [run] calls must be a whole number >= 1")
    trials = _per_backend(run.get("trials"), DEFAULT_TRIALS, int, "trials", where)
    if min(trials.values()) < 1:
        raise SpecError(f"{where}: [run] trials must be >= 1")
    timeout = _per_backend(run.get("timeout"), DEFAULT_TIMEOUT, int, "timeout", where)

    exp_table = meta.get("expect")
    if not isinstance(exp_table, dict):
        raise SpecError(f"{where}: missing table [expect] with gpu = .. and interpreter = ..")
    expect, skip_reason = {}, {}
    for b in BACKENDS:
        if b not in exp_table:
            raise SpecError(f"{where}: [expect] has no entry for backend '{b}'")
        val = exp_table[b]
        vals = [val] * calls if isinstance(val, str) else val
        if not isinstance(vals, list) or not all(isinstance(v, str) for v in vals):
            raise SpecError(f"{where}: [expect] {b} must be a behaviour or a list of them, one per call")
        if len(vals) != calls:
            raise SpecError(f"{where}: [expect] {b} lists {len(vals)} behaviours but [run] calls = {calls}")
        for v in vals:
            if v not in BEHAVIOURS:
                raise SpecError(f"{where}: [expect] {b} = '{v}' is not one of {', '.join(BEHAVIOURS)}")
        if "skip" in vals:
            if set(vals) != {"skip"}:
                raise SpecError(f"{where}: [expect] {b}: 'skip' applies to every call or none")
            reason = exp_table.get(f"{b}_skip_reason")
            if not isinstance(reason, str) or not reason.strip():
                raise SpecError(f"{where}: [expect] {b} = 'skip' needs {b}_skip_reason = \"why\"")
            skip_reason[b] = reason
        expect[b] = vals
    calibration = meta.get("calibration", False)
    if not isinstance(calibration, bool):
        raise SpecError(f"{where}: calibration must be true or false")
    if not calibration and all(set(v) <= {"ok", "hidden", "skip"} for v in expect.values()):
        raise SpecError(f"{where}: [expect] declares no backend where the bug shows (all ok/hidden/skip)")

    cmp_ = meta.get("compare", {})
    rtol, atol = cmp_.get("rtol", 1e-5), cmp_.get("atol", 1e-6)
    for name, v in (("rtol", rtol), ("atol", atol)):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
            raise SpecError(f"{where}: [compare] {name} must be a number >= 0")
    deterministic = cmp_.get("deterministic", False)
    if not isinstance(deterministic, bool):
        raise SpecError(f"{where}: [compare] deterministic must be true or false")

    sizes = meta.get("sizes", {})
    if not isinstance(sizes, dict):
        raise SpecError(f"{where}: [sizes] must be a table")
    size_map = {}
    for b in BACKENDS:
        s = sizes.get(b, {})
        if not isinstance(s, dict):
            raise SpecError(f"{where}: [sizes.{b}] must be a table of make_inputs arguments")
        size_map[b] = s

    sanitizer = sizes.get("sanitizer", {})
    if not isinstance(sanitizer, dict):
        raise SpecError(f"{where}: [sizes.sanitizer] must be a table of make_inputs arguments")
    bench = parse_bench(meta.get("bench"), where)

    triggers = meta.get("triggers", [])
    if not isinstance(triggers, list) or not all(isinstance(t, str) for t in triggers):
        raise SpecError(f"{where}: triggers must be a list of names")
    for t in triggers:
        if t not in TRIGGERS:
            raise SpecError(f"{where}: trigger '{t}' is not one of {', '.join(TRIGGERS)}")
    gpus = run.get("gpus", 1)
    if not isinstance(gpus, int) or isinstance(gpus, bool) or gpus < 1:
        raise SpecError(f"{where}: [run] gpus must be a whole number >= 1")

    seen_in = meta.get("seen_in", [])
    if not isinstance(seen_in, list) or not all(isinstance(u, str) for u in seen_in):
        raise SpecError(f"{where}: seen_in must be a list of links")

    return CaseSpec(slug=slug, path=path, title=title, category=category, defect=defect,
                    summary=summary, launcher=launcher, expect=expect, skip_reason=skip_reason,
                    rtol=float(rtol), atol=float(atol), deterministic=deterministic, calls=calls,
                    trials=trials, timeout=timeout, sizes=size_map, seen_in=seen_in,
                    triggers=triggers, calibration=calibration, gpus=gpus,
                    sanitizer_sizes=sanitizer, bench=bench, raw=meta)


def load_spec(path: Path) -> CaseSpec:
    """Read and check ``path/case.toml``; raise SpecError with a one-line message."""
    slug = path.name
    if not SLUG_RE.match(slug):
        raise SpecError(f"cases/{slug}: the slug must be lowercase words joined by '-'")
    for f in REQUIRED_FILES:
        if not (path / f).is_file():
            raise SpecError(f"cases/{slug}/{f}: missing (every case needs {', '.join(REQUIRED_FILES)})")
    try:
        meta = tomllib.loads((path / "case.toml").read_text())
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"cases/{slug}/case.toml: not valid TOML ({e})") from None
    return parse_spec(slug, path, meta)
