"""Contributing a case: ``harness new`` scaffolds one, ``harness check`` names every problem.

Every test works in a temporary cases folder (``$CASEBOOK_CASES``) and never writes
under ``cases/``: a scaffolded case there would fail pytest for everyone.
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys

import pytest

from harness.checks.engine import check_folders
from harness.checks.problem import shown
from harness.checks.rules.writeup import SECTIONS
from harness.commands import new as scaffold
from harness.core import discovery

REPO = discovery.REPO_ROOT
SLUG = "row-mean-divides-by-block"
LINE = re.compile(r"^(error|warning): \S+: C\d{3} .+ \(.+\)$")


@pytest.fixture
def root(tmp_path, monkeypatch):
    """An empty cases folder that the harness uses in place of cases/."""
    r = tmp_path / "cases"
    r.mkdir()
    monkeypatch.setenv("CASEBOOK_CASES", str(r))
    return r


def run_in(repo, root, *args, module=("harness",)):
    """``python -m harness ...`` (or another module) in ``repo``, with ``root`` as the cases folder."""
    env = dict(os.environ, CASEBOOK_CASES=str(root), PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, "-m", *module, *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=600)


def harness(root, *args, module=("harness",)):
    return run_in(REPO, root, *args, module=module)


def problems(root, slug=SLUG, run=False):
    (check,) = check_folders([root / slug], root, run=run)
    lines = [str(p) for p in check.problems]
    assert all(LINE.match(line) for line in lines), lines
    return lines


def errors(root, slug=SLUG, run=False):
    return [line for line in problems(root, slug, run) if line.startswith("error:")]


def tree_digest(path):
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(f.relative_to(path)).encode() + f.read_bytes())
    return h.hexdigest()


# ---------------------------------------------------------------- the scaffold


def test_a_scaffolded_case_is_seen_by_list_pytest_and_check(root):
    made = harness(root, "new", "my-new-trap", "--category", "bounds")
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in (root / "my-new-trap").iterdir()) == sorted(
        ["case.toml", "case.py", "broken.py", "fixed.py", "README.md"])

    listed = harness(root, "list")
    assert listed.returncode == 0 and "my-new-trap" in listed.stdout, listed.stderr

    collected = harness(root, "--collect-only", "-q", "tests/test_cases.py", module=("pytest",))
    assert "my-new-trap-broken-interpreter" in collected.stdout
    assert "my-new-trap-fixed-interpreter" in collected.stdout

    checked = harness(root, "check", "my-new-trap")
    assert checked.returncode == 1
    lines = checked.stdout.splitlines()
    assert "Traceback" not in checked.stdout + checked.stderr
    # it runs at once: the fixed kernel is fine, and the broken one is not broken yet
    assert not [x for x in lines if ": C601 " in x or ": C602 " in x]
    assert any(x.startswith("error: ") and "broken.py: C603 under the interpreter the broken kernel was ok, "
               "but case.toml declares wrong" in x for x in lines), lines
    todo = [x for x in lines if "still says 'TODO" in x]
    for f in ("case.toml", "case.py", "broken.py", "fixed.py", "README.md"):
        assert any(f"/my-new-trap/{f}:" in x for x in todo), f
    assert not any("category" in x for x in todo)  # --category was given: no TODO for it
    assert all(LINE.match(x) for x in lines if x.startswith(("error", "warning"))), lines
    # the write-up's code comes from the files: the blocks are there, waiting for the kernels
    assert any("/README.md:" in x and ": C309 the code block <!-- code:broken.py:my_kernel,my --> is empty" in x
               and "--splice-only" in x for x in lines), lines
    assert any(": C309 <!-- diff:broken.py:fixed.py --> cannot be filled" in x and "write the fix in fixed.py" in x
               for x in lines), lines
    # the copy kernel's markers are on a line both files keep: check says where they belong
    assert any("/broken.py:" in x and ": C408 " in x for x in lines), lines


def test_contributing_shows_what_check_prints_for_the_scaffold(root):
    """The walk-through's sample output is check's, line for line where it shows a line, counts included."""
    doc = (REPO / "CONTRIBUTING.md").read_text()
    sample = doc.split(f"python -m harness check {SLUG}\n```\n\n```\n")[1].split("```")[0].splitlines()
    made = harness(root, "new", SLUG, "--category", "reduction", "--defect", "padding-contamination",
                   "--launcher", "row_mean")
    assert made.returncode == 0, made.stderr
    checked = harness(root, "check", SLUG)
    lines = checked.stdout.replace(f"{root.resolve()}/", "cases/").splitlines()
    at = [lines.index(line) if line in lines else line for line in sample if line != "..."]
    assert all(isinstance(i, int) for i in at), [x for x in at if not isinstance(x, int)]
    assert at == sorted(at) and at[-1] == len(lines) - 1, (at, lines)  # in order, ending with the counts


def test_scaffold_refuses_bad_existing_and_clashing_slugs(root):
    with pytest.raises(ValueError, match="not a slug"):
        scaffold.scaffold("My_Trap", root)
    scaffold.scaffold("my-trap", root)
    with pytest.raises(ValueError, match="already exists"):
        scaffold.scaffold("my-trap", root)
    with pytest.raises(ValueError, match="clashes with the case 'my-trap'"):
        scaffold.scaffold("mytrap", root)
    with pytest.raises(ValueError, match="not a Python function name"):
        scaffold.scaffold("other-trap", root, launcher="class")
    bad = harness(root, "new", "Bad_Slug")
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and len(bad.stderr.splitlines()) == 1


def test_new_refuses_what_no_other_command_accepts(root, tmp_path):
    """A slug past the limit every command uses, a missing cases folder, a title that is not one line: 2, nothing made."""
    long = "a" * (discovery.MAX_SLUG + 1)
    for args, env, says in [((long,), {}, "at most 100 characters"),
                            (("x",), {"CASEBOOK_CASES": str(tmp_path / "nonexistent")}, "is not a folder"),
                            (("x-y", "--title", "x\ny"), {}, "one line of printable text")]:
        out = run_in(REPO, env.get("CASEBOOK_CASES", root), "new", *args)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and says in out.stderr, (args, out.stderr)
    assert not (tmp_path / "nonexistent").exists() and list(root.iterdir()) == []
    assert harness(root, "new", "a" * discovery.MAX_SLUG).returncode == 0  # the limit itself is a slug


def test_a_title_with_quotes_is_valid_toml(root):
    import tomllib

    title = 'The "last" writer wins \\ twice: mean² of 0'
    scaffold.scaffold("quoted-title", root, title=title)
    assert tomllib.loads((root / "quoted-title" / "case.toml").read_text())["title"] == title
    assert (root / "quoted-title" / "README.md").read_text().startswith(f"# {title}\n")


def test_new_makes_the_whole_folder_or_none(root, monkeypatch):
    """A write that fails part-way (a full disk) leaves no folder and no temporary one behind."""
    import errno

    real, written = scaffold.render, []

    def render(name, **fields):
        written.append(name)
        if len(written) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(name, **fields)

    monkeypatch.setattr(scaffold, "render", render)
    with pytest.raises(ValueError, match="not created .*No space left.*nothing was written"):
        scaffold.scaffold("half-made", root)
    assert list(root.iterdir()) == [] and len(written) == 3


def test_new_and_record_keep_the_readme_table_current(tmp_path, monkeypatch, capsys):
    """The commands that change what README.md's table shows rewrite it: new adds the row, record refreshes it
    (and --splice-only writes the write-up's generated lint line, the other block a full pytest checks)."""
    from harness import cli
    from harness.core import casetable

    (tmp_path / "cases").mkdir()
    (tmp_path / "README.md").write_text("# Casebook\n\n<!-- cases -->\n<!-- /cases -->\n\nMore.\n")
    monkeypatch.setattr(discovery, "REPO_ROOT", tmp_path)
    monkeypatch.delenv("CASEBOOK_CASES", raising=False)
    assert cli.main(["new", "my-trap", "--title", "First title"]) == 0
    assert "| [my-trap](cases/my-trap/README.md) |" in (tmp_path / "README.md").read_text()
    toml = tmp_path / "cases" / "my-trap" / "case.toml"
    toml.write_text(toml.read_text().replace("First title", "The title, filled in"))
    assert "First title" in (tmp_path / "README.md").read_text()
    fixed = tmp_path / "cases" / "my-trap" / "fixed.py"
    fixed.write_text(fixed.read_text().replace("BLOCK=256)", "BLOCK=128)"))  # a fix, so the diff block can be filled
    assert cli.main(["record", "my-trap", "--splice-only"]) == 0
    readme = (tmp_path / "README.md").read_text()
    assert "The title, filled in" in readme and readme.endswith("\n\nMore.\n")
    assert casetable.readme_table(discovery.load_all()[0]) in readme
    out = capsys.readouterr().out
    assert "README.md: its table of cases updated" in out and "lint line written" in out
    write_up = (tmp_path / "cases" / "my-trap" / "README.md").read_text()  # and the write-up's lint line
    assert write_up.index("## How to catch it") < write_up.index("<!-- generated:lint -->") < write_up.index("## Perf")


def test_the_done_when_walk_through_passes_check_and_pytest_with_no_harness_edit(root, tmp_path, make_case):
    """Scaffold, write a small broken/fixed pair, and see check and pytest pass.

    It runs in a copy of the harness and tests with no cases/ folder, and checks that
    the copy is unchanged afterwards: adding a case touches nothing but its folder.
    """
    repo = tmp_path / "repo"
    for part in ("harness", "tests"):
        shutil.copytree(REPO / part, repo / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", repo)
    before = tree_digest(repo / "harness"), tree_digest(repo / "tests")

    def harness(root, *args, module=("harness",)):
        return run_in(repo, root, *args, module=module)

    assert harness(root, "new", SLUG, "--category", "reduction", "--defect", "padding-contamination",
                   "--launcher", "row_mean").returncode == 0
    make_case(root=root, files={"recorded/gpu.json": None})  # what the contributor writes over the scaffold
    recorded = harness(root, "record", SLUG, "--backend", "interpreter")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr

    checked = harness(root, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"ok: {root / SLUG}" in checked.stdout
    assert "error:" not in checked.stdout
    # the only thing left is what needs a GPU
    assert [x for x in checked.stdout.splitlines() if x.startswith("warning")] == [
        x for x in checked.stdout.splitlines() if "C501 no recorded GPU run" in x]
    strict = harness(root, "check", "--strict", "--no-run")
    assert strict.returncode == 1 and "error: " in strict.stdout and "no recorded GPU run" in strict.stdout

    tested = harness(root, "-q", "-k", SLUG, "tests/test_cases.py", module=("pytest",))
    assert tested.returncode == 0, tested.stdout[-3000:]
    assert "2 passed" in tested.stdout
    assert SLUG in harness(root, "list").stdout
    assert (tree_digest(repo / "harness"), tree_digest(repo / "tests")) == before
    assert sorted(p.name for p in repo.iterdir() if not p.name.startswith(".")) == ["harness", "pyproject.toml", "tests"]


# ---------------------------------------------------------------- record --splice-only fills the code blocks


HAND_DIFF = """```diff
-    tl.store(out_ptr + row, tl.sum(x) / BLOCK)
+    tl.store(out_ptr + row, tl.sum(x) / n_cols)
```
"""


def test_record_splice_only_fills_the_code_blocks_atomically_and_says_which(root, make_case, monkeypatch, capsys):
    from harness import cli
    from harness.core import fileio

    blocks = ("<!-- code:broken.py:row_mean -->\n<!-- /code -->\n\n<!-- diff:broken.py:fixed.py -->\n" + HAND_DIFF
              + "<!-- /diff -->\n")
    folder = make_case(files={"README.md": make_case.texts["README.md"].replace(HAND_DIFF, blocks)})
    assert {line.split(": C")[1][:3] for line in errors(root)} == {"309"}  # both blocks: check says how to refresh
    writes = []
    monkeypatch.setattr(fileio, "write_text", lambda path, text, _real=fileio.write_text: writes.append(path)
                        or _real(path, text))
    assert cli.main(["record", SLUG, "--splice-only"]) == 0
    out = capsys.readouterr().out
    text = (folder / "README.md").read_text()
    lines = text.splitlines()
    at = [lines.index("<!-- code:broken.py:row_mean -->") + 1, lines.index("<!-- diff:broken.py:fixed.py -->") + 1]
    assert out == (f"{SLUG}: nothing recorded; filled 2 code block(s): <!-- code:broken.py:row_mean --> at "
                   f"README.md:{at[0]}, <!-- diff:broken.py:fixed.py --> at README.md:{at[1]}; lint line written\n"), out
    assert writes == [folder / "README.md"] * 2  # the blocks, then the lint line: through fileio, never half a write-up
    assert "def row_mean(x: torch.Tensor, out: torch.Tensor)" in text and "@@ -11,3 +11,3 @@" in text, text
    assert problems(root) == []

    assert cli.main(["record", SLUG, "--splice-only"]) == 0
    assert capsys.readouterr().out == f"{SLUG}: nothing recorded; code blocks up to date (2); lint line up to date\n"

    bad = text.replace("<!-- code:broken.py:row_mean -->", "<!-- code:broken.py:no_such -->")
    (folder / "README.md").write_text(bad)
    assert cli.main(["record", SLUG, "--splice-only"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "defines no top-level 'no_such'" in err, err
    assert err.startswith(f"error: {SLUG}: README.md: line {at[0]}: ") and (folder / "README.md").read_text() == bad


# ---------------------------------------------------------------- check: one line per problem


def test_a_good_case_has_no_problems(root, make_case):
    make_case()
    assert problems(root) == []


def test_missing_fixed_py(root, make_case):
    make_case(files={"fixed.py": None})
    errs = errors(root)
    assert any(f"{root / SLUG}/fixed.py: C101 missing (" in e for e in errs), errs
    assert not any("Traceback" in e for e in errs)


def test_bad_metadata_reports_every_bad_field(root, make_case):
    make_case(fields={"category": "vibes", "summary": None, "expect": {"interpreter": "explodes"}})
    errs = [e for e in errors(root) if "/case.toml" in e]
    assert any(": C204 category 'vibes' is not one of" in e for e in errs), errs
    assert any(": C202 missing field 'summary'" in e for e in errs), errs
    assert any(": C204 [expect] interpreter = 'explodes' is not one of" in e for e in errs), errs
    assert len(errs) == 3, errs


@pytest.mark.parametrize("toml, expected", [
    ("title = [unclosed", "C201 is not valid TOML"),
    ('title = 3\ncategory = "race"\nrun = 3\ncompare = "x"\nsizes = []\n', "C203 field 'title' must be str"),
])
def test_malformed_metadata_is_lines_not_a_traceback(root, make_case, toml, expected):
    make_case(files={"case.toml": toml})
    errs = errors(root)
    assert any(expected in e for e in errs), errs
    assert not any("C901" in e for e in errs), errs


def test_no_bug_marker(root, make_case):
    make_case(files={"broken.py": make_case.kernel.format(doc="d", store=make_case.broken_store.split("  #")[0])})
    errs = errors(root)
    assert any(f"{root / SLUG}/broken.py: C402 no '# BUG:' marker (" in e for e in errs), errs


def test_markers_must_sit_on_code_in_the_right_file(root, make_case):
    store = "# BUG: divides by the block width\n    " + make_case.broken_store.split("  #")[0]
    fixed = make_case.texts["fixed.py"].replace("    row = tl", "    row = tl  # BUG: no")
    make_case(files={"broken.py": make_case.kernel.format(doc="d", store=store), "fixed.py": fixed})
    errs = errors(root)
    assert any("/broken.py:13: C404 the '# BUG:' marker is on a line with no code" in e for e in errs), errs
    assert any("/fixed.py:10: C405 a '# BUG:' marker in fixed.py" in e for e in errs), errs


def test_launchers_must_share_a_signature(root, make_case):
    fixed = make_case.texts["fixed.py"].replace("def row_mean(x: torch.Tensor, out", "def row_mean(x, y, out")
    make_case(files={"fixed.py": fixed})
    errs = errors(root)
    assert any("/fixed.py:16: C107 the launcher is row_mean(x, y, out) but broken.py has row_mean(x, out)" in e
               for e in errs), errs
    make_case("other-trap", files={"broken.py": make_case.texts["broken.py"].replace("def row_mean(",
                                                                                     "def mean_rows(")},
              fields={"title": "Another row mean"})
    assert any("/broken.py: C106 defines no launcher 'row_mean'" in e for e in errors(root, "other-trap"))


def test_write_up_sections_and_markers(root, make_case):
    readme = make_case.texts["README.md"].replace("## Why\n", "").replace("<!-- /recorded:gpu -->\n", "")
    readme = readme.replace("Test a width that is not a power of two.\n", "")
    make_case(files={"README.md": readme})
    errs = errors(root)
    assert any("README.md: C302 no section '## Why'" in e for e in errs), errs
    line = readme.splitlines().index("## How to catch it") + 1
    assert any(f"README.md:{line}: C301 the section '## How to catch it' is empty" in e for e in errs), errs
    assert any("README.md: C304 no <!-- recorded:gpu --> ... <!-- /recorded:gpu --> markers" in e
               for e in errs), errs
    assert len(errs) == 3, errs


def test_slug_must_be_well_formed_and_unique(root, make_case):
    make_case()
    make_case("Row_Mean-Divides-By-Block", fields={"title": "A row mean divided by BLOCK"})
    errs = errors(root, "Row_Mean-Divides-By-Block")
    assert any("C701 the folder name is not a slug" in e and "rename the folder to row-mean-divides-by-block" in e
               for e in errs), errs
    assert any(f"C702 the slug clashes with the case '{SLUG}'" in e for e in errs), errs
    make_case("another-row-mean")
    assert any(f"C703 the same title as the case '{SLUG}'" in e for e in errors(root, "another-row-mean"))


def test_recorded_gpu_run_missing_stale_and_not_as_declared(root, make_case):
    folder = make_case(files={"recorded/gpu.json": None})
    assert any("recorded/gpu.json: C501 no recorded GPU run" in w for w in problems(root))
    record = folder / "recorded" / "gpu.json"
    record.parent.mkdir()
    env = [{"backend": "gpu", "date": "2001-01-01 00:00 UTC"}]
    record.write_text(f'{{"env": {str(env).replace(chr(39), chr(34))}, "verdicts": [{{"variant": "broken", '
                      '"observed": "ok", "expected": "wrong", "as_declared": false}]}')
    lines = problems(root)
    assert any(x.startswith("warning:") and "C504 the recorded GPU run (2001-01-01 00:00 UTC) is older than the "
               "last change to broken.py" in x for x in lines), lines
    assert any(x.startswith("error:") and "C503 the recorded GPU run of broken was ok, but the case declares wrong"
               in x for x in lines), lines
    record.write_text("{not json")
    assert any("recorded/gpu.json: C502 cannot be read" in e for e in errors(root))


def test_an_empty_folder_gets_one_line_per_missing_file(root):
    (root / "half-written").mkdir()
    errs = errors(root, "half-written")
    assert len(errs) == 5 and all(": C101 missing (" in e for e in errs), errs


def test_a_wrong_expectation_is_caught_by_running_under_the_interpreter(root, make_case):
    make_case(fields={"expect": {"interpreter": "crash"}})
    errs = errors(root, run=True)
    assert errs == [f"error: {shown(root / SLUG)}/broken.py: C603 under the interpreter the broken kernel was "
                    "wrong, but case.toml declares crash (make it show the bug, or declare what it does in [expect] "
                    f"interpreter; python -m harness case {SLUG} --backend interpreter -v shows the run)"]


def test_check_of_an_unknown_slug_is_a_usage_error(root):
    out = harness(root, "check", "no-such-case", "--no-run")
    assert out.returncode == 2 and out.stderr.startswith("error: unknown case")


# ---------------------------------------------------------------- the docs and the template agree


def test_contributing_and_the_template_have_every_required_section():
    contributing = (REPO / "CONTRIBUTING.md").read_text()
    template = scaffold.render("README.md", **scaffold.fields_for("x-y", None, None, None, None))
    for text in (contributing, template):
        for heading in SECTIONS:
            assert f"\n{heading}\n" in text, heading
        for marker in ("<!-- recorded:gpu -->", "<!-- /recorded:interpreter -->"):
            assert marker in text
    for command in ("python -m harness new", "python -m harness check", "python -m pytest -k",
                    "python -m harness record <slug> --backend gpu", "--strict"):
        assert command in contributing, command


def test_templates_render_without_placeholders():
    fields = scaffold.fields_for("x-y", "race", "store-race", "f", "A title")
    for name in ("case.toml", "case.py", "broken.py", "fixed.py", "README.md"):
        text = scaffold.render(name, **fields)
        assert "$" not in text, name


def test_the_templates_run_on_their_own_and_show_code_from_the_files():
    """The kernel templates end with the footer the cases use; the write-up's code comes through markers."""
    from harness.core import lessons, snippets

    fields = scaffold.fields_for("x-y", "race", "store-race", "f", "A title")
    footer = (REPO / "cases" / "nrm2-atomics" / "broken.py").read_text().split('if __name__ == "__main__":')[1]
    for name in ("broken.py", "fixed.py"):
        text = scaffold.render(name, **fields)
        assert text.endswith('\n\nif __name__ == "__main__":' + footer), name
        assert lessons.code_view(text)[-1][1] == "    return out", name  # the footer is not shown as code
    readme = scaffold.render("README.md", **fields)
    assert [(b.kind, b.arg) for b in snippets.blocks(readme)] == [("code", "broken.py:f_kernel,f"),
                                                                  ("diff", "broken.py:fixed.py")]
    fix = readme.split("## The fix")[1].split("## How to catch it")[0]
    assert "<!-- diff:broken.py:fixed.py -->" in fix
    assert "TODO" not in scaffold.render("case.toml", **fields).split("summary")[0]
    assert scaffold.render("case.toml", **fields).count('category = "race"\n') == 1
