"""The peer tools of the real-bug scoreboard (harness/bugs/peers.py): ttsem, triton-viz and
gpucheck, each in a virtual environment of its own (benchmarks/peers/setup.sh).

Without a tool's environment its row must say "could not run" (never quiet); that is checked
here always. With it, the tool runs on the fixture entry (tests/bugs_fixture/grid-floor-repro:
a grid that rounds down, so the buggy version leaves the tail unwritten); those tests skip
cleanly where the tool is not installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.bugs import manifest, peer_common, peers

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "bugs_fixture"
TOOLS = ("ttsem", "triton-viz", "gpucheck")
DISTS = {"ttsem": "ttsem", "triton-viz": "triton-viz", "gpucheck": "gpucheck"}


@pytest.fixture
def entry(tmp_path, monkeypatch):
    """The fixture entry with a default size that is not a multiple of the block, so that a
    plain test at the defaults meets the short grid (the fixture's own default, 1024, does not)."""
    src = FIXTURE / "grid-floor-repro"
    d = tmp_path / "bugs" / "grid-floor-repro"
    d.mkdir(parents=True)
    (d / "bug.toml").write_text((src / "bug.toml").read_text())
    glue = (src / "probe.py").read_text()
    assert "n=1024" in glue
    (d / "probe.py").write_text(glue.replace("n=1024", "n=1000"))
    monkeypatch.setenv("CASEBOOK_BUGS", str(d.parent))
    return manifest.read(d)


def installed(tool: str) -> bool:
    return peer_common.missing(tool, DISTS[tool]) is None


# ---------------------------------------------------------------- always: the registry and the error rows

def test_the_three_tools_are_registered():
    assert set(TOOLS) <= set(peers.TOOLS)


def test_an_unknown_tool_is_an_error_row(entry):
    row = peers.run("no-such-tool", entry, "buggy", "interpreter", timeout=5)
    assert row["error"].startswith("could not run: no peer tool 'no-such-tool'")


@pytest.mark.parametrize("tool", TOOLS)
def test_a_missing_environment_is_an_error_row(tool, entry, tmp_path, monkeypatch):
    monkeypatch.setenv("CASEBOOK_PEERS_DIR", str(tmp_path / "nothing-here"))
    started = []
    monkeypatch.setattr(peer_common.subprocess, "Popen", lambda *a, **k: started.append(a) or 1 / 0)
    monkeypatch.setattr(peer_common.subprocess, "run", lambda *a, **k: started.append(a) or 1 / 0)
    row = peers.run(tool, entry, "buggy", "interpreter", timeout=5)
    assert started == []  # it says so at once, running nothing
    assert set(row) == {"error"}
    assert row["error"].startswith(f"could not run: {tool} is not installed")
    assert f"benchmarks/peers/setup.sh {tool}" in row["error"]


@pytest.mark.parametrize("tool", TOOLS)
def test_an_environment_without_the_tool_is_an_error_row(tool, entry, tmp_path, monkeypatch):
    venv = tmp_path / tool
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    (venv / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    monkeypatch.setenv("CASEBOOK_PEERS_DIR", str(tmp_path))
    row = peers.run(tool, entry, "buggy", "interpreter", timeout=5)
    assert row["error"].startswith(f"could not run: {DISTS[tool]} is not installed in")


def test_a_timeout_leaves_no_process_behind(tmp_path):
    pids = tmp_path / "pids"
    script = f"sleep 60 & echo $! > {pids}; sleep 60"
    done = peer_common.run(["bash", "-c", script], env=dict(os.environ), timeout=1)
    assert done.timed_out
    child = int(pids.read_text())
    for _ in range(50):  # the kill is immediate; the reaping by init may take a moment
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        if Path(f"/proc/{child}/stat").read_text().split()[2] == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the tool's child {child} is still running")


def test_the_viz_report_is_read_in_one_line():
    from harness.bugs import peer_triton_viz

    printed = ("============================================================\n"
               "                 Out-Of-Bounds Access Detected              \n"
               "============================================================\n"
               "Operation: Load\nTensor Arg: x_ptr\n"
               "File: /x/probe.py, Line: 13, in kern\n  Code: v = tl.load(x_ptr + offs)\n")
    got = peer_triton_viz.report(printed)
    assert got["message"] == "out-of-bounds load access of x_ptr in kern at probe.py:13: v = tl.load(x_ptr + offs)"
    assert got["line"] == 13
    assert peer_triton_viz.report("1 failed") is None


def test_the_viz_report_in_its_other_style_is_read_too():
    from harness.bugs import peer_triton_viz

    printed = ("\n\x1b[1m\x1b[91m🚨 ILLEGAL MEMORY ACCESS DETECTED 🚨\x1b[0m\n"
               "  \x1b[95mFile:\x1b[0m /c/kernels.py\n  \x1b[95mFunction:\x1b[0m seg\n  \x1b[95mLine 139:\x1b[0m\n"
               "\x1b[93m→  139 │     if tl.load(ids + mid) > expert:\x1b[0m\n  \x1b[92marg:        \x1b[0m ids\n")
    got = peer_triton_viz.report(printed)
    assert got["message"] == "out-of-bounds access of ids in seg at kernels.py:139: if tl.load(ids + mid) > expert:"


def test_gpuchecks_mismatch_panel_is_one_line():
    from harness.bugs import peer_gpucheck

    text = ("Tensors are not close! (atol=1.00e-04, rtol=1.00e-04; override with atol=/rtol= or use k_dim=) "
            "\x1b[31m╭─ Report ─╮\x1b[0m\n│ Max absolute error    │   2.5e+00 │\n│ Mismatch count        │  1 / 65 (1.54%) │\n")
    assert peer_gpucheck._mismatch(text) == ("Tensors are not close! (atol=1.00e-04, rtol=1.00e-04): "
                                             "max absolute error 2.5e+00, mismatch count 1 / 65 (1.54%)")


@pytest.mark.parametrize("rows, want", [
    ([{"when": "setup", "outcome": "failed", "type": "ValueError", "message": "bad size"}],
     "could not run: the test's setup failed under T: ValueError: bad size"),
    ([{"when": "call", "outcome": "failed", "type": "UpstreamImportError", "message": "cannot import m"}],
     "could not run: under T, cannot import m"),
    ([], "could not run: T ran no test (boom)"),
])
def test_a_run_that_never_reaches_the_kernel_is_an_error_row(rows, want):
    done = peer_common.Done(1, "", "boom", 0.5)
    assert peer_common.verdict(rows, done, timeout=9, what="T") == {"error": want}
    call = {"when": "call", "outcome": "failed", "type": "AssertionError", "message": "differ"}
    assert peer_common.verdict([call], done, timeout=9, what="T") == {"call": call}
    assert peer_common.verdict([], peer_common.Done(None, "", "", 9.0), timeout=9, what="T")["hung"]


def test_the_generated_test_passes_and_fails_as_a_plain_test(entry, tmp_path):
    """The test file the ttsem and triton-viz peers run: under plain pytest and the interpreter,
    the fixed launcher passes and the buggy one fails its comparison (no tool needed)."""
    outcomes = {}
    for variant in ("buggy", "fixed"):
        d = tmp_path / variant
        d.mkdir()
        test = peer_common.write_test(d, entry, variant, device="cpu")
        env = peer_common.environment({"CASEBOOK_PEER_RESULT": str(d / "r.jsonl"), "TRITON_INTERPRET": "1"})
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)], cwd=d, env=env,
                       capture_output=True, text=True, timeout=300)
        rows = peer_common.results(d / "r.jsonl")
        outcomes[variant] = [(r["when"], r["outcome"], r["type"]) for r in rows]
    assert outcomes == {"buggy": [("call", "failed", "AssertionError")], "fixed": [("call", "passed", "")]}


# ---------------------------------------------------------------- each tool, where it is installed

def _both(tool, entry, timeout=300):
    if not installed(tool):
        pytest.skip(f"{tool} is not installed (benchmarks/peers/setup.sh {tool})")
    return {v: peers.run(tool, entry, v, "interpreter", timeout=timeout) for v in ("buggy", "fixed")}


def _row_ok(row, tool):
    assert "error" not in row, row
    assert row["version"].startswith(f"{tool} ")
    assert isinstance(row["seconds"], float)


def test_ttsem_fails_the_buggy_grid_and_passes_the_fixed(entry):
    rows = _both("ttsem", entry)
    for r in rows.values():
        _row_ok(r, "ttsem")
    # the tail nobody wrote holds ttsem's NaN poison, so the comparison fails
    assert rows["buggy"]["caught"] and "differ from the reference" in rows["buggy"]["first"]["message"]
    assert rows["fixed"]["caught"] is False


def test_triton_viz_sees_no_access_out_of_bounds_in_either(entry):
    rows = _both("triton-viz", entry)
    for r in rows.values():
        _row_ok(r, "triton-viz")
        assert r["values"] == "not computed"
    # the buggy grid is short, not out of bounds: nothing for a bounds sanitizer to see
    assert rows["buggy"]["caught"] is False and rows["fixed"]["caught"] is False


def test_gpucheck_shapes_find_the_short_grid(entry):
    rows = _both("gpucheck", entry)
    for r in rows.values():
        _row_ok(r, "gpucheck")
        assert r["tried"] > 0
    assert rows["buggy"]["caught"] and rows["buggy"]["first"]["sizes"]
    assert rows["fixed"]["caught"] is False


def test_gpucheck_draws_its_own_shapes_into_the_entrys_ranges():
    """The keywords FUZZ names (else every integer one) get gpucheck's shapes, each brought into
    its own range; a flag, or a block size FUZZ leaves out, keeps its default."""
    if not installed("gpucheck"):
        pytest.skip("gpucheck is not installed (benchmarks/peers/setup.sh gpucheck)")
    import json

    code = ("import json, sys; from harness.bugs.peer_gpucheck import shapes_for; "
            "print(json.dumps([shapes_for({'n': 1024, 'k': 8, 'flag': True}, r, 16, 0) for r in json.loads(sys.argv[1])]))")
    ranges = [{"n": [1, 4096], "k": [1, 16]}, {"k": [1, 16]}, {}]
    out = subprocess.run([str(peer_common.venv_python("gpucheck")), "-c", code, json.dumps(ranges)],
                         env=peer_common.environment(), capture_output=True, text=True, timeout=120)
    both, k_only, none = json.loads(out.stdout)
    assert both and all(set(s) == {"n", "k"} and 1 <= s["n"] <= 4096 and 1 <= s["k"] <= 16 for s in both)
    assert {"n": 31, "k": 16} in both  # gpucheck's off-tile 31, its 16 for the other dimension
    assert k_only and all(set(s) == {"k"} and 1 <= s["k"] <= 16 for s in k_only)
    assert none and all(set(s) == {"n", "k"} and s["n"] <= 2048 and s["k"] <= 16 for s in none)
    for shapes in (both, k_only, none):
        assert len({tuple(s.values()) for s in shapes}) == len(shapes)
