"""``lint`` handles every file on its own (issue 42 item 3, issue 41 item 4): a file that cannot be read,
decoded, parsed or analysed is that file's one error line and exit 2, the other files are still linted and
the SARIF is still written; only regular files are read; Python's own decoding; a size limit; ``lint ''``."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from harness.cli import main
from harness.lint import lint_file, lint_source
from harness.lint.rules import all_rules

REPO = Path(__file__).resolve().parents[1]
BAD = {r.code: r.bad for r in all_rules()}["TL101"]  # 3 TL101 findings


def lint(capsys, *argv):
    code = main(["lint", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def cli(*argv, cwd):
    """The CLI in a process of its own, with a deadline (a FIFO that hung it would hang the test)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "harness", "lint", *map(str, argv)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "good.py").write_text(BAD)
    return tmp_path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_fifos_links_that_loop_or_dangle_are_one_line_each_and_never_hang(folder):
    os.mkfifo(folder / "pipe.py")
    os.symlink("loop_b.py", folder / "loop_a.py")
    os.symlink("loop_a.py", folder / "loop_b.py")
    os.symlink("gone.py", folder / "dangling.py")
    out = cli(".", "--format", "sarif", cwd=folder)
    assert out.returncode == 2
    assert sorted(out.stderr.splitlines()) == [
        "error: dangling.py: a link to nothing (gone.py does not exist)",
        "error: loop_a.py: a link that loops (too many levels of symbolic links)",
        "error: loop_b.py: a link that loops (too many levels of symbolic links)",
        "error: pipe.py: not a regular file (a FIFO): not read"]
    run = json.loads(out.stdout)["runs"][0]
    assert len(run["results"]) == 3, "the good file is still linted and the SARIF still written"
    assert len(run["invocations"][0]["toolExecutionNotifications"]) == 4
    out = cli("pipe.py", "loop_a.py", "/dev/null", "good.py", cwd=folder)
    assert out.returncode == 2 and out.stdout.count(" TL101 ") == 3
    assert "error: /dev/null: not a regular file (a character device): not read" in out.stderr.splitlines()
    assert "error: loop_a.py: a link that loops (too many levels of symbolic links)" in out.stderr.splitlines()


@pytest.mark.parametrize("source, message", [
    ("import triton\nx = " + "(" * 300 + "1" + ")" * 300 + "\n", "nest.py:2: does not parse: too many nested parentheses"),
    ("import triton\nx = " + "-" * 100_000 + "1\n", "nest.py: does not parse: nested too deeply for Python's parser"),
    ("x = " + "+".join(["a"] * 200_000) + "\n", "nest.py: does not parse: nested too deeply for Python's parser"),
], ids=["parentheses", "unary-minus", "long-sum-no-triton"])
def test_deep_nesting_is_a_parse_error_of_that_file(capsys, folder, source, message):
    (folder / "nest.py").write_text(source)
    os.chdir(folder)
    code, out, err = lint(capsys, ".")
    assert code == 2 and err.splitlines() == [f"error: {message}"] and out.count(" TL101 ") == 3


def test_every_file_that_does_not_parse_is_said_triton_or_not(capsys, folder):
    """A file that mentions no Triton and does not parse is not quietly counted as linted."""
    (folder / "notes.py").write_text("print('no kernels')\ndef (:\n")
    os.chdir(folder)
    code, out, err = lint(capsys, ".")
    assert code == 2 and err.splitlines() == ["error: notes.py:2: does not parse: invalid syntax"]
    assert out.splitlines()[-1].startswith("3 findings in 1 file (1 files, ")


def test_bom_and_coding_cookies_decode_as_python_does(capsys, tmp_path):
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + BAD.encode())
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + BAD.encode())
    for name in ("bom.py", "latin.py"):
        compile((tmp_path / name).read_bytes(), name, "exec")  # valid Python, as the premise says
    (tmp_path / "wrong.py").write_bytes(b"import triton\n# caf\xe9\n")  # no cookie: not UTF-8, Python refuses it
    code, out, err = lint(capsys, tmp_path)
    assert out.count(f"{tmp_path / 'bom.py'}:8:9: TL101 ") == 1 and out.count(f"{tmp_path / 'latin.py'}:10:9: TL101") == 1
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {tmp_path / 'wrong.py'}: cannot be decoded: ")
    assert code == 2
    assert [f.line for f in lint_file(tmp_path / "latin.py")] == [f.line + 2 for f in lint_source(BAD)]  # the API too


def test_an_unreadable_folder_is_an_error_line(capsys, folder, monkeypatch):
    (folder / "locked").mkdir()
    (folder / "locked" / "k.py").write_text(BAD)
    real = os.scandir

    def scandir(path="."):
        if Path(path) == folder / "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)  # root reads any folder: refuse this one the way the OS would
    code, out, err = lint(capsys, folder)
    assert code == 2 and err.splitlines() == [f"error: {folder / 'locked'}: cannot be read: Permission denied"]
    assert out.count(" TL101 ") == 3


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root reads every folder")
def test_an_unreadable_folder_for_real(capsys, folder):
    (folder / "locked").mkdir()
    (folder / "locked").chmod(0)
    try:
        code, _, err = lint(capsys, folder)
    finally:
        (folder / "locked").chmod(0o755)
    assert code == 2 and "locked: cannot be read: Permission denied" in err


def test_a_file_over_the_size_limit_is_skipped_with_a_line(capsys, folder):
    big = folder / "big.py"
    big.write_text(BAD + "#" * 2048 + "\n")
    code, out, err = lint(capsys, folder, "--max-size", "1K")
    assert code == 2 and err.splitlines() == [
        f"error: {big}: skipped: {big.stat().st_size:,} bytes, over the limit of 1,024 (--max-size raises it)"]
    assert out.count(" TL101 ") == 3, "good.py, under the limit, is linted"
    code, out, err = lint(capsys, folder, "--max-size", "4K")
    assert code == 1 and err == "" and out.count(" TL101 ") == 6
    with pytest.raises(SystemExit) as exit:
        lint(capsys, folder, "--max-size", "lots")
    assert exit.value.code == 2 and "'lots' is not a size" in capsys.readouterr().err


def test_an_exception_analysing_one_file_is_that_files_line(capsys, folder, monkeypatch):
    from harness.lint import engine

    (folder / "boom.py").write_text(BAD)
    class Module(engine.Module):
        def __init__(self, text, path):
            if path.endswith("boom.py"):
                raise KeyError("a bug in lint")
            super().__init__(text, path)

    monkeypatch.setattr(engine, "Module", Module)
    code, out, err = lint(capsys, folder, "--format", "sarif")
    assert code == 2 and err.splitlines() == [f"error: {folder / 'boom.py'}: lint failed on this file: "
                                              f"KeyError: 'a bug in lint'"]
    assert len(json.loads(out)["runs"][0]["results"]) == 3


def test_an_empty_path_is_bad_input_not_the_current_folder(capsys, folder):
    os.chdir(folder)
    code, out, err = lint(capsys, "")
    assert code == 2 and err.splitlines() == ["error: '': an empty path names no file or folder"]
    assert out.splitlines()[-1].startswith("0 findings in 0 files (0 files, ")


URI_REFERENCE = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#\[\]]|%[0-9A-Fa-f]{2})*")


@pytest.mark.parametrize("name", ["with space.py", "100%20.py", "naïve_ключ.py", "a:b.py", "hash#q?.py"])
def test_sarif_uris_are_uri_references_that_read_back_as_the_path(capsys, tmp_path, name):
    (tmp_path / "sub dir").mkdir()
    (tmp_path / "sub dir" / name).write_text(BAD)
    (tmp_path / "elsewhere").mkdir()
    for cwd, arg, expect in ((tmp_path, "sub dir", f"sub dir/{name}"),  # relative: a relative reference
                             (tmp_path / "elsewhere", tmp_path / "sub dir", f"{tmp_path}/sub dir/{name}")):  # file:
        os.chdir(cwd)
        _, out, _ = lint(capsys, arg, "--format", "sarif")
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in json.loads(out)["runs"][0]["results"]}
        assert len(uris) == 1
        uri = uris.pop()
        assert URI_REFERENCE.fullmatch(uri), uri
        parts = urlsplit(uri)
        assert unquote(parts.path) == expect and parts.scheme in ("", "file") and not parts.query and not parts.fragment
        assert (parts.scheme == "file") == os.path.isabs(arg)


def test_a_generated_kernel_deeper_than_the_recursion_limit_is_linted():
    """triton-qml's generated kernels chain hundreds of tuple swaps (``a, b = b, a + b``): the data flow follows
    them one frame or three per step, past Python's default 1,000 frames. Lint finishes them (a rule crashed
    with RecursionError before), and the caller's recursion limit is left as it was."""
    import sys

    from harness.lint import lint_source

    lines = ["import triton", "import triton.language as tl", "", "@triton.jit",
             "def swap_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):",
             "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
             "    a = tl.load(x_ptr + offs, mask=offs < n, other=0.0)", "    b = a * 2.0"]
    lines += ["    a, b = b, a + b"] * 500
    lines += ["    c = a - tl.sum(a, axis=0) / n", "    tl.store(out_ptr + offs, tl.sum(c * c, axis=0) + b, mask=offs < n)"]
    limit = sys.getrecursionlimit()
    assert lint_source("\n".join(lines) + "\n", "deep.py") == []
    assert sys.getrecursionlimit() == limit
