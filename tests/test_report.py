"""The casebook report: its HTML (markdown-it-py), its write-ups and files, its pictures, and the command end to end.

The end-to-end test runs one tiny case (plain PyTorch launchers, no kernel) under the
interpreter backend in a temporary cases root, so it stays fast.
"""

import base64
import json
import textwrap
from types import SimpleNamespace

import pytest
import torch

from harness import cli
from harness.core import profile
from harness.detectors import session as detect
from harness.errors import UsageError
from harness.report import htmlpage, pages, plots, sections
from harness.detectors import registry as D
from harness.core.events import RunResult

# ---------------------------------------------------------------- Markdown to HTML

PAGE_MD = textwrap.dedent("""\
    ## The fix: a `mask`

    | a | b \\| c |
    |---|---:|
    | **x** | [link](../cases/y/README.md) |

    ```diff
    --- a/kernel.py
    -    x = tl.load(p)
    +    x = tl.load(p, mask=m)
         y = x
    ```

    Why:

        sum over the block of xc**2 = sum over the row of (x - mean)**2

    ![a chart](report-img/x.png)

    <!-- recorded:gpu -->
    | case | reference |
    |---|---|
    | [a](#the-fix-a-mask) | ● ○⚠ |

    ## The fix: a `mask`
    """)


def test_diff_blocks_are_coloured_line_by_line():
    html = htmlpage.body(PAGE_MD)
    assert '<span class="del">-    x = tl.load(p)</span>\n<span class="add">+    x = tl.load(p, mask=m)</span>' in html
    assert '<pre><code class="language-diff">--- a/kernel.py\n' in html  # headers and context: not coloured
    assert "\n     y = x\n</code></pre>" in html


def test_an_indented_block_is_code_not_bold():
    html = htmlpage.body(PAGE_MD)
    assert "<pre><code>sum over the block of xc**2 = sum over the row of (x - mean)**2\n</code></pre>" in html
    assert "<strong>2" not in html


def test_tables_headings_glyphs_and_comments():
    html = htmlpage.body(PAGE_MD, glyph_class=sections.GLYPH_CLASS)
    assert '<th style="text-align:right">b | c</th>' in html
    assert '<td><strong>x</strong></td>' in html and '<a href="../cases/y/README.md">link</a>' in html
    assert '<h2 id="the-fix-a-mask">The fix: a <code>mask</code></h2>' in html
    assert '<h2 id="the-fix-a-mask-1">' in html  # a repeated heading gets GitHub's -1
    assert ('<td><span class="g g-caught">●</span> <span class="g g-missed">○</span>'
            '<span class="g g-alarm">⚠</span></td>') in html
    assert "recorded:gpu" not in html


def test_images_become_data_uris(tmp_path):
    img = tmp_path / "report-img"
    img.mkdir()
    (img / "x.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    page = pages.render_html(PAGE_MD + "\n![gone](report-img/missing.png)\n", img)
    data = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
    assert f'<img src="{data}" alt="a chart"' in page
    assert '<img src="report-img/missing.png" alt="gone"' in page  # nothing to inline: left as it was
    assert page.startswith("<!DOCTYPE html>") and "<title>" in page and ".add {" in page


def test_writeup_moves_headings_down_outside_code_only(tmp_path):
    (tmp_path / "README.md").write_text(textwrap.dedent("""\
        # The title

        See [the other case](../other/README.md) and [a site](https://example.com/x).

        ## Why
        ```python
        # not a heading: [kept](../as/is)
        ```

        A setext heading
        ----------------
        """))
    spec = SimpleNamespace(path=tmp_path, slug="mine")
    text = sections.writeup(spec)
    assert "The title" not in text and "#### Why" in text and "##### A setext heading" in text
    assert "# not a heading: [kept](../as/is)" in text and "----" not in text
    assert "[the other case](../cases/other/README.md)" in text and "(https://example.com/x)" in text
    assert sections.writeup(SimpleNamespace(path=tmp_path / "nowhere", slug="x")) == "_No write-up._"


def _old_report(out):
    (out / "report-img").mkdir(parents=True)
    (out / "report-img" / "old.png").write_bytes(b"old")
    (out / "report.md").write_text("![old](report-img/old.png)\n")


def test_an_interrupted_report_keeps_its_pictures(tmp_path, monkeypatch):
    out = tmp_path / "docs"
    _old_report(out)

    def build(specs, runs, errors, img):
        (img / "new.png").write_bytes(b"new")
        raise KeyboardInterrupt

    monkeypatch.setattr(pages, "build_markdown", build)
    with pytest.raises(KeyboardInterrupt):
        pages.write_report([], {}, [], out)
    assert (out / "report.md").read_text() == "![old](report-img/old.png)\n" and (out / "report-img" / "old.png").exists()
    assert sorted(p.name for p in out.iterdir()) == ["report-img", "report.md"]  # no staging folder left


def test_a_finished_report_drops_the_pictures_it_no_longer_names(tmp_path, monkeypatch):
    out = tmp_path / "docs"
    _old_report(out)

    def build(specs, runs, errors, img):
        (img / "new.png").write_bytes(b"\x89PNG\r\n\x1a\nnew")
        return "# r\n\n![new](report-img/new.png)\n"

    monkeypatch.setattr(pages, "build_markdown", build)
    pages.write_report([], {}, [], out)
    assert sorted(p.name for p in (out / "report-img").iterdir()) == ["new.png"]
    assert "data:image/png;base64," in (out / "report.html").read_text()
    assert sorted(p.name for p in out.iterdir()) == ["report-img", "report.html", "report.md"]


def test_an_unwritable_out_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(pages, "build_markdown", lambda *a: pytest.fail("nothing to build into"))
    with pytest.raises(UsageError, match="cannot write the report into"):
        pages.write_report([], {}, [], tmp_path / "file")


# ---------------------------------------------------------------- pictures


def test_error_profile_finds_the_tail_and_the_rows():
    ref = torch.arange(10_000, dtype=torch.float64)
    out = ref.clone().float()
    out[9_216:] = -1.0  # the tail past the last full block of 1024
    prof = profile.error_profile(out, ref, rtol=1e-6, atol=0.0)
    assert prof["n_bad"] == 784 and prof["bad_ranges"] == [[9_216, 10_000]] and prof["n_ranges"] == 1
    assert len(prof["grid"]) == 1 and len(prof["grid"][0].split()) <= 256
    assert profile.describe_profile(prof) == "784 of 10,000 elements wrong: indices 9216–9999"
    ref2 = torch.ones(64, 100, dtype=torch.float64)
    out2 = ref2.clone()
    out2[:, 90:] = float("nan")
    p2 = profile.error_profile(out2, ref2, 1e-6, 0.0)
    assert p2["bad_cols"] == [[90, 100]] and p2["bad_rows"] == [[0, 64]]
    assert profile.error_profile(torch.ones(1), torch.ones(1, dtype=torch.float64), 1e-6, 0) is None


def test_pictures_are_pngs(tmp_path):
    ref = torch.ones(5000, dtype=torch.float64)
    out = ref.clone()
    out[4000:] = 2
    plots.draw_error_map(profile.error_profile(out, ref, 1e-6, 0), "t", tmp_path / "e.png")
    trials = [{"result": str(30 + i % 3), "reference": "70", "fingerprint": str(i % 3), "n": 1, "max_abs": 40.0,
               "n_bad": 1} for i in range(6)]
    plots.draw_spread(trials, "t", tmp_path / "s.png")
    plots.draw_scalar(trials[:1], "t", tmp_path / "c.png")
    tensor_trials = [{"result": f"{i}/9 differ", "reference": "...", "fingerprint": str(i), "n": 9,
                      "max_abs": ["inf", 2.0, "nan"][i], "n_bad": i + 1} for i in range(3)]  # strict JSON's "inf"
    plots.draw_spread(tensor_trials, "t", tmp_path / "t.png")
    for name in ("e", "s", "c", "t"):
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------- the command

FIELDS = {"title": "The last three elements are never written", "category": "bounds", "defect": "unwritten-output",
          "summary": "A synthetic case for the report's tests.", "launcher": "run", "seen_in": None,
          "expect": {"gpu": "wrong", "interpreter": "wrong"}, "run": {"trials": 2},
          "compare": {"rtol": None, "atol": None, "deterministic": True},
          "sizes": {"gpu": None, "interpreter": {"rows": None, "cols": None, "n": 2000}}}

CASE = """
import torch
from harness.buffers import guarded, output
def make_inputs(*, device, gen, n):
    return {"x": guarded(torch.randn(n, generator=gen), device), "out": output((n,), torch.float32, device)}
def reference(x):
    return 2 * x.double()
"""

FILES = {"case.py": CASE,
         "broken.py": "def run(x, out):\n    out[:-3] = 2 * x[:-3]  # BUG\n    return out\n",
         "fixed.py": "def run(x, out):\n    out[:] = 2 * x  # FIX\n    return out\n",
         "README.md": "# The title\n\nA write-up with a [link](../other/README.md).\n\n## Why\n\nBecause.\n",
         "recorded/gpu.json": None}  # recorded runs are what the tests write


@pytest.fixture
def tiny_root(tmp_path, monkeypatch, make_case):
    root = tmp_path / "cases"
    make_case("tail-unwritten", root=root, files=FILES, fields=FIELDS)
    make_case("half-written", root=root, files=dict.fromkeys(make_case.names))  # another helper's case, not
    assert not any((root / "half-written").iterdir())                        # finished: reported, never fatal
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
