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
from harness.probe import case_runs as detect
from harness.errors import EXIT_MISMATCH, UsageError
from harness.report import htmlpage, pages, plots, sections
from harness.probe import cases as D
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


def _full_set(out):
    """An old report's whole set, and what each file holds."""
    _old_report(out)
    (out / "report.html").write_text("<p>old</p>")
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}


@pytest.mark.parametrize("where", ["picture", "html", "rename"])
def test_a_full_disk_leaves_the_old_report_whole(tmp_path, monkeypatch, where):
    """Markdown, HTML and pictures are one set: a full disk at any step leaves the old set, and says so."""
    import errno
    from harness.core import fileio
    from harness.report import pictures

    out = tmp_path / "docs"
    old = _full_set(out)
    full = OSError(errno.ENOSPC, "No space left on device")

    def draw(path):
        raise full

    def build(specs, runs, errors, img):
        (img / "new.png").write_bytes(b"new")
        if where == "picture":
            pictures._draw(draw, img / "chart.png", "summary")
        return "# r\n\n![new](report-img/new.png)\n"

    real_replace, calls = fileio.os.replace, []

    def replace(src, dst):  # the set's last rename fails: the two before it are undone
        calls.append(dst)
        if where == "rename" and len(calls) == 2 + 3:  # the new page and HTML staged (2), then the set (3)
            raise full
        return real_replace(src, dst)

    monkeypatch.setattr(pages, "build_markdown", build)
    if where == "html":
        monkeypatch.setattr(pages, "render_html", lambda md, img: (_ for _ in ()).throw(full))
    monkeypatch.setattr(fileio.os, "replace", replace)
    with pytest.raises(UsageError, match=r"report not written into .* unchanged\): .*No space left"):
        pages.write_report([], {}, [], out)
    assert {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()} == old


def test_an_unreadable_record_is_one_cell(tiny_root, tmp_path, capsys):
    """A record of the wrong shape is named in its cells and on stderr; the rest of the report is as usual."""
    from harness.core import discovery

    spec = discovery.load("tail-unwritten")
    _record_all(spec)
    (spec.path / "recorded" / "detect-gpu.json").write_text('{"variants": {"broken": 5}}')
    (spec.path / "recorded" / "probe-interpreter.json").write_text("{not json")
    out = tmp_path / "docs"
    assert cli.main(["report", "--no-run", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "tail-unwritten/recorded/detect-gpu.json: unreadable record: variants.broken is int, not an object" in err
    assert "tail-unwritten/recorded/probe-interpreter.json: unreadable record: not JSON" in err
    md = (out / "report.md").read_text()
    row = _matrix_row(md, "tail-unwritten")
    assert "↻ unreadable record: variants.broken is int" in row and "| ↻ ● |" in row  # GPU unreadable, interpreter caught
    assert "stale: unreadable record: not JSON" in md and "Records that cannot be read" in md
    assert cli.main(["report", "--no-run", "--strict", "--out", str(out)]) == 2


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
        found = [{"code": "P113", "detector": "guards", "severity": "error",
                  "message": "3 elements of 'out' never written"}] if variant == "broken" else []
        ran = dict.fromkeys(detect.probe_detectors(backend), "done")
        for mode in ("gsan", "fpsan", "iisan"):  # Triton 3.6.0 has ConSan only: the probe skips the others
            if mode in ran:
                ran[mode] = f"skipped: not available with triton 3.6.0 (its NVIDIA backend has no {mode})"
        probe = {"detectors": list(ran), "findings": found, "seconds": 1.0, "ran": ran}
        recs[variant] = detect.variant_record(spec, run, [], probe=probe)
    return {"case": spec.slug, "backend": backend, "env": recs["broken"]["env"], "variants": recs}


def _record_all(spec, probe=True):
    """Fresh records of every kind for ``spec``: detect on both backends, and the probe's."""
    from harness.core.recorded import source_hashes

    for b in ("gpu", "interpreter"):
        rec = dict(_synthetic_record(spec, b), sources=source_hashes(spec.path))
        (spec.path / "recorded").mkdir(exist_ok=True)
        (spec.path / "recorded" / f"detect-{b}.json").write_text(json.dumps(rec))
    if probe:
        (spec.path / "recorded" / "probe-interpreter.json").write_text(json.dumps(_probe_record(spec)))


def _probe_record(spec, **changes):
    from harness.core.recorded import source_hashes

    unwritten = {"code": "P113", "detector": "guards", "backend": "interpreter", "severity": "error",
                 "message": "3 elements of 'out' never written", "line": "broken.py:2"}
    note = {"code": "P303", "detector": "order", "backend": "interpreter", "severity": "info",
            "message": "float atomics: rounding differs"}
    from harness.probe.detectors import on

    ran = {d.name: "done" for d in on("interpreter")}  # what examples/probe_cases.py records: each one's status
    rec = {"case": spec.slug, "backend": "interpreter", "env": {"backend": "interpreter", "device": "CPU (x86_64)",
                                                                 "date": "2026-01-01 00:00 UTC"},
           "sources": source_hashes(spec.path), "broken": [unwritten], "fixed": [note],
           "command": f"python examples/probe_cases.py --record {spec.slug}", "ran": {"broken": ran, "fixed": ran}}
    return {**rec, **changes}


def _matrix_row(md: str, slug: str) -> str:
    return next(line for line in md.splitlines() if line.startswith(f"| [{slug}](#{slug})"))


def test_report_from_recorded_runs_only(tiny_root, tmp_path, capsys):
    from harness.core import discovery

    spec = discovery.load("tail-unwritten")
    _record_all(spec)
    out = tmp_path / "docs"
    assert cli.main(["report", "--no-run", "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "NVIDIA H100" in md and "recorded by python -m harness detect --record" in md
    assert "| [tail-unwritten](#tail-unwritten) | unwritten-output | wrong |" in md
    assert "| canary writes | GPU | 1 | 0 |" in md  # caught on the GPU, from the record
    assert "| probe: guard bands | interpreter | 1 | 0 |" in md  # the probe's P113 on the broken kernel
    assert "| probe: order | interpreter | 0 | 1 | 0 | 0 | 0 | 1 |" in md  # information only: no false alarm
    row = _matrix_row(md, "tail-unwritten")
    assert "?" not in row and "↻" not in md and "**Draft**" not in md  # every cell a result or n/a
    assert "? not run" not in md  # no cell says it, so the legend does not either
    assert "information only: P303" in md  # the finding, in the case's section
    head = next(line for line in md.splitlines() if line.startswith("| case | defect |"))
    idle = md.split("Not in the matrix, as they apply to no case here")[1].splitlines()[0]
    assert "GSan" not in head and "GSan" in idle and "canary writes" in head  # n/a for every case: named, no column
    assert "cases/half-written" in md  # the malformed folder is named, not fatal
    assert "[link](../cases/other/README.md)" in md and "#### Why" in md
    html = (out / "report.html").read_text()
    assert 'src="data:image/png;base64,' in html and 'class="g g-caught"' in html


def test_a_record_older_than_the_kernel_stops_the_report(tiny_root, tmp_path, capsys, monkeypatch):
    from harness.core import discovery
    from harness.commands import report as report_cmd

    spec = discovery.load("tail-unwritten")
    _record_all(spec)
    (spec.path / "broken.py").write_text(FILES["broken.py"] + "# edited after the runs were recorded\n")
    out = tmp_path / "docs"
    assert cli.main(["report", "--no-run", "--out", str(out)]) == EXIT_MISMATCH
    err = [x for x in capsys.readouterr().err.splitlines() if "half-written" not in x]  # the malformed folder
    assert len(err) == 1 and "1 cases have stale or missing records (tail-unwritten; " in err[0]
    assert "records: detect-interpreter, probe-interpreter" in err[0]  # the GPU's cannot be refreshed here
    assert "--verbose" in err[0] and len(err[0]) < 300  # a short line; the list and commands on request
    assert not (out / "report.md").exists()  # nothing stale is published
    assert cli.main(["report", "--no-run", "-v", "--out", str(out)]) == EXIT_MISMATCH
    err = capsys.readouterr().err
    assert "python -m harness detect --all --backend interpreter --record" in err
    assert "python examples/probe_cases.py --record" in err
    # the check comes before any kernel runs: a report that would refuse runs nothing
    monkeypatch.setattr(report_cmd, "run_detectors", lambda *a, **k: pytest.fail("ran kernels before refusing"))
    (spec.path / "recorded" / "probe-interpreter.json").unlink()
    assert cli.main(["report", "--backend", "interpreter", "--out", str(out)]) == EXIT_MISMATCH
    assert "records: probe-interpreter" in capsys.readouterr().err
    assert cli.main(["report", "--no-run", "--allow-stale", "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    row = _matrix_row(md, "tail-unwritten")
    assert "●" not in row and "○" not in row and "↻" in row and "stale (recorded: wrong)" in row
    assert "broken.py changed since the detect-gpu record" in md and "**Draft**" in md
    assert "↻ stale: the record is missing or older than the kernel" in md  # the legend names it


def test_on_a_cpu_stale_gpu_records_are_marked_not_fatal(tiny_root, tmp_path, capsys, monkeypatch):
    """Without a GPU only the GPU records are stale: they cannot be refreshed here, so the report
    is written, those cells marked, with one short warning; on a GPU machine the same stops it."""
    from harness.core import discovery
    from harness.commands import report as report_cmd
    from harness.core.recorded import source_hashes

    spec = discovery.load("tail-unwritten")
    _record_all(spec)
    rec = json.loads((spec.path / "recorded" / "detect-gpu.json").read_text())
    rec["sources"] = dict(source_hashes(spec.path), **{"broken.py": "0" * 64})  # run on another broken.py
    (spec.path / "recorded" / "detect-gpu.json").write_text(json.dumps(rec))
    out = tmp_path / "docs"
    monkeypatch.setattr(report_cmd, "cuda_available", lambda: False)
    assert cli.main(["report", "--no-run", "--out", str(out)]) == 0
    err = [x for x in capsys.readouterr().err.splitlines() if "half-written" not in x]
    assert len(err) == 1 and err[0].startswith("warning: a draft, their cells marked stale (they need a GPU")
    assert "records: detect-gpu" in err[0] and len(err[0]) < 300
    md = (out / "report.md").read_text()
    assert "broken.py changed since the detect-gpu record" in md and "**Draft**" in md
    assert "| probe: guard bands | interpreter | 1 | 0 |" in md  # the valid records are used
    monkeypatch.setattr(report_cmd, "cuda_available", lambda: True)
    assert cli.main(["report", "--no-run", "--out", str(tmp_path / "gpu")]) == EXIT_MISMATCH
    assert not (tmp_path / "gpu" / "report.md").exists()


def test_a_descriptive_table_of_case_toml_leaves_the_records_valid(tiny_root):
    """[diagnosis], the title, the triggers describe the case: records stay valid when they change;
    the declared verdicts and sizes are what a run measured: records go stale when they do."""
    from harness.core import discovery
    from harness.report import records

    spec = discovery.load("tail-unwritten")
    _record_all(spec)
    toml = spec.path / "case.toml"
    base = toml.read_text()
    toml.write_text(base.replace('title = "', 'title = "Retitled: ') + '\n[diagnosis]\nevidence = ["tail"]\n')
    assert all(r and r["stale"] is None for r in records.gather([spec], {})["tail-unwritten"].values())
    toml.write_text(base.replace('interpreter = "wrong"', 'interpreter = "ok"'))
    assert records.gather([spec], {})["tail-unwritten"]["gpu"]["stale"] == \
        "case.toml changed since the detect-gpu record"


def test_a_record_without_hashes_or_missing_is_stale(tiny_root, tmp_path, capsys):
    from harness.core import discovery
    from harness.report import records

    spec = discovery.load("tail-unwritten")
    _record_all(spec, probe=False)
    rec = json.loads((spec.path / "recorded" / "detect-gpu.json").read_text())
    del rec["sources"]
    (spec.path / "recorded" / "detect-gpu.json").write_text(json.dumps(rec))
    runs = records.gather([spec], {})
    assert runs["tail-unwritten"]["gpu"]["stale"] == "the detect-gpu record keeps no hashes of the case files it ran on"
    assert runs["tail-unwritten"]["interpreter"]["stale"] is None
    assert records.stale_cases([spec], runs) == {"detect-gpu": ["tail-unwritten"], "probe-interpreter": ["tail-unwritten"]}
    assert cli.main(["report", "--no-run", "-v", "--out", str(tmp_path / "docs")]) == EXIT_MISMATCH
    assert "python examples/probe_cases.py --record" in capsys.readouterr().err
    rec = json.loads((spec.path / "recorded" / "detect-interpreter.json").read_text())
    for v in rec["variants"].values():
        del v["findings"]["triton-viz"]  # a record made before a detector was added
    (spec.path / "recorded" / "detect-interpreter.json").write_text(json.dumps(rec))
    assert records.gather([spec], {})["tail-unwritten"]["interpreter"]["stale"] == \
        "the record predates the detector triton-viz"


def test_probe_columns_score_problems_not_information(tiny_root):
    from harness.core import discovery
    from harness.report import columns

    spec = discovery.load("tail-unwritten")
    by = {c.name: c for c in columns.PROBE_COLUMNS}
    crash = {"code": "P001", "detector": "race", "severity": "error", "message": "the process died: SIGSEGV"}
    failed = {"code": "P000", "detector": "shapes", "severity": "error", "message": "the detector failed: boom"}
    rec = _probe_record(spec, broken=[crash, failed], stale=None)
    recs = {"probe-interpreter": rec}
    race = columns.cell(spec, recs, by["probe-race"], "interpreter", "broken")
    assert race["status"] == D.FLAGGED and race["reason"].startswith("P001 race")  # its crash is its own
    raised = {"code": "P001", "detector": "reference, guards, memcheck", "severity": "error",
              "message": "the launcher raised at sizes n=0: ZeroDivisionError"}  # one finding naming three
    each = {"probe-interpreter": _probe_record(spec, broken=[raised], stale=None)}
    for name in ("probe-result", "probe-guards", "probe-memory"):
        assert columns.cell(spec, each, by[name], "interpreter", "broken")["status"] == D.FLAGGED, name
    assert columns.cell(spec, each, by["probe-race"], "interpreter", "broken")["status"] == D.QUIET
    assert columns.cell(spec, recs, by["probe-shapes"], "interpreter", "broken")["status"] == D.NOT_RUN
    order = columns.cell(spec, recs, by["probe-order"], "interpreter", "fixed")
    assert order["status"] == D.QUIET and "information only: P303" in order["reason"]
    skip = SimpleNamespace(**{**spec.__dict__, "expect": {**spec.expect, "interpreter": ["skip"]},
                              "skip_reason": {"interpreter": "needs two GPUs"}})
    na = columns.cell(skip, {}, by["probe-race"], "interpreter", "broken")
    assert na == {"status": D.NA, "reason": "the probe does not run this case: the case does not run on this "
                                            "backend: needs two GPUs"}
    assert columns.cell(spec, {}, by["probe-race"], "interpreter", "broken")["status"] == "stale"
    assert columns.elsewhere(by["probe-race"], "gpu") == {"status": D.NA,
                                                          "reason": "the probe runs it on the CPU interpreter only"}
    cpu_only = {c.name: c for c in columns.columns(["interpreter"])}
    assert "probe-gpu-tools" not in cpu_only and cpu_only["probe-shapes"].where == "interpreter"
    assert columns.elsewhere(cpu_only["probe-shapes"], "gpu")["reason"].startswith("no case has a probe record on a GPU")


def test_a_probe_column_says_what_its_record_did_not_measure(tiny_root):
    """A detector a probe record never ran is "not in this record" (stale, with the command that remakes it),
    never a quiet it did not measure: by the record's list of what ran, or, for a record older than that list,
    by its date against the column's ``since``; a detector the probe skipped is n/a with its reason."""
    from harness.core import discovery
    from harness.report import columns

    spec = discovery.load("tail-unwritten")
    by = {c.name: c for c in columns.PROBE_COLUMNS}
    old = {"probe-gpu": _probe_record(spec, backend="gpu", broken=[], fixed=[], ran=None,  # no list: by its date
                                      env={"backend": "gpu", "date": "2026-11-23 07:19 UTC"})}
    cell = columns.cell(spec, old, by["probe-special"], "gpu", "fixed")
    assert cell["status"] == "stale" and cell["reason"].startswith("not in this record (made 2026-11-23; special")
    assert "python examples/probe_cases.py --record --backend gpu" in cell["reason"]
    assert columns.cell(spec, old, by["probe-result"], "gpu", "fixed")["status"] == D.QUIET  # older than no since
    new = {"probe-gpu": _probe_record(spec, backend="gpu", broken=[], fixed=[], ran=None,
                                      env={"backend": "gpu", "date": "2026-11-29 19:20 UTC"})}
    assert columns.cell(spec, new, by["probe-special"], "gpu", "fixed")["status"] == D.QUIET
    ran = {"broken": {"reference": "done", "special": "done", "sentinel": "skipped: no integer tensor input"},
           "fixed": {"reference": "done"}}
    recs = {"probe-interpreter": _probe_record(spec, broken=[], fixed=[], ran=ran)}
    assert columns.cell(spec, recs, by["probe-special"], "interpreter", "broken")["status"] == D.QUIET
    sentinel = columns.cell(spec, recs, by["probe-sentinel"], "interpreter", "broken")
    assert sentinel == {"status": D.NA, "reason": "the probe skipped it: no integer tensor input"}
    missing = columns.cell(spec, recs, by["probe-special"], "interpreter", "fixed")
    assert missing["status"] == "stale" and missing["reason"].startswith("not in this record (special did not run)")
    assert columns.cell(spec, recs, by["probe-lanes"], "interpreter", "fixed")["status"] == D.QUIET  # no detector
    spent = {"probe-interpreter": _probe_record(spec, broken=[], fixed=[],
                                                ran={"broken": {"order": "skipped: the probe's budget is spent"}})}
    assert columns.cell(spec, spent, by["probe-order"], "interpreter", "broken") == {
        "status": D.NOT_RUN, "reason": "the probe did not run it: skipped: the probe's budget is spent"}
    p207 = {"code": "P207", "detector": "special", "severity": "error", "message": "NaN where IEEE gives 0"}
    recs = {"probe-interpreter": _probe_record(spec, broken=[p207], fixed=[], ran=ran)}
    assert columns.cell(spec, recs, by["probe-special"], "interpreter", "broken")["status"] == D.FLAGGED


def test_merge_keeps_old_findings_only_of_the_same_sources():
    new = {"sources": {"broken.py": "b"}, "variants": {"broken": {"findings": {"x": {"status": D.NOT_RUN,
                                                                                       "reason": "tool missing"}}}}}
    old = {"sources": {"broken.py": "a"}, "env": {}, "variants": {"broken": {"findings": {"x": {"status": D.FLAGGED,
                                                                                               "reason": "1 error"}}}}}
    assert detect.merge_recorded(json.loads(json.dumps(new)), old)["variants"]["broken"]["findings"]["x"]["status"] \
        == D.NOT_RUN  # an older kernel's finding is not carried over
    old["sources"] = {"broken.py": "b"}
    kept = detect.merge_recorded(json.loads(json.dumps(new)), old)["variants"]["broken"]["findings"]["x"]
    assert kept["status"] == D.FLAGGED and kept["source"].startswith("recorded")


@pytest.mark.interpreter
def test_report_runs_the_interpreter_and_records(tiny_root, tmp_path):
    out = tmp_path / "docs"
    assert cli.main(["report", "--backend", "interpreter", "--record", "--out", str(out)]) == EXIT_MISMATCH
    assert not (out / "report.md").exists()  # no GPU record: stale, so nothing is published
    assert cli.main(["report", "--backend", "interpreter", "--record", "--allow-stale", "--out", str(out)]) == 0
    rec = json.loads((tiny_root / "tail-unwritten" / "recorded" / "detect-interpreter.json").read_text())
    broken, fixed = rec["variants"]["broken"]["findings"], rec["variants"]["fixed"]["findings"]
    assert broken["reference"]["status"] == D.FLAGGED and broken["canary"]["status"] == D.FLAGGED
    assert fixed["reference"]["status"] == D.QUIET and fixed["canary"]["status"] == D.QUIET
    assert broken["first-call"]["status"] == D.QUIET  # wrong on both calls
    assert rec["variants"]["broken"]["profiles"][0]["bad_ranges"] == [[1997, 2000]]
    names = {p.name for p in (out / "report-img").iterdir()}
    assert "tail-unwritten-interpreter-call1-errors.png" in names and "summary.png" in names
    assert "indices 1997–1999" in (out / "report.md").read_text()


def test_detect_record_keeps_the_hashes_of_the_case_files(tiny_root, capsys):
    from harness.core.recorded import source_hashes

    assert cli.main(["detect", "tail-unwritten", "--backend", "interpreter", "--record"]) == 0
    rec = json.loads((tiny_root / "tail-unwritten" / "recorded" / "detect-interpreter.json").read_text())
    assert rec["sources"] == source_hashes(tiny_root / "tail-unwritten")
    assert sorted(rec["sources"]) == ["broken.py", "case.py", "case.toml[measured]", "fixed.py"]  # no fast.py here
    assert all(len(h) == 64 for h in rec["sources"].values())


def test_detect_prints_caught_and_false_alarms(tiny_root, capsys):
    assert cli.main(["detect", "tail-unwritten", "--backend", "interpreter"]) == 0
    text = capsys.readouterr().out
    assert "interpreter: caught by reference, canary" in text
    assert "false alarms on the fixed kernel: none" in text


def test_detect_needs_a_case(capsys):
    assert cli.main(["detect"]) == cli.EXIT_USAGE
    assert "name a case" in capsys.readouterr().err


def test_the_refresh_line_names_the_gpu_probe_with_its_backend():
    """A stale GPU probe record is refreshed on a GPU: the script's default backend is the interpreter."""
    from types import SimpleNamespace

    from harness.report import records

    specs = [SimpleNamespace(slug=s, expect={"gpu": ("wrong",), "interpreter": ("wrong",)}, gpus=1)
             for s in ("a", "b")]
    line = records.refresh_line({"probe-gpu": ["a"], "probe-interpreter": ["a"]}, specs)
    assert "python examples/probe_cases.py --record --backend gpu a" in line
    assert "python examples/probe_cases.py --record a" in line


def test_the_casebooks_records_are_fresh_and_its_report_builds_without_a_gpu(tmp_path, capsys, monkeypatch):
    """What a fresh clone on a CPU gets: every committed record (the GPU's included) still describes
    the kernels, case.py and declared verdicts as they are, so ``report --no-run`` writes the pages
    with no stale cell and no warning. A kernel or an [expect] changed without a new record fails here."""
    from harness.commands import report as report_cmd
    from harness.options import load_specs
    from harness.report import records

    monkeypatch.delenv("CASEBOOK_CASES", raising=False)
    specs, errors = load_specs([], True)
    assert not errors and len(specs) > 40
    stale = records.stale_cases(specs, records.gather(specs, {}))
    assert not stale, records.refresh_line(stale, specs)
    monkeypatch.setattr(report_cmd, "cuda_available", lambda: False)
    assert cli.main(["report", "--no-run", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().err == ""
    md = (tmp_path / "report.md").read_text()
    assert "**Draft**" not in md and (tmp_path / "report.html").is_file()
    # the only ↻ cells are probe columns whose detector a record never ran (not in this record: remade on its
    # backend by the command the cell names), never a record older than the kernel
    from harness.report import columns

    runs = records.gather(specs, {})
    unmeasured = [(s.slug, col.name, b, v) for s in specs for col in columns.columns(records.probe_backends(specs))
                  if col.is_probe for b in columns.backends_of(col) for v in ("broken", "fixed")
                  if columns.cell(s, runs[s.slug], col, b, v)["status"] == records.STALE]
    assert all(columns.cell(next(s for s in specs if s.slug == slug), runs[slug],
                            next(c for c in columns.PROBE_COLUMNS if c.name == name), b, v)["reason"]
               .startswith("not in this record") for slug, name, b, v in unmeasured)
    assert ("↻" in md) == bool(unmeasured)


def test_an_out_that_is_no_folder_is_bad_input_before_stale_records_are_judged(tiny_root, tmp_path, capsys):
    """``report --no-run --out FILE`` with stale records exited 1 for the records before it looked at --out."""
    from harness.core import discovery

    spec = discovery.load("tail-unwritten")
    _record_all(spec)
    (spec.path / "broken.py").write_text(FILES["broken.py"] + "# edited after the runs were recorded\n")
    (tmp_path / "a-file").write_text("")
    with pytest.raises(SystemExit) as e:
        cli.main(["report", "--no-run", "--out", str(tmp_path / "a-file")])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and "a-file is not a folder" in err[0], err


def test_every_problem_code_the_probe_declares_has_one_column():
    """A code no column shows is a finding the report calls quiet (P403 on grid-y-over-65535's broken kernel
    was: "no P401/P402 finding")."""
    from harness.probe.detectors import codes
    from harness.report import columns

    shown = [code for c in columns.PROBE_COLUMNS for code in c.codes]
    assert len(shown) == len(set(shown)), "a code in two columns"
    declared = {k for k in codes() if not k.startswith("P0") and k not in columns.NOT_A_COLUMN}
    assert declared == set(shown), f"declared, in no column: {sorted(declared - set(shown))}; " \
                                   f"in a column, declared by no detector: {sorted(set(shown) - declared)}"


def test_probe_cases_records_how_each_detector_ended_and_adds_tools_when_asked(tmp_path, monkeypatch):
    """The probe records the report reads list each detector's status, so a column can tell one that found
    nothing from one the record never ran; --tools adds opt-in tools to the default detectors, never by itself."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "probe_cases.py"
    loader = importlib.util.spec_from_file_location("probe_cases_under_test", path)
    pc = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(pc)
    monkeypatch.setattr(pc, "ROOT", tmp_path)
    case = SimpleNamespace(slug="c", path=tmp_path / "c")
    (tmp_path / "c" / "recorded").mkdir(parents=True)  # a case folder keeps its records there
    pc.SOURCES["c"] = {"broken.py": "0" * 64}
    ran = [("interpreter", "special", 1.0, "done"), ("interpreter", "sentinel", 0.0, "skipped: no index input")]
    broken = SimpleNamespace(findings=[], ran=ran, meta={})
    fixed = SimpleNamespace(findings=[], ran=ran[:1], meta={})
    pc.record(case, broken, fixed, "python examples/probe_cases.py --record c")
    rec = json.loads((tmp_path / "c" / "recorded" / "probe-interpreter.json").read_text())
    assert rec["ran"] == {"broken": {"special": "done", "sentinel": "skipped: no index input"},
                          "fixed": {"special": "done"}}
    defaults = pc.default_detectors("gpu")
    assert "reference" in defaults and "special" in defaults and "compute-sanitizer" not in defaults
    args = pc.parse(["--backend", "gpu", "--tools", "compute-sanitizer,triton-debug"])
    assert args.tools == ["compute-sanitizer", "triton-debug"] and args.only is None
    assert pc.parse(["--backend", "gpu"]).tools == []
