"""The casebook report: its Markdown-to-HTML, its pictures, and the command end to end.

The end-to-end test runs one tiny case (plain PyTorch launchers, no kernel) under the
interpreter backend in a temporary cases root, so it stays fast.
"""

import json
import textwrap

import pytest
import torch

from harness import cli
from harness.detectors import session as detect
from harness.report import mdhtml
from harness.report import plots
from harness.detectors import base as D
from harness.core.events import RunResult

# ---------------------------------------------------------------- Markdown to HTML


def test_markdown_tables_code_lists_and_anchors():
    md = textwrap.dedent("""\
        ## The fix: a `mask`

        | a | b \\| c |
        |---|---:|
        | **x** | [link](../cases/y/README.md) |

        ```diff
        -    x = tl.load(p)
        +    x = tl.load(p, mask=m)
        ```

        - one
          - nested
        - two <br> 3 < 4

        <!-- recorded:gpu -->
        <details>
        <summary>more</summary>

        text_with_underscores and *emphasis*

        </details>
        """)
    html = mdhtml.blocks(md.splitlines())
    assert '<h2 id="the-fix-a-mask">The fix: a <code>mask</code></h2>' in html
    assert "<th style=\"text-align:right\">b | c</th>" in html and '<td style="text-align:right"><a href="../cases/y/README.md">' in html
    assert '<span class="del">-    x = tl.load(p)</span>' in html and '<span class="add">' in html
    assert "<li>one\n<ul>\n<li>nested</li>" in html and "<br> 3 &lt; 4" in html
    assert "recorded:gpu" not in html and "<details>" in html and "<summary>more</summary>" in html
    assert "text_with_underscores and <em>emphasis</em>" in html


def test_images_can_be_inlined():
    page = mdhtml.to_html("![a chart](img/x.png)", title="t", image_src=lambda s: "data:image/png;base64,AAAA")
    assert '<img alt="a chart" src="data:image/png;base64,AAAA">' in page and page.startswith("<!DOCTYPE html>")


# ---------------------------------------------------------------- pictures


def test_error_profile_finds_the_tail_and_the_rows():
    ref = torch.arange(10_000, dtype=torch.float64)
    out = ref.clone().float()
    out[9_216:] = -1.0  # the tail past the last full block of 1024
    prof = plots.error_profile(out, ref, rtol=1e-6, atol=0.0)
    assert prof["n_bad"] == 784 and prof["bad_ranges"] == [[9_216, 10_000]] and prof["n_ranges"] == 1
    assert len(prof["grid"]) == 1 and len(prof["grid"][0].split()) <= 256
    assert plots.describe_profile(prof) == "784 of 10,000 elements wrong: indices 9216–9999"
    ref2 = torch.ones(64, 100, dtype=torch.float64)
    out2 = ref2.clone()
    out2[:, 90:] = float("nan")
    p2 = plots.error_profile(out2, ref2, 1e-6, 0.0)
    assert p2["bad_cols"] == [[90, 100]] and p2["bad_rows"] == [[0, 64]]
    assert plots.error_profile(torch.ones(1), torch.ones(1, dtype=torch.float64), 1e-6, 0) is None


def test_pictures_are_pngs(tmp_path):
    ref = torch.ones(5000, dtype=torch.float64)
    out = ref.clone()
    out[4000:] = 2
    plots.draw_error_map(plots.error_profile(out, ref, 1e-6, 0), "t", tmp_path / "e.png")
    trials = [{"result": str(30 + i % 3), "reference": "70", "fingerprint": str(i % 3), "n": 1, "max_abs": 40.0,
               "n_bad": 1} for i in range(6)]
    plots.draw_spread(trials, "t", tmp_path / "s.png")
    plots.draw_scalar(trials[:1], "t", tmp_path / "c.png")
    for name in ("e", "s", "c"):
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------- the command

TOML = """
title = "The last three elements are never written"
category = "bounds"
defect = "unwritten-output"
summary = "A synthetic case for the report's tests."
launcher = "run"
[expect]
gpu = "wrong"
interpreter = "wrong"
[run]
trials = 2
[compare]
deterministic = true
[sizes.interpreter]
n = 2000
"""

CASE = """
import torch
from harness.buffers import guarded, output
def make_inputs(*, device, gen, n):
    return {"x": guarded(torch.randn(n, generator=gen), device), "out": output((n,), torch.float32, device)}
def reference(x):
    return 2 * x.double()
"""


@pytest.fixture
def tiny_root(tmp_path, monkeypatch):
    root = tmp_path / "cases"
    d = root / "tail-unwritten"
    d.mkdir(parents=True)
    (d / "case.toml").write_text(TOML)
    (d / "case.py").write_text(CASE)
    (d / "broken.py").write_text("def run(x, out):\n    out[:-3] = 2 * x[:-3]  # BUG\n    return out\n")
    (d / "fixed.py").write_text("def run(x, out):\n    out[:] = 2 * x  # FIX\n    return out\n")
    (d / "README.md").write_text("# The title\n\nA write-up with a [link](../other/README.md).\n\n## Why\n\nBecause.\n")
    (root / "half-written").mkdir()  # another helper's case, not finished: reported, never fatal
    monkeypatch.setenv("CASEBOOK_CASES", str(root))
    return root


def _synthetic_record(spec, backend):
    trials = [{"trial": t, "call": 0, "close": False, "n": 2000, "n_bad": 3, "max_abs": 1e30, "max_rel": 1e30,
               "nonfinite": 0, "result": "3/2000 differ", "reference": "...", "fingerprint": "f",
               "guard": {"wrote_past_end": {}, "unwritten": {"out": 3}}, "bench_calls": []} for t in range(2)]
    recs = {}
    for variant in ("broken", "fixed"):
        ts = trials if variant == "broken" else [dict(t, close=True, n_bad=0, guard={"wrote_past_end": {},
                                                                                      "unwritten": {}}) for t in trials]
        run = RunResult(spec.slug, variant, backend, "done", env={"backend": backend, "device": "NVIDIA H100",
                                                                  "torch": "2.11", "triton": "3.6.0",
                                                                  "date": "2026-01-01 00:00 UTC"},
                        trials=ts, requested_trials=2)
        extra = {"memcheck": RunResult(spec.slug, variant, backend, "done",
                                       output_tail="========= ERROR SUMMARY: 0 errors")}
        recs[variant] = detect.variant_record(spec, run, extra, [])
    return {"case": spec.slug, "backend": backend, "env": recs["broken"]["env"], "variants": recs}


def test_report_from_recorded_runs_only(tiny_root, tmp_path, capsys):
    from harness.core import discovery

    spec = discovery.load("tail-unwritten")
    (spec.path / "recorded").mkdir()
    (spec.path / "recorded" / "detect-gpu.json").write_text(json.dumps(_synthetic_record(spec, "gpu")))
    out = tmp_path / "docs"
    assert cli.main(["report", "--no-run", "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "NVIDIA H100" in md and "recorded by python -m harness detect --record" in md
    assert "| [tail-unwritten](#tail-unwritten) | unwritten-output | wrong |" in md
    assert "| canary writes | GPU | 1 | 0 |" in md  # caught on the GPU, from the record
    assert "cases/half-written" in md  # the malformed folder is named, not fatal
    assert "[link](../cases/other/README.md)" in md and "#### Why" in md
    html = (out / "report.html").read_text()
    assert 'src="data:image/png;base64,' in html and 'class="g g-caught"' in html


@pytest.mark.interpreter
def test_report_runs_the_interpreter_and_records(tiny_root, tmp_path):
    out = tmp_path / "docs"
    assert cli.main(["report", "--backend", "interpreter", "--record", "--out", str(out)]) == 0
    rec = json.loads((tiny_root / "tail-unwritten" / "recorded" / "detect-interpreter.json").read_text())
    broken, fixed = rec["variants"]["broken"]["findings"], rec["variants"]["fixed"]["findings"]
    assert broken["reference"]["status"] == D.FLAGGED and broken["canary"]["status"] == D.FLAGGED
    assert fixed["reference"]["status"] == D.QUIET and fixed["canary"]["status"] == D.QUIET
    assert broken["first-call"]["status"] == D.QUIET  # wrong on both calls
    assert rec["variants"]["broken"]["profiles"][0]["bad_ranges"] == [[1997, 2000]]
    names = {p.name for p in (out / "report-img").iterdir()}
    assert "tail-unwritten-interpreter-call1-errors.png" in names and "summary.png" in names
    assert "indices 1997–1999" in (out / "report.md").read_text()


def test_detect_prints_caught_and_false_alarms(tiny_root, capsys):
    assert cli.main(["detect", "tail-unwritten", "--backend", "interpreter"]) == 0
    text = capsys.readouterr().out
    assert "interpreter: caught by reference, canary" in text
    assert "false alarms on the fixed kernel: none" in text


def test_detect_needs_a_case(capsys):
    assert cli.main(["detect"]) == cli.EXIT_USAGE
    assert "name a case" in capsys.readouterr().err
