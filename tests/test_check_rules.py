"""Each rule of ``check`` on a synthetic case folder that breaks exactly that rule.

Every folder comes from the shared ``make_case`` fixture (tests/conftest.py), a
complete case that passes every rule; each test changes one thing and asserts the
rule's code, and, where the rule is the only one that can see the change, that no
other rule fired: so a rule that a broken part must skip (a spec, a parse) is skipped,
not crashed, and not run in a different order.
"""

import ast
import datetime
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from harness.checks import engine, folder as folder_module
from harness.checks.folder import CaseFolder, InterpreterRun
from harness.checks.problem import ERROR
from harness.checks.registry import Rule
from harness.checks.rules import all_rules, table
from harness.core import lessons, snippets
from harness.core.events import RunResult
from harness.core.spec import LIMITS, SpecError, parse_spec, validate
from harness.core.verdict import CallVerdict

REPO = Path(__file__).resolve().parents[1]
SLUG = "row-mean-divides-by-block"


def codes(folder: Path, root: Path | None = None, interpreter: InterpreterRun | None = None) -> list[str]:
    """The codes ``check --no-run`` gives ``folder`` (with ``interpreter`` as its interpreter run, if given)."""
    case = CaseFolder(folder, root or folder.parent)
    case.interpreter = interpreter
    report = engine.check_case(case)
    for p in report.problems:
        assert str(p).startswith(f"{p.level}: {case.prefix}") and f": {p.code} " in str(p), str(p)
    return report.codes


def only(code: str, found: list[str]) -> None:
    assert found and set(found) == {code}, found


def replaced(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def readme(make_case, old: str, new: str) -> dict:
    return {"README.md": replaced(make_case.texts["README.md"], old, new)}


def gpu_json(date: str, as_declared: bool = True) -> str:
    verdicts = [{"variant": "broken", "call": 0, "expected": "wrong", "observed": "wrong" if as_declared else "ok",
                 "as_declared": as_declared}]
    return json.dumps({"env": [{"backend": "gpu", "date": date}], "verdicts": verdicts})


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# ---------------------------------------------------------------- a clean folder


def test_the_fixture_case_raises_nothing(make_case):
    assert codes(make_case()) == []


# ---------------------------------------------------------------- C1xx files


def test_C101_file_missing(make_case):
    only("C101", codes(make_case(files={"fixed.py": None})))


def test_C102_file_unreadable(make_case):
    folder = make_case()
    (folder / "case.py").write_bytes(b"\xff\xfe not utf-8")
    only("C102", codes(folder))


def test_C103_python_syntax(make_case):
    only("C103", codes(make_case(files={"broken.py": make_case.texts["broken.py"] + "\ndef (:\n"})))


def test_C104_kernel_docstring(make_case):
    text = make_case.texts["broken.py"].split("\n", 1)[1]
    only("C104", codes(make_case(files={"broken.py": text})))


def test_C105_case_functions(make_case):
    text = replaced(make_case.texts["case.py"], "def reference(", "def the_reference(")
    only("C105", codes(make_case(files={"case.py": text})))


def test_C106_launcher_missing(make_case):
    texts = {f: replaced(make_case.texts[f], "def row_mean(", "def mean_of_rows(") for f in ("broken.py", "fixed.py")}
    assert codes(make_case(files=texts)) == ["C106", "C106"]


def test_C107_launcher_signature(make_case):
    text = replaced(make_case.texts["fixed.py"], "def row_mean(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:",
                    "def row_mean(x, y, out):  # FIX: takes y")
    only("C107", codes(make_case(files={"fixed.py": text})))


# ---------------------------------------------------------------- C2xx metadata


def test_C201_toml_syntax(make_case):
    only("C201", codes(make_case(files={"case.toml": "title = [unclosed\n"})))


def test_C202_field_missing(make_case):
    only("C202", codes(make_case(fields={"summary": None})))


def test_C203_field_type(make_case):
    only("C203", codes(make_case(fields={"run": 3})))


def test_C204_field_value(make_case):
    only("C204", codes(make_case(fields={"category": "vibes"})))


def test_C205_table_unknown_key(make_case):
    only("C205", codes(make_case(fields={"run": {"cals": 2}})))


def test_C206_spec_rejected(make_case, monkeypatch):
    """What parse_spec refuses when the validator found nothing (a fault in the harness) is still reported."""
    def refuse(slug, path, meta):
        raise SpecError(f"cases/{slug}/case.toml: refused for a reason the validator missed")

    monkeypatch.setattr(folder_module, "parse_spec", refuse)
    only("C206", codes(make_case()))


def test_C207_unknown_field(make_case):
    only("C207", codes(make_case(fields={"flavour": "vanilla"})))


def test_C208_seen_in_empty(make_case):
    only("C208", codes(make_case(fields={"seen_in": []})))


# ---------------------------------------------------------------- C3xx write-up


def test_C301_section_empty(make_case):
    files = readme(make_case, "The masked lanes add nothing to the sum but count in the divisor.\n", "<!-- x -->\n")
    only("C301", codes(make_case(files=files)))


def test_C302_section_missing(make_case):
    only("C302", codes(make_case(files=readme(make_case, "## Performance\n\nNot an operator.\n", ""))))


def test_C303_fix_without_diff(make_case):
    only("C303", codes(make_case(files=readme(make_case, "```diff", "```text"))))


def test_C304_recorded_markers_missing(make_case):
    only("C304", codes(make_case(files=readme(make_case, "<!-- /recorded:interpreter -->\n", ""))))


def test_C305_title_heading_missing(make_case):
    only("C305", codes(make_case(files=readme(make_case, "# Row mean", "Row mean"))))


def test_C306_title_mismatch(make_case):
    only("C306", codes(make_case(files=readme(make_case, "# Row mean divided", "# A row mean divided"))))


def test_C307_summary_table_missing(make_case):
    only("C307", codes(make_case(files=readme(make_case, "| category | defect |", "| kind | label |"))))


def test_C308_summary_table_mismatch(make_case):
    only("C308", codes(make_case(files=readme(make_case, "| reduction | padding", "| bounds | padding"))))


FIX_DIFF = """```diff
-    tl.store(out_ptr + row, tl.sum(x) / BLOCK)
+    tl.store(out_ptr + row, tl.sum(x) / n_cols)
```
"""


def test_C309_code_block_stale(make_case):
    stale = "<!-- diff:broken.py:fixed.py -->\n" + FIX_DIFF + "<!-- /diff -->\n"  # typed by hand: no @@, no context
    folder = make_case(files=readme(make_case, FIX_DIFF, stale))
    only("C309", codes(folder))
    case = CaseFolder(folder, folder.parent)
    (p,) = engine.check_case(case).problems
    assert p.line == case.readme.lines.index("<!-- diff:broken.py:fixed.py -->") + 1, p
    assert "is stale" in p.what and f"python -m harness record {SLUG} --splice-only" in p.fix, p
    (folder / "README.md").write_text(snippets.fill(case.readme.text, folder))
    assert codes(folder) == []


def test_C309_a_block_that_cannot_be_filled_says_what_to_correct(make_case):
    bad = "<!-- code:broken.py:no_such_kernel -->\n<!-- /code -->\n\n" + FIX_DIFF
    case = CaseFolder(folder := make_case(files=readme(make_case, FIX_DIFF, bad)), folder.parent)
    (p,) = engine.check_case(case).problems
    assert p.code == "C309" and "defines no top-level 'no_such_kernel'" in p.what and "correct the marker" in p.fix


LONG_FIX = "\n".join(["    total = tl.sum(x)  # FIX: sum, then divide by the real number of columns"]
                     + [f"    total = total + 0.0 * {i}" for i in range(6)]
                     + ["    tl.store(out_ptr + row, total / n_cols)"])


def test_C310_long_fix_unexplained(make_case):
    fixed = replaced(make_case.texts["fixed.py"], make_case.fixed_store, LONG_FIX.lstrip())
    only("C310", codes(make_case(files={"fixed.py": fixed})))
    why = "This diff is longer than it needs to be because the test says so.\n"
    files = {"fixed.py": fixed, **readme(make_case, FIX_DIFF, FIX_DIFF + "\n" + why)}
    assert codes(make_case(files=files)) == []


# ---------------------------------------------------------------- C4xx markers


def test_C401_todo_left(make_case):
    only("C401", codes(make_case(files={"case.py": make_case.texts["case.py"] + "# TODO: bigger inputs\n"})))


def test_C402_bug_marker_missing(make_case):
    text = replaced(make_case.texts["broken.py"], "  # BUG: divides by the block width, not n_cols", "")
    only("C402", codes(make_case(files={"broken.py": text})))


def test_C403_fix_marker_missing(make_case):
    text = replaced(make_case.texts["fixed.py"], "  # FIX: divide by the real number of columns", "")
    only("C403", codes(make_case(files={"fixed.py": text})))


def test_C404_marker_without_code(make_case):
    text = replaced(make_case.texts["broken.py"], "    row = tl.program_id(0)\n",
                    "    # BUG: the next lines are wrong\n    row = tl.program_id(0)\n")
    only("C404", codes(make_case(files={"broken.py": text})))


def test_C405_marker_wrong_file(make_case):
    text = replaced(make_case.texts["fixed.py"], "row = tl.program_id(0)", "row = tl.program_id(0)  # BUG: copied")
    only("C405", codes(make_case(files={"fixed.py": text})))


def test_C406_bug_marker_without_reason(make_case):
    text = replaced(make_case.texts["broken.py"], "# BUG: divides by the block width, not n_cols", "# BUG:")
    only("C406", codes(make_case(files={"broken.py": text})))


def test_C407_fix_line_unchanged(make_case):
    text = replaced(make_case.texts["fixed.py"], "row = tl.program_id(0)", "row = tl.program_id(0)  # FIX: same")
    only("C407", codes(make_case(files={"fixed.py": text})))


def test_C408_bug_on_kept_line(make_case):
    text = replaced(make_case.texts["broken.py"], "row = tl.program_id(0)", "row = tl.program_id(0)  # BUG: one row")
    only("C408", codes(make_case(files={"broken.py": text})))
    noted = replaced(make_case.texts["broken.py"], "row = tl.program_id(0)", "row = tl.program_id(0)  # NOTE: a row")
    assert codes(make_case(files={"broken.py": noted})) == []


def test_C408_a_fix_that_only_adds_lines_may_mark_the_line_beside_them(make_case):
    body = "    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)\n"
    store = "    tl.store(out_ptr + row, tl.sum(x) / n_cols)"
    base = replaced(make_case.texts["broken.py"], "    " + make_case.broken_store, store)
    broken = replaced(base, store, store + "  # BUG: x still holds the padding lanes")
    fixed = replaced(base, body, body + "    x = tl.where(cols < n_cols, x, 0.0)  # FIX: zero the padding lanes\n")
    assert codes(make_case(files={"broken.py": broken, "fixed.py": fixed})) == []
    far = replaced(base, "row = tl.program_id(0)", "row = tl.program_id(0)  # BUG: far from the insertion")
    only("C408", codes(make_case(files={"broken.py": far, "fixed.py": fixed})))


def test_C409_fix_without_reason(make_case):
    text = replaced(make_case.texts["fixed.py"], "# FIX: divide by the real number of columns", "# FIX:")
    only("C409", codes(make_case(files={"fixed.py": text})))


def test_C410_change_without_fix(make_case):
    text = replaced(make_case.texts["fixed.py"], "row = tl.program_id(0)", "row = tl.program_id(axis=0)")
    only("C410", codes(make_case(files={"fixed.py": text})))


def test_C411_deletion_without_bug(make_case):
    text = replaced(make_case.texts["broken.py"], "    row = tl.program_id(0)\n",
                    "    row = tl.program_id(0)\n    tl.static_print(n_cols)\n")
    only("C411", codes(make_case(files={"broken.py": text})))
    marked = replaced(text, "tl.static_print(n_cols)", "tl.static_print(n_cols)  # BUG: prints at compile time")
    assert codes(make_case(files={"broken.py": marked})) == []


# ---------------------------------------------------------------- C5xx records


def test_C501_gpu_run_missing(make_case):
    only("C501", codes(make_case(files={"recorded/gpu.json": None})))


def test_C502_gpu_run_unreadable(make_case):
    only("C502", codes(make_case(files={"recorded/gpu.json": "{not json"})))


def test_C503_gpu_run_not_as_declared(make_case):
    only("C503", codes(make_case(files={"recorded/gpu.json": gpu_json(now(), as_declared=False)})))


def test_C504_gpu_run_stale(make_case):
    found = codes(make_case(files={"recorded/gpu.json": gpu_json("2001-01-01 00:00 UTC")}))
    assert found == ["C504"] * 3, found  # case.py, broken.py and fixed.py all changed after it


def test_C505_recorded_block_empty(make_case):
    files = readme(make_case, "<!-- recorded:interpreter -->\nbroken: wrong, fixed: ok\n",
                   "<!-- recorded:interpreter -->\n")
    only("C505", codes(make_case(files=files)))


# ---------------------------------------------------------------- C6xx interpreter run (runs made up)


def run_of(variant: str, status: str = "done", message: str = "", tail: str = "") -> RunResult:
    return RunResult(slug=SLUG, variant=variant, backend="interpreter", status=status, message=message,
                     output_tail=tail)


def verdict(variant: str, expected: str, observed: str) -> CallVerdict:
    return CallVerdict(slug=SLUG, variant=variant, backend="interpreter", call=0, expected=expected,
                       observed=observed, as_declared=expected == observed)


def test_C601_interpreter_setup_failed(make_case):
    folder = make_case()
    tail = f'Traceback (most recent call last):\n  File "{folder / "case.py"}", line 9, in make_inputs\n'
    run = InterpreterRun([run_of("broken", "error", "NameError: name 'x' is not defined", tail), run_of("fixed")],
                         [verdict("broken", "wrong", "crash"), verdict("fixed", "ok", "ok")])
    only("C601", codes(folder, interpreter=run))


def test_C602_interpreter_fixed_not_ok(make_case):
    run = InterpreterRun([run_of("broken"), run_of("fixed")],
                         [verdict("broken", "wrong", "wrong"), verdict("fixed", "ok", "wrong")])
    only("C602", codes(make_case(), interpreter=run))


def test_C603_interpreter_broken_not_as_declared(make_case):
    run = InterpreterRun([run_of("broken"), run_of("fixed")],
                         [verdict("broken", "wrong", "ok"), verdict("fixed", "ok", "ok")])
    only("C603", codes(make_case(), interpreter=run))


def test_C604_interpreter_run_failed(make_case):
    only("C604", codes(make_case(), interpreter=InterpreterRun([], [], "RuntimeError: no worker")))


# ---------------------------------------------------------------- C7xx slug


def test_C701_slug_malformed(make_case):
    only("C701", codes(make_case("Row_Mean")))


def test_C702_slug_clash(make_case):
    make_case("rowmean-divides-by-block", fields={"title": "Another trap"})
    only("C702", codes(make_case()))


def test_C703_title_duplicate(make_case):
    make_case("another-row-mean")
    only("C703", codes(make_case()))


# ---------------------------------------------------------------- C8xx copies between cases


def test_C801_near_copy(make_case):
    folder = make_case()
    make_case("another-row-mean", fields={"title": "Another trap"})  # the same files: intended copies
    assert codes(folder) == []
    drifted = replaced(make_case.texts["case.py"], "+ 1.0", "+ 2.0")
    make_case("a-drifted-row-mean", fields={"title": "A third trap"}, files={"case.py": drifted})
    only("C801", codes(folder))
    (p,) = engine.check_case(CaseFolder(folder, folder.parent)).problems
    assert p.file == "case.py" and p.line == 9 and "near-copy of a-drifted-row-mean/case.py" in p.what, p


def test_cross_case_rules_compare_each_pair_once_and_only_what_can_match(make_case, monkeypatch):
    """One pass for the whole run; checking one case does not compare the other cases with each other."""
    passes = []
    real = lessons.near_copies
    monkeypatch.setattr(lessons, "near_copies", lambda files, **kw: passes.append(sorted(files)) or real(files, **kw))
    folders = [make_case(f"case-{i}", fields={"title": f"Trap {i}"}) for i in range(3)]
    (folders[0].parent / "unrelated").mkdir()
    (folders[0].parent / "unrelated" / "case.py").write_text("\n".join(f"x{i} = {i}" for i in range(40)) + "\n")
    engine.check_folders(folders, folders[0].parent, run=False)
    seen = [f for files in passes for f in files]
    assert len(seen) == len(set(seen)) == 9 and not any("unrelated" in f for f in seen), passes  # each file once
    assert all(len({f.rsplit("/", 1)[1] for f in files}) == 1 for files in passes)  # case.py with case.py ...
    passes.clear()
    engine.check_folders(folders[:1], folders[0].parent, run=False)
    seen = [f for files in passes for f in files]
    assert [f for f in seen if not f.startswith("case-0/")] == [f for f in seen if f.startswith("(unchecked)/")]
    assert len(seen) == 9, seen  # case-0's three files, and the two others' that could match them


# ---------------------------------------------------------------- C901 a rule that crashes


def test_C901_a_crashing_rule_is_one_line_and_the_others_still_run(make_case):
    def boom(case):
        raise KeyError("surprise")

    bad = Rule("C199", "boom", ERROR, (), boom, "test")
    folder = make_case(files={"fixed.py": None})
    case = CaseFolder(folder, folder.parent)
    report = engine.check_case(case, [bad] + all_rules())
    assert report.codes == ["C901", "C101"], report.codes
    assert "the rule C199 (boom) could not finish: KeyError: 'surprise'" in str(report.problems[0])


# ---------------------------------------------------------------- every rule tested and documented


def test_every_rule_has_a_test_here():
    tested = {name.split("_")[1] for name in globals() if name.startswith("test_C")}
    assert tested == {r.code for r in all_rules()}, tested ^ {r.code for r in all_rules()}


def test_docs_list_every_rule_as_the_registry_does():
    doc = (REPO / "docs" / "check-rules.md").read_text()
    rows = [line for line in doc.splitlines() if line.startswith("| C")]
    listed = {line.split("|")[1].strip(): line.split("|")[2].strip().strip("`") for line in rows}
    assert listed == {r.code: r.name for r in all_rules()}
    assert table() in doc, "docs/check-rules.md: paste the output of python -m harness.checks.rules"


def test_rule_codes_are_stable_and_grouped_by_family():
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules) == len({r.name for r in rules})
    for r in rules:
        assert r.what and r.why, r.code
    families = {r.code[:2]: r.family for r in rules}
    assert families == {"C1": "files", "C2": "metadata", "C3": "write-up", "C4": "markers", "C5": "records",
                        "C6": "interpreter run", "C7": "slug", "C8": "copies between cases", "C9": "the harness"}


# ---------------------------------------------------------------- metadata: one validator, the first error raised


BAD_FIELDS = [
    {"title": 3}, {"title": "two\nlines"}, {"category": "vibes"}, {"defect": None}, {"launcher": "a b"},
    {"run": 3}, {"run": {"calls": 0}}, {"run": {"trials": 0}}, {"run": {"trials": {"tpu": 1}}},
    {"run": {"trials": {"gpu": 1.5}}}, {"run": {"timeout": "long"}}, {"run": {"gpus": True}}, {"run": {"x": 1}},
    {"run": {"trials": 2**63 - 1}}, {"run": {"trials": {"gpu": LIMITS["trials"] + 1}}},
    {"run": {"calls": LIMITS["calls"] + 1}}, {"run": {"timeout": LIMITS["timeout"] + 1}},
    {"run": {"gpus": LIMITS["gpus"] + 1}}, {"compare": {"rtl": 1e-3}}, {"bench": {"sizes": [{}], "units": "GB/s"}},
    {"diagnosis": {"evidence": ["tail"], "extra": 1}}, {"diagnosis": {"evidence": ["moon"]}}, {"diagnosis": 3},
    {"expect": None}, {"expect": "wrong"}, {"expect": {"gpu": None}}, {"expect": {"gpu": 3}},
    {"expect": {"gpu": ["wrong", "ok"]}}, {"expect": {"gpu": "wrong|explodes"}}, {"expect": {"gpu": "wrong|crash"}},
    {"expect": {"gpu": "skip"}}, {"expect": {"gpu": "ok", "interpreter": "hidden"}}, {"expect": {"x": 1}},
    {"calibration": "yes"}, {"calibration": True}, {"triggers": ["tail", "moon"]}, {"triggers": "tail"},
    {"seen_in": "https://x"}, {"compare": []}, {"compare": {"rtol": -1}}, {"compare": {"atol": "0"}},
    {"compare": {"deterministic": 1}}, {"sizes": []}, {"sizes": {"gpu": 3}}, {"sizes": {"cpu": {}}},
    {"bench": 3}, {"bench": {"unit": "FPS", "sizes": [{}]}}, {"bench": {"sizes": []}},
]
GOOD_FIELDS = [
    {}, {"run": {"calls": 2}, "expect": {"gpu": ["wrong", "ok"], "interpreter": "wrong"}},
    {"expect": {"gpu": "wrong|crash", "gpu_why": "the layout decides"}},
    {"expect": {"gpu": "skip", "gpu_skip_reason": "needs 80 GB"}}, {"triggers": ["tail"]},
    {"run": {"trials": {"gpu": 2}, "timeout": 60, "gpus": 2}}, {"bench": {"unit": "GB/s", "sizes": [{"n": 1}]}},
    {"calibration": True, "expect": {"gpu": "ok", "interpreter": "ok"}}, {"sizes": {"sanitizer": {"n": 4}}},
    {"run": {"trials": LIMITS["trials"], "calls": 1, "timeout": LIMITS["timeout"], "gpus": LIMITS["gpus"]}},
    {"diagnosis": {"evidence": ["tail", "oob-store"]}},
]


@pytest.mark.parametrize("fields", BAD_FIELDS + GOOD_FIELDS, ids=repr)
def test_field_errors_agree_with_parse_spec(make_case, fields):
    """The validator finds a problem exactly where parse_spec refuses the case, and parse_spec names the first."""
    meta = make_case.meta_with(fields)
    try:
        parse_spec(SLUG, Path(SLUG), meta)
        refused = None
    except SpecError as e:
        refused = str(e)
    errors = validate(meta)
    assert bool(errors) == bool(refused), (errors, refused)
    if refused:
        assert refused.endswith(errors[0].what), (errors, refused)
    assert (fields in BAD_FIELDS) == bool(errors)


def test_every_bad_field_is_reported_from_one_parse(make_case, monkeypatch):
    calls = []
    monkeypatch.setattr(tomllib, "loads", lambda text, _real=tomllib.loads: calls.append(1) or _real(text))
    folder = make_case(fields={"category": "vibes", "summary": None, "run": {"trials": 0},
                               "compare": {"rtol": -1}, "expect": {"interpreter": "explodes"}})
    found = codes(folder)
    assert sorted(found) == ["C202", "C204", "C204", "C204", "C204"], found
    assert len(calls) == 1  # case.toml parsed once for every rule (no other case here to compare titles with)


def test_a_toml_problem_points_at_its_line(make_case):
    folder = make_case(fields={"compare": {"rtol": -1}})
    case = CaseFolder(folder, folder.parent)
    (p,) = engine.check_case(case).problems
    line = case.text["case.toml"].splitlines()[p.line - 1]
    assert p.code == "C204" and line.startswith("rtol = -1"), (p, line)


# ---------------------------------------------------------------- the command


def check_cli(root: Path, *args) -> subprocess.CompletedProcess:
    env = dict(os.environ, CASEBOOK_CASES=str(root), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "harness", "check", "--no-run", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def test_check_exit_status_and_lines(make_case):
    folder = make_case()
    clean = check_cli(folder.parent)
    assert clean.returncode == 0 and f"ok: {folder}" in clean.stdout, clean.stdout + clean.stderr
    make_case("half-made", files={"README.md": None})
    (folder.parent / "garbage").mkdir()
    (folder.parent / "garbage" / "case.toml").write_bytes(b"\x00\xff" * 10)
    (folder.parent / "garbage" / "broken.py").write_text("def (:\n\x00")
    bad = check_cli(folder.parent)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "Traceback" not in bad.stdout + bad.stderr and "C901" not in bad.stdout, bad.stdout + bad.stderr
    assert ": C101 missing (the write-up" in bad.stdout
    assert "garbage/case.toml: C102 " in bad.stdout and "garbage/broken.py" in bad.stdout


def test_importing_the_commands_imports_neither_torch_nor_triton():
    code = ("import sys, harness.commands.check, harness.commands.new, harness.checks.engine; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'triton')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


# ---------------------------------------------------------------- the package's own shape


CHECKS = sorted((REPO / "harness" / "checks").rglob("*.py"))
LOWER_LAYERS = ("harness.errors", "harness.core", "harness.run", "harness.checks")


@pytest.mark.parametrize("path", CHECKS, ids=lambda p: str(p.relative_to(REPO)))
def test_checks_import_only_their_own_layer_or_lower(path):
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
        for name in names:
            if name.startswith("harness"):
                assert name.startswith(LOWER_LAYERS), f"{path.name} imports {name}"


@pytest.mark.parametrize("path", CHECKS, ids=lambda p: str(p.relative_to(REPO)))
def test_functions_and_classes_stay_small(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            size = node.end_lineno - node.lineno + 1
            limit = 150 if isinstance(node, ast.ClassDef) else 60
            assert size <= limit, f"{path.name}: {node.name} is {size} lines"


def test_unknown_keys_inside_every_table_are_errors(make_case):
    for table_name in ("compare", "bench", "diagnosis"):
        base = {"bench": {"sizes": [{"n": 4}]}, "diagnosis": {"evidence": ["tail"]}}.get(table_name, {})
        found = codes(make_case(fields={table_name: {**base, "misspelt": 1}}))
        assert found.count("C205") == 1 and "C206" not in found, (table_name, found)


def test_a_diagnosis_table_is_read_not_an_unknown_field(make_case):
    assert codes(make_case(fields={"diagnosis": {"evidence": ["tail"]}})) == []


def test_a_huge_trial_count_is_refused_with_its_limit(make_case):
    meta = make_case.meta_with({"run": {"trials": 2**63 - 1}})
    with pytest.raises(SpecError, match=f"trials must be from 1 to {LIMITS['trials']}"):
        parse_spec(SLUG, Path(SLUG), meta)
