"""``CaseFolder``: a read-only view of one case folder, each file read and parsed once.

Rules never open files themselves (the recorded GPU run, the other cases' titles and
the files a write-up's code blocks name aside, which only the rules about them read;
the other cases' kernels come through ``casebook``); they ask the view, which reads lazily
and remembers: the text of each file, case.toml's dict (one ``tomllib`` parse), its
per-field errors (one pass), the spec (one ``parse_spec``), each Python file's AST
and comments, and the README's headings and code blocks.

Where a part cannot be had (a missing file, broken TOML, a syntax error) the view
says None and the rules that need that part are skipped: ``NEEDS`` names the parts.
"""

from __future__ import annotations

import ast
import json
import tomllib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from harness.checks.casebook import Casebook
from harness.checks.problem import shown
from harness.checks.pysource import comments
from harness.checks.readme import Readme
from harness.core import lessons
from harness.core.spec import REQUIRED_FILES, CaseSpec, FieldError, SpecError, parse_spec, validate
from harness.errors import error_line

KERNELS = ("broken.py", "fixed.py")
OPTIONAL_FILES = ("fast.py",)  # a faster correct kernel, run like fixed.py where a case has one


@dataclass(frozen=True)
class InterpreterRun:
    """What running the case under the interpreter gave: its runs and verdicts, or why there are none."""

    runs: list
    verdicts: list
    error: str | None = None


@dataclass(frozen=True)
class GpuRecord:
    """recorded/gpu.json, read: the verdicts and the dates of its runs, or why it cannot be read."""

    not_as_declared: list  # the verdicts whose as_declared is false
    dates: list  # each run's date, as recorded
    error: str | None = None


class CaseFolder:
    """One case folder, read once; the engine fills in ``interpreter``, and shares ``casebook`` across a run."""

    def __init__(self, path: Path, root: Path, casebook: Casebook | None = None):
        self.path, self.root, self.slug = path, root, path.name
        self.prefix = shown(path)
        self.interpreter: InterpreterRun | None = None
        self.casebook = casebook if casebook is not None else Casebook(root)

    # ------------------------------------------------------------ files

    @cached_property
    def present(self) -> tuple[str, ...]:
        """The required files that are there, and the optional ones that are."""
        return tuple(n for n in REQUIRED_FILES + OPTIONAL_FILES if (self.path / n).is_file())

    @cached_property
    def python_files(self) -> tuple[str, ...]:
        """case.py, broken.py, fixed.py and fast.py where it is there."""
        return ("case.py",) + KERNELS + tuple(n for n in OPTIONAL_FILES if n in self.present)

    @cached_property
    def _read(self) -> tuple[dict[str, str], dict[str, str]]:
        text, unreadable = {}, {}
        for name in self.present:
            try:
                text[name] = (self.path / name).read_bytes().decode("utf-8")
            except UnicodeDecodeError as e:
                unreadable[name] = f"is not UTF-8 text (byte {e.start})"
            except OSError as e:
                unreadable[name] = f"cannot be read ({e.strerror or e})"
        return text, unreadable

    @property
    def text(self) -> dict[str, str]:
        """file name -> its text, for every file that is there and reads as UTF-8."""
        return self._read[0]

    @property
    def unreadable(self) -> dict[str, str]:
        """file name -> why it cannot be read."""
        return self._read[1]

    # ------------------------------------------------------------ case.toml

    @cached_property
    def _toml(self) -> tuple[dict | None, str | None]:
        if "case.toml" not in self.text:
            return None, None
        try:
            return tomllib.loads(self.text["case.toml"]), None
        except tomllib.TOMLDecodeError as e:
            return None, " ".join(str(e).split())

    @property
    def meta(self) -> dict | None:
        """case.toml as a dict; None when it is missing, unreadable or not TOML."""
        return self._toml[0]

    @property
    def toml_error(self) -> str | None:
        return self._toml[1]

    @cached_property
    def field_errors(self) -> list[FieldError]:
        """Every bad field of case.toml, from the contract's one validator (``spec.validate``)."""
        return validate(self.meta) if self.meta is not None else []

    @cached_property
    def _spec(self) -> tuple[CaseSpec | None, str | None]:
        if self.meta is None:
            return None, None
        try:
            return parse_spec(self.slug, self.path, self.meta), None
        except SpecError as e:
            return None, str(e).removeprefix(f"cases/{self.slug}/case.toml: ")
        except Exception as e:  # a value of a type the contract does not expect
            return None, error_line(e)

    @property
    def spec(self) -> CaseSpec | None:
        """The parsed contract; None when case.toml is broken anywhere."""
        return self._spec[0]

    @property
    def spec_error(self) -> str | None:
        """What ``parse_spec`` said when it rejected case.toml."""
        return self._spec[1]

    # ------------------------------------------------------------ Python files and the write-up

    @cached_property
    def _parsed(self) -> tuple[dict[str, ast.Module], dict[str, tuple[str, int | None]]]:
        trees, errors = {}, {}
        for name in self.python_files:
            if name in self.text:
                try:
                    trees[name] = ast.parse(self.text[name], filename=name)
                except SyntaxError as e:
                    errors[name] = (e.msg, e.lineno)
                except ValueError as e:  # a NUL byte, before Python 3.12
                    errors[name] = (str(e), None)
        return trees, errors

    @property
    def trees(self) -> dict[str, ast.Module]:
        """file name -> AST, for each Python file that parses."""
        return self._parsed[0]

    @property
    def syntax_errors(self) -> dict[str, tuple[str, int | None]]:
        """file name -> (what the parser said, the line), for each Python file that does not parse."""
        return self._parsed[1]

    @cached_property
    def comments(self) -> dict[str, dict[int, tuple[str, str]]]:
        """file name -> {line: (code before the comment, the comment)}, for each Python file that parses."""
        return {name: comments(self.text[name]) for name in self.trees}

    @cached_property
    def readme(self) -> Readme | None:
        return Readme(self.text["README.md"]) if "README.md" in self.text else None

    @cached_property
    def marker_problems(self) -> list[lessons.MarkerProblem]:
        """``lessons.marker_problems`` of broken.py against fixed.py (rules that read it need both to parse)."""
        return lessons.marker_problems(self.text["broken.py"], self.text["fixed.py"])

    @property
    def runnable(self) -> bool:
        """Whether running it can tell anything: case.toml is good and every Python file parses."""
        return self.spec is not None and all(f in self.trees for f in self.python_files)

    # ------------------------------------------------------------ beyond the folder's own files

    @cached_property
    def gpu_record(self) -> GpuRecord | None:
        """recorded/gpu.json, or None when there is none."""
        record = self.path / "recorded" / "gpu.json"
        if not record.is_file():
            return None
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
            wrong = [v for v in data.get("verdicts", []) if not v.get("as_declared")]
            dates = [e.get("date") for e in data.get("env", []) if isinstance(e, dict) and e.get("date")]
        except (OSError, ValueError, AttributeError, TypeError) as e:
            return GpuRecord([], [], str(e) or type(e).__name__)
        return GpuRecord(wrong, dates)
