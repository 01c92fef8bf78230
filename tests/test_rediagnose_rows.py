"""benchmarks/rediagnose_rows.py: the diagnosis ranked again from a recorded row's findings and evidence."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("rediagnose_rows", Path(__file__).resolve().parents[1] / "benchmarks"
                                               / "rediagnose_rows.py")
rediagnose = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rediagnose)


def test_a_row_is_ranked_from_its_findings_and_its_experiments_evidence_split_by_the_sizes_they_name():
    """A row shaped like gemlite's a16w8 GEMM on the H200 board: wrong at the defaults, rows wrong past 2**31
    elements; the experiments' evidence at the defaults. The formula first, the wrap after it; an experiment's
    evidence that names other sizes counts there only (a tail seen at n=3 does not explain the defaults alone)."""
    d = {"m": 16, "n": 128, "k": 128}
    row = {"problems": [
        {"code": "P201", "detector": "reference", "backend": "gpu", "message": "at m=16, n=128, k=128: 2048/2048 "
         "differ", "severity": "error", "sizes": d},
        {"code": "P404", "detector": "large", "backend": "gpu", "message": "at m=16, n=128, k=16945024: rows wrong",
         "severity": "error", "sizes": {**d, "k": 16945024}}],
        "observed": {"gpu": {"wrong-values": "1 of 1 elements wrong (finite) at m=16, n=128, k=128",
                             "wrong-everywhere": "1 of 1 elements wrong at m=16, n=128, k=128"}}}
    assert rediagnose.replay(row)[:2] == ["wrong-formula", "overflow"]
    row["observed"]["gpu"] = {"tail": "wrong at m=3, n=128, k=128; right at m=4"}
    assert rediagnose.replay(row)[0] == "padding-contamination"  # a tail elsewhere is not shown absent here
    assert rediagnose.halves()  # every entry's half, from bugs/split.toml
