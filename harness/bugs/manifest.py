"""A real-bug entry: ``bugs/<slug>/bug.toml`` read and checked, every problem one line.

What the file holds (``bugs/README.md`` has the whole format and an example):

- who and what: ``title``, ``project``, ``repository``, ``licence``, ``summary`` (our own
  words), ``kind`` ("released": the project's own code from the registry; "reproduction":
  our code with the same mechanism, where no release carries the bug);
- the trap: ``category``, ``defect`` and ``triggers`` from the casebook's taxonomy
  (``harness.core.spec``), ``case`` (the casebook case that teaches it, or ""),
  ``shows_on`` (the backends where the buggy version gives a wrong result; [] for a fix
  that changed no output);
- ``[links]`` ``fix`` (the fix's commit or pull request) and ``issue`` (or "");
- ``[buggy]`` and ``[fixed]``: ``package`` and ``version`` (released), or ``commit``
  (reproduction: where the two sides stand upstream); a version's own ``module`` and
  ``files`` where the file moved between the two releases;
- ``[source]`` (released): ``module`` (dotted), ``files`` (paths inside the package; the
  module's own file by default), ``kernel``, ``pip_args``, ``pip_env`` (environment for pip:
  a source distribution's setup.py may need ``MAMBA_SKIP_CUDA_BUILD = "TRUE"`` to say its
  metadata without a CUDA toolkit);
- ``[verify]``: ``sizes`` (make_inputs keywords at which the bug shows), ``detector``
  (the probe detector that must see it: "reference" by default, "memcheck" for an
  out-of-bounds access that changes no output), ``ci`` (false: too heavy to download or
  run in CI, which verifies the other interpreter-visible entries), ``severity`` ("warning" for
  a bug that is the kernel relying on values Triton leaves undefined, which today's GPUs happen to
  make harmless: the probe's warning from the detector is the catch; "error" by default);
- ``[[fixed_known]]``: a finding the probe makes on the fixed version that is true (another
  defect the fix left in place, shown by the float64 reference or an access out of bounds):
  ``code``, ``why``, ``detector``, ``match`` (a piece of its message), ``sizes``, ``backends``.
  The scoreboard counts it as a true finding on the fixed version, not a false alarm, when
  every error the probe reports there is one of these.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.spec import CATEGORIES, DEFECTS, TRIGGERS
from harness.errors import UsageError

SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
KINDS = ("released", "reproduction")
BACKENDS = ("interpreter", "gpu")
VARIANTS = ("buggy", "fixed")
VERIFY_DETECTORS = ("reference", "memcheck", "race", "guards", "shapes", "repeat", "first-call", "order",
                    "compute-sanitizer", "triton-debug")
RESERVED = ("liger", "unsloth", "flaggems", "flash-linear-attention", "fla-org", "kernl", "attorch", "tritonbench",
            "lightllm", "lmdeploy", "sageattention", "dao-ailab")


class ManifestError(UsageError):
    """A bug.toml that cannot be used: one line, naming the file."""


@dataclass
class Entry:
    slug: str
    path: Path
    title: str
    project: str
    repository: str
    licence: str
    kind: str
    category: str
    defect: str
    case: str
    triggers: list
    shows_on: list
    summary: str
    links: dict
    buggy: dict
    fixed: dict
    module: str = ""
    files: list = field(default_factory=list)
    kernel: str = ""
    pip_args: list = field(default_factory=list)
    pip_env: dict = field(default_factory=dict)
    verify: dict = field(default_factory=dict)
    fixed_known: list = field(default_factory=list)  # what the fixed version really gets wrong ([[fixed_known]])

    @property
    def glue(self) -> Path:
        return self.path / "probe.py"

    def side(self, variant: str) -> dict:
        if variant not in VARIANTS:
            raise ManifestError(f"{self.path / 'bug.toml'}: no variant '{variant}' (there are buggy and fixed)")
        return self.buggy if variant == "buggy" else self.fixed

    def module_of(self, variant: str) -> tuple[str, list]:
        """The module and files of one version: [source]'s, unless that version's table names its
        own (a file that moved between the two releases)."""
        side = self.side(variant)
        module = side.get("module", self.module)
        files = side.get("files", self.files if "module" not in side else [module.replace(".", "/") + ".py"])
        return module, list(files)

    def launcher(self, variant: str) -> str:
        return f"launch_{variant}"

    def verify_sizes(self, backend: str) -> dict:
        return dict(self.verify.get(f"{backend}_sizes") or self.verify.get("sizes") or {})

    def to_json(self) -> dict:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in self.__dict__.items()}


def _need(meta: dict, key: str, kind, where: str):
    if key not in meta:
        raise ManifestError(f"{where}: '{key}' is missing")
    value = meta[key]
    if not isinstance(value, kind):
        raise ManifestError(f"{where}: '{key}' must be {getattr(kind, '__name__', kind)}")
    return value


def _words(value: list, vocab, what: str, where: str) -> list:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError(f"{where}: {what} must be a list of strings")
    if bad := [v for v in value if v not in vocab]:
        raise ManifestError(f"{where}: {what} '{bad[0]}' is not one of {', '.join(vocab)}")
    return value


def _sides(meta: dict, kind: str, where: str) -> tuple[dict, dict]:
    out = []
    for variant in VARIANTS:
        side = _need(meta, variant, dict, where)
        keys = ("package", "version") if kind == "released" else ("commit",)
        for k in keys:
            if not isinstance(side.get(k), str) or not side[k].strip():
                raise ManifestError(f"{where}: [{variant}] needs {k} (a string) for a {kind} entry")
        if "module" in side and not (isinstance(side["module"], str) and
                                     re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", side["module"])):
            raise ManifestError(f"{where}: [{variant}] module must be a dotted module name")
        if "files" in side and not (isinstance(side["files"], list) and side["files"]
                                    and all(isinstance(f, str) and not f.startswith("/") and ".." not in Path(f).parts
                                            for f in side["files"])):
            raise ManifestError(f"{where}: [{variant}] files must be a list of paths inside the package")
        out.append(dict(side))
    if kind == "released" and (out[0]["package"], out[0]["version"]) == (out[1]["package"], out[1]["version"]):
        raise ManifestError(f"{where}: [buggy] and [fixed] name the same package version")
    return out[0], out[1]


def _source(meta: dict, kind: str, where: str) -> dict:
    src = meta.get("source", {})
    if not isinstance(src, dict):
        raise ManifestError(f"{where}: [source] must be a table")
    if kind != "released":
        return {"kernel": str(src.get("kernel", ""))}
    module = _need(src, "module", str, f"{where} [source]")
    if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", module):
        raise ManifestError(f"{where}: [source] module '{module}' is not a dotted module name")
    files = src.get("files", [module.replace(".", "/") + ".py"])
    if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
        raise ManifestError(f"{where}: [source] files must be a list of paths inside the package")
    if bad := [f for f in files if f.startswith("/") or ".." in Path(f).parts]:
        raise ManifestError(f"{where}: [source] file '{bad[0]}' is not a path inside the package")
    pip_args = src.get("pip_args", [])
    if not isinstance(pip_args, list) or not all(isinstance(a, str) for a in pip_args):
        raise ManifestError(f"{where}: [source] pip_args must be a list of strings")
    pip_env = src.get("pip_env", {})
    if not isinstance(pip_env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in pip_env.items()):
        raise ManifestError(f"{where}: [source] pip_env must be a table of strings")
    return {"module": module, "files": files, "kernel": str(src.get("kernel", "")), "pip_args": pip_args,
            "pip_env": pip_env}


def _verify(meta: dict, where: str) -> dict:
    v = meta.get("verify", {})
    if not isinstance(v, dict):
        raise ManifestError(f"{where}: [verify] must be a table")
    for key in ("sizes", "interpreter_sizes", "gpu_sizes"):
        sizes = v.get(key, {})
        if not isinstance(sizes, dict) or not all(isinstance(x, (int, float, str, bool)) for x in sizes.values()):
            raise ManifestError(f"{where}: [verify] {key} must be a table of make_inputs arguments")
    if not isinstance(v.get("ci", True), bool):
        raise ManifestError(f"{where}: [verify] ci must be true or false")
    det = v.get("detector", "reference")
    if det not in VERIFY_DETECTORS:
        raise ManifestError(f"{where}: [verify] detector '{det}' is not one of {', '.join(VERIFY_DETECTORS)}")
    if v.get("severity", "error") not in ("error", "warning"):
        raise ManifestError(f"{where}: [verify] severity must be \"error\" or \"warning\"")
    return {**v, "detector": det, "severity": v.get("severity", "error")}


def _fixed_known(meta: dict, where: str) -> list:
    """``[[fixed_known]]`` (or one ``[fixed_known]`` table): findings the probe makes on the fixed
    version that are true, shown to be (another defect the fix left in place, not this bug):
    ``code`` (P101...), ``why`` (one line: what is wrong and how it was shown), and to match the
    finding, ``detector`` and ``match`` (a piece of its message); ``sizes`` (where it shows) and
    ``backends`` (where the probe makes it; both by default)."""
    raw = meta.get("fixed_known", [])
    items = [raw] if isinstance(raw, dict) else raw
    if not isinstance(items, list) or not all(isinstance(k, dict) for k in items):
        raise ManifestError(f"{where}: [[fixed_known]] must be tables")
    out = []
    for k in items:
        if not re.fullmatch(r"P\d{3}", str(k.get("code", ""))):
            raise ManifestError(f"{where}: [[fixed_known]] code must be a finding code such as P401")
        if not isinstance(k.get("why"), str) or not k["why"].strip():
            raise ManifestError(f"{where}: [[fixed_known]] why must say what the fixed version gets wrong")
        for key in ("detector", "match"):
            if not isinstance(k.get(key, ""), str):
                raise ManifestError(f"{where}: [[fixed_known]] {key} must be a string")
        if not isinstance(k.get("sizes", {}), dict):
            raise ManifestError(f"{where}: [[fixed_known]] sizes must be a table of make_inputs arguments")
        backends = _words(k.get("backends", list(BACKENDS)), BACKENDS, "[[fixed_known]] backend", where)
        out.append({"code": k["code"], "why": " ".join(k["why"].split()), "detector": k.get("detector", ""),
                    "match": k.get("match", ""), "sizes": dict(k.get("sizes", {})), "backends": backends})
    return out


def read(folder: Path) -> Entry:
    """The entry in ``folder`` (its bug.toml and probe.py), checked; ManifestError if not usable."""
    folder = Path(folder)
    where = str(folder / "bug.toml")
    if not SLUG_RE.match(folder.name) or len(folder.name) > 64:
        raise ManifestError(f"{folder}: an entry's folder name is lower-case words joined by '-'")
    try:
        meta = tomllib.loads((folder / "bug.toml").read_text())
    except FileNotFoundError:
        raise ManifestError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ManifestError(f"{where}: {' '.join(str(e).split())}") from None
    strings = {k: _need(meta, k, str, where).strip()
               for k in ("title", "project", "repository", "licence", "kind", "category", "defect", "summary")}
    if strings["kind"] not in KINDS:
        raise ManifestError(f"{where}: kind '{strings['kind']}' is not one of {', '.join(KINDS)}")
    if strings["category"] not in CATEGORIES or strings["defect"] not in DEFECTS:
        bad = "category" if strings["category"] not in CATEGORIES else "defect"
        vocab = CATEGORIES if bad == "category" else DEFECTS
        raise ManifestError(f"{where}: {bad} '{strings[bad]}' is not one of {', '.join(sorted(vocab))}")
    if any(r in (strings["project"] + strings["repository"]).lower().replace("_", "-") for r in RESERVED):
        raise ManifestError(f"{where}: {strings['project']} is reserved for an independent evaluation")
    links = _need(meta, "links", dict, where)
    if not str(links.get("fix", "")).startswith("https://"):
        raise ManifestError(f"{where}: [links] fix must be the https link of the fix")
    buggy, fixed = _sides(meta, strings["kind"], where)
    src = _source(meta, strings["kind"], where)
    if not (folder / "probe.py").is_file():
        raise ManifestError(f"{folder}: no probe.py (launch_buggy, launch_fixed, make_inputs, reference)")
    return Entry(folder.name, folder, strings["title"], strings["project"], strings["repository"],
                 strings["licence"], strings["kind"], strings["category"], strings["defect"],
                 str(meta.get("case", "")), _words(meta.get("triggers", []), TRIGGERS, "trigger", where),
                 _words(meta.get("shows_on", []), BACKENDS, "shows_on", where), strings["summary"],
                 {k: str(v) for k, v in links.items()}, buggy, fixed, src.get("module", ""), src.get("files", []),
                 src.get("kernel", ""), src.get("pip_args", []), src.get("pip_env", {}), _verify(meta, where),
                 _fixed_known(meta, where))


def root() -> Path:
    import os

    return Path(os.environ.get("CASEBOOK_BUGS") or Path(__file__).resolve().parents[2] / "bugs")


def discover(base: Path | None = None) -> list[Path]:
    """Every entry folder (a folder holding a bug.toml), sorted."""
    base = base or root()
    return sorted(p.parent for p in base.glob("*/bug.toml"))
