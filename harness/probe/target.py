"""The user's probe file: a launcher, ``make_inputs(*, device, gen, **sizes)``, ``reference(...)``.

What the launcher returns, and what ``reference`` must return to match it (in float64):

- one tensor (or a number): one tensor of the same shape;
- a tuple or list of tensors: a tuple or list of as many, in the same order; a dict: a dict
  with the same keys (nested ones too). Each is compared with the tolerance of its own dtype;
  a message names the part that differs (``[1]``, ``'count'``); numbers count as tensors;
- None (an in-place launcher): its result is the inputs it changed. ``reference`` returns the
  expected value of the changed input, a tensor, when the launch changes one input; when it
  changes several, a dict ``{input name: tensor}`` of each one that is a result (the
  inputs named there are compared, whether they changed or not). With a tensor, the input
  compared is the one the launch changed (of the reference's size, when it changed several;
  when it changed none, the one input of the reference's shape).

The sizes are make_inputs' integer keywords: a float (``eps=1e-5``), bool or str keyword is
passed as it is and never fuzzed or scaled.

``--inputs OTHER.py`` takes make_inputs and reference (and the declarations) from
another file, so ``probe cases/<slug>/broken.py --inputs cases/<slug>/case.py`` probes a
case's kernel. Optional declarations, looked up in the inputs file, then the kernel file:

- ``SIZES = {"n": 10_003}``: the default sizes (else make_inputs' keyword defaults, else,
  when the inputs file sits in a case folder, its case.toml ``[sizes.<backend>]``);
- ``FUZZ = {"n": (1, 50_000)}``: the range of each size for shape fuzzing (else around
  the defaults);
- ``TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}``: else case.toml ``[compare]``, else by
  the output's dtype (``DTYPE_TOLERANCE``);
- ``DETERMINISTIC = False``: results may differ in their last bits between runs (float
  atomics); order dependence is then shown as information, not as a problem;
- ``GPU_SIZES = {"rows": 70_000}``: the sizes the kernel meets on a GPU (else a case
  folder's ``[sizes.gpu]``): under the interpreter, shape fuzzing checks each launch's
  grid at these sizes against CUDA's limits without running a program;
- ``SMALL_SIZES = {...}``: the sizes for the slow GPU tools, compute-sanitizer and
  Triton's sanitizers (else a case folder's ``[sizes.sanitizer]`` or ``[sizes.interpreter]``,
  else the default sizes; racecheck, the slowest, takes ``[sizes.interpreter]`` first).

A case folder's ``[run] gpus = 2`` makes the GPU backend unavailable (``Unavailable``,
not a failure) on a machine with fewer GPUs, and its ``[expect] <backend> = "skip"``
that backend everywhere.

Loading is done in the worker process (it imports the user's code) as ``python FILE`` would
run it from the user's working directory: the worker works in that directory, and the probe
file's folder comes first on ``sys.path`` (then the inputs file's, then the working directory),
so ``from mykernels import add`` finds the module beside the file and a relative data path
resolves where the user ran the command. Every problem with
the file is a ``TargetError`` with a one-line message: FUZZ naming a size make_inputs does not
take or a range that is not whole numbers from 0 to 2**40, DETERMINISTIC not True or False,
TOLERANCE not finite numbers >= 0 are refused, not guessed at.
"""

from __future__ import annotations

import inspect
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

# output dtype -> (rtol, atol) against the float64 reference; atol is for a reference of
# magnitude 1 and grows with it (``Target.tolerance_for``); integers and bools match exactly
DTYPE_TOLERANCE = {"float64": (1e-9, 1e-9), "float32": (1e-4, 1e-5), "float16": (5e-3, 1e-3),
                   "bfloat16": (3e-2, 1e-2),
                   **{t: (0.0, 0.0) for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                              "uint64", "bool")}}
DEFAULT_TOLERANCE = (1e-4, 1e-5)


class TargetError(Exception):
    """The probe file cannot be used: missing, raises at import, lacks a function."""


class Unavailable(TargetError):
    """The file is fine but cannot run on this backend here (it needs more GPUs)."""


@dataclass
class Target:
    path: Path
    kernel: object  # the kernel's module
    inputs: object  # the module with make_inputs and reference
    launcher: object
    launcher_name: str
    make_inputs: object
    reference: object
    sizes: dict
    ranges: dict = field(default_factory=dict)
    tolerance: tuple | None = None  # (rtol, atol), None: by dtype
    deterministic: bool | None = None  # None: not declared
    case_dir: Path | None = None
    gpu_sizes: dict | None = None  # GPU_SIZES, else [sizes.gpu]: the grid-limit check's sizes
    small_sizes: dict | None = None  # SMALL_SIZES, else [sizes.sanitizer] / [sizes.interpreter]
    smallest_sizes: dict | None = None  # SMALL_SIZES, else [sizes.interpreter] / [sizes.sanitizer] (racecheck)

    def tolerance_for(self, dtype, ref=None) -> tuple:
        """(rtol, atol) for an output of ``dtype`` against the reference ``ref``: the declared
        TOLERANCE (or case.toml ``[compare]``) as it is; else ``DTYPE_TOLERANCE``'s, with atol
        times ``magnitude(ref)``. See ``magnitude`` for why."""
        if self.tolerance is not None:
            return self.tolerance
        rtol, atol = DTYPE_TOLERANCE.get(str(dtype).replace("torch.", ""), DEFAULT_TOLERANCE)
        return rtol, atol * magnitude(ref) if ref is not None and atol else atol


def magnitude(ref) -> float:
    """The scale of a reference: the root mean square of its finite elements, at least 1.

    An element is wrong when ``|out - ref| > atol + rtol * |ref|``. The relative term covers
    the rounding of the element itself; the absolute one covers elements near 0, whose error
    is not proportional to their own value but to the values they were computed from: a
    difference, a centred value, a sum that cancels (float32 values of order 100 that cancel
    leave ~1e-5 of rounding where the float64 reference has an exact 0).
    Those values are of the order of the output's typical magnitude, which the RMS of the
    reference estimates (the mean of squares: one large outlier does not set it alone, as the
    maximum would). So the dtype's atol, stated for data of magnitude 1, is multiplied by the
    RMS where that is above 1 and never made stricter below it. A reference that is 0
    everywhere has nothing to scale by: a kernel's rounding against it is judged as before.
    """
    import torch

    if not isinstance(ref, torch.Tensor) or not ref.numel():
        return 1.0
    r = ref.detach().double()
    r = r[torch.isfinite(r)]
    return max(1.0, float(r.square().mean().sqrt())) if r.numel() else 1.0


def _import(path: Path, name: str):
    from harness.core.discovery import import_file

    if not path.is_file():
        raise TargetError(f"{path}: no such file")
    try:
        return import_file(path.resolve(), name)
    except (Exception, SystemExit) as e:  # a SystemExit in the user's file too (not the worker's own timeout)
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise TargetError(f"{path}: raised {type(e).__name__} at import{': ' + first if first else ''}") from None


def _case_toml(inputs_path: Path) -> dict:
    toml = inputs_path.resolve().parent / "case.toml"
    if not toml.is_file():
        return {}
    try:
        return tomllib.loads(toml.read_text())
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def _declared(name: str, *modules):
    for m in modules:
        if hasattr(m, name):
            return getattr(m, name)
    return None


def _default_sizes(make_inputs, declared, meta: dict, backend: str) -> dict:
    if declared is not None:
        if not isinstance(declared, dict):
            raise TargetError("SIZES must be a dict of make_inputs arguments")
        return dict(declared)
    params = inspect.signature(make_inputs).parameters
    own = {k: p.default for k, p in params.items()
           if k not in ("device", "gen") and p.default is not inspect.Parameter.empty}
    wanted = [k for k, p in params.items() if k not in ("device", "gen") and p.kind != p.VAR_KEYWORD]
    sizes = {**meta.get("sizes", {}).get(backend, {}), **own} if meta else own
    if missing := [k for k in wanted if k not in sizes]:
        raise TargetError(f"make_inputs needs {', '.join(missing)}: give them defaults or declare SIZES = {{...}}")
    return {k: v for k, v in sizes.items() if k in wanted or any(p.kind == p.VAR_KEYWORD for p in params.values())}


def enter_user_folders(paths, cwd: str | None) -> None:
    """Work where the user ran the command, the files' folders first on ``sys.path`` (then ``cwd``,
    as ``python -m`` puts it); TargetError in one line when that directory cannot be entered."""
    import os
    import sys

    if cwd:
        try:
            os.chdir(cwd)
        except OSError as e:
            raise TargetError(f"cannot work in your working directory {cwd}: {e.strerror or e}") from None
    first = [str(Path(p).resolve().parent) for p in paths if p] + ([os.path.abspath(cwd)] if cwd else [])
    for folder in reversed(list(dict.fromkeys(first))):
        if folder in sys.path:
            sys.path.remove(folder)
        sys.path.insert(0, folder)


def load(path: str, inputs: str | None = None, launcher: str = "launch", backend: str = "interpreter",
         cwd: str | None = None) -> Target:
    """Import the probe file (and the inputs file) and check the contract; TargetError if not met.
    ``cwd``: the user's working directory, to work in (``enter_user_folders``)."""
    enter_user_folders([path, inputs], cwd)
    kpath = Path(path)
    kernel = _import(kpath, "casebook_probe_kernel")
    ipath = Path(inputs) if inputs else kpath
    mod = _import(ipath, "casebook_probe_inputs") if inputs else kernel
    fn = getattr(kernel, launcher, None)
    if not callable(fn):
        raise TargetError(f"{kpath}: defines no launcher '{launcher}' (name it with --launcher NAME)")
    for name in ("make_inputs", "reference"):
        if not callable(getattr(mod, name, None)):
            raise TargetError(f"{ipath}: defines no {name}() (or take it from another file with --inputs FILE)")
    meta = _case_toml(ipath) if inputs else {}
    sizes = _default_sizes(mod.make_inputs, _declared("SIZES", mod, kernel), meta, backend)
    tol = _declared("TOLERANCE", mod, kernel)
    cmp_ = meta.get("compare", {})
    if tol is None and "rtol" in cmp_:
        tol = {"rtol": cmp_["rtol"], "atol": cmp_.get("atol", 0.0)}
    det = _declared("DETERMINISTIC", mod, kernel)
    if det is None and meta:  # a case folder's default is the spec's (false); a file of one's own: undeclared
        det = cmp_.get("deterministic", False)
    if det is not None and not isinstance(det, bool):
        raise TargetError(f"DETERMINISTIC must be True or False, got {det!r}"[:200])
    ranges = _ranges(_declared("FUZZ", mod, kernel), mod.make_inputs, sizes)
    _check_gpus(meta, backend)
    return Target(kpath, kernel, mod, fn, launcher, mod.make_inputs, mod.reference, sizes, ranges,
                  _tolerance(tol), det,
                  ipath.resolve().parent if meta else None,
                  _other_sizes("GPU_SIZES", ("gpu",), sizes, meta, mod, kernel),
                  _other_sizes("SMALL_SIZES", ("sanitizer", "interpreter"), sizes, meta, mod, kernel),
                  _other_sizes("SMALL_SIZES", ("interpreter", "sanitizer"), sizes, meta, mod, kernel))


MAX_SIZE = 1 << 40  # the largest size FUZZ may name: past it, make_inputs could never allocate


def takes(make_inputs, name: str) -> bool:
    """Whether ``make_inputs`` takes the keyword ``name`` (any, with ``**sizes``)."""
    params = inspect.signature(make_inputs).parameters
    return name in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def check_sizes(make_inputs, sizes: dict, what: str = "--sizes") -> None:
    """TargetError naming the first size ``make_inputs`` does not take."""
    if bad := [k for k in sizes if k in ("device", "gen") or not takes(make_inputs, k)]:
        known = [k for k in inspect.signature(make_inputs).parameters if k not in ("device", "gen")]
        raise TargetError(f"{what} names {bad[0]}, which make_inputs does not take (it takes "
                          f"{', '.join(known) or 'no sizes'})"[:300])


def _whole(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_SIZE


def _ranges(declared, make_inputs, sizes: dict) -> dict:
    """``FUZZ`` checked: {size: (low, high)}, each a whole number from 0 to MAX_SIZE (or None, open)
    and low <= high; an int pins that size."""
    if declared is None:
        return {}
    if not isinstance(declared, dict):
        raise TargetError(f"FUZZ must be a dict {{size: (low, high)}}, got {type(declared).__name__}")
    check_sizes(make_inputs, {k: v for k, v in declared.items() if k not in sizes}, "FUZZ")
    out = {}
    for k, r in declared.items():
        r = (r, r) if _whole(r) else tuple(r) if isinstance(r, (tuple, list)) else None
        if r is None or len(r) != 2 or not all(x is None or _whole(x) for x in r) or \
                (None not in r and r[0] > r[1]):
            raise TargetError(f"FUZZ[{k!r}] must be a whole number or a (low, high) pair of whole numbers from "
                              f"0 to 2**40 with low <= high, got {declared[k]!r}"[:300])
        out[k] = r
    return out


def _tolerance(tol) -> tuple | None:
    """``TOLERANCE`` (or case.toml's) checked: (rtol, atol), each a finite number >= 0."""
    import math

    if tol is None:
        return None
    try:
        rtol, atol = float(tol["rtol"]), float(tol["atol"])
    except (TypeError, KeyError, ValueError, IndexError):
        raise TargetError(f"TOLERANCE must be {{'rtol': number, 'atol': number}}, got {tol!r}"[:300]) from None
    if not all(math.isfinite(x) and x >= 0 for x in (rtol, atol)):
        raise TargetError(f"TOLERANCE's rtol and atol must be finite numbers >= 0, got {tol!r}"[:300])
    return rtol, atol


def _other_sizes(name: str, sections: tuple, sizes: dict, meta: dict, *modules) -> dict | None:
    """Declared ``name``, else the first of the case.toml ``[sizes.<section>]`` there is, over the
    default sizes (only the keys those have); None when there is neither."""
    declared = _declared(name, *modules)
    if declared is not None and not isinstance(declared, dict):
        raise TargetError(f"{name} must be a dict of make_inputs arguments")
    found = declared if declared is not None else next(
        (meta["sizes"][s] for s in sections if meta and meta.get("sizes", {}).get(s)), None)
    if found is None:
        return None
    return {**sizes, **{k: v for k, v in found.items() if k in sizes}}


def _check_gpus(meta: dict, backend: str) -> None:
    """``Unavailable`` when the case folder declares this backend ``skip`` (its reason said), or its
    ``[run] gpus`` is more than this machine has."""
    expect = (meta.get("expect") or {}) if meta else {}
    if expect.get(backend) == "skip":
        why = expect.get(f"{backend}_skip_reason", "")
        raise Unavailable(f"the case declares {backend} = \"skip\"{': ' + why if why else ''}"[:300])
    need = (meta.get("run") or {}).get("gpus", 1) if meta else 1
    if backend != "gpu" or not isinstance(need, int) or need <= 1:
        return
    from harness.run.backends import gpu_count

    if (have := gpu_count()) < need:
        raise Unavailable(f"needs {need} GPUs (case.toml [run] gpus = {need}); this machine has {have}")
