"""The probe's text: every path one way (relative to the current directory when inside it, else
absolute), and each finding's program ids one way."""

import os

from harness.core.discovery import REPO_ROOT
from harness.probe.findings import Finding, case_links, shown_path, shown_paths, table

RACE = Finding("P301", "race", "interpreter", "k: programs (0, 1, 0) and 1 both access out[3]: a store at "
               "rownorm/rownorm.py:28, a load at /elsewhere/k.py:7", line="rownorm/rownorm.py:28",
               programs=["(0, 1, 0)", "1"], cases=[{"slug": "nrm2-race", "title": "t", "readme": "cases/nrm2-race/README.md"}])


def test_paths_are_relative_to_the_current_directory_inside_it(monkeypatch):
    """The workers run in the user's directory: their relative paths are that directory's, shown as
    they are; an absolute one inside it is shown relative; the casebook's write-ups (kept relative to
    its root) are shown from wherever the user is."""
    monkeypatch.chdir(REPO_ROOT / "examples")
    assert shown_path("rownorm/rownorm.py") == os.path.join("rownorm", "rownorm.py")
    assert shown_path(str(REPO_ROOT / "examples" / "rownorm" / "rownorm.py")) == os.path.join("rownorm", "rownorm.py")
    assert shown_path("../cases/nrm2-race/README.md") == str(REPO_ROOT / "cases" / "nrm2-race" / "README.md")
    text = table([RACE])
    assert "rownorm/rownorm.py:28" in text and "/elsewhere/k.py:7" in text
    assert case_links([RACE]) == [f"{REPO_ROOT}/cases/nrm2-race/README.md: t (P301)"]
    monkeypatch.chdir(REPO_ROOT)
    assert shown_paths("at examples/rownorm/rownorm.py:28") == "at examples/rownorm/rownorm.py:28"
    assert case_links([RACE]) == ["cases/nrm2-race/README.md: t (P301)"]


def test_program_ids_are_written_one_way():
    text = " ".join(table([RACE]).split())
    assert "programs (0, 1, 0) and (1, 0, 0) both access" in text
    flat = Finding("P301", "race", "interpreter", "k: programs 0 and 1 both access out[3]", programs=["0", "1"])
    assert "programs 0 and 1 both access" in " ".join(table([flat]).split())
