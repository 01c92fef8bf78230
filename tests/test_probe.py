"""``harness probe``: every detector on a kernel of one's own, on the CPU (interpreter).

Each probe below starts worker processes, so the tests name only the detectors they
need and use small sizes. examples/probe_cases.py runs the full probe on every case
and writes docs/probe-cases.md.
"""

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from harness import probe
from harness.cli import main
from harness.probe import fuzz
from harness.probe.findings import INFO

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"
EXAMPLE = ROOT / "examples" / "rownorm" / "probe_rownorm.py"


def case_probe(slug, variant, launcher, **kw):
    return probe(str(CASES / slug / f"{variant}.py"), inputs=str(CASES / slug / "case.py"), launcher=launcher, **kw)


def line_of(path, text, nth=0):
    """``file:line`` of the nth line of ``path`` that holds ``text`` (cases are edited: never a fixed number)."""
    hits = [i for i, line in enumerate(Path(path).read_text().splitlines(), 1) if text in line]
    return f"{Path(path).relative_to(ROOT)}:{hits[nth]}"


def codes(report):
    return {f.code for f in report.problems}


def test_memcheck_locates_the_unmasked_accesses_of_add_missing_mask():
    r = case_probe("add-missing-mask", "broken", "add", detectors=["memcheck", "guards"], sizes={"n": 2051})
    store = r.by_code("P101")
    src = CASES / "add-missing-mask" / "broken.py"
    assert store and store[0].line == line_of(src, "tl.store("), r.text()
    assert store[0].programs == ["2"] and "past the end of 'out_ptr'" in store[0].message
    assert {f.line for f in r.by_code("P102")} == {line_of(src, "tl.load("), line_of(src, "tl.load(", 1)}
    assert r.by_code("P111"), r.text()  # the guard band around out changed too
    assert any(c["slug"] == "add-missing-mask" for c in store[0].cases)
    fixed = case_probe("add-missing-mask", "fixed", "add", detectors=["memcheck", "guards"], sizes={"n": 2051})
    assert fixed.ok, fixed.text()


def test_race_detector_names_both_programs_and_the_line_and_is_quiet_on_the_fix():
    r = case_probe("nrm2-race", "broken", "nrm2", detectors=["race"], sizes={"n": 3001})
    race = r.by_code("P301")
    assert race and race[0].programs == ["0", "1"], r.text()
    assert race[0].line == line_of(CASES / "nrm2-race" / "broken.py", "tl.store(") and "out_ptr[0]" in race[0].message
    assert any(c["slug"] == "nrm2-race" for c in race[0].cases)
    assert case_probe("nrm2-race", "fixed", "nrm2", detectors=["race"], sizes={"n": 3001}).ok


def test_program_orders_expose_float_atomic_order_dependence():
    r = case_probe("nrm2-atomic-order", "broken", "nrm2", detectors=["order"], sizes={"n": 5003})
    assert "P303" in codes(r), r.text()  # the case declares deterministic = true: a problem
    assert case_probe("nrm2-atomic-order", "fixed", "nrm2", detectors=["order"], sizes={"n": 5003}).ok


def test_shape_fuzzing_finds_the_smallest_failing_size_of_a_kernel_right_at_its_default():
    r = case_probe("grid-floor-division", "broken", "add", detectors=["reference", "shapes"], sizes={"n": 2048},
                   options={"fuzz_trials": 6}, seed=3)
    assert not r.by_code("P201"), r.text()  # n = 2048 is two whole blocks: right at the default size
    (f,) = r.by_code("P401")
    assert "smallest failing sizes n=1 " in f.message and "seed 3" in f.message, f.message
    assert f.defect_class == "unwritten-output"


def test_tf32_emulation_shows_matmul_tf32_default_on_a_cpu():
    sizes = {"m": 33, "n": 40, "k": 512}
    r = case_probe("matmul-tf32-default", "broken", "matmul", detectors=["reference"], sizes=sizes)
    (f,) = r.by_code("P204")
    assert f.line == line_of(CASES / "matmul-tf32-default" / "broken.py", "tl.dot("), f.line
    assert case_probe("matmul-tf32-default", "fixed", "matmul", detectors=["reference"], sizes=sizes).ok
    off = case_probe("matmul-tf32-default", "broken", "matmul", detectors=["reference"], sizes=sizes,
                     options={"tf32": False})
    assert off.ok, off.text()  # the interpreter's own exact fp32 dot hides it


def test_padding_contamination_is_caught_and_the_fix_is_quiet():
    sizes = {"n_rows": 4, "n_cols": 100}
    r = case_probe("softmax-mask-fill-zero", "broken", "softmax", detectors=["reference"], sizes=sizes)
    assert codes(r) & {"P201", "P203"}, r.text()
    assert case_probe("softmax-mask-fill-zero", "fixed", "softmax", detectors=["reference"], sizes=sizes).ok


def test_a_plain_tensor_probe_file_gets_located_out_of_bounds_findings_and_its_fix_none():
    r = probe(str(EXAMPLE), detectors=["memcheck", "race", "guards"])
    (load,) = r.by_code("P102")
    src = EXAMPLE.parent / "rownorm.py"
    assert load.line == line_of(src, "the tail reads the next row") and load.programs == ["36"], r.text()
    assert r.by_code("P101")[0].line == line_of(src, "the tail writes the next row")
    assert r.by_code("P301") and r.by_code("P111")
    fixed = probe(str(EXAMPLE), launcher="launch_fixed", options={"fuzz_trials": 6})
    assert fixed.ok and all(f.severity == INFO for f in fixed.findings), fixed.text()
    assert {d for _, d, _, _ in fixed.ran} >= {"reference", "guards", "memcheck", "race", "order", "shapes"}


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("body, says", [
    (None, "no such file"),
    ("def make_inputs(*, device, gen):\n    return {}\ndef reference():\n    return 0\n", "defines no launcher 'launch'"),
    ("def launch():\n    pass\ndef reference():\n    return 0\n", "defines no make_inputs()"),
    ("raise RuntimeError('boom at import')\n", "raised RuntimeError at import: boom at import"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, body, says):
    path = tmp_path / "mine.py"
    if body is not None:
        path.write_text(body)
    code, out, err = _cli(["probe", str(path), "--backend", "interpreter", "--only", "reference", "-q"])
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and says in err and "Traceback" not in err, err


def test_a_crashing_kernel_is_a_finding_and_the_other_detectors_still_run(tmp_path):
    path = tmp_path / "crash.py"
    path.write_text("import ctypes, torch\n"
                    "def launch(x):\n    ctypes.string_at(0)\n"
                    "def make_inputs(*, device, gen, n=4):\n    return {'x': torch.zeros(n)}\n"
                    "def reference(x):\n    return x\n")
    r = probe(str(path), detectors=["reference", "repeat"])
    assert [(f.detector, f.code) for f in r.findings] == [("reference", "P001"), ("repeat", "P001")], r.text()
    assert "SIGSEGV" in r.findings[0].message


def test_fuzz_plan_covers_tails_and_several_programs_and_shrinks_to_the_smallest():
    sizes = fuzz.plan({"n": 100}, [64], {}, seed=0, trials=12)
    values = {s["n"] for s in sizes}
    assert 1 in values and values & {63, 65, 127, 129} and max(values) > 128
    assert fuzz.plan({"n": 100}, [64], {}, seed=0, trials=12) == sizes  # seeded
    pools = {"n": fuzz.candidates(1000, [64])}
    best, _ = fuzz.shrink({"n": 1000}, lambda s: s["n"] % 64 != 0, pools)
    assert best == {"n": 1}


def test_import_harness_stays_light_and_probe_is_callable():
    code = ("import sys, harness\nassert 'torch' not in sys.modules\n"
            "from harness import probe\nassert callable(probe)\nassert 'torch' not in sys.modules\n"
            "import harness.probe.runner\nfrom harness import probe as p2\nassert callable(p2)\nprint('ok')")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr
