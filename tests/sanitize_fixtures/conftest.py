"""A user's test suite for ``python -m harness sanitize pytest tests/sanitize_fixtures``
(tests/test_sanitize.py runs it): written for ``device="cuda"``, it is no test of the project.
The project's own ``python -m pytest`` leaves it out; a run that names this folder (or a file
in it) collects it."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # ``from kernels import ...``, as in a user's flat test folder


def _named(config, folder: Path = HERE) -> bool:
    base = Path(config.invocation_params.dir)
    for arg in config.args:
        path = (base / str(arg).split("::")[0]).resolve()
        if path == folder or folder in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path, config):
    if collection_path.parent == HERE and collection_path.is_dir():  # a suite of its own (four/): named itself
        return None if _named(config, collection_path) else True
    return None if _named(config) else True
