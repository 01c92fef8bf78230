"""``python -m harness check [<slug>...]``: validate case folders, one line per problem.

What it checks, for each folder:

- the required files, and that the Python ones parse
- ``case.toml``: every field (through ``spec.parse_spec``, one field at a time, so
  every bad field is reported, not just the first) and the vocabularies
- no ``TODO`` left in any file (the scaffold from ``new`` is full of them)
- the write-up's required sections, its summary table and its ``recorded:`` markers
- ``# BUG:`` markers in broken.py and ``# FIX:`` markers in fixed.py, each at the end
  of a line of code
- broken.py and fixed.py define the launcher with the same parameters
- the slug: well-formed, and unique (no other folder differing only in case, ``-`` or
  ``_``; no other case with the same title)
- a recorded GPU run: present, as declared, and newer than the code
- the case behaves as declared under the interpreter, by running it there

Each problem is one line, ``error: cases/<slug>/<file>[:line]: what is wrong (how to
fix it)``, or ``warning: ...``. Any error gives exit status 1; ``--strict`` makes
warnings (a missing GPU run among them) errors too.
"""

from __future__ import annotations

import ast
import copy
import datetime
import io
import json
import re
import subprocess
import sys
import tokenize
import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness.core import discovery
from harness.core.spec import BEHAVIOURS, CATEGORIES, DEFECTS, REQUIRED_FILES, SLUG_RE, SpecError, parse_spec

ERROR, WARNING = "error", "warning"
KERNELS = ("broken.py", "fixed.py")
PYTHON_FILES = ("case.py",) + KERNELS
CODE_FILES = PYTHON_FILES  # a recorded run is stale once any of these changed after it

# The write-up's headings, in order, and those that must hold text of their own.
SECTIONS = ("## What you would write", "## What happens", "### On a GPU", "### Under the interpreter",
            "## Why", "## The fix", "## How to catch it", "## Performance", "## Seen in the wild")
NEED_TEXT = {
    "## What you would write": "show the natural-looking code, as a ```python block",
    "## Why": "explain the mechanism",
    "## The fix": "one sentence, then the minimal diff as a ```diff block",
    "## How to catch it": "say which check showed it and which test would catch it",
    "## Seen in the wild": "link real occurrences: Triton issues, other projects' fixes",
}
KNOWN_KEYS = {"title", "category", "defect", "summary", "launcher", "seen_in", "expect", "run", "compare",
              "sizes", "bench"}
TABLES = {"run", "expect", "compare", "sizes"}
TOML_HINTS = {  # the fields, in the order they are checked: [run] before [expect]
    "title": 'title = "one line that names the trap"',
    "category": "'python -m harness new --help' lists the categories and what each means",
    "defect": "'python -m harness new --help' lists the defects and what each means",
    "summary": 'summary = "one sentence: what goes wrong"',
    "launcher": "the name of the function that broken.py and fixed.py both define",
    "seen_in": 'seen_in = ["https://github.com/..."]',
    "run": "see the case.toml reference in CONTRIBUTING.md",
    "expect": "[expect] says what the broken kernel does: gpu = .. and interpreter = .., from "
              + " | ".join(BEHAVIOURS),
    "compare": "see the case.toml reference in CONTRIBUTING.md",
    "sizes": "[sizes.gpu] and [sizes.interpreter] hold make_inputs' keyword arguments",
}
TODO_HINTS = {
    "case.toml": "put in the real value and delete the TODO",
    "case.py": "say what the inputs are and delete the TODO",
    "broken.py": "tell the story and end each faulty line with '# BUG: why'",
    "fixed.py": "say what the fix changes and end each changed line with '# FIX: why'",
}
MISSING_HINTS = {
    "case.toml": "the metadata; 'python -m harness new <slug>' writes one to start from",
    "case.py": "define make_inputs(*, device, gen, **sizes) and reference(...)",
    "broken.py": "the broken kernel and its launcher, faulty lines marked '# BUG: why'",
    "fixed.py": "the fixed kernel and the same launcher as broken.py, changed lines marked '# FIX: why'",
    "README.md": "the write-up: the template is in CONTRIBUTING.md",
}
MARKER_RE = re.compile(r"#\s*(BUG|FIX)\b:?\s*(.*)")
TODO_RE = re.compile(r"\bTODO\b")
BASE_META = {"title": "t", "category": next(iter(CATEGORIES)), "defect": next(iter(DEFECTS)), "summary": "s",
             "launcher": "f", "expect": {"gpu": "wrong", "interpreter": "wrong"}}


@dataclass
class Problem:
    level: str  # ERROR or WARNING
    where: str  # cases/<slug>/<file>[:line]
    what: str
    fix: str

    def __str__(self) -> str:
        return f"{self.level}: {self.where}: {self.what} ({self.fix})"


def shown(path: Path) -> str:
    """``path`` as the user would type it: relative to the current folder where it can be."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


# ---------------------------------------------------------------- metadata, a field at a time


def metadata_problems(slug: str, meta: dict) -> list[tuple[str, str, str]]:
    """(field, what is wrong, how to fix it) for every bad field of a parsed case.toml.

    ``parse_spec`` stops at the first problem, so each field is checked on its own,
    inside metadata known to be good; ``[expect]`` is checked with ``[run] calls``.
    """
    run = meta.get("run") if isinstance(meta.get("run"), dict) else {}
    out = []
    for key in TOML_HINTS:
        probe = {k: v for k, v in BASE_META.items() if k != key}
        if key in meta:
            probe[key] = meta[key]
        if key == "expect" and "calls" in run and not any(f == "run" for f, _, _ in out):
            probe["run"] = {"calls": run["calls"]}
        if key in TABLES and key in meta and not isinstance(meta[key], dict):
            out.append((key, f"'{key}' must be a table: [{key}]", TOML_HINTS[key]))
            continue
        try:
            parse_spec(slug, Path(slug), probe)
        except SpecError as e:
            out.append((key, str(e).removeprefix(f"cases/{slug}/case.toml: "), TOML_HINTS[key]))
        except Exception as e:  # a value of a type parse_spec does not expect
            out.append((key, f"'{key}' cannot be read: {type(e).__name__}: {e}", TOML_HINTS[key]))
    return out


# ---------------------------------------------------------------- markdown and python helpers


def headings(text: str) -> list[tuple[int, str]]:
    """(line number, heading) for each Markdown heading outside code fences."""
    out, fenced = [], False
    for i, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            out.append((i, " ".join(line.split())))
    return out


def section_text(text: str, heading: str) -> str:
    """What stands under ``heading`` before the next heading, comments and blanks dropped."""
    lines = text.splitlines()
    hs = headings(text)
    for n, (i, h) in enumerate(hs):
        if h.lower() == heading.lower():
            end = hs[n + 1][0] - 1 if n + 1 < len(hs) else len(lines)
            body = "\n".join(lines[i:end])
            return re.sub(r"<!--.*?-->", "", body, flags=re.S).strip()
    return ""


def comments(source: str) -> dict[int, tuple[str, str]]:
    """line -> (the code before the comment, the comment) for each comment in ``source``."""
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = (tok.line[:tok.start[1]].strip(), tok.string)
    return out


def code_lines(source: str) -> set[str]:
    """Every line of ``source`` without its comment, stripped."""
    notes = comments(source)
    return {notes[i][0] if i in notes else line.strip() for i, line in enumerate(source.splitlines(), 1)}


def signature(fn: ast.FunctionDef) -> str:
    """The parameters of ``fn`` as text, annotations left out."""
    args = copy.deepcopy(fn.args)
    for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if a is not None:
            a.annotation = None
    return ast.unparse(args)


def top_level_names(tree: ast.Module) -> dict[str, ast.AST]:
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name):
                    names[t.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names[(a.asname or a.name).split(".")[0]] = node
    return names


def last_change(path: Path) -> tuple[float, bool]:
    """When ``path`` last changed: its last commit when git tracks it unmodified, else its mtime."""
    try:
        git = dict(cwd=path.parent, capture_output=True, text=True, timeout=20)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", path.name], **git)
        if dirty.returncode == 0 and not dirty.stdout.strip():
            log = subprocess.run(["git", "log", "-1", "--format=%ct", "--", path.name], **git)
            if log.returncode == 0 and log.stdout.strip():
                return float(log.stdout.strip()), True
    except (OSError, subprocess.SubprocessError):
        pass
    return path.stat().st_mtime, False


def when(t: float) -> str:
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def slug_key(slug: str) -> str:
    return re.sub(r"[^a-z0-9]", "", slug.lower())


def title_key(title: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", title.lower()).split())


def slug_problems(slug: str, root: Path) -> list[Problem]:
    """Other folders under ``root`` whose names differ from ``slug`` only in case, '-' or '_'."""
    return [Problem(ERROR, shown(root / slug), f"the slug clashes with the case '{p.name}' (they differ only in "
                    "case, '-' or '_')", "pick a name that says what is different about this bug")
            for p in discovery.case_folders(root) if p.name != slug and slug_key(p.name) == slug_key(slug)]


# ---------------------------------------------------------------- one folder


class CaseCheck:
    """The static checks of one case folder; ``problems`` collects what they find."""

    def __init__(self, path: Path, root: Path):
        self.path, self.root, self.slug = path, root, path.name
        self.prefix = shown(path)
        self.problems: list[Problem] = []
        self.text: dict[str, str] = {}
        self.trees: dict[str, ast.Module] = {}
        self.meta: dict = {}
        self.spec = None

    def add(self, level: str, file: str | None, what: str, fix: str, line: int | None = None) -> None:
        where = self.prefix + (f"/{file}" if file else "") + (f":{line}" if line else "")
        self.problems.append(Problem(level, where, what, fix))

    def run_all(self) -> "CaseCheck":
        for step in (self.files, self.slug_ok, self.metadata, self.todos, self.writeup, self.python,
                     self.markers, self.launcher_signature, self.recorded):
            try:
                step()
            except Exception as e:  # never a traceback: a malformed folder is one more line
                self.add(ERROR, None, f"the check '{step.__name__}' could not finish: {type(e).__name__}: {e}",
                         "fix the problems above; if it persists, report it against the harness")
        return self

    @property
    def runnable(self) -> bool:
        """Whether running it can tell anything: it parses, and its code loads as Python."""
        return self.spec is not None and all(f in self.trees for f in PYTHON_FILES)

    def files(self) -> None:
        for name in REQUIRED_FILES:
            f = self.path / name
            if not f.is_file():
                self.add(ERROR, name, "missing", MISSING_HINTS[name])
                continue
            try:
                self.text[name] = f.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                self.add(ERROR, name, "is not UTF-8 text", "save it as UTF-8")

    def slug_ok(self) -> None:
        if not SLUG_RE.match(self.slug):
            better = re.sub(r"[^a-z0-9]+", "-", self.slug.lower()).strip("-") or "name-of-the-bug"
            self.add(ERROR, None, "the folder name is not a slug (lowercase words joined by '-')",
                     f"rename the folder to {better}")
        self.problems += slug_problems(self.slug, self.root)

    def metadata(self) -> None:
        if "case.toml" not in self.text:
            return
        try:
            self.meta = tomllib.loads(self.text["case.toml"])
        except tomllib.TOMLDecodeError as e:
            self.add(ERROR, "case.toml", f"is not valid TOML: {e}", "fix the syntax; the reference is in CONTRIBUTING.md")
            return
        for field, what, fix in metadata_problems(self.slug, self.meta):
            self.add(ERROR, "case.toml", what, fix)
        for key in sorted(set(self.meta) - KNOWN_KEYS):
            self.add(WARNING, "case.toml", f"unknown field '{key}'", f"the harness reads only {', '.join(sorted(KNOWN_KEYS))}")
        if self.meta.get("seen_in") == []:
            self.add(WARNING, "case.toml", "seen_in lists no real occurrence",
                     "link the issue, commit or thread where this trap was met")
        try:
            self.spec = parse_spec(self.slug, self.path, self.meta)
        except Exception:
            return  # reported field by field above
        self.unique_title()

    def unique_title(self) -> None:
        mine = title_key(self.spec.title)
        if TODO_RE.search(self.spec.title) or not mine:
            return
        for other in discovery.case_folders(self.root):
            if other.name == self.slug:
                continue
            try:
                title = tomllib.loads((other / "case.toml").read_text()).get("title")
            except (OSError, ValueError):
                continue
            if isinstance(title, str) and title_key(title) == mine:
                self.add(ERROR, "case.toml", f"the same title as the case '{other.name}'",
                         "if it is the same trap, improve that case; if not, say in the title what differs")

    def todos(self) -> None:
        for name, text in self.text.items():
            section = "the title, as in case.toml, and the opening paragraph"
            fenced = False
            for i, line in enumerate(text.splitlines(), 1):
                if line.lstrip().startswith("```"):
                    fenced = not fenced
                elif not fenced and line.startswith("## ") and name == "README.md":
                    section = f"the section '{' '.join(line.split())}'"
                if TODO_RE.search(line):
                    snippet = line[TODO_RE.search(line).start():].strip().rstrip("\"'")
                    snippet = snippet if len(snippet) <= 60 else snippet[:57] + "..."
                    fix = f"write {section}" if name == "README.md" else TODO_HINTS[name]
                    self.add(ERROR, name, f"still says '{snippet}'", fix, line=i)

    def writeup(self) -> None:
        text = self.text.get("README.md")
        if text is None:
            return
        first = next((line for line in text.splitlines() if line.strip()), "")
        if not first.startswith("# "):
            self.add(ERROR, "README.md", "does not start with '# <title>'", "make the first line '# ' and the title", 1)
        elif self.spec and first[2:].strip() != self.spec.title and not TODO_RE.search(first):
            self.add(WARNING, "README.md", "the heading differs from the title in case.toml",
                     "use the same title in both", 1)
        present = {h.lower() for _, h in headings(text)}
        for heading in SECTIONS:
            if heading.lower() not in present:
                self.add(ERROR, "README.md", f"no section '{heading}'", "add it: the template is in CONTRIBUTING.md")
            elif heading in NEED_TEXT and not section_text(text, heading):
                self.add(ERROR, "README.md", f"the section '{heading}' is empty", NEED_TEXT[heading])
        if "## the fix" in present and "```diff" not in section_text(text, "## The fix"):
            self.add(ERROR, "README.md", "the section '## The fix' has no ```diff block",
                     "paste the diff between broken.py and fixed.py (diff -u broken.py fixed.py)")
        self.summary_table(text)
        for name in ("gpu", "interpreter") + (("bench",) if "bench" in self.meta else ()):
            start, end = f"<!-- recorded:{name} -->", f"<!-- /recorded:{name} -->"
            if not (start in text and end in text and text.index(start) < text.index(end)):
                where = {"gpu": "'### On a GPU'", "interpreter": "'### Under the interpreter'"}.get(name, "'## Performance'")
                self.add(ERROR, "README.md", f"no {start} ... {end} markers",
                         f"put the pair on two lines under {where}; 'python -m harness record' fills them in")

    def summary_table(self, text: str) -> None:
        lines = text.splitlines()
        head = next((i for i, line in enumerate(lines) if re.match(r"\|\s*category\s*\|\s*defect\s*\|", line)), None)
        if head is None or head + 2 >= len(lines):
            self.add(WARNING, "README.md", "no summary table under the opening paragraph",
                     "copy '| category | defect | broken on GPU | broken under the interpreter |' from the template")
            return
        if self.spec is None:
            return
        cells = [c.strip().strip("`") for c in lines[head + 2].strip().strip("|").split("|")]
        want = [self.spec.category, self.spec.defect]
        words = [set(self.spec.expect[b]) for b in ("gpu", "interpreter")]
        said = [set(re.findall(r"\b(" + "|".join(BEHAVIOURS) + r")\b", c)) for c in cells[2:4]]
        if cells[:2] != want or said != words:
            self.add(WARNING, "README.md", "the summary table does not match case.toml", "make it say: " + " | ".join(
                want + [self.spec.expect_text(b) for b in ("gpu", "interpreter")]), head + 3)

    def python(self) -> None:
        for name in PYTHON_FILES:
            if name not in self.text:
                continue
            try:
                tree = ast.parse(self.text[name], filename=name)
            except SyntaxError as e:
                self.add(ERROR, name, f"does not parse: {e.msg}", "fix the syntax", e.lineno)
                continue
            self.trees[name] = tree
            if name in KERNELS and not ast.get_docstring(tree):
                self.add(ERROR, name, "has no docstring", "open the file with the story, as Triton's tutorials do")
        names = top_level_names(self.trees["case.py"]) if "case.py" in self.trees else {}
        for fn in ("make_inputs", "reference") if "case.py" in self.trees else ():
            if fn not in names:
                self.add(ERROR, "case.py", f"defines no {fn}()", MISSING_HINTS["case.py"])

    def markers(self) -> None:
        for name, want, other in (("broken.py", "BUG", "fixed.py"), ("fixed.py", "FIX", "broken.py")):
            if name not in self.trees:
                continue
            notes = comments(self.text[name])
            theirs = code_lines(self.text[other]) if other in self.trees else set()
            found = 0
            for line, (code, comment) in sorted(notes.items()):
                m = MARKER_RE.match(comment)
                if not m:
                    continue
                kind, why = m.groups()
                if kind != want:
                    self.add(ERROR, name, f"a '# {kind}:' marker in {name}",
                             f"mark lines '# {want}: why' here; '# {kind}:' belongs in {other}", line)
                    continue
                found += 1
                if not code:
                    self.add(ERROR, name, f"the '# {want}:' marker is on a line with no code",
                             "put it at the end of the line it is about", line)
                elif want == "FIX" and code in theirs:
                    self.add(WARNING, name, "the line marked '# FIX:' is the same in broken.py",
                             "mark the lines the fix changes", line)
                if want == "BUG" and not why.strip():
                    self.add(WARNING, name, f"the '# {want}' marker gives no reason", f"write '# {want}: why'", line)
            if not found:
                what = "faulty line with '# BUG: why'" if want == "BUG" else "changed line with '# FIX: why'"
                self.add(ERROR, name, f"no '# {want}:' marker", f"end each {what}")

    def launcher_signature(self) -> None:
        name = self.meta.get("launcher")
        if not isinstance(name, str) or not name.isidentifier():
            return
        defs = {}
        for f in KERNELS:
            if f not in self.trees:
                continue
            node = top_level_names(self.trees[f]).get(name)
            if node is None:
                self.add(ERROR, f, f"defines no launcher '{name}' (named in case.toml)",
                         f"define def {name}(...) here, or change launcher in case.toml")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs[f] = node
        if len(defs) == 2:
            b, f = (signature(defs[k]) for k in KERNELS)
            if b != f:
                self.add(ERROR, "fixed.py", f"the launcher is {name}({f}) but broken.py has {name}({b})",
                         "give both the same parameters: the harness calls either with the same inputs",
                         defs["fixed.py"].lineno)

    def recorded(self) -> None:
        if self.spec is None or self.spec.expect["gpu"][0] == "skip":
            return
        record = self.path / "recorded" / "gpu.json"
        how = f"on a machine with a GPU: python -m harness record {self.slug} --backend gpu, then commit recorded/"
        if not record.is_file():
            self.add(WARNING, "recorded/gpu.json", "no recorded GPU run", how)
            self.readme_block("interpreter")
            return
        try:
            data = json.loads(record.read_text())
            wrong = [v for v in data.get("verdicts", []) if not v.get("as_declared")]
            dates = [e.get("date") for e in data.get("env", []) if isinstance(e, dict) and e.get("date")]
        except (ValueError, AttributeError, TypeError) as e:
            self.add(ERROR, "recorded/gpu.json", f"cannot be read: {e}", f"record it again: {how}")
            return
        for v in wrong:
            self.add(ERROR, "recorded/gpu.json", f"the recorded GPU run of {v.get('variant')} was {v.get('observed')}, "
                     f"but the case declares {v.get('expected')}", f"fix the case or its [expect] gpu, then {how}")
        self.stale(record, dates, how)
        self.readme_block("gpu")
        self.readme_block("interpreter")

    def stale(self, record: Path, dates: list[str], how: str) -> None:
        rec_time, rec_git = last_change(record)
        try:  # when the run started, to the minute
            ran = min(datetime.datetime.strptime(d, "%Y-%m-%d %H:%M UTC").replace(
                tzinfo=datetime.timezone.utc).timestamp() for d in dates)
        except ValueError:
            ran = None
        for f in CODE_FILES:
            if not (self.path / f).is_file():
                continue
            t, git = last_change(self.path / f)
            if git and rec_git:  # both committed: compare the commits
                newer = t > rec_time
            else:
                newer = t > (ran + 60 if ran is not None else rec_time)
            if newer:
                self.add(WARNING, "recorded/gpu.json", f"the recorded GPU run ({when(ran or rec_time)}) is older "
                         f"than the last change to {f} ({when(t)})", f"record it again: {how}")

    def readme_block(self, backend: str) -> None:
        text = self.text.get("README.md", "")
        m = re.search(rf"<!-- recorded:{backend} -->(.*?)<!-- /recorded:{backend} -->", text, re.S)
        if m and not m.group(1).strip():
            how = "python -m harness record {} --backend {}".format(self.slug, backend)
            self.add(WARNING, "README.md", f"the recorded:{backend} block is empty",
                     (f"{how} (on a machine with a GPU)" if backend == "gpu" else how),
                     text[:m.start()].count("\n") + 1)


# ---------------------------------------------------------------- running under the interpreter


def setup_file(run, variant: str, folder: Path) -> tuple[str, int | None]:
    """The case file (and line) a setup error's traceback points at."""
    hits = [(Path(f).name, int(n)) for f, n in re.findall(r'File "([^"]+)", line (\d+)', run.output_tail)
            if Path(f).parent.resolve() == folder.resolve()]
    return hits[-1] if hits else (f"{variant}.py", None)


def run_problems(check: CaseCheck, runs, verdicts) -> None:
    """Turn one case's interpreter runs into problems: anything not as declared."""
    show = f"python -m harness case {check.slug} --backend interpreter -v shows the run"
    for run in runs:
        bad = [v for v in verdicts if v.variant == run.variant and not v.as_declared]
        if not bad:
            continue
        file = f"{run.variant}.py"
        if run.status == "error":
            file, line = setup_file(run, run.variant, check.path)
            check.add(ERROR, file, f"the {run.variant} run failed to set up under the interpreter: {run.message}",
                      show, line)
            continue
        for v in bad:
            call = f", call {v.call}," if check.spec.calls > 1 else ""
            detail = f": {run.message}" if v.observed in ("crash", "hang") and run.message else ""
            if run.variant == "fixed":
                check.add(ERROR, file, f"under the interpreter{call} the fixed kernel was {v.observed}{detail}, not ok",
                          "it must match the reference on every trial (bitwise alike when deterministic = true); "
                          + show)
            else:
                check.add(ERROR, file, f"under the interpreter{call} the broken kernel was {v.observed}{detail}, "
                          f"but case.toml declares {v.expected}",
                          f"make it show the bug, or declare what it does in [expect] interpreter; {show}")


def run_interpreter(checks: list[CaseCheck], jobs: int) -> None:
    from harness.run.scheduler import run_case_matrix

    todo = [c for c in checks if c.runnable]
    if not todo:
        return
    print(f"running {len(todo)} case(s) under the interpreter ...", file=sys.stderr, flush=True)
    results = run_case_matrix([c.spec for c in todo], ["interpreter"], None, 0, jobs=jobs)
    for c in todo:
        try:
            run_problems(c, *results[c.slug])
        except Exception as e:
            c.add(ERROR, None, f"the interpreter run could not be judged: {type(e).__name__}: {e}",
                  f"python -m harness case {c.slug} --backend interpreter -v")


# ---------------------------------------------------------------- the command


def check_folders(folders: list[Path], root: Path, *, run: bool = True, jobs: int = 2) -> list[CaseCheck]:
    checks = [CaseCheck(f, root).run_all() for f in folders]
    if run:
        run_interpreter(checks, jobs)
    return checks
