"""What the peer-tool adapters (``harness.bugs.peer_*``) share: where each tool's virtual
environment is, its version, a command run with a timeout that leaves no process behind, and
the plain pytest file an author of the kernel would write for an entry's launcher.

Each tool lives in a virtual environment of its own, made by ``benchmarks/peers/setup.sh``
under ``$CASEBOOK_PEERS_DIR`` (default ``${XDG_CACHE_HOME:-~/.cache}/triton-casebook-peers``),
``<root>/<tool>/bin/python``. A tool whose environment is missing is a "could not run" row,
never a quiet one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SETUP = "benchmarks/peers/setup.sh"


def peers_root() -> Path:
    if env := os.environ.get("CASEBOOK_PEERS_DIR"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "triton-casebook-peers"


def venv_python(tool: str) -> Path:
    return peers_root() / tool / "bin" / "python"


def dist_version(tool: str, dist: str) -> str | None:
    """The version of ``dist`` installed in ``tool``'s environment (read from its metadata, no
    process), or None when the environment or the distribution is missing."""
    import importlib.metadata as md

    site = sorted((peers_root() / tool / "lib").glob("python3*/site-packages"))
    if not site:
        return None
    for d in md.distributions(path=[str(s) for s in site]):
        if (d.metadata["Name"] or "").lower().replace("_", "-") == dist.lower().replace("_", "-"):
            return d.version
    return None


def missing(tool: str, dist: str) -> dict | None:
    """The error row when ``tool``'s environment or its package is not there, else None."""
    py = venv_python(tool)
    if not py.exists():
        return {"error": f"could not run: {tool} is not installed (no {py}; run {SETUP} {tool})"}
    if dist_version(tool, dist) is None:
        return {"error": f"could not run: {dist} is not installed in {py.parent.parent} (run {SETUP} {tool})"}
    return None


@dataclass
class Done:
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    def tail(self, n: int = 300) -> str:
        lines = [x.strip() for x in (self.stderr + "\n" + self.stdout).splitlines() if x.strip()]
        return (lines[-1] if lines else f"exit {self.returncode}")[:n]


def run(cmd: list, *, env: dict, timeout: float, cwd: str | None = None) -> Done:
    """``cmd`` in a session of its own; at ``timeout`` the whole process group is killed, so
    nothing it started is left behind."""
    t0 = time.monotonic()
    proc = subprocess.Popen([str(c) for c in cmd], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    out, err, rc = "", "", None
    try:
        out, err = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        pass
    finally:
        try:  # the group too: a worker the tool forked, a pytest-xdist child
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if proc.poll() is None or rc is None:
            try:
                o, e = proc.communicate(timeout=10)
                out, err = out or o or "", err or e or ""
            except subprocess.TimeoutExpired:
                pass
    return Done(rc, out or "", err or "", time.monotonic() - t0)


def environment(extra: dict | None = None) -> dict:
    """The tool's environment: this repository on PYTHONPATH (the glue imports ``harness``),
    the same upstream-code cache and entries folder as here."""
    from harness.bugs import source

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "VIRTUAL_ENV", "TRITON_INTERPRET")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["CASEBOOK_BUG_CACHE"] = str(source.cache_root())
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra or {})
    return env


def fetch(entry) -> str:
    """The entry's upstream code into the cache (so the tool's python never has to download
    it); "" when there, else why not."""
    from harness.bugs import board

    return board.fetch_entry(entry)


# --- the generated test --------------------------------------------------------------------------

# pytest's hook, in a conftest.py beside the test: each phase's outcome as one JSON line, with
# the exception's type and text (the tools' findings are exceptions or lines on the output)
CONFTEST = '''\
import json, os
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call" or rep.outcome != "passed":
        row = {"when": rep.when, "outcome": rep.outcome, "type": "", "message": ""}
        if call.excinfo is not None:
            row["type"] = call.excinfo.typename
            row["message"] = " ".join(str(call.excinfo.value).split())[:800]
            row["frames"] = [str(e.path) for e in call.excinfo.traceback][-20:]
        if rep.outcome != "passed":  # what the test printed: a tool that reports by printing
            out = rep.capstdout or ""  # a report's head says what, its tail may be a long tree
            row["stdout"] = out if len(out) <= 12000 else out[:8000] + "\\n...\\n" + out[-4000:]
        with open(os.environ["CASEBOOK_PEER_RESULT"], "a") as f:
            f.write(json.dumps(row) + "\\n")
'''

TEST = '''\
"""The plain test of {launcher}: fresh inputs at the default sizes on {device!r}, the launcher
against the reference, allclose at the output dtype's tolerance. Generated for a peer tool."""
import importlib.util
import inspect
import sys

import pytest
import torch

GLUE = {glue!r}
LAUNCHER = {launcher!r}
DEVICE = {device!r}
DTYPE_TOLERANCE = {tolerances!r}
DEFAULT_TOLERANCE = {default_tolerance!r}
SIZES = {sizes!r}  # over the defaults: none for the plain test


def _glue():
    spec = importlib.util.spec_from_file_location("casebook_peer_glue", GLUE)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _call(fn, inputs):
    params = inspect.signature(fn).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return fn(**inputs)
    return fn(**{{k: v for k, v in inputs.items() if k in params}})


def _copy(inputs):
    return {{k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}}


def _default_sizes(mod):
    declared = getattr(mod, "SIZES", None)
    if isinstance(declared, dict):
        return {{**declared, **SIZES}}
    params = inspect.signature(mod.make_inputs).parameters
    return {{**{{k: p.default for k, p in params.items()
               if k not in ("device", "gen") and p.default is not inspect.Parameter.empty}}, **SIZES}}


@pytest.fixture
def case():
    mod = _glue()
    inputs = mod.make_inputs(device=DEVICE, gen=torch.Generator().manual_seed(0), **_default_sizes(mod))
    ref = _call(mod.reference, _copy(inputs))
    ref = ref.detach().to("cpu", torch.float64) if isinstance(ref, torch.Tensor) else torch.tensor(ref, dtype=torch.float64)
    tol = getattr(mod, "TOLERANCE", None)
    return mod, inputs, ref, (float(tol["rtol"]), float(tol["atol"])) if tol else None


def test_{launcher}(case):
    mod, inputs, ref, tol = case
    out = _call(getattr(mod, LAUNCHER), _copy(inputs))
    out = out if isinstance(out, torch.Tensor) else torch.as_tensor(out)
    rtol, atol = tol or DTYPE_TOLERANCE.get(str(out.dtype).replace("torch.", ""), DEFAULT_TOLERANCE)
    got = out.detach().to("cpu", torch.float64)
    assert got.numel() == ref.numel(), f"shape {{tuple(out.shape)}}, reference {{tuple(ref.shape)}}"
    got = got.reshape(ref.shape)
    ok = torch.isclose(got, ref, rtol=rtol, atol=atol, equal_nan=True)
    bad = int((~ok).sum())
    assert bad == 0, (f"{{bad}} of {{ok.numel()}} elements differ from the reference "
                      f"(rtol {{rtol}}, atol {{atol}}); max |diff| {{float((got - ref).abs().nan_to_num(float('inf')).max()):.4g}}")
'''


def write_test(folder: Path, entry, variant: str, device: str, sizes: dict | None = None) -> Path:
    """The test file (and its conftest) for ``entry``'s ``variant`` in ``folder``; ``sizes``
    (make_inputs keywords) over the defaults, none for the plain test."""
    from harness.core import fileio
    from harness.probe.target import DEFAULT_TOLERANCE, DTYPE_TOLERANCE

    launcher = entry.launcher(variant)
    fileio.write_text(folder / "conftest.py", CONFTEST)
    path = folder / f"test_{entry.slug.replace('-', '_')}_{variant}.py"
    fileio.write_text(path, TEST.format(glue=str(Path(entry.glue).resolve()), launcher=launcher, device=device,
                                        tolerances=dict(DTYPE_TOLERANCE), default_tolerance=tuple(DEFAULT_TOLERANCE),
                                        sizes=dict(sizes or {})))
    return path


def results(path: Path) -> list[dict]:
    try:
        return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    except (OSError, ValueError):
        return []


def verdict(rows: list[dict], done: Done, *, timeout: float, what: str) -> dict:
    """The common part of a pytest-run verdict: an error row for a run that could not reach the
    kernel (the glue, the inputs or the reference failed: a setup error; or the glue could not
    load the project's module, which it does inside the launcher), else ``{"call": row}``.
    ``what`` names the tool in messages."""
    if done.timed_out:
        return {"error": f"could not run: {what} did not finish in {timeout:.0f}s", "hung": True}
    setup = next((r for r in rows if r["when"] != "call" and r["outcome"] != "passed"), None)
    if setup is not None:
        return {"error": f"could not run: the test's setup failed under {what}: {setup['type']}: {setup['message']}"[:300]}
    call = next((r for r in rows if r["when"] == "call"), None)
    if call is None:
        return {"error": f"could not run: {what} ran no test ({done.tail()})"[:300]}
    if call["type"] in ("SourceError", "UpstreamImportError"):  # the glue could not load the project's module: not the kernel
        return {"error": f"could not run: under {what}, {call['message']}"[:300]}
    return {"call": call}


def short_path(path: str) -> str:
    """A frame's file without this machine's prefixes: ``triton/runtime/autotuner.py``,
    ``gemlite-0.4.8/gemlite/...``."""
    for mark in ("/site-packages/", "/triton-casebook/bugs/", "/bugs/"):
        if mark in path:
            return path.split(mark, 1)[1]
    return Path(path).name


def tempdir(tool: str):
    return tempfile.TemporaryDirectory(prefix=f"casebook-peer-{tool}-")
