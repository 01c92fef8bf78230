"""A bug entry's upstream code: the released package, fetched from the registry at run time.

The casebook never holds another project's kernels. An entry's ``bug.toml`` names the
package and the two versions (``[buggy]``, ``[fixed]``) and the files the kernel needs
(``[source] module``, ``files``); ``fetch`` runs ``pip download --no-deps`` for one
version into a temporary folder, takes only those files out of the wheel (or source
distribution), gives every parent folder an empty ``__init__.py`` where the entry does
not ask for the real one (a package's top-level import often needs a GPU, compiled
extensions or half of PyPI), and renames the result into the cache in one step:

    <cache>/<package>-<version>/<the files, at their paths in the package>
    <cache>/<package>-<version>/FETCHED.json    what was taken from which file, its sha256

The cache is ``CASEBOOK_BUG_CACHE``, else ``$XDG_CACHE_HOME/triton-casebook/bugs`` (else
``~/.cache/...``). A machine with no registry (the GPU machine) is given a filled cache.

``load(glue_file, variant)`` is what an entry's probe glue calls inside the probe's
worker: the version's folder goes first on ``sys.path`` and the module is imported by
its dotted name, so its own absolute and relative imports of the listed files work.
One process loads one variant (the probe runs each launcher in processes of its own).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import types
import zipfile
from pathlib import Path

from harness.errors import UsageError
from harness.run.patching import Patcher
from harness.run.triton_compat import interpreter_fixes  # noqa: F401  (for the glue: one import)

FETCH_TIMEOUT = 900.0


class SourceError(UsageError):
    """The upstream code could not be had: the message is one line (why, and what was tried)."""


class UpstreamImportError(SourceError):
    """The upstream module was fetched but does not import here (a missing dependency, an API
    this Triton lacks). Raised inside the launcher, so the probe reports it as the launcher's
    exception; the scoreboard turns a finding that names it into "could not run"."""


def cache_root() -> Path:
    if env := os.environ.get("CASEBOOK_BUG_CACHE"):
        return Path(env).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "triton-casebook" / "bugs"


def folder(package: str, version: str) -> Path:
    return cache_root() / f"{package}-{version}"


def fetched(package: str, version: str, files: list = ()) -> bool:
    """Whether the cache holds ``package==version`` with every one of ``files``."""
    try:
        have = json.loads((folder(package, version) / "FETCHED.json").read_text())["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return all(f in have for f in files)


def _had(package: str, version: str) -> list:
    """The files an earlier fetch took (a new fetch takes them again, with the new ones)."""
    try:
        return list(json.loads((folder(package, version) / "FETCHED.json").read_text())["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _download(package: str, version: str, into: Path, pip_args: list, pip_env: dict | None = None) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--quiet",
           "-d", str(into), f"{package}=={version}", *pip_args]
    if not any(a.startswith(("--only-binary", "--no-binary")) for a in pip_args):
        cmd.append("--only-binary=:all:")
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=FETCH_TIMEOUT, stdin=subprocess.DEVNULL,
                              env={**os.environ, **(pip_env or {})})
    except subprocess.TimeoutExpired:
        raise SourceError(f"pip download {package}=={version}: no answer in {FETCH_TIMEOUT:.0f}s") from None
    if done.returncode:
        lines = [x for x in (done.stderr + done.stdout).splitlines() if x.strip()]
        why = next((x for x in lines if x.lstrip().startswith(("ERROR", "error:"))), None) \
            or next((x for x in reversed(lines) if "Error" in x), lines[-1] if lines else f"exit {done.returncode}")
        raise SourceError(f"pip download {package}=={version} failed: {why.strip()[:240]}")
    got = [p for p in into.iterdir() if p.suffix in (".whl", ".gz", ".zip", ".bz2")]
    if len(got) != 1:
        raise SourceError(f"pip download {package}=={version} gave {len(got)} files, not one")
    return got[0]


def _members(archive: Path) -> dict[str, object]:
    """path inside the archive -> a reader of its bytes."""
    if archive.suffix == ".whl" or archive.suffix == ".zip":
        z = zipfile.ZipFile(archive)
        return {n: (lambda n=n: z.read(n)) for n in z.namelist() if not n.endswith("/")}
    t = tarfile.open(archive)
    return {m.name: (lambda m=m: t.extractfile(m).read()) for m in t.getmembers() if m.isfile()}


def _find(members: dict, want: str) -> str | None:
    """The archive's path for ``want`` (a path inside the package): itself in a wheel, under a
    source distribution's top folder (and its src/ layout) otherwise."""
    if want in members:
        return want
    hits = sorted((n for n in members if n.endswith("/" + want)), key=len)
    return hits[0] if hits else None


def _extract(archive: Path, files: list, into: Path) -> dict:
    members = _members(archive)
    taken = {}
    for want in files:
        name = _find(members, want)
        if name is None:
            raise SourceError(f"{archive.name} has no {want}")
        data = members[name]()
        out = into / want
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        taken[want] = hashlib.sha256(data).hexdigest()
    for want in files:  # packages: an empty __init__.py where the entry did not ask for the real one
        parent = (into / want).parent
        while parent != into:
            (parent / "__init__.py").touch(exist_ok=True)
            parent = parent.parent
    return taken


def fetch(package: str, version: str, files: list, pip_args: list | None = None, pip_env: dict | None = None) -> Path:
    """The cached folder of ``package==version`` holding ``files``; downloaded once (a lock per
    version, so parallel runs wait for one download), put in place whole or not at all."""
    dest = folder(package, version)
    if fetched(package, version, files):
        return dest
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".lock-{package}-{version}", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if fetched(package, version, files):
            return dest
        files = sorted(set(files) | set(_had(package, version)))
        with tempfile.TemporaryDirectory(prefix=f".{package}-{version}.", dir=root) as tmp:
            tmp = Path(tmp)
            archive = _download(package, version, tmp / "download", list(pip_args or []), pip_env)
            tree = tmp / "tree"
            tree.mkdir()
            taken = _extract(archive, list(files), tree)
            (tree / "FETCHED.json").write_text(json.dumps(
                {"package": package, "version": version, "from": archive.name,
                 "sha256": hashlib.sha256(archive.read_bytes()).hexdigest(), "files": taken}, indent=1) + "\n")
            shutil.rmtree(dest, ignore_errors=True)  # a folder left without FETCHED.json is incomplete
            os.replace(tree, dest)
    return dest


def _stub(name: str, attrs: dict) -> None:
    """``sys.modules[name]``: a module with ``attrs``. Its parents are the real ones where they
    can be found (the cache's folder is on ``sys.path`` by then), stub packages otherwise."""
    import importlib.machinery
    import importlib.util

    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        sub = ".".join(parts[:i])
        if sub in sys.modules and i < len(parts):
            continue
        found = i < len(parts) and importlib.util.find_spec(sub) is not None
        mod = importlib.import_module(sub) if found else types.ModuleType(sub)
        if not found:
            mod.__path__ = []  # a package, so children can be stubbed too
            # a spec, as an imported module has: importlib.util.find_spec(name) on a module in
            # sys.modules without one raises ValueError ("psutil.__spec__ is None"), where glue asks
            # whether an optional dependency is installed
            mod.__spec__ = importlib.machinery.ModuleSpec(sub, None, is_package=True)
            sys.modules[sub] = mod
        if i > 1:
            setattr(sys.modules[".".join(parts[:i - 1])], parts[i - 1], mod)
    for k, v in attrs.items():
        setattr(sys.modules[name], k, v)


_LOADED: dict[str, str] = {}  # top-level package name -> the folder it was loaded from, in this process


def load(glue_file: str, variant: str, *, stubs: dict | None = None):
    """Import the entry's upstream module for ``variant`` ("buggy" or "fixed") from the cache,
    fetching it first if need be. ``stubs``: {module name: {attribute: value}} put in
    ``sys.modules`` first, for imports of the package that the kernel does not need."""
    from harness.bugs.manifest import read

    entry = read(Path(glue_file).resolve().parent)
    side = entry.side(variant)
    module, files = entry.module_of(variant)
    where = fetch(side["package"], side["version"], files, entry.pip_args, entry.pip_env)
    top = module.split(".")[0]
    if _LOADED.get(top, str(where)) != str(where):
        raise SourceError(f"{top} from {_LOADED[top]} is already loaded in this process: one variant a process")
    _LOADED[top] = str(where)
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))
    importlib.invalidate_caches()
    for name, attrs in (stubs or {}).items():
        _stub(name, attrs)
    try:
        return importlib.import_module(module)
    except Exception as e:  # noqa: BLE001  (whatever the upstream module raises at import)
        from harness.errors import error_line

        raise UpstreamImportError(f"cannot import {module} from {side['package']}=={side['version']}: "
                                  f"{error_line(e)}") from e


@contextlib.contextmanager
def cuda_device_on_cpu():
    """Under the interpreter (no CUDA), ``torch.cuda.device(...)``, which many launchers enter
    around their launch, is a no-op context; where CUDA is available nothing changes."""
    import torch

    with Patcher() as patcher:
        if not torch.cuda.is_available():
            patcher.setattr(torch.cuda, "device", lambda *_a, **_k: contextlib.nullcontext())
        yield


@contextlib.contextmanager
def cuda_accelerator_at_import():
    """Under the interpreter (no accelerator), ``torch.accelerator.current_accelerator()`` answers
    cuda while a module that asks at import time is imported; with an accelerator nothing changes."""
    import torch

    with Patcher() as patcher:
        if torch.accelerator.current_accelerator() is None:
            patcher.setattr(torch.accelerator, "current_accelerator", lambda *_a, **_k: torch.device("cuda"))
        yield
