"""``sanitize --backend gpu`` on a GPU (issue 40): tests/sanitize_fixtures/four, a user's suite of four
tests (an unmasked add, an ``out[0]`` store race, two clean kernels), through the command and through the
pytest plugin; every test runs, the add's out-of-bounds accesses at their lines named add-missing-mask, the
race found by the interpreter's pass, exit 1. Each run is a piece of the GPU suite's work started ahead
(tests/conftest.py), among its longest: this module's name has it collected early under ``-m gpu``, so its
pieces start beside the case batch, not after the whole suite's collection. The CPU side of the GPU mode
(a fake compute-sanitizer) is tested in tests/test_sanitize_device.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOUR = "tests/sanitize_fixtures/four"
KERNELS = "tests/sanitize_fixtures/kernels.py"


def _check_four(doc: dict, gpu_part: str) -> None:
    found = {(f["code"], f["line"]): f for f in doc["findings"]}
    load, store = found[("P102", f"{KERNELS}:16")], found[("P101", f"{KERNELS}:18")]
    for f in (load, store):
        assert f["cases"][0]["slug"] == "add-missing-mask", f
        assert f["tests"] == [f"{FOUR}/test_four.py::test_add_unmasked"], f
    assert load["backend"] == "gpu+interpreter", load  # memcheck stops the kernel at its first bad load
    race = found[("P301", f"{KERNELS}:34")]
    assert race["cases"][0]["slug"] in ("sum-reduction-store-race", "nrm2-race"), race
    assert race["tests"] == [f"{FOUR}/test_four.py::test_total"]
    assert {t.split("::")[-1] for f in doc["findings"] for t in f["tests"]} == {"test_add_unmasked", "test_total"}
    for name in ("test_total", "test_add_masked", "test_row_sums"):  # all ran on the GPU, after the lost context
        assert f"PASSED {FOUR}/test_four.py::{name}" in gpu_part or f"FAILED {FOUR}/test_four.py::{name}" in gpu_part, \
            gpu_part[-4000:]


FOUR_COMMANDS = {"command": ["-m", "harness", "sanitize", "--backend", "gpu", "--json", "pytest"],
                 "plugin": ["-m", "pytest", "-p", "harness.sanitize.pytest_plugin", "--casebook-sanitize",
                            "--casebook-sanitize-backend", "gpu"]}


def _four_on_the_gpu(how: str):
    """The four-test suite through the command or the plugin (``how``), in processes of its own on the one
    GPU: (returncode, stdout, stderr)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TRITON_INTERPRET", None)
    args = [FOUR, "-rA", "-p", "no:cacheprovider", "-p", "no:randomly"]
    run = subprocess.run([sys.executable, *FOUR_COMMANDS[how], *args], cwd=ROOT, capture_output=True, text=True,
                         env=env, timeout=900)
    return run.returncode, run.stdout, run.stderr


def gpu_ahead(items, start):
    """With a GPU, the four-test suite through the command and through the plugin start at once, each a
    piece of its own (each piece's seconds show in the suite's summary), beside the other GPU tests."""
    for how, test in (("command", "test_the_four_test_suite_runs_whole_on_the_gpu"),
                      ("plugin", "test_the_four_test_suite_runs_whole_on_the_gpu_through_the_plugin")):
        if any(item.name == test for item in items):
            start(("sanitize-four", how), _four_on_the_gpu, how)


@pytest.mark.gpu
def test_the_four_test_suite_runs_whole_on_the_gpu(ahead):
    """``sanitize --backend gpu --json``: every test ran, each finding at its line with its test."""
    rc, stdout, stderr = ahead(("sanitize-four", "command"), _four_on_the_gpu, "command")
    print(stderr[-6000:])
    assert rc == 1, stderr[-4000:]
    doc = json.loads(stdout)
    _check_four(doc, stderr.split("sanitize --backend gpu: compute-sanitizer sees")[0])


@pytest.mark.gpu
def test_the_four_test_suite_runs_whole_on_the_gpu_through_the_plugin(ahead):
    """``pytest --casebook-sanitize --casebook-sanitize-backend gpu``: the same run, the plugin's summary."""
    p_rc, p_stdout, p_stderr = ahead(("sanitize-four", "plugin"), _four_on_the_gpu, "plugin")
    print(p_stdout[-3000:], p_stderr[-3000:])
    assert p_rc == 1
    gpu_part = p_stdout.split("sanitize --backend gpu: compute-sanitizer sees")[0] + p_stderr
    for name in ("test_total", "test_add_masked", "test_row_sums"):
        assert f"{FOUR}/test_four.py::{name}" in p_stdout
    load = p_stdout[p_stdout.index("P102 error: out-of-bounds load"):]
    assert load.split("    like ")[1].startswith("cases/add-missing-mask/"), load[:1500]
    assert f"at {KERNELS}:34" in p_stdout and "P301 error" in p_stdout
    assert "test_add_unmasked lost the CUDA context" in gpu_part
