"""``lint --fix`` and ``--diff`` (issue 39 item 4): each mechanical fix applied to the broken kernel of the case
it names silences its rule there, leaves a file that parses, and, where the case's fixed.py is that same fix,
gives the very kernel of fixed.py (its AST); under the probe (interpreter), inplace-autotune fixed by lint alone
is right."""

import ast
import json
import math
import os
import stat
from pathlib import Path

import pytest

from harness.cli import main
from harness.lint import lint_source
from harness.lint.fixing import fixed
from harness.lint.model import Module

REPO = Path(__file__).resolve().parents[1]

FIXES = [  # (rule, case, kernel: the fixed kernel is exactly fixed.py's)
    ("TL201", "masked-load-no-other", False),
    ("TL202", "softmax-mask-fill-zero", False),
    ("TL301", "nrm2-atomics", True),
    ("TL301", "splitk-matmul-autotune", True),
    ("TL302", "inplace-autotune", True),
    ("TL501", "int32-offset-overflow", True),
    ("TL501", "int32-pid-stride-overflow", False),
    ("TL601", "matmul-tf32-default", True),
]


@pytest.mark.parametrize("code, case, same", FIXES, ids=[f"{c}-{k}" for c, k, _ in FIXES])
def test_each_fix_on_the_broken_kernel_of_its_case(code, case, same):
    broken = (REPO / "cases" / case / "broken.py").read_text()
    assert code in {f.code for f in lint_source(broken, select=[code])}, "the rule fires on the case's broken kernel"
    after, made = fixed(broken, f"cases/{case}/broken.py", select=[code])
    assert made and {f.code for f in made} == {code}
    ast.parse(after)
    assert [str(f) for f in lint_source(after, select=[code])] == [], "the fixed source passes the rule"
    if same:
        want = Module((REPO / "cases" / case / "fixed.py").read_text()).kernels
        got = Module(after).kernels
        assert {k: ast.dump(got[k].node) for k in want} == {k: ast.dump(v.node) for k, v in want.items()}


@pytest.mark.parametrize("case", ["masked-load-no-other", "softmax-mask-fill-zero"])
def test_other_is_the_neutral_element_of_the_max(case):
    code = "TL201" if case == "masked-load-no-other" else "TL202"
    after, made = fixed((REPO / "cases" / case / "broken.py").read_text(), "k.py", select=[code])
    load = next(n for n in ast.walk(ast.parse(after)) if isinstance(n, ast.Call) and n.lineno == made[0].fix.edits[0][0]
                and ast.unparse(n.func).endswith("load"))
    other = next(k.value for k in load.keywords if k.arg == "other")
    assert eval(ast.unparse(other)) == -math.inf  # a max and an argmax: -inf never wins


def test_fix_writes_whole_files_keeping_their_mode_and_encoding(tmp_path, capsys):
    broken = (REPO / "cases" / "inplace-autotune" / "broken.py").read_text()
    target = tmp_path / "k.py"
    target.write_bytes(("# -*- coding: latin-1 -*-\n# caf\xe9\n" + broken).encode("latin-1"))
    target.chmod(0o754)
    assert main(["lint", str(target), "--diff"]) == 1
    out = capsys.readouterr()
    assert '+    key=["n"], restore_value=["x_ptr"],' in out.out and "1 fix in 1 file (not written" in out.err
    assert target.read_bytes().decode("latin-1").endswith(broken), "--diff writes nothing"
    code = main(["lint", str(target), "--fix", "--format", "json"])
    out = capsys.readouterr()
    left = [f["code"] for f in json.loads(out.out)["findings"]]
    assert "fixed 1 finding in 1 file" in out.err and "TL302" not in left
    assert code == (1 if left else 0), "after --fix, the status is that of what is left"
    text = target.read_bytes().decode("latin-1")
    assert "# caf\xe9\n" in text and 'restore_value=["x_ptr"]' in text
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o754
    assert [p.name for p in tmp_path.iterdir()] == ["k.py"], "no temporary file left beside it"
    assert main(["lint", str(target), "--diff"]) == 0 and capsys.readouterr().out == "", "nothing left to fix"


def test_two_fixes_of_one_autotune_extend_one_list(tmp_path, capsys):
    src = '''import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024})], key=["n"])
@triton.jit
def two_kernel(x_ptr, a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(a_ptr, tl.sum(x))
    tl.atomic_add(b_ptr, tl.sum(x * x))
'''
    after, made = fixed(src, "k.py")
    assert [f.code for f in made] == ["TL301", "TL301"]
    assert 'key=["n"], reset_to_zero=["a_ptr", "b_ptr"])' in after and lint_source(after) == []


def test_a_file_that_cannot_be_fixed_is_one_line_and_the_others_are_fixed(tmp_path, capsys, monkeypatch):
    from harness.lint import fixing

    good = tmp_path / "good.py"
    good.write_text((REPO / "cases" / "inplace-autotune" / "broken.py").read_text())
    (tmp_path / "broken.py").write_text("import triton\ndef (:\n")
    (tmp_path / "boom.py").write_text(good.read_text())
    real = fixing.fixed

    def fixed_or_boom(source, path, *a, **k):
        if path.endswith("boom.py"):
            raise KeyError("a bug in a fix")
        return real(source, path, *a, **k)

    monkeypatch.setattr(fixing, "fixed", fixed_or_boom)
    assert main(["lint", str(tmp_path), "--fix"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert f"error: {tmp_path / 'boom.py'}: lint failed on this file: KeyError: 'a bug in a fix'" in err
    assert f"error: {tmp_path / 'broken.py'}:2: does not parse: invalid syntax" in err
    fix = 'key=["n"], restore_value=["x_ptr"],'
    assert fix in good.read_text() and fix not in (tmp_path / "boom.py").read_text()


@pytest.mark.interpreter
def test_the_probe_finds_the_lint_fixed_kernel_right(tmp_path):
    """inplace-autotune's broken kernel, fixed by ``lint --fix`` alone (restore_value=), under the probe with the
    case's own inputs: the broken one is caught (autotune-accumulation), the fixed one has no error."""
    from harness import probe

    case = REPO / "cases" / "inplace-autotune"
    broken = (case / "broken.py").read_text()
    (tmp_path / "broken.py").write_text(broken)
    (tmp_path / "fixed_by_lint.py").write_text(fixed(broken, "broken.py", select=["TL302"])[0])
    kw = dict(inputs=str(case / "case.py"), launcher="add_", backends=["interpreter"])
    before = probe(str(tmp_path / "broken.py"), **kw)
    after = probe(str(tmp_path / "fixed_by_lint.py"), **kw)
    assert not before.ok and before.diagnosis and before.diagnosis[0]["case"] == "inplace-autotune"
    assert after.ok and not after.errors, after.text()
