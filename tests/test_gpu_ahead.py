"""The GPU suite's work started ahead (tests/conftest.py): each piece's begin and end are noted, and
the summary lists them, earliest first, so a piece that starts late or runs long shows (issue 40)."""

import importlib.util
from pathlib import Path

import pytest


def _conftest():
    """This folder's conftest.py by its path: a bare ``import conftest`` takes whichever conftest the suite
    imported last under that name (tests/sanitize_fixtures' one, after the sanitize tests ran pytest in-process)."""
    spec = importlib.util.spec_from_file_location("casebook_tests_conftest", Path(__file__).with_name("conftest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conftest = _conftest()


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_each_piece_started_ahead_notes_when_it_began_and_ended_even_when_it_raises():
    clock, times = Clock(), {}

    def batch(n):
        clock.t += n
        return n * 2

    assert conftest._timed(("cases", "gpu"), batch, times, clock)(30) == 60
    assert times[("cases", "gpu")] == [100.0, 130.0]

    def fails():
        clock.t += 2
        raise RuntimeError("the probe's worker died")

    with pytest.raises(RuntimeError):
        conftest._timed("sanitize-four", fails, times, clock)()
    assert times["sanitize-four"] == [130.0, 132.0]


def test_the_summary_lists_each_piece_earliest_first_with_its_seconds():
    times = {("probe", "matmul-k-tail"): [12.0, 40.5], ("cases", "gpu"): [11.0, 33.0], ("layout-gpu",): [12.5, None]}
    assert conftest.ahead_lines(times, t0=1.0) == [
        "cases/gpu: began at 10.0 s, ended at 32.0 s (22.0 s)",
        "probe/matmul-k-tail: began at 11.0 s, ended at 39.5 s (28.5 s)",
        "layout-gpu: began at 11.5 s, ended at not yet",
    ]
