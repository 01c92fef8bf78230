from pathlib import Path

from harness import probe

HERE = Path(__file__).parent


def test_rownorm_is_clean():
    assert probe(HERE / "probe_rownorm.py", launcher="launch_fixed").ok
