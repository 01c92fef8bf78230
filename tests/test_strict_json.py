"""Every JSON file the harness has written, and its --json output, parse as strict JSON
(no Infinity or NaN tokens: those are the strings "inf", "-inf" and "nan")."""

import contextlib
import io
import json
import math
from pathlib import Path

import pytest

from harness import cli
from harness.core import table

ROOT = Path(__file__).resolve().parents[1]


def strict_loads(text: str):
    def refuse(token):
        raise ValueError(f"non-strict JSON token {token}")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("path", sorted(ROOT.glob("cases/*/recorded/*.json")), ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_recordings_are_strict_json(path):
    strict_loads(path.read_text())


def test_dumps_writes_non_finite_numbers_as_strings_and_loads_restores_them():
    text = table.dumps({"max_abs": math.inf, "max_rel": -math.inf, "nested": [{"max_abs": math.nan}],
                        "result": "nan"})
    data = strict_loads(text)
    assert data == {"max_abs": "inf", "max_rel": "-inf", "nested": [{"max_abs": "nan"}], "result": "nan"}
    back = table.loads(text)
    assert back["max_abs"] == math.inf and back["max_rel"] == -math.inf and math.isnan(back["nested"][0]["max_abs"])
    assert back["result"] == "nan"  # text stays text


def test_list_json_output_is_strict():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["list", "--json"]) in (0, 2)
    assert isinstance(strict_loads(out.getvalue()), list)


def test_case_json_output_is_strict_even_with_infinite_errors():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(["case", "softmax-no-max-subtraction", "--backend", "interpreter", "--trials", "1", "--json"])
    data = strict_loads(out.getvalue())
    assert data[0]["case"] == "softmax-no-max-subtraction"
