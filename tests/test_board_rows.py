"""benchmarks/board_rows.py: two sets of a bugs board's rows compared row by row, on small dict rows."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("board_rows", Path(__file__).resolve().parents[1] / "benchmarks"
                                               / "board_rows.py")
board_rows = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(board_rows)


def row(caught=True, codes=("P401",), diagnosis=("wrong-formula",), errors=1, date="2026-11-26 18:00 UTC",
        seconds=5.0, budget=60.0, ran=(("reference", "done"), ("shapes", "done")), **extra) -> dict:
    return {"probe": {"caught": caught, "codes": list(codes), "diagnosis": list(diagnosis), "errors": errors,
                      "seconds": seconds, "budget": budget,
                      "ran": [{"detector": d, "status": st, "backend": "interpreter"} for d, st in ran]},
            "env": {"date": date}, **extra}


def test_the_same_run_twice_differs_in_nothing():
    a = {"e": {"buggy": row(), "fixed": row(caught=False, codes=(), diagnosis=(), errors=0)}}
    result = board_rows.compare(a, a)
    assert result["differ"] == [] and result["same"] == [("e", "buggy"), ("e", "fixed")]
    assert result["one_run"] == [("e", "buggy"), ("e", "fixed")]  # one run in both sets: no comparison
    assert "2 rows in both (2 of them one run" in board_rows.summary(result)
    again = {"e": {"buggy": row(seconds=5.3), "fixed": row(caught=False, codes=(), diagnosis=(), errors=0)}}
    rerun = board_rows.compare(a, again)  # the same minute, other seconds: a second run, the same answers
    assert rerun["one_run"] == [("e", "fixed")] and rerun["differ"] == []


def test_each_compared_field_is_named_with_before_and_after():
    before = {"e": {"buggy": row()}}
    after = {"e": {"buggy": row(caught=False, codes=("P206",), diagnosis=("stride-assumption",), errors=0,
                                date="2026-11-29 07:00 UTC",
                                ran=(("reference", "done"), ("shapes", "cut at the budget's end"),
                                     ("layout", "done")))}}
    (slug, variant, d, fa, fb), = board_rows.compare(before, after)["differ"]
    assert (slug, variant) == ("e", "buggy")
    assert d["caught"] == (True, False) and d["codes"] == (["P401"], ["P206"]) and d["errors"] == (1, 0)
    assert d["first class"] == ("wrong-formula", "stride-assumption")
    assert d["status"] == ["interpreter/layout: - -> done", "interpreter/shapes: done -> cut at the budget's end"]
    assert "error" not in d  # both ran
    assert board_rows.cut_short(fb) == ["interpreter/shapes"] and board_rows.cut_short(fa) == []


def test_a_row_that_could_not_run_and_the_budget_note():
    before = {"e": {"fixed": row(caught=False, codes=(), diagnosis=(), errors=0)}}
    after = {"e": {"fixed": {**row(caught=False, codes=(), diagnosis=(), errors=0, seconds=59.0,
                                   ran=(("reference", "done"), ("memcheck", "timeout after 60 s"))),
                             "error": "could not run: the launcher raised"}}}
    (_, _, d, fa, fb), = board_rows.compare(before, after)["differ"]
    assert d["error"] == ("", "could not run: the launcher raised")
    assert board_rows.budget_note(fa) == "5.0 of 60.0 s"
    assert board_rows.budget_note(fb) == "59.0 of 60.0 s (near the budget); not to the end: interpreter/memcheck"
    assert "| e | fixed | error: - -> could not run: the launcher raised" in board_rows.table(
        board_rows.compare(before, after))


def test_rows_in_one_set_only_are_listed_apart():
    result = board_rows.compare({"a": {"buggy": row()}}, {"b": {"buggy": row(), "fixed": row()}})
    assert result["only_before"] == [("a", "buggy")]
    assert result["only_after"] == [("b", "buggy"), ("b", "fixed")]
    assert result["differ"] == result["same"] == []


def test_around_pairs_the_last_row_before_with_the_first_made_again_after():
    """A --no-run remake after the boundary keeps the row's date: not a new run, so not its pair."""
    old = {"buggy": row(date="2026-11-26 18:00 UTC"), "fixed": row(date="2026-11-26 18:01 UTC")}
    older = {"buggy": row(date="2026-11-25 10:00 UTC"), "fixed": row(date="2026-11-25 10:01 UTC")}
    kept = {"buggy": row(date="2026-11-26 18:00 UTC"), "fixed": row(date="2026-11-29 07:00 UTC", caught=False)}
    rerun = {"buggy": row(date="2026-11-29 12:00 UTC", codes=("P206",)), "fixed": row(date="2026-11-29 12:01 UTC")}
    versions = [("c1", older, False), ("c2", old, False), ("c3", kept, True), ("c4", rerun, True)]
    cb, rb, firsts = board_rows.pick(versions)
    assert cb == "c2" and rb is old
    assert firsts["buggy"][0] == "c4" and firsts["fixed"][0] == "c3"
    assert board_rows.pick([("c3", kept, True)]) == (None, None, {})  # no row before: no pair


def test_status_words():
    assert board_rows.status_word("skipped: no atomics") == "skipped"
    assert board_rows.status_word("done") == "done"
    assert board_rows.status_changes({"i/a": "done"}, {"i/a": "done", "i/b": "skipped"}) == ["i/b: - -> skipped"]


def test_bad_sets_are_one_line_and_exit_2(tmp_path, capsys):
    assert board_rows.main(["interpreter", "no-such-commit-or-folder", str(tmp_path)]) == 2
    assert board_rows.main(["interpreter", str(tmp_path)]) == 2
    assert board_rows.main(["interpreter", "--around", "no-such-commit"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("error: ") for line in err), err


def test_two_folders_of_rows(tmp_path, capsys):
    import json

    for name, caught in (("a", True), ("b", False)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "e.json").write_text(json.dumps({"buggy": row(caught=caught)}))
    assert board_rows.main(["interpreter", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 rows in both (1 of them one run") and "| e | buggy | caught: True -> False" in out
