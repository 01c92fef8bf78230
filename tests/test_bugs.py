"""The real-bug benchmark's machinery (harness/bugs): manifests, upstream code fetched into the
cache and loaded by path, verification, the scoreboard, and the same scoreboard from Ray tasks.

The entries themselves (bugs/) are checked by test_bugs_entries.py; here a fixture entry of our
own (tests/bugs_fixture/grid-floor-repro: a grid that rounds down) and fake wheels stand in, so
nothing here needs the network.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from harness.bugs import manifest, source

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "bugs_fixture"

RELEASED = textwrap.dedent('''\
    title = "t"
    project = "demo"
    repository = "https://github.com/example/demo"
    licence = "MIT"
    kind = "released"
    category = "bounds"
    defect = "out-of-bounds-read"
    triggers = ["tail"]
    shows_on = ["interpreter"]
    summary = "s"
    [links]
    fix = "https://github.com/example/demo/pull/1"
    [buggy]
    package = "demo-pkg"
    version = "1.0"
    [fixed]
    package = "demo-pkg"
    version = "1.1"
    [source]
    module = "demo.ops.kern"
    files = ["demo/ops/kern.py"]
    ''')


def _entry(tmp_path: Path, text: str = RELEASED, name: str = "demo-entry", glue: str = "x = 1\n") -> Path:
    d = tmp_path / "bugs" / name
    d.mkdir(parents=True)
    (d / "bug.toml").write_text(text)
    (d / "probe.py").write_text(glue)
    return d


def _wheel(path: Path, files: dict) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return path


@pytest.fixture
def fake_registry(tmp_path, monkeypatch):
    """``pip download`` replaced by copying a wheel made here; returns the calls made."""
    monkeypatch.setenv("CASEBOOK_BUG_CACHE", str(tmp_path / "cache"))
    calls = []

    def download(package, version, into, pip_args, pip_env=None):
        calls.append((package, version))
        into.mkdir(parents=True)
        return _wheel(into / f"demo_pkg-{version}-py3-none-any.whl", {
            "demo/__init__.py": "raise ImportError('the real top-level import needs a GPU')\n",
            "demo/ops/kern.py": f"VERSION = {version!r}\nfrom demo.ops import helper\n",
            "demo/ops/helper.py": "X = 1\n",
            "demo/other.py": "Y = 2\n"})

    monkeypatch.setattr(source, "_download", download)
    return calls


def test_fixture_manifest_reads():
    e = manifest.read(FIXTURE / "grid-floor-repro")
    assert (e.kind, e.defect, e.case, e.verify_sizes("interpreter")) == \
        ("reproduction", "unwritten-output", "grid-floor-division", {"n": 1000})


@pytest.mark.parametrize("change, message", [
    (('defect = "out-of-bounds-read"', 'defect = "oops"'), "defect 'oops' is not one of"),
    (('kind = "released"', 'kind = "maybe"'), "kind 'maybe'"),
    (('version = "1.1"', 'version = "1.0"'), "name the same package version"),
    (('project = "demo"', 'project = "Liger-Kernel"'), "reserved for an independent evaluation"),
    (('files = ["demo/ops/kern.py"]', 'files = ["../../etc/passwd"]'), "is not a path inside the package"),
    (('fix = "https://github.com/example/demo/pull/1"', 'fix = "see the log"'), "[links] fix"),
    (('title = "t"\n', ''), "'title' is missing"),
    (('shows_on = ["interpreter"]', 'shows_on = ["tpu"]'), "shows_on 'tpu'"),
    (('[source]', '[verify]\ndetector = "eyes"\n[source]'), "detector 'eyes'"),
    (('[source]', '[verify]\nseverity = "note"\n[source]'), "severity must be"),
    (('title = "t"', 'title = "t'), "bug.toml:"),
])
def test_bad_manifest_is_one_line(tmp_path, change, message):
    d = _entry(tmp_path, RELEASED.replace(*change))
    with pytest.raises(manifest.ManifestError) as e:
        manifest.read(d)
    assert message in str(e.value) and "\n" not in str(e.value) and str(d / "bug.toml") in str(e.value)


def test_entry_without_glue(tmp_path):
    d = _entry(tmp_path)
    (d / "probe.py").unlink()
    with pytest.raises(manifest.ManifestError, match="no probe.py"):
        manifest.read(d)


def test_fetch_takes_only_the_listed_files(fake_registry, tmp_path):
    where = source.fetch("demo-pkg", "1.0", ["demo/ops/kern.py"])
    got = sorted(str(p.relative_to(where)) for p in where.rglob("*") if p.is_file())
    assert got == ["FETCHED.json", "demo/__init__.py", "demo/ops/__init__.py", "demo/ops/kern.py"]
    assert (where / "demo" / "__init__.py").read_text() == ""  # the package's own is never run
    meta = json.loads((where / "FETCHED.json").read_text())
    assert meta["from"] == "demo_pkg-1.0-py3-none-any.whl" and list(meta["files"]) == ["demo/ops/kern.py"]
    assert source.fetch("demo-pkg", "1.0", ["demo/ops/kern.py"]) == where and fake_registry == [("demo-pkg", "1.0")]
    source.fetch("demo-pkg", "1.0", ["demo/ops/helper.py"])  # a file more: fetched again, the first kept
    assert fake_registry == [("demo-pkg", "1.0")] * 2
    assert (where / "demo/ops/kern.py").is_file() and (where / "demo/ops/helper.py").is_file()
    assert not [p for p in where.parent.iterdir() if p.name.startswith(".demo-pkg")]  # no temporary left


def test_fetch_of_a_missing_file_leaves_nothing(fake_registry):
    with pytest.raises(source.SourceError, match="has no demo/ops/nope.py"):
        source.fetch("demo-pkg", "1.0", ["demo/ops/nope.py"])
    assert not source.folder("demo-pkg", "1.0").exists()


def test_pip_failure_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("CASEBOOK_BUG_CACHE", str(tmp_path / "cache"))

    def fake_run(cmd, **kw):
        return subprocess.CompletedProcess(cmd, 1, "", "WARNING: x\nERROR: No matching distribution found for "
                                                       "demo-pkg==9.9\n")

    monkeypatch.setattr(source.subprocess, "run", fake_run)
    with pytest.raises(source.SourceError) as e:
        source.fetch("demo-pkg", "9.9", ["demo/ops/kern.py"])
    assert str(e.value) == ("pip download demo-pkg==9.9 failed: ERROR: No matching distribution found for "
                            "demo-pkg==9.9")


def test_load_imports_the_variant_from_the_cache(fake_registry, tmp_path, monkeypatch):
    d = _entry(tmp_path, RELEASED.replace('files = ["demo/ops/kern.py"]',
                                          'files = ["demo/ops/kern.py", "demo/ops/helper.py"]'))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(source, "_LOADED", {})
    for name in [m for m in sys.modules if m == "demo" or m.startswith("demo.")]:
        monkeypatch.delitem(sys.modules, name)
    try:
        mod = source.load(str(d / "probe.py"), "fixed", stubs={"demo.ops.extra": {"is_hip": lambda: False}})
        assert mod.VERSION == "1.1" and mod.helper.X == 1
        assert sys.modules["demo.ops.extra"].is_hip() is False
        with pytest.raises(source.SourceError, match="one variant a process"):
            source.load(str(d / "probe.py"), "buggy")
    finally:
        for name in [m for m in sys.modules if m == "demo" or m.startswith("demo.")]:
            del sys.modules[name]


def _cli(*args, env=None, timeout=600):
    import os

    return subprocess.run([sys.executable, "-m", "harness", "bugs", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def test_list_and_a_bad_entry(tmp_path):
    base = tmp_path / "bugs"
    shutil.copytree(FIXTURE / "grid-floor-repro", base / "grid-floor-repro")
    _entry(tmp_path, RELEASED.replace('licence = "MIT"\n', ''), name="no-licence")
    r = _cli("--list", env={"CASEBOOK_BUGS": str(base)})
    assert r.returncode == 2, r.stderr
    assert "grid-floor-repro" in r.stdout and "could not read" in r.stdout and "'licence' is missing" in r.stdout
    r = _cli("nope", env={"CASEBOOK_BUGS": str(base)})
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no entry nope" in r.stderr


def test_verify_and_record(tmp_path):
    base = tmp_path / "bugs"
    shutil.copytree(FIXTURE / "grid-floor-repro", base / "grid-floor-repro")
    r = _cli("--verify", "--backend", "interpreter", "--record", env={"CASEBOOK_BUGS": str(base)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "interpreter grid-floor-repro: verified" in r.stdout
    rec = json.loads((base / "grid-floor-repro" / "recorded" / "verify-interpreter.json").read_text())
    assert rec["verified"] and rec["buggy"]["caught"] and not rec["fixed"]["caught"]
    assert rec["env"]["device"].startswith("CPU") and rec["env"]["triton"] and rec["sizes"] == {"n": 1000}


def test_verification_is_made_without_the_probes_budget(monkeypatch):
    """Whether the bug shows at its trigger is asked of each version with no budget (a GPU's compilation of an
    autotuned launcher must not end the run before its answer, as the 20 s default did on an H200)."""
    from types import SimpleNamespace

    from harness.bugs import board

    seen = []
    monkeypatch.setattr(board, "fetch_entry", lambda e: "")
    monkeypatch.setattr(board, "probe_variant", lambda e, v, b, **kw: seen.append(kw["budget"]) or {"caught": v == "buggy"})
    entry = SimpleNamespace(slug="x", verify={"detector": "reference"}, verify_sizes=lambda b: {"n": 3})
    assert board.verify(entry, "gpu")["verified"] and seen == [0, 0]


def _stable(rows: list) -> list:
    """What must not change between two runs of the same tasks: verdicts, not seconds."""
    out = []
    for r in sorted(rows, key=lambda r: (r["slug"], r["variant"])):
        keep = {"slug": r["slug"], "variant": r["variant"], "error": r.get("error", "")[:40]}
        if "probe" in r and "error" not in r["probe"]:
            keep.update(caught=r["probe"]["caught"], codes=r["probe"]["codes"], diagnosis=r["probe"]["diagnosis"])
        for p in ("plain", "fuzz"):
            if p in r:
                keep[p] = r[p].get("caught")
        out.append(keep)
    return out


@pytest.fixture(scope="module")
def two_entries(tmp_path_factory):
    """The fixture entry and one whose glue raises at import: it must be a row, not the end."""
    base = tmp_path_factory.mktemp("bugs")
    shutil.copytree(FIXTURE / "grid-floor-repro", base / "grid-floor-repro")
    broken = base / "import-fails"
    shutil.copytree(FIXTURE / "grid-floor-repro", broken)
    (broken / "probe.py").write_text("raise RuntimeError('no GPU here')\n")
    return base


@pytest.fixture(scope="module")
def scored(two_entries):
    import os

    from harness.bugs import board

    old = os.environ.get("CASEBOOK_BUGS")
    os.environ["CASEBOOK_BUGS"] = str(two_entries)
    try:
        tasks = [(s, v, "interpreter", ("plain", "fuzz"), 2, 120.0) for s in ("grid-floor-repro", "import-fails")
                 for v in ("buggy", "fixed")]
        yield tasks, board.run_tasks(tasks, jobs=1)
    finally:
        os.environ.pop("CASEBOOK_BUGS") if old is None else os.environ.__setitem__("CASEBOOK_BUGS", old)


def test_scoreboard(scored, two_entries, tmp_path, monkeypatch):
    from harness.bugs import board, record

    _, rows = scored
    by = {(r["slug"], r["variant"]): r for r in rows}
    assert by[("import-fails", "buggy")]["error"].startswith("could not run: ")
    assert "RuntimeError" in by[("import-fails", "buggy")]["error"]
    buggy, fixed = by[("grid-floor-repro", "buggy")], by[("grid-floor-repro", "fixed")]
    assert buggy["probe"]["caught"] and "unwritten-output" in buggy["probe"]["diagnosis"]
    assert not fixed["probe"]["caught"], fixed["probe"]
    assert not buggy["plain"]["caught"]  # n = 1024 by default: a plain test passes
    assert buggy["fuzz"]["caught"] and not fixed["fuzz"]["caught"] and not fixed["plain"]["caught"]
    entries = {"grid-floor-repro": manifest.read(two_entries / "grid-floor-repro")}
    lines = board.combine(entries, rows, "interpreter", {"grid-floor-repro": True})
    t = board.totals(lines)
    assert (t["entries"], t["could_not_run"], t["caught_visible"], t["false_alarms"]) == (2, 1, 1, 0)
    assert (t["peers"]["plain"]["caught_visible"], t["peers"]["fuzz"]["caught_visible"]) == (0, 1)
    monkeypatch.setattr(record, "DOCS", tmp_path / "docs")
    env = {"backend": "interpreter", "device": "CPU", "torch": "x", "triton": "y", "python": "z", "date": "d"}
    text = record.scoreboard_md(lines, t, "interpreter", [env], ("plain", "fuzz"))
    record.write_scoreboard(lines, t, "interpreter", [env], ("plain", "fuzz"), text)
    record.write_rows(rows, "interpreter", env)
    again = record.read_rows("interpreter", ["grid-floor-repro", "import-fails"])
    assert _stable(again) == _stable(rows) and all(r["env"] == env for r in again)
    assert "| bugs caught, of those visible here | 1 of 1 (100%) | 0 of 1 (0%) | 1 of 1 (100%) |" in text
    assert "could not run" in text
    saved = json.loads((tmp_path / "docs" / "scoreboard-interpreter.json").read_text())
    assert saved["totals"] == json.loads(json.dumps(t))


def _ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return shutil.which("ray") is not None or (Path(sys.executable).parent / "ray").exists()


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    """A local Ray cluster of two nodes (a head and a worker), stopped afterwards."""
    import os
    import socket

    ray_bin = shutil.which("ray") or str(Path(sys.executable).parent / "ray")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tmp = tmp_path_factory.mktemp("ray")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": str(ROOT)}
    common = ["--num-cpus", "2", "--disable-usage-stats"]
    subprocess.run([ray_bin, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port),
                    "--temp-dir", str(tmp), "--include-dashboard", "false", *common], check=True, env=env,
                   capture_output=True, timeout=180)
    address = f"127.0.0.1:{port}"
    try:
        subprocess.run([ray_bin, "start", "--address", address, "--node-ip-address", "127.0.0.1", *common],
                       check=True, env=env, capture_output=True, timeout=180)
        yield address
    finally:
        subprocess.run([ray_bin, "stop", "--force"], env=env, capture_output=True, timeout=120)


@pytest.mark.skipif(not _ray_available(), reason="Ray is not installed (pip install -e '.[ray]')")
def test_ray_gives_the_same_scoreboard(scored, two_entries, ray_cluster, monkeypatch):
    import ray

    from harness.bugs import board

    tasks, rows = scored
    monkeypatch.setenv("CASEBOOK_BUGS", str(two_entries))
    ray.init(address=ray_cluster, ignore_reinit_error=True, log_to_driver=False)
    try:
        assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    finally:
        ray.shutdown()
    on_ray = board.run_tasks(tasks, jobs=1, ray_address=ray_cluster)
    assert _stable(on_ray) == _stable(rows)
    assert all(r.get("node") for r in on_ray if "error" not in r or "Ray task" not in r["error"])


def test_ray_missing_is_one_line(monkeypatch):
    import builtins

    from harness.bugs import distributed
    from harness.errors import UsageError

    real = builtins.__import__

    def no_ray(name, *a, **kw):
        if name == "ray":
            raise ImportError("no ray")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(UsageError, match="Ray is not installed"):
        distributed.run(print, [("x", "buggy", "interpreter", (), 2, 1.0)], "127.0.0.1:1")


def test_a_version_that_will_not_install_is_a_row(tmp_path, monkeypatch):
    """score_task never raises: a version pip cannot get, or a module that will not import,
    is one row saying why."""
    from harness.bugs import board

    _entry(tmp_path, RELEASED, name="no-such-version")
    _entry(tmp_path, RELEASED.replace('version = "1.1"', 'version = "1.2"'), name="will-not-import",
           glue="from harness.bugs.source import load\n\n"
                "def launch_buggy(x):\n    return load(__file__, 'buggy')\n\n"
                "launch_fixed = launch_buggy\n\n"
                "def make_inputs(*, device, gen, n=4):\n    import torch\n    return {'x': torch.zeros(n)}\n\n"
                "def reference(x):\n    return x\n")
    monkeypatch.setenv("CASEBOOK_BUGS", str(tmp_path / "bugs"))
    monkeypatch.setenv("CASEBOOK_BUG_CACHE", str(tmp_path / "cache"))

    def download(package, version, into, pip_args, pip_env=None):
        if version == "1.0":
            into.mkdir(parents=True)
            return _wheel(into / "demo_pkg-1.0-py3-none-any.whl", {"demo/ops/kern.py": "import vllm._C\n"})
        raise source.SourceError(f"pip download {package}=={version} failed: ERROR: No matching distribution")

    monkeypatch.setattr(source, "_download", download)
    row = board.score_task("no-such-version", "buggy", "interpreter", peers=())
    assert row["error"] == "could not run: pip download demo-pkg==1.1 failed: ERROR: No matching distribution"
    monkeypatch.setattr(source, "_download", lambda p, v, into, a, e=None: download(p, "1.0", into, a))
    row = board.score_task("will-not-import", "buggy", "interpreter", peers=(), timeout=60)
    assert row["error"].startswith("could not run: UpstreamImportError: cannot import demo.ops.kern from "
                                   "demo-pkg==1.0: ModuleNotFoundError"), row


def test_a_file_that_moved_between_versions(tmp_path):
    d = _entry(tmp_path, RELEASED.replace('version = "1.1"\n', 'version = "1.1"\nmodule = "demo.v2.kern"\n'))
    e = manifest.read(d)
    assert e.module_of("buggy") == ("demo.ops.kern", ["demo/ops/kern.py"])
    assert e.module_of("fixed") == ("demo.v2.kern", ["demo/v2/kern.py"])
    bad = _entry(tmp_path, RELEASED.replace('version = "1.1"\n', 'version = "1.1"\nfiles = ["/etc"]\n'), name="bad")
    with pytest.raises(manifest.ManifestError, match="files must be a list of paths"):
        manifest.read(bad)


def test_readme_summary_follows_the_numbers():
    from harness.bugs import record

    def board(caught, first, alarms):
        return {"envs": [{"device": "H100"}], "totals": {
            "caught_visible": caught, "visible": 10, "caught_all": caught, "diagnosis_first": first,
            "false_alarms": alarms, "ran": 10, "peers": {"plain": {"caught_visible": 1, "visible": 10,
                                                                   "false_alarms": 0}}}}

    good = record.summary({"gpu": board(9, 8, 0)})
    assert "the probe caught 9 of the 10 bugs" in good and "falls short" not in good
    assert "[gpu](docs/bugs/scoreboard-gpu.md)" in good and "a plain test at the default sizes caught 1 of 10" in good
    bad = record.summary({"gpu": board(9, 2, 3), "interpreter": board(5, 5, 0)})
    assert "names the wrong trap for most" in bad and "flags correct (fixed) kernels (gpu: 3 of 10)" in bad
    assert bad.index("With the GPU's detectors alone") < bad.index("Under the interpreter")
    both = record.summary({"interpreter": board(5, 5, 0), "gpu+interpreter": board(9, 8, 0), "gpu": board(8, 8, 0)})
    assert both.index("With a GPU (H100; the GPU and the interpreter at once") < both.index("With the GPU's") \
        < both.index("Under the interpreter")
    assert "at once, as the probe runs there, no budget;" in both  # rows that record none: no budget
    budgeted = board(9, 8, 0)
    budgeted["entries"] = [{"buggy": {"probe": {"budget": 20.0}}, "fixed": {"probe": {"budget": 20.0}}}]
    assert "as the probe runs there, a 20 s budget;" in record.summary({"gpu+interpreter": budgeted})
    assert record.summary({}) == ""


def test_rows_of_some_tools_keep_the_others(tmp_path, monkeypatch):
    """A run of the peers alone (--no-probe) adds its columns to an entry's recorded row and keeps
    the probe's; a later probe run keeps the peers'."""
    from harness.bugs import record

    monkeypatch.setattr(record, "DOCS", tmp_path)
    env1, env2 = {"device": "A"}, {"device": "B"}
    record.write_rows([{"slug": "e", "variant": "buggy", "backend": "interpreter", "probe": {"caught": True}}],
                      "interpreter", env1)
    record.write_rows([{"slug": "e", "variant": "buggy", "backend": "interpreter", "ttsem": {"caught": False}}],
                      "interpreter", env2)
    (row,) = record.read_rows("interpreter", ["e"])
    assert row["probe"] == {"caught": True} and row["ttsem"] == {"caught": False}
    assert row["env"] == env1 and row["envs"] == {"probe": env1, "ttsem": env2}
    record.write_rows([{"slug": "e", "variant": "buggy", "backend": "interpreter", "probe": {"caught": False}}],
                      "interpreter", env2)
    (row,) = record.read_rows("interpreter", ["e"])
    assert row["probe"] == {"caught": False} and row["ttsem"] == {"caught": False} and row["env"] == env2


def test_no_probe_needs_record():
    r = _cli("--no-probe", "--peers", "ttsem")
    assert r.returncode == 2 and "give --record too" in r.stderr and r.stderr.count("\n") == 1


def test_a_bug_that_is_reliance_on_undefined_lanes_is_caught_by_its_detectors_warning():
    from types import SimpleNamespace

    from harness.bugs.board import _summary
    from harness.probe.findings import WARNING, Finding

    def report(*findings):
        return SimpleNamespace(problems=list(findings), findings=list(findings), diagnosis=[], seconds=1.0,
                               budget=0.0, ran=[], meta={})

    warn = Finding("P102", "memcheck", "interpreter", "load past the end; only through masked-off lanes",
                   severity=WARNING)
    other = Finding("P203", "reference", "interpreter", "masked lanes enter the result", severity=WARNING)
    entry = SimpleNamespace(defect="out-of-bounds-read", verify={"detector": "memcheck", "severity": "warning"})
    assert _summary(report(warn), entry)["caught"]
    assert not _summary(report(other), entry)["caught"]  # another detector's warning is not this bug
    plain = SimpleNamespace(defect="out-of-bounds-read", verify={"detector": "memcheck", "severity": "error"})
    assert not _summary(report(warn), plain)["caught"]  # elsewhere a warning is never a catch


def test_a_row_keeps_the_notes_that_say_what_the_probe_did_not_check():
    """A miss on the board is explained from its row: the run past 2**31 elements not made (and why), a detector
    cut at the budget's end. The row keeps those notes (never other information), each with its backend."""
    from types import SimpleNamespace

    from harness.bugs.board import _summary
    from harness.probe.findings import INFO, Finding

    not_made = Finding("P000", "large", "gpu", "the run past 2**31 elements was not made: the run at n=4236288 "
                       "would take about 9s, more than the 5s the probe's budget leaves it", severity=INFO)
    cut = Finding("P000", "layout", "interpreter", "layout stopped at the end of its share of the probe's budget",
                  severity=INFO)
    other = Finding("P207", "special", "gpu", "with NaN in 'x': NaN out where the reference is NaN", severity=INFO)
    report = SimpleNamespace(problems=[], findings=[not_made, cut, other], diagnosis=[], seconds=1.0, budget=20.0,
                             ran=[], meta={})
    notes = _summary(report, SimpleNamespace(defect="overflow", verify={}))["notes"]
    assert [(n["detector"], n["backend"]) for n in notes] == [("large", "gpu"), ("layout", "interpreter")], notes
    assert "would take about 9s" in notes[0]["message"]


def test_the_scoreboard_gives_a_machines_run_dates_as_a_span():
    from harness.bugs.record import _span

    assert _span(["2026-11-26 11:31 UTC"]) == "2026-11-26 11:31 UTC"
    dates = ["2026-11-26 12:05 UTC", "2026-11-26 11:31 UTC", "2026-11-26 12:05 UTC", "2026-11-26 12:39 UTC"]
    assert _span(dates) == "2026-11-26 11:31 UTC to 2026-11-26 12:39 UTC"


# ------------------------------------------------------------------ could not run is not a verdict (issue 42)

VERIFIED = '{"verified": true, "why": "", "note": "a record made earlier"}\n'


def _verified_entry(tmp_path: Path, glue: str | None = None) -> Path:
    """The fixture entry with a verified record, and its glue replaced by ``glue`` where given."""
    d = tmp_path / "bugs" / "grid-floor-repro"
    shutil.copytree(FIXTURE / "grid-floor-repro", d)
    if glue is not None:
        (d / "probe.py").write_text(glue)
    (d / "recorded").mkdir(exist_ok=True)
    (d / "recorded" / "verify-interpreter.json").write_text(VERIFIED)
    return d


@pytest.mark.parametrize("how", ["exits", "dies"])
def test_a_glue_that_ends_at_import_could_not_run_and_keeps_the_verified_record(tmp_path, how):
    """A glue that exits (or is killed) at import was scored as a probe miss, and --verify --record wrote
    "NOT verified: the buggy version passed" over a verified record. Now: could not run, exit 2, one
    error line per entry on stderr, the record untouched; the scoreboard's row and its plain and fuzz
    peers say could not run too."""
    end = "os._exit(0)" if how == "exits" else "os.kill(os.getpid(), signal.SIGKILL)"
    glue = f"import os, signal\n{end}\n" + (FIXTURE / "grid-floor-repro" / "probe.py").read_text()
    d = _verified_entry(tmp_path, glue)
    r = _cli("--verify", "--backend", "interpreter", "--record", env={"CASEBOOK_BUGS": str(tmp_path / "bugs")})
    assert r.returncode == 2, r.stdout + r.stderr
    assert "NOT verified" not in r.stdout and "passed" not in r.stdout, r.stdout
    err = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(err) == 1 and err[0].startswith("error: interpreter grid-floor-repro: could not run: "), err
    assert "record is unchanged" in err[0]
    assert (d / "recorded" / "verify-interpreter.json").read_text() == VERIFIED

    import os

    from harness.bugs import board

    old = os.environ.get("CASEBOOK_BUGS")
    os.environ["CASEBOOK_BUGS"] = str(tmp_path / "bugs")
    try:
        row = board.score_task("grid-floor-repro", "buggy", "interpreter", peers=("plain", "fuzz"), timeout=60)
        entry = manifest.read(d)
        plain = board.plain_variant(entry, "buggy", "interpreter", sizes=[{}], timeout=60)
    finally:
        os.environ.pop("CASEBOOK_BUGS") if old is None else os.environ.__setitem__("CASEBOOK_BUGS", old)
    assert row["error"].startswith("could not run: "), row
    assert plain["error"].startswith("could not run: the worker ended as it loaded probe.py"), plain


def test_a_version_pip_cannot_fetch_could_not_run_and_keeps_the_verified_record(tmp_path, monkeypatch, capsys):
    """A registry outage wrote "NOT verified: pip download ... failed" (exit 1) over a verified record."""
    from harness import cli

    d = _entry(tmp_path, RELEASED)
    (d / "recorded").mkdir()
    (d / "recorded" / "verify-interpreter.json").write_text(VERIFIED)
    monkeypatch.setenv("CASEBOOK_BUGS", str(tmp_path / "bugs"))
    monkeypatch.setenv("CASEBOOK_BUG_CACHE", str(tmp_path / "cache"))

    def outage(package, version, into, pip_args, pip_env=None):
        raise source.SourceError(f"pip download {package}=={version} failed: ERROR: 503 Service Unavailable")

    monkeypatch.setattr(source, "_download", outage)
    assert cli.main(["bugs", "--verify", "--backend", "interpreter", "--record"]) == 2
    out, err = capsys.readouterr()
    assert "NOT verified" not in out
    assert "error: interpreter demo-entry: could not run: pip download demo-pkg==1.0 failed" in err
    assert (d / "recorded" / "verify-interpreter.json").read_text() == VERIFIED
    assert cli.main(["bugs", "--fetch"]) == 2
    out, err = capsys.readouterr()
    assert "error: demo-entry: could not fetch: pip download" in err and "could not" not in out


@pytest.mark.parametrize("args, says", [(["--peers", "bogus"], "no peer bogus (there are plain, fuzz"),
                                        (["--peers", "plain,nope"], "no peer nope"),
                                        (["--ray", ""], "argument --ray: is empty"),
                                        (["--ray", " "], "argument --ray: is empty")])
def test_peers_and_ray_addresses_are_checked_before_anything_runs(args, says):
    """``--peers bogus`` ran the whole benchmark and exited 0; ``--ray ''`` ran it here."""
    r = _cli("--list", *args)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and says in r.stderr, r.stderr


def test_a_ray_address_where_nothing_answers_is_one_line_at_once():
    """``bugs --ray 127.0.0.1:1`` waited over two minutes in Ray's own retries."""
    import socket

    from harness.bugs import distributed
    from harness.errors import UsageError

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # a port nothing listens on
    with pytest.raises(UsageError, match=f"bugs --ray 127.0.0.1:{port}: nothing answers there"):
        distributed.reachable(f"127.0.0.1:{port}")
    with pytest.raises(UsageError, match="nothing answers there"):
        distributed.reachable(f"ray://127.0.0.1:{port}")
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    try:
        distributed.reachable(f"127.0.0.1:{listening.getsockname()[1]}")  # something answers: left to Ray
        distributed.reachable("auto")
    finally:
        listening.close()
