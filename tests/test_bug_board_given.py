"""The board's two runs (bugs/README.md): the default run holds what a user's probe file would
(the author's input switches pinned, no GPU_SIZES, --large by the sizes' own rule), the run given
the trigger holds what the entry's author knew; and shards of the board, merged by --no-run."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.bugs import board, manifest, plain, record
from harness.probe.target import load

ROOT = Path(__file__).resolve().parents[1]

GLUE = textwrap.dedent('''\
    import torch

    def launch_buggy(x, w):
        return x
    launch_fixed = launch_buggy

    def make_inputs(*, device, gen, n=8, cols=4, transposed=0, nan_rows=0, experts=4):
        x = torch.randn(n, cols, generator=gen)
        if transposed:
            x = torch.randn(cols, n, generator=gen).t()
        x[:nan_rows] = float("nan")
        w = torch.randint(0, experts, (n, n))
        return {"x": x, "w": w}

    def reference(x, w):
        return x
    FUZZ = {"n": (1, TOP), "cols": (1, 4)}
    ''')

TOML = textwrap.dedent('''\
    title = "t"
    project = "demo"
    repository = "https://github.com/example/demo"
    licence = "MIT"
    kind = "reproduction"
    category = "bounds"
    defect = "out-of-bounds-read"
    triggers = ["tail"]
    shows_on = ["interpreter"]
    summary = "s"
    [links]
    fix = "https://github.com/example/demo/pull/1"
    [buggy]
    commit = "a"
    [fixed]
    commit = "b"
    [verify]
    sizes = { n = 5, transposed = 1 }
    gpu_sizes = { n = 70000, nan_rows = 2 }
    ''')


def _entry(tmp_path: Path, top: int = 1 << 16) -> manifest.Entry:
    d = tmp_path / "bugs" / "demo-entry"
    d.mkdir(parents=True)
    (d / "bug.toml").write_text(TOML)
    (d / "probe.py").write_text(GLUE.replace("TOP", str(top)))
    return manifest.read(d)


def test_the_value_a_keyword_is_changed_to_stays_in_its_range():
    assert plain.other_value(8, None, None) == 16
    assert plain.other_value(0, None, None) == 1
    assert plain.other_value(4, 2, 4) == 2  # twice is past the top: the range's other end
    assert plain.other_value(3, 1, 5) == 5
    assert plain.other_value(7, 7, 7) is None  # FUZZ pins it


def test_the_profile_finds_the_keywords_that_shape_no_tensor_and_the_largest_input_at_the_tops(tmp_path):
    e = _entry(tmp_path)
    p = plain.profile(load(str(e.glue), launcher="launch_buggy"))
    assert p["shapeless"] == ["transposed", "nan_rows", "experts"]  # n and cols shape x and w
    assert p["defaults"] == {"n": 8, "cols": 4, "transposed": 0, "nan_rows": 0, "experts": 4}
    # w is n x n: at n = 2**16 it holds 2**32 elements, past int32 offsets: --large by the rule
    assert p["largest"] == {"tensor": "w", "numel": 1 << 32, "sizes": {"n": 1 << 16, "cols": 4}}
    assert p["large"] is True


def test_large_is_off_where_the_ranges_stay_below_2_31_elements(tmp_path):
    e = _entry(tmp_path, top=1 << 15)  # w: 2**30 elements at the top
    p = plain.profile(load(str(e.glue), launcher="launch_buggy"))
    assert (p["largest"]["numel"], p["large"]) == (1 << 30, False)
    _, options, said = board.given(e, "gpu+interpreter", p, "probe")
    assert "large" not in options and said["large"] == "decided by the probe"


def test_the_default_run_pins_only_the_switches_the_trigger_sets(tmp_path):
    e = _entry(tmp_path)
    prof = {"shapeless": ["transposed", "nan_rows", "experts"], "defaults": {"n": 8, "transposed": 0, "nan_rows": 0,
                                                                             "experts": 4}, "large": True}
    # transposed (interpreter trigger) and nan_rows (the GPU's) are the author's; experts the trigger never sets
    assert board.switches(e, prof) == ["nan_rows", "transposed"]
    sizes, options, said = board.given(e, "gpu+interpreter", prof, "probe")
    # no --large in the default run, even where FUZZ's tops reach 2**31 elements: the probe decides on that run
    # from the launched kernels (an int32 offset), as it does for a user who never passes --large
    assert sizes == {} and options == {"pinned": ["nan_rows", "transposed"], "gpu_sizes": False}
    assert said["run"] == "default" and said["large"] == "decided by the probe"
    assert "large" not in board.given(e, "interpreter", prof, "probe")[1]


def test_the_trigger_run_starts_from_the_trigger_and_gives_the_gpu_its_own(tmp_path):
    e = _entry(tmp_path)
    prof = {"shapeless": ["transposed"], "defaults": {"n": 8, "transposed": 0}, "large": False}
    sizes, options, said = board.given(e, "gpu+interpreter", prof, "trigger")
    assert sizes == {"n": 5, "transposed": 1}
    assert options == {"large": True, "gpu_sizes": {"n": 70000, "nan_rows": 2}}
    assert said["run"] == "trigger"
    assert board.given(e, "interpreter", prof, "trigger")[1]["large"] is False


def test_the_worker_ignores_or_replaces_gpu_sizes(tmp_path):
    from harness.probe.budget import Budget
    from harness.probe.request import ProbeRequest
    from harness.probe.worker import _load

    f = tmp_path / "k.py"
    f.write_text("import torch\ndef launch(x):\n    return x\n"
                 "def make_inputs(*, device, gen, n=4, m=2):\n    return {'x': torch.zeros(n, m)}\n"
                 "def reference(x):\n    return x\nGPU_SIZES = {'n': 100}\n")
    said = []

    def target(**options):
        req = ProbeRequest(str(f), options=options, events=str(tmp_path / "ev"))
        return _load(req, lambda **e: said.append(e), Budget(0))

    assert target().gpu_sizes == {"n": 100, "m": 2}
    assert target(gpu_sizes=False).gpu_sizes is None
    assert target(gpu_sizes={"m": 9, "zz": 1}).gpu_sizes == {"n": 4, "m": 9}


def _line(slug, split, probe_caught, trigger_caught, alarm=False, given=True):
    def run(caught, errors):
        return {"caught": caught, "errors": int(errors), "warnings": 0, "diagnosis_first_right": caught,
                "diagnosis_top3_right": caught, "seconds": 1.0, **({"given": {}} if given else {})}
    line = {"slug": slug, "split": split, "visible": True,
            "buggy": {"probe": run(probe_caught, probe_caught)}, "fixed": {"probe": run(False, alarm)}}
    if trigger_caught is not None:
        line["buggy"]["trigger"], line["fixed"]["trigger"] = run(trigger_caught, trigger_caught), run(False, False)
        line["trigger"] = {"fixed_known": None, "buggy_known_only": None}
    return line


def test_the_trigger_columns_are_counted_apart():
    lines = [_line("t1", "test", False, True), _line("t2", "test", True, True, alarm=True),
             _line("t3", "test", False, None, given=False), _line("f1", "first-run", False, False)]
    t = board.totals(lines, ())
    assert (t["splits"]["test"]["caught_visible"], t["splits"]["test"]["visible"]) == (1, 3)
    assert t["splits"]["test"]["legacy"] == 1 and t["splits"]["test"]["false_alarms"] == 1
    tr = t["trigger"]["test"]
    assert (tr["ran"], tr["caught_visible"], tr["visible"], tr["false_alarms"]) == (2, 2, 2, 0)
    assert t["trigger"]["first-run"]["caught_visible"] == 0
    text = "\n".join(record._splits_table(t))
    assert "## Given the trigger" in text and "| bugs caught, of those visible here | 0 of 0 | 2 of 2 (100%) |" in text
    assert "re-run them) | 0 | 1 | 0 |" in text


def test_the_shards_hold_every_entry_once():
    names = {f"e{i:02d}": i for i in range(11)}
    shards = [board_shard(names, i, 4) for i in range(1, 5)]
    assert sorted(k for s in shards for k in s) == sorted(names)
    assert all(len(s) in (2, 3) for s in shards)


def board_shard(entries, i, n):
    from harness.commands.bugs import shard

    return shard(entries, i, n)


@pytest.mark.parametrize("args, says", [(["--shard", "0/4"], "I/N"), (["--shard", "5/4"], "I/N"),
                                        (["--shard", "x/4"], "I/N"), (["--shard", "3"], "I/N"),
                                        (["--shard", "2/"], "I/N"), (["--runs", "all"], "default, trigger"),
                                        (["--runs", ""], "default, trigger")])
def test_a_bad_shard_or_run_is_one_line_and_exit_2(args, says):
    r = subprocess.run([sys.executable, "-m", "harness", "bugs", *args, "--list"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_runs_name_the_row_keys():
    from harness.commands.bugs import _runs

    assert _runs("default") == ["probe"] and _runs("trigger,default,trigger") == ["trigger", "probe"]


def test_rows_of_two_shards_make_one_board(tmp_path, monkeypatch):
    """Shards write their entries' rows; --no-run's read of the rows folder sees them all."""
    monkeypatch.setattr(record, "DOCS", tmp_path)
    env = {"device": "CPU", "date": "2026-11-29 07:00 UTC"}
    record.write_rows([{"slug": "a", "variant": "buggy", "probe": {"caught": True}}], "interpreter", env)
    record.write_rows([{"slug": "b", "variant": "fixed", "probe": {"caught": False}}], "interpreter", env)
    got = record.read_rows("interpreter", ["a", "b"])
    assert [(r["slug"], r["variant"]) for r in got] == [("a", "buggy"), ("b", "fixed")]
    assert json.loads((tmp_path / "rows" / "interpreter" / "a.json").read_text())["buggy"]["env"] == env


def test_the_plain_peer_compares_a_tuple_of_outputs_part_by_part(tmp_path):
    """A launcher returning (dE, dC) ended the plain worker (torch.as_tensor of a tuple): a crash
    counted as the peer's catch on correct kernels too."""
    import torch

    from harness.probe import execute as X

    f = tmp_path / "two.py"
    f.write_text("import torch\n"
                 "def launch(x):\n    return x * 2, x.sum(0)\n"
                 "def launch_wrong(x):\n    return x * 2, x.sum(0) + 1\n"
                 "def make_inputs(*, device, gen, n=4):\n    return {'x': torch.randn(n, 3, generator=gen)}\n"
                 "def reference(x):\n    return x * 2, x.sum(0)\n")
    for launcher, close in (("launch", True), ("launch_wrong", False)):
        t = load(str(f), launcher=launcher)
        got = plain._one(t, {}, 0, "interpreter")
        assert (got["close"], got["error"]) == (close, ""), got
    t = load(str(f), launcher="launch")
    inputs = X.make(t, t.sizes, 0, "interpreter")
    assert plain._close(t, (torch.zeros(4, 3),), X.reference(t, inputs)) is False  # one output of two


REFUSES = textwrap.dedent('''\
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        i = tl.arange(0, BLOCK)
        tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n), mask=i < n)

    def launch_buggy(x):
        raise AssertionError("needs compute capability 10.0")

    def launch_fixed(x):
        y = torch.empty_like(x)
        _copy[(1,)](x, y, x.numel(), BLOCK=64)
        return y

    def make_inputs(*, device, gen, n=16):
        return {"x": torch.randn(n, generator=gen).to(device)}

    def reference(x):
        return x
    ''')


def test_a_launcher_that_launches_no_kernel_could_not_run(tmp_path):
    """A launcher that refuses the device raised at the defaults on both versions: the probe's P001
    was counted as the bug caught and as a false alarm (torchao-mxfp8-dim0-nan-scale's first run)."""
    d = tmp_path / "bugs" / "demo-entry"
    d.mkdir(parents=True)
    (d / "bug.toml").write_text(TOML)
    (d / "probe.py").write_text(REFUSES)
    e = manifest.read(d)
    row = board.probe_variant(e, "buggy", "interpreter", detectors=["reference", "guards"], timeout=60)
    assert row["error"].startswith("could not run: the launcher launched no Triton kernel here: "), row
    assert "needs compute capability 10.0" in row["error"]
    ran = board.probe_variant(e, "fixed", "interpreter", detectors=["reference", "guards"], timeout=60)
    assert "error" not in ran and not ran["caught"], ran


def test_the_readme_says_when_rows_predate_the_default_runs_rule():
    lines = [_line("t1", "test", True, None, given=False), _line("t2", "test", True, True)]
    t = board.totals(lines, ())
    said = record.summary({"interpreter": {"envs": [{"device": "CPU"}], "totals": t}})
    assert "(1 of the dev and test rows were made before the default run held only what a user's probe file" in said
    assert "given the trigger, the entry author's sizes and input switches: test: caught 1 of 1" in said


def test_the_trigger_run_is_no_peer_column():
    from harness.commands.bugs import peer_columns

    rows = [{"slug": "a", "variant": "buggy", "probe": {}, "trigger": {}, "fuzz": {}, "ttsem": {}, "env": {}}]
    assert peer_columns(rows, ("plain",)) == ("plain", "fuzz", "ttsem")


def test_a_shard_whose_run_could_not_run_says_so_and_exits_2(capsys):
    from argparse import Namespace

    from harness.commands.bugs import _shard_done

    args = Namespace(shard=(1, 2), runs=["trigger"])
    rows = [{"slug": "a", "variant": "buggy", "trigger": {"error": "could not run: no kernel"}},
            {"slug": "a", "variant": "fixed", "trigger": {"caught": False}}]
    assert _shard_done(args, "interpreter", rows) == 2
    assert "error: interpreter a buggy: could not run: no kernel" in capsys.readouterr().err
    assert _shard_done(args, "interpreter", rows[1:]) == 0
