"""The Triton version check: below the tested range every command that runs kernels
exits 2 with one line; above it, one warning line; ``list``, ``new`` and the
``--no-run`` forms never ask. The installed version is faked."""

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from harness import cli
from harness.run import versions

ROOT = Path(__file__).resolve().parents[1]
OLDEST, NEWEST = versions.SUPPORTED


def fake_triton(monkeypatch, version):
    monkeypatch.setattr(versions, "installed_triton", lambda: version)


@pytest.mark.parametrize("version", [*versions.TESTED, "3.9.1", "3.6.0+git1a2b3c4"])
def test_a_tested_version_passes_quietly(version):
    assert versions.check(version) == (None, None)


def test_the_tested_versions_run_from_the_oldest_to_the_newest_supported():
    assert (versions.TESTED[0], versions.TESTED[-1]) == versions.SUPPORTED
    assert sorted(versions.TESTED, key=versions.minor) == list(versions.TESTED)


@pytest.mark.parametrize("version", ["3.3.1", "3.2.0", "2.3.1", "3.3.0rc1"])
def test_below_the_range_is_one_line_naming_both(version):
    error, warning = versions.check(version)
    assert warning is None and "\n" not in error
    assert version in error and OLDEST in error and NEWEST in error


@pytest.mark.parametrize("version", ["3.10.0", "4.0.0"])
def test_above_the_range_warns_in_one_line(version):
    error, warning = versions.check(version)
    assert error is None and "\n" not in warning
    assert warning.startswith("warning:") and version in warning and NEWEST in warning


def test_no_triton_or_an_unreadable_version(monkeypatch):
    fake_triton(monkeypatch, None)
    error, _ = versions.check()
    assert "not installed" in error and OLDEST in error
    error, warning = versions.check("nightly")
    assert error is None and "nightly" in warning


def test_the_version_comes_from_the_metadata_of_any_triton_distribution(monkeypatch):
    def version(name):
        if name == "pytorch-triton":
            return "3.3.0+gitabc"
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", version)
    assert versions.installed_triton() == "3.3.0+gitabc"
    assert versions.check()[0] is not None


def test_reading_the_version_imports_neither_triton_nor_torch():
    code = ("import sys, harness.run.versions as v; v.check(); "
            "print(sorted(m for m in ('triton', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


@pytest.mark.parametrize("argv", [["case", "nrm2-atomics", "--backend", "interpreter"], ["check", "nrm2-atomics"],
                                  ["detect", "nrm2-atomics"], ["record", "nrm2-atomics", "--backend", "interpreter"],
                                  ["report"]])
def test_an_old_triton_stops_every_command_that_runs_kernels(monkeypatch, capsys, argv):
    fake_triton(monkeypatch, "3.3.1")
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1, err
    assert err.startswith("error: triton 3.3.1") and f"{OLDEST} to {NEWEST}" in err


@pytest.mark.parametrize("argv", [["list"], ["check", "--no-run", "nrm2-atomics"],
                                  ["record", "--splice-only", "no-such-case"]])
def test_commands_that_run_no_kernel_do_not_ask(monkeypatch, capsys, argv):
    def ask():
        raise AssertionError("asked for the Triton version")

    monkeypatch.setattr(versions, "installed_triton", ask)
    assert cli.main(argv) in (0, 2)  # record of an unknown case: 2, for that reason only
    assert "triton" not in capsys.readouterr().err


def test_new_does_not_ask(monkeypatch):
    monkeypatch.setattr(versions, "check", lambda: pytest.fail("asked for the Triton version"))
    args = cli.build_parser().parse_args(["new", "some-new-trap"])
    cli._check_triton(args)  # returns without asking (running 'new' would write a folder)


def test_a_newer_triton_runs_with_a_warning(monkeypatch, capsys):
    fake_triton(monkeypatch, "3.10.0")
    assert cli.main(["case", "no-such-case"]) == 2  # the command ran: it found no such case
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("warning: triton 3.10.0") and "no-such-case" in err[1], err
