"""The board's dev, test and first-run columns (harness/bugs/board.py, record.py): each split's
numbers apart, a first-run entry counted as the probe first scored it, and the README's paragraph
quoting test and first-run, never dev alone."""

import json

from harness.bugs import board, record


def _line(slug, split, caught, alarm, first_right=True, visible=True):
    probe = {"caught": caught, "errors": int(caught), "warnings": 0, "diagnosis_first_right": first_right,
             "diagnosis_top3_right": first_right, "seconds": 1.0}
    fixed = {"caught": alarm, "errors": int(alarm), "warnings": 0, "seconds": 1.0}
    return {"slug": slug, "split": split, "visible": visible, "buggy": {"probe": probe}, "fixed": {"probe": fixed}}


def test_each_split_is_counted_apart():
    lines = [_line("d1", "dev", True, False), _line("d2", "dev", True, True),
             _line("t1", "test", True, False, first_right=False), _line("t2", "test", False, False),
             _line("f1", "first-run", True, False)]
    sp = board.totals(lines)["splits"]
    assert sp["dev"] == {"entries": 2, "ran": 2, "visible": 2, "caught_visible": 2, "caught_all": 2,
                         "false_alarms": 1, "diagnosis_first": 2, "legacy": 2}  # rows without a run's "given"
    assert (sp["test"]["caught_visible"], sp["test"]["visible"], sp["test"]["diagnosis_first"]) == (1, 2, 0)
    assert sp["first-run"]["caught_visible"] == 1
    # a first-run entry is counted as first scored: a later, better row does not change that column
    first = [_line("f1", "first-run", False, True)]
    sp = board.totals(lines, first_run=first)["splits"]
    assert (sp["first-run"]["caught_visible"], sp["first-run"]["false_alarms"]) == (0, 1)
    # beside it, the same entries' newest rows (the probe since changed: not blind), labelled so on the board
    assert (sp["first-run-now"]["caught_visible"], sp["first-run-now"]["false_alarms"]) == (1, 0)
    assert "not blind" in record.SPLIT_HEADS["first-run-now"]
    assert "splits" not in board.totals([{k: v for k, v in x.items() if k != "split"} for x in lines])


def test_the_scoreboard_shows_the_three_columns():
    lines = [_line("d1", "dev", True, False), _line("t1", "test", False, False)]
    t = board.totals(lines, ())
    for x in lines:
        x.update(defect="overflow", verified=True, fixed_known=None, buggy_known_only=None)
        x["buggy"]["probe"].update(first=None, diagnosis=[], codes=[])
        x["fixed"]["probe"].update(first=None, diagnosis=[], codes=[])
    text = record.scoreboard_md(lines, t, "interpreter", [], ())
    table = text[text.index("## Dev, test and first-run"):text.index("## By defect class")]
    assert "| bugs caught, of those visible here | 1 of 1 (100%) | 0 of 1 (0%) | 0 of 0 |" in table
    rows = [[c.strip() for c in r.split("|")[1:4]] for r in text.splitlines() if r.startswith("| d1 ")]
    assert rows == [["d1", "dev", "overflow"]]  # every entry's row says its split


def _board(dev, test, first):
    def t(caught, visible, firsts, alarms, ran):
        return {"caught_visible": caught, "visible": visible, "caught_all": caught, "diagnosis_first": firsts,
                "false_alarms": alarms, "ran": ran, "entries": ran}
    whole = t(*[a + b + c for a, b, c in zip(dev, test, first)])
    return {"envs": [{"device": "CPU"}], "totals": {**whole, "peers": {},
                                                   "splits": {"dev": t(*dev), "test": t(*test),
                                                              "first-run": t(*first)}}}


def test_the_readme_quotes_test_and_first_run_never_dev_alone():
    said = record.summary({"interpreter": _board((7, 7, 7, 0, 9), (5, 6, 4, 1, 8), (3, 5, 2, 2, 6))})
    assert "on the 8 frozen *test* entries (never tuned on) the probe caught 5 of the 6 bugs" in said
    assert "named the right defect class first for 4 of the 5" in said
    assert "on the 6 first-run entries" in said and "caught 3 of the 5 bugs" in said
    assert "false alarms on 2 of the 6 fixed versions" in said
    assert "7 of the 7" not in said  # the dev half's numbers are on the boards only
    none_yet = record.summary({"interpreter": _board((7, 7, 7, 0, 9), (5, 6, 4, 1, 8), (0, 0, 0, 0, 0))})
    assert "no first-run entry has been scored there yet" in none_yet
    assert "](../docs/bugs/scoreboard-interpreter.md)" in record.summary(
        {"interpreter": _board((1, 1, 1, 0, 1), (1, 1, 1, 0, 1), (0, 0, 0, 0, 0))}, prefix="../")


def test_a_first_run_row_is_kept_once(tmp_path, monkeypatch):
    monkeypatch.setattr(record, "DOCS", tmp_path)
    row = {"slug": "e", "variant": "buggy", "probe": {"caught": False}}
    assert record.keep_first_rows([row], "interpreter", "abc") == [tmp_path / "first-run" / "interpreter" / "e.json"]
    assert record.keep_first_rows([{**row, "probe": {"caught": True}}], "interpreter", "def") == []
    kept = record.read_first_rows("interpreter", ["e"])
    assert kept == [{**row, "probe_commit": "abc"}]
    record.keep_first_rows([{"slug": "e", "variant": "fixed", "error": "could not run: no pip"}], "interpreter", "x")
    assert json.loads((tmp_path / "first-run" / "interpreter" / "e.json").read_text()).keys() == {"buggy"}


def test_every_shortfall_of_the_test_half_on_the_committed_boards_has_its_reason():
    """Issue 37: every miss, wrong first diagnosis and false alarm on the frozen test half has a one-line
    reason (docs/bugs/reasons.toml), which the scoreboard prints beside it."""
    from harness.bugs import board, manifest, record

    entries = {e.slug: e for e in (manifest.read(f) for f in manifest.discover(manifest.root()))}
    why = record.reasons()
    for backend in ("gpu+interpreter", "interpreter"):
        rows = record.read_rows(backend, list(entries))
        lines = board.combine(entries, rows, backend, record.verified(entries, backend))
        for slug, kind in record.shortfalls(lines):
            assert why.get(slug, {}).get(kind), f"{backend}: {slug}'s {kind} has no reason in docs/bugs/reasons.toml"



def test_every_reason_names_a_shortfall_still_on_a_committed_board():
    """A reason outlives its shortfall when an entry's erratum or a re-run removes it (the vllm decode
    entry's false alarm, gone with its erratum of 2026-11-29): the board would explain what is not there."""
    from harness.bugs import board, manifest, record

    entries = {e.slug: e for e in (manifest.read(f) for f in manifest.discover(manifest.root()))}
    shown = set()
    for backend in ("gpu", "gpu+interpreter", "interpreter"):
        rows = record.read_rows(backend, list(entries))
        shown |= set(record.shortfalls(board.combine(entries, rows, backend, record.verified(entries, backend))))
    for slug, kinds in record.reasons().items():
        for kind in kinds:
            assert (slug, kind) in shown, f"docs/bugs/reasons.toml: {slug}'s {kind} is on no board: drop it"

def test_a_shortfall_without_a_reason_is_said_so_on_the_board():
    from harness.bugs import record

    probe = {"caught": False, "errors": 0, "diagnosis_first_right": False}
    line = {"slug": "no-such-entry", "split": "test", "visible": True, "buggy": {"probe": probe},
            "fixed": {"probe": {"errors": 0}}}
    assert record.shortfalls([line]) == [("no-such-entry", "miss")]
    assert record.shortfalls([{**line, "split": "dev"}]) == []
    assert "no-such-entry: missed: no reason written yet" in "\n".join(record._shortfalls_section([line]))
