"""``python benchmarks/fuzz_cli.py``: the command line fuzzed as a new user and a fuzzer would
(issue 23's categories), each invocation a real ``python -m harness`` process.

Categories:

- ``probe input``: probe files that exit, raise or hang at import, whose make_inputs raises,
  whose FUZZ, DETERMINISTIC or TOLERANCE is malformed; bad ``--timeout``, ``--sizes``,
  ``--only``, ``--launcher`` and the like; detectors that cannot run here;
- ``options``: random invocations of every command, each with at least one bad option value;
- ``environment``: numpy, torch or Triton that cannot be imported, a small ``ulimit -v``;
- ``closed stdout``: commands started with stdout closed (``>&-``);
- ``unwritable``: a record, a report or a case folder that cannot be written;
- ``processes``: launchers that start a child, a child in a session of its own and a daemon,
  through ``case`` and ``probe``, ending, hanging, or interrupted with SIGINT or SIGTERM;
- ``one bad``: a bad case or record beside a healthy one;
- ``unchecked`` (issue 42): probe files on which no detector learns anything about the kernel (an
  ``os._exit(0)`` at import, a reference that returns a string, a launcher whose worker is killed):
  never a "passed" verdict;
- ``sanitize``: a suite under ``filterwarnings = error`` (the casebook installed as pip installs it),
  a test that calls ``os._exit(0)``, a collection error (pytest's own status, said to be pytest's),
  a module that does not exist;
- ``bugs``: entries whose glue exits or is killed at import, a version the registry will not give
  (a closed index): could not run, exit 2, the verified record kept;
- ``record signals``: SIGINT at timed moments as ``record`` writes its unit (once its first
  temporary file appears): the record is whole or untouched;
- ``lint`` (issue 42): beside a file with findings, one that nests too deeply for Python's parser, links
  that loop (in the folder, and a path through one), a FIFO named ``*.py`` (in the folder and named), an
  unreadable folder, a UTF-8 BOM and a latin-1 coding cookie (valid Python: linted), a file over the size
  limit, ``/dev/null`` and a dangling link named, ``lint ''``; each in text and in SARIF. As root the
  unreadable folder is read with root's capabilities to read any file dropped (the bounding set, in the
  child); where they cannot be dropped those invocations are left out and the report says so.

Each invocation is checked for: a traceback on stderr; an exit status outside the ones it
may end with (bad input 2, a kernel's behaviour 0 or 1, interrupted 130/143); a process it
started that is alive 5 s after it ended (found by a marker in its environment, which every
process below the command inherits); a temporary file or folder left behind, or a file it
wrote that does not parse (half-written); and, for the "one bad" category, the healthy
case missing from the output or a file it should write missing; a "passed" verdict (exit 0) on
an unchecked kernel; a file that must be kept (a verified record) changed; a record torn (some of
its files new, some old); a hang (killed at its timeout); for ``lint``, the file with findings not
linted, and SARIF that is not written or does not parse.

``tests/test_fuzz_cli.py`` runs a sample of each category; this script runs all of them and
writes docs/measurements/fuzz-cli.md (``--out`` elsewhere, ``--sample`` for the test's sample).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's harness, not one installed elsewhere

from harness.lint.rules.tl101_unmasked_tile import BAD as TL101_BAD  # noqa: E402

OUT = ROOT / "docs" / "measurements" / "fuzz-cli.md"
BAD_INPUT, BEHAVIOUR, INTERRUPTED = (2,), (0, 1), (130, 143)
TRACEBACK = "Traceback (most recent call last)"
MARK = "CASEBOOK_FUZZ_MARK"  # in the environment of every process an invocation starts
LINGER = 5.0  # seconds after a command ends by which everything it started must be gone
TEMPORARY = re.compile(r"(^\..*\.tmp$)|(^casebook-)|(\.tmp$)")


@dataclass
class Invocation:
    category: str
    name: str
    argv: list
    expect: tuple  # the exit statuses it may end with
    env: dict = field(default_factory=dict)
    shows: tuple = ()  # text the output must hold (a healthy case beside a bad one)
    writes: tuple = ()  # files that must exist afterwards
    stdout_closed: bool = False
    memory: int | None = None  # an address-space limit (ulimit -v), bytes
    stop: int | None = None  # a signal sent once the launcher's children exist
    timeout: float = 300.0
    cwd: str | None = None  # where it runs (default: the repository)
    unchecked: bool = False  # nothing about the kernel can be checked: exit 0 would be a "passed" verdict
    own_line: str = ""  # a status that is not the harness's (pytest's): this line says so, not "error:"
    keeps: tuple = ()  # files that must be byte for byte as they were (a verified record)
    unit: tuple = ()  # files written as one unit: afterwards all hold ``unit_mark`` or all are as they were
    unit_mark: str = ""
    stop_at_temp: tuple = ()  # (folder, seconds): the signal ``stop`` that long after a temporary file appears there
    lints: tuple = ()  # files lint must report findings in (it linted them whatever their neighbours)
    sarif: bool = False  # stdout must be SARIF 2.1.0 that parses (with ``lints``' findings in it)
    no_dac: bool = False  # as root: without the capabilities to read any file (a folder chmod 0 is unreadable)


# ------------------------------------------------------------------ the files the invocations use

KERNEL = '''
import torch
import triton
import triton.language as tl


@triton.jit
def double(x, y, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y + o, tl.load(x + o, mask=o < n) * 2, mask=o < n)


def launch(x):
    y = torch.empty_like(x)
    double[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), B=64)
    return y


def make_inputs(*, device, gen, n=100):
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    return x.double() * 2
'''
SPAWNS = '''
import os as _os
import subprocess as _sp
import time as _time


def _note(pid):
    open(_os.path.join(_os.environ["CASEBOOK_FUZZ_PIDS"], str(pid)), "w").close()


def spawn_children():
    """A launcher's leftovers: a plain child, a child in a session of its own with a child of its
    own, and a daemon (a double fork, then setsid); each writes its pid into CASEBOOK_FUZZ_PIDS."""
    _note(_sp.Popen(["sleep", "1234"]).pid)
    if (pid := _os.fork()) == 0:
        _os.setsid()
        if _os.fork() == 0:
            _note(_os.getpid())
            _time.sleep(1234)
            _os._exit(0)
        _time.sleep(1234)
        _os._exit(0)
    _note(pid)
    if _os.fork() == 0:
        if _os.fork() == 0:
            _os.setsid()
            _note(_os.getpid())
            _time.sleep(1234)
            _os._exit(0)
        _os._exit(0)
'''
HANG = "    import time; time.sleep(1234)\n"


def with_spawns(source: str, launcher: str, hang: bool = False) -> str:
    """``source`` whose launcher first starts the children of SPAWNS (and then hangs, if asked)."""
    at = source.index("\n", source.index(f"def {launcher}(")) + 1
    return SPAWNS + source[:at] + "    spawn_children()\n" + (HANG if hang else "") + source[at:]


PROBE_FILES = {  # name -> (source, what the probe must answer)
    "ok": (KERNEL, BEHAVIOUR),
    "wrong-result": (KERNEL.replace("* 2, mask", "* 3, mask"), (1,)),
    "exits-at-import": ("import sys\nsys.exit(3)\n" + KERNEL, BAD_INPUT),
    "raises-at-import": ("raise ValueError('boom')\n" + KERNEL, BAD_INPUT),
    "hangs-at-import": ("import time\ntime.sleep(1234)\n" + KERNEL, BAD_INPUT),
    "syntax-error": ("def launch(:\n", BAD_INPUT),
    "empty": ("", BAD_INPUT),
    "not-utf8": (b"x = '\xff\xfe'\n", BAD_INPUT),
    "make-inputs-raises": (KERNEL.replace('    return {"x"', '    raise ValueError("no")\n    return {"x"'),
                           BAD_INPUT),
    "make-inputs-returns-a-list": (KERNEL.replace('return {"x": torch.randn(n, generator=gen).to(device)}',
                                                  'return [torch.randn(n, generator=gen).to(device)]'), BAD_INPUT),
    "fuzz-not-whole": (KERNEL + 'FUZZ = {"n": (0.5, float("inf"))}\n', BAD_INPUT),
    "fuzz-unknown-size": (KERNEL + 'FUZZ = {"bogus": (1, 4)}\n', BAD_INPUT),
    "fuzz-backwards": (KERNEL + 'FUZZ = {"n": (9, 2)}\n', BAD_INPUT),
    "fuzz-a-list": (KERNEL + 'FUZZ = [1, 2]\n', BAD_INPUT),
    "deterministic-maybe": (KERNEL + 'DETERMINISTIC = "maybe"\n', BAD_INPUT),
    "tolerance-nan": (KERNEL + 'TOLERANCE = {"rtol": float("nan"), "atol": 0}\n', BAD_INPUT),
    "sizes-not-a-dict": (KERNEL + 'SIZES = 5\n', BAD_INPUT),
    "no-reference": (KERNEL[:KERNEL.index("def reference")], BAD_INPUT),
    "os-exit-0-at-import": ("import os\nos._exit(0)\n" + KERNEL, BAD_INPUT),
    "reference-a-string": (KERNEL.replace("    return x.double() * 2", "    return 'a string'"), BAD_INPUT),
    "worker-killed": (KERNEL.replace("def launch(x):\n", "def launch(x):\n    import os, signal\n"
                                     "    os.kill(os.getpid(), signal.SIGKILL)\n"), BAD_INPUT),
    "spawns": (with_spawns(KERNEL, "launch"), BEHAVIOUR),
    "spawns-and-hangs": (with_spawns(KERNEL, "launch", hang=True), (1,)),
}

SHIMS = {"torch": "raise ImportError('broken on purpose')\n", "triton": "raise ImportError('missing on purpose')\n",
         "numpy": "raise ImportError('missing on purpose')\n"}


def test_module(name: str):
    """tests/<name>.py, loaded as a plain module (the tests' files are the one source of valid inputs)."""
    spec = importlib.util.spec_from_file_location(f"casebook_{name}", ROOT / "tests" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_case_function():
    """tests/conftest.py's make_case, as a plain function of its tmp_path (its one source of valid cases)."""
    fixture = test_module("conftest").make_case
    for name in ("_get_wrapped_function", "__wrapped__", "_fixture_function"):
        if (fn := getattr(fixture, name, None)) is not None:
            return fn() if name == "_get_wrapped_function" else fn
    return fixture


def set_up(work: Path, make_case) -> dict:
    """The cases, probe files and broken packages under ``work``; their paths."""
    cases = work / "cases"
    texts = make_case.texts
    make_case("healthy", root=cases)
    make_case("make-inputs-raises", root=cases,
              files={"case.py": texts["case.py"].replace("    return {", "    raise ValueError('no')\n    return {")})
    make_case("launcher-exits-0", root=cases,
              files={"fixed.py": "import os\ndef row_mean(x, out):\n    os._exit(0)\n"})
    make_case("case-py-raises", root=cases, files={"case.py": "raise RuntimeError('boom')\n"})
    for name, hang in (("spawns", False), ("spawns-and-hangs", True)):
        make_case(name, root=cases, fields={"run": {"timeout": {"interpreter": 2}}} if hang else None,
                  files={f"{v}.py": with_spawns(texts[f"{v}.py"], "row_mean", hang) for v in ("broken", "fixed")})
    make_case("huge-trials", root=cases, fields={"run": {"trials": 2**63 - 1}})
    make_case("bad-record", root=cases, files={"recorded/gpu.json": json.dumps({"variants": {"broken": 5}})})
    make_case("record-unwritable", root=cases)
    (cases / "record-unwritable" / "recorded" / "detect-interpreter.json").mkdir()
    probes = work / "probe"
    probes.mkdir()
    for name, (source, _) in PROBE_FILES.items():
        p = probes / f"{name}.py"
        p.write_bytes(source) if isinstance(source, bytes) else p.write_text(source)
    for package, text in SHIMS.items():
        (work / "shims" / package / package).mkdir(parents=True)
        (work / "shims" / package / package / "__init__.py").write_text(text)
    (work / "a-file").write_text("not a folder\n")
    paths = {"cases": cases, "probes": probes, "shims": work / "shims", "work": work}
    return {**paths, **set_up_issue42(work), **set_up_lint(work)}


# ------------------------------------------------------------------ the invocations, by category

def probe_input(paths: dict) -> list:
    p = paths["probes"]
    quick = ["--backend", "interpreter", "--only", "reference", "-q", "--timeout", "8"]
    out = [Invocation("probe input", f"file {name}", ["probe", str(p / f"{name}.py"), *quick], expect)
           for name, (_, expect) in PROBE_FILES.items() if not name.startswith("spawns") and name not in UNCHECKED]
    ok = str(p / "ok.py")
    bad_options = {
        "--timeout nan": ["--timeout", "nan"], "--timeout inf": ["--timeout", "inf"],
        "--timeout -1": ["--timeout", "-1"], "--timeout 0": ["--timeout", "0"],
        "--timeout 1e309": ["--timeout", "1e309"], "--sizes bogus=3": ["--sizes", "bogus=3"],
        "--sizes n=x": ["--sizes", "n=x"], "--only ''": ["--only", ""], "--only ,": ["--only", ","],
        "--only nosuch": ["--only", "nosuch"], "--launcher ''": ["--launcher", ""],
        "--launcher 'a b'": ["--launcher", "a b"], "--launcher nosuch": ["--launcher", "nosuch"],
        "--seed -1": ["--seed", "-1"], "--seed 2**64": ["--seed", str(2**64)], "--jobs 0": ["--jobs", "0"],
        "--fuzz-trials 10**7": ["--fuzz-trials", str(10**7)], "--backend tpu": ["--backend", "tpu"],
        "--inputs missing": ["--inputs", str(p / "missing.py")],
        "--timeout 1e-9": ["--timeout", "1e-9"], "--timeout 0.1": ["--timeout", "0.1"],
        "--sizes =5": ["--sizes", "=5"], "--sizes n=5,n=6": ["--sizes", "n=5,n=6"],
    }
    out += [Invocation("probe input", name, ["probe", ok, "--backend", "interpreter", "-q", *args], BAD_INPUT)
            for name, args in bad_options.items()]
    out += [Invocation("probe input", f"--only {d} (a GPU's only)", ["probe", ok, "--backend", "interpreter", "-q",
                                                                     "--only", d], BAD_INPUT)
            for d in ("compute-sanitizer", "triton-debug", "large")]
    out += [Invocation("probe input", name, ["probe", str(f), "-q"], BAD_INPUT)
            for name, f in (("missing file", p / "missing.py"), ("a folder", p),
                            ("not python", paths["work"] / "a-file"))]
    return out


OPTION_VALUES = {  # option -> (good values, bad values)
    "--trials": (["1", "2"], ["0", "-1", "x", str(2**63 - 1), "1e3", ""]),
    "--seed": (["0", "7"], ["-1", str(2**64), "abc", ""]),
    "--jobs": (["1", "2"], ["0", "-3", "many", str(10**9)]),
    "--backend": (["interpreter"], ["tpu", "", "GPU"]),
    "--timeout": (["30"], ["nan", "inf", "-1", "0", "1e309", "soon"]),
    "--out": ([], ["", "{work}/a-file"]),
    "--skip": (["order"], ["nosuch", "order,nosuch"]),
}
COMMAND_OPTIONS = {"case": ["--trials", "--seed", "--jobs", "--backend"], "check": ["--jobs"],
                   "detect": ["--trials", "--seed", "--jobs", "--backend", "--skip"],
                   "record": ["--trials", "--seed", "--backend"], "bench": ["--backend"],
                   "report": ["--trials", "--seed", "--backend", "--out"],
                   "probe": ["--seed", "--jobs", "--backend", "--timeout"]}


def options(paths: dict, n: int, rng: random.Random) -> list:
    """``n`` invocations of random commands, each with one to three options, at least one bad."""
    out = []
    for i in range(n):
        command = rng.choice(sorted(COMMAND_OPTIONS))
        names = rng.sample(COMMAND_OPTIONS[command], min(len(COMMAND_OPTIONS[command]), rng.randint(1, 3)))
        bad = rng.choice(names)
        argv = [command, *{"probe": [str(paths["probes"] / "ok.py")], "report": ["--no-run", "--allow-stale"]}.get(
            command, ["healthy"])]
        for name in names:
            good, wrong = OPTION_VALUES[name]
            value = rng.choice(wrong if name == bad or not good else good)
            argv += [name, value.format(work=paths["work"])]
        out.append(Invocation("options", " ".join(argv), argv, BAD_INPUT))
    out += [Invocation("options", "unknown command", ["frobnicate"], BAD_INPUT),
            Invocation("options", "unknown option", ["case", "healthy", "--bogus"], BAD_INPUT),
            Invocation("options", "case ../etc", ["case", "../etc"], BAD_INPUT),
            Invocation("options", "new Bad_Slug", ["new", "Bad_Slug"], BAD_INPUT),
            Invocation("options", "new 101-char slug", ["new", "a" * 101], BAD_INPUT),
            Invocation("options", "new --title with a newline", ["new", "fuzz-title", "--title", "x\ny"], BAD_INPUT),
            Invocation("options", "bugs --peers bogus", ["bugs", "--peers", "bogus"], BAD_INPUT),
            Invocation("options", "bugs --ray ''", ["bugs", "--ray", ""], BAD_INPUT),
            Invocation("options", "list, CASEBOOK_CASES a missing folder", ["list"], BAD_INPUT,
                       env={"CASEBOOK_CASES": str(paths["work"] / "missing")})]
    return out


def environment(paths: dict) -> list:
    ok = str(paths["probes"] / "ok.py")
    commands = {"case": ["case", "healthy", "--backend", "interpreter"],
                "probe": ["probe", ok, "--backend", "interpreter", "--only", "reference", "-q"],
                "detect": ["detect", "healthy", "--backend", "interpreter"],
                "check": ["check", "healthy"], "record": ["record", "healthy", "--backend", "interpreter"]}
    out = [Invocation("environment", f"{package} broken: {name}", argv, BAD_INPUT,
                      env={"PYTHONPATH": str(paths["shims"] / package)}, shows=(f"{package} cannot be imported",))
           for package in SHIMS for name, argv in commands.items()]
    out += [Invocation("environment", f"ulimit -v 400 MB: {name}", argv, BAD_INPUT, memory=400 * 2**20)
            for name, argv in commands.items() if name in ("case", "probe")]
    ascii_locale = {"LC_ALL": "C", "LANG": "C", "PYTHONIOENCODING": "ascii", "PYTHONUTF8": "0",
                    "CASEBOOK_CASES": str(ROOT / "cases")}  # the casebook's own cases: titles past ASCII
    out += [Invocation("environment", f"an ASCII locale: {name}", argv, (0,), env=ascii_locale)
            for name, argv in (("list", ["list"]), ("check --no-run", ["check", "--no-run", "nrm2-atomics"]))]
    return out


def closed_stdout(paths: dict) -> list:
    commands = {"list": ["list"], "case": ["case", "healthy", "--backend", "interpreter"],
                "check --no-run": ["check", "--no-run", "healthy"],
                "probe": ["probe", str(paths["probes"] / "ok.py"), "--backend", "interpreter", "-q"]}
    return [Invocation("closed stdout", name, argv, BAD_INPUT, stdout_closed=True) for name, argv in commands.items()]


def unwritable(paths: dict) -> list:
    work = paths["work"]
    return [
        Invocation("unwritable", "detect --record, its record a folder",
                   ["detect", "record-unwritable", "--backend", "interpreter", "--record"], BAD_INPUT),
        Invocation("unwritable", "report --out a file",
                   ["report", "--no-run", "--allow-stale", "--out", str(work / "a-file")], BAD_INPUT),
        Invocation("unwritable", "report --out ''", ["report", "--no-run", "--allow-stale", "--out", ""], BAD_INPUT),
        Invocation("unwritable", "new under a missing cases folder", ["new", "fuzz-new-case"], BAD_INPUT,
                   env={"CASEBOOK_CASES": str(work / "missing" / "cases")}),
        Invocation("unwritable", "new under a file", ["new", "fuzz-new-case"], BAD_INPUT,
                   env={"CASEBOOK_CASES": str(work / "a-file")}),
    ]


def processes(paths: dict) -> list:
    probe = ["--backend", "interpreter", "--only", "reference", "-q", "--timeout", "3"]
    case = ["--backend", "interpreter", "--trials", "2"]
    spawns, hangs = str(paths["probes"] / "spawns.py"), str(paths["probes"] / "spawns-and-hangs.py")
    return [
        Invocation("processes", "case: the launcher's children, the worker ends", ["case", "spawns", *case], (0,)),
        Invocation("processes", "case: the worker hangs", ["case", "spawns-and-hangs", *case], (1,)),
        Invocation("processes", "case: SIGINT", ["case", "spawns-and-hangs", *case], (130,), stop=signal.SIGINT),
        Invocation("processes", "case: SIGTERM", ["case", "spawns-and-hangs", *case], (143,), stop=signal.SIGTERM),
        Invocation("processes", "case: fresh processes", ["case", "spawns", *case], (0,),
                   env={"CASEBOOK_FORKSERVER": "0"}),
        Invocation("processes", "probe: the worker ends", ["probe", spawns, *probe], (0,)),
        Invocation("processes", "probe: the worker hangs", ["probe", hangs, *probe], (1,)),
        Invocation("processes", "probe: SIGTERM", ["probe", hangs, *probe], (143,), stop=signal.SIGTERM),
    ]


def one_bad(paths: dict) -> list:
    out_dir = paths["work"] / "report"
    return [
        Invocation("one bad", "case: a healthy case beside three bad ones",
                   ["case", "healthy", "make-inputs-raises", "launcher-exits-0", "case-py-raises", "--backend",
                    "interpreter"], (1,), shows=("\nhealthy: ",)),
        Invocation("one bad", "case: a healthy case beside one with trials = 2**63-1",
                   ["case", "healthy", "huge-trials", "--backend", "interpreter"], BAD_INPUT, shows=("\nhealthy: ",)),
        Invocation("one bad", "check --no-run: every case, one record malformed", ["check", "--no-run"], (1, 2),
                   shows=("healthy",)),
        Invocation("one bad", "report --no-run: one record malformed",
                   ["report", "--no-run", "--allow-stale", "--out", str(out_dir)],
                   (0, 1), writes=(str(out_dir / "report.md"),)),
        Invocation("one bad", "detect: a healthy case beside a bad one",
                   ["detect", "healthy", "make-inputs-raises", "--backend", "interpreter"], (1,),
                   shows=("\nhealthy: ",)),
    ]


# ------------------------------------------------------------------ issue 42: what did not run, and whole records

UNCHECKED = ("os-exit-0-at-import", "reference-a-string", "worker-killed")
VERIFIED = '{"verified": true, "why": "", "note": "a record made earlier: no run that could not run may replace it"}\n'
SUITES = {  # name -> (test file, pytest.ini or None)
    "warnings-as-errors": ("def test_one():\n    assert 1\n", "[pytest]\nfilterwarnings =\n    error\n"),
    "os-exit-in-a-test": ("import os\n\ndef test_one():\n    assert 1\n\ndef test_two():\n    os._exit(0)\n\n"
                          "def test_three():\n    assert 0\n", None),
    "collection-error": ("import no_such_module_anywhere\n\ndef test_one():\n    assert 1\n", None),
}


def set_up_issue42(work: Path) -> dict:
    """The suites, bug entries (each with a verified record) and the casebook "installed" as pip
    installs it (a dist-info naming the harness package, which pytest marks for rewriting)."""
    suites = work / "suites"
    for name, (tests, ini) in SUITES.items():
        (suites / name).mkdir(parents=True)
        (suites / name / "test_it.py").write_text(tests)
        if ini:
            (suites / name / "pytest.ini").write_text(ini)
    info = work / "site" / "casebook_as_installed-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: casebook-as-installed\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[pytest11]\nharness.sanitize.pytest_plugin = harness.sanitize.pytest_plugin\n")
    (info / "RECORD").write_text("harness/__init__.py,,\nharness/sanitize/__init__.py,,\n")
    bugs = work / "bugs"
    glue = (ROOT / "tests" / "bugs_fixture" / "grid-floor-repro" / "probe.py").read_text()
    for name, first in (("glue-exits-at-import", "import os\nos._exit(0)\n"),
                        ("glue-killed-at-import", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")):
        shutil.copytree(ROOT / "tests" / "bugs_fixture" / "grid-floor-repro", bugs / name)
        (bugs / name / "probe.py").write_text(first + glue)
    (bugs / "registry-outage").mkdir(parents=True)
    (bugs / "registry-outage" / "bug.toml").write_text(test_module("test_bugs").RELEASED)  # a released version
    (bugs / "registry-outage" / "probe.py").write_text("x = 1\n")
    for d in bugs.iterdir():
        (d / "recorded").mkdir(exist_ok=True)
        (d / "recorded" / "verify-interpreter.json").write_text(VERIFIED)
    return {"suites": suites, "site": work / "site", "bugs": bugs}


def unchecked(paths: dict) -> list:
    p, quick = paths["probes"], ["--backend", "interpreter", "--only", "reference,shapes", "-q", "--timeout", "30"]
    out = [Invocation("unchecked", f"probe: {name}", ["probe", str(p / f"{name}.py"), *quick], BAD_INPUT,
                      unchecked=True) for name in UNCHECKED]
    return out + [Invocation("unchecked", f"probe, every detector: {name}",
                             ["probe", str(p / f"{name}.py"), "--backend", "interpreter", "-q"], BAD_INPUT,
                             unchecked=True) for name in UNCHECKED]


def sanitize(paths: dict) -> list:
    suites, quiet = paths["suites"], ["-q", "-p", "no:cacheprovider"]
    installed = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(paths["site"])])}
    return [
        Invocation("sanitize", "filterwarnings = error, the casebook installed",
                   ["sanitize", "pytest", *quiet, str(suites / "warnings-as-errors")], (0,), env=installed,
                   shows=("1 passed", "no findings")),
        Invocation("sanitize", "filterwarnings = error", ["sanitize", "pytest", *quiet, str(suites / "warnings-as-errors")],
                   (0,), shows=("1 passed",)),
        Invocation("sanitize", "a test calls os._exit(0)", ["sanitize", "pytest", *quiet, str(suites / "os-exit-in-a-test")],
                   BAD_INPUT, unchecked=True, shows=("ended before the sanitizer's end",)),
        Invocation("sanitize", "a test calls os._exit(0), --json",
                   ["sanitize", "--json", "pytest", *quiet, str(suites / "os-exit-in-a-test")], BAD_INPUT,
                   unchecked=True, shows=('"finished": false',)),
        Invocation("sanitize", "a collection error", ["sanitize", "pytest", *quiet, str(suites / "collection-error")],
                   (2,), own_line="is pytest's own"),
        Invocation("sanitize", "no tests collected",
                   ["sanitize", "pytest", *quiet, "-k", "matches_nothing", str(suites / "warnings-as-errors")], (5,),
                   own_line="is pytest's own"),
        Invocation("sanitize", "-m a module that does not exist", ["sanitize", "-m", "casebook_fuzz_no_such_module"],
                   BAD_INPUT, unchecked=True),
    ]


def bugs(paths: dict) -> list:
    env = {"CASEBOOK_BUGS": str(paths["bugs"]), "CASEBOOK_BUG_CACHE": str(paths["work"] / "bug-cache"),
           "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_RETRIES": "0", "PIP_TIMEOUT": "2",
           "PIP_NO_CACHE_DIR": "1", "PIP_FIND_LINKS": ""}  # a registry outage: nothing answers at the index
    out = []
    for name in ("glue-exits-at-import", "glue-killed-at-import", "registry-outage"):
        record = str(paths["bugs"] / name / "recorded" / "verify-interpreter.json")
        out += [Invocation("bugs", f"--verify --record: {name}",
                           ["bugs", "--verify", "--backend", "interpreter", "--record", name], BAD_INPUT, env=env,
                           unchecked=True, keeps=(record,)),
                Invocation("bugs", f"scoreboard: {name}", ["bugs", name, "--backend", "interpreter", "--quiet"],
                           BAD_INPUT, env=env, unchecked=True, keeps=(record,))]
    out.append(Invocation("bugs", "--fetch: registry-outage", ["bugs", "--fetch", "registry-outage"], BAD_INPUT,
                          env=env, unchecked=True))
    return out


DELAYS_MS = (0.0, 0.3, 0.6, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0)


def record_signals(paths: dict, n: int) -> list:
    """``n`` records of the healthy case, each interrupted (SIGINT, or SIGTERM every third) a few
    milliseconds after its first temporary file appears; each run its own seed, which the command
    line in all three files of the record names."""
    case = paths["cases"] / "healthy"
    files = (str(case / "README.md"), str(case / "recorded" / "interpreter.md"),
             str(case / "recorded" / "interpreter.json"))
    out = []
    for i in range(n):
        seed, delay = 1000 + i, DELAYS_MS[i % len(DELAYS_MS)]
        sig = signal.SIGTERM if i % 3 == 2 else signal.SIGINT
        out.append(Invocation("record signals", f"{sig.name} {delay} ms into the renames (seed {seed})",
                              ["record", "healthy", "--backend", "interpreter", "--trials", "1", "--seed", str(seed)],
                              (0, 1, 130, 143), stop=sig, stop_at_temp=(str(case), delay / 1000), unit=files,
                              unit_mark=f"--seed {seed}"))
    return out


# ------------------------------------------------------------------ issue 42: lint, one file never sinks the run

LINT_TRAP = TL101_BAD  # TL101's own example of what it finds: a file lint must lint whatever its neighbours are
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2  # <linux/prctl.h>, <linux/capability.h>


def read_any_file_dropper():
    """For a child that is root: a function (for ``preexec_fn``) that takes CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH out of its bounding set, so that the program it execs obeys files' permissions
    (a folder chmod 0 cannot be listed) while still root; None where the child is not root."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)  # loaded here, not between fork and exec

    def drop():
        for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
            if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) refused")
    return drop


def unlistable(folder: Path) -> str:
    """"" if ``folder`` (chmod 0) cannot be listed by a child started as the lint invocations with
    ``no_dac`` are; else why it can (root whose capabilities cannot be dropped here)."""
    try:
        r = subprocess.run([sys.executable, "-c", f"import os; os.listdir({str(folder)!r})"], capture_output=True,
                           text=True, timeout=120, preexec_fn=read_any_file_dropper())
    except (OSError, subprocess.SubprocessError) as e:
        return f"root's capabilities to read any file could not be dropped here ({e})"
    return "" if "PermissionError" in r.stderr else "a folder chmod 0 stays readable here (root, or no POSIX permissions)"


def set_up_lint(work: Path) -> dict:
    """lint's folders, each a file with findings (trap.py) beside the troublemakers; ``skipped``: the
    categories that cannot be made here, and why."""
    top, skipped = work / "lint", []
    files = {
        "nest": {"trap.py": LINT_TRAP, "minus.py": "import triton\nx = " + "-" * 100_000 + "1\n",
                 "parens.py": "import triton\nx = " + "(" * 300 + "1" + ")" * 300 + "\n",
                 "sum.py": "x = " + "+".join(["a"] * 200_000) + "\n"},
        "loops": {"trap.py": LINT_TRAP}, "fifo": {"trap.py": LINT_TRAP}, "locked": {"trap.py": LINT_TRAP},
        "encodings": {"bom.py": b"\xef\xbb\xbf" + LINT_TRAP.encode(),
                      "latin.py": b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + LINT_TRAP.encode()},
        "big": {"trap.py": LINT_TRAP, "big.py": LINT_TRAP + "#" * 2048 + "\n"},
        "huge": {"trap.py": LINT_TRAP, "huge.py": LINT_TRAP + ("#" * 1023 + "\n") * 16 * 1024},  # 16 MiB
        "named": {"trap.py": LINT_TRAP},
    }
    for folder, texts in files.items():
        (top / folder).mkdir(parents=True)
        for name, text in texts.items():
            (top / folder / name).write_bytes(text) if isinstance(text, bytes) else (top / folder / name).write_text(text)
    os.symlink("loop_b.py", top / "loops" / "loop_a.py")
    os.symlink("loop_a.py", top / "loops" / "loop_b.py")
    os.symlink("spin", top / "loops" / "spin")  # a folder link that loops: spin/trap.py is a path through it
    os.symlink("gone.py", top / "named" / "dangling.py")
    if hasattr(os, "mkfifo"):
        os.mkfifo(top / "fifo" / "pipe.py")
    else:
        skipped.append("lint: a FIFO named *.py (this system has no FIFOs)")
    (top / "locked" / "secret").mkdir()
    (top / "locked" / "secret" / "k.py").write_text(LINT_TRAP)
    (top / "locked" / "secret").chmod(0)
    notes = []
    if why := unlistable(top / "locked" / "secret"):
        skipped.append(f"lint: an unreadable folder ({why})")
    elif read_any_file_dropper() is not None:
        notes.append("The campaign ran as root, who reads every folder: lint's unreadable folder (chmod 0) was linted "
                     "by a child with CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH dropped from its bounding set, still root "
                     "but bound by the folder's permissions (tests/test_lint_files.py patches os.scandir instead).")
    return {"lint": top, "skipped": skipped, "notes": notes}


def lint(paths: dict) -> list:
    """Each of issue 42's lint categories beside a file with findings, in text and in SARIF: exit 2 with
    an error line (exit 1 where everything is valid Python: the encodings), the file with findings
    linted, the SARIF written and parsing, no hang."""
    top, skipped = paths["lint"], " ".join(paths["skipped"])
    runs = [  # (name, folder it runs in, arguments, exit, files that must be linted, what stderr must say)
        ("nesting too deep for Python's parser", "nest", ["."], (2,), ("trap.py",), "nested too deeply"),
        ("links that loop in the folder", "loops", ["."], (2,), ("trap.py",), "a link that loops"),
        ("a path through a looping link", "loops", ["spin/trap.py", "trap.py"], (2,), ("trap.py",),
         "a link that loops"),
        ("a FIFO named *.py in the folder", "fifo", ["."], (2,), ("trap.py",), "(a FIFO)"),
        ("a FIFO named *.py, named", "fifo", ["pipe.py", "trap.py"], (2,), ("trap.py",), "(a FIFO)"),
        ("an unreadable folder", "locked", ["."], (2,), ("trap.py",), "cannot be read"),
        ("a UTF-8 BOM and a latin-1 coding cookie", "encodings", ["."], (1,), ("bom.py", "latin.py"), ""),
        ("a file over --max-size 1K", "big", [".", "--max-size", "1K"], (2,), ("trap.py",), "over the limit"),
        ("a 16 MiB file, the default limit", "huge", ["."], (2,), ("trap.py",), "over the limit"),
        ("/dev/null named", "named", ["/dev/null", "trap.py"], (2,), ("trap.py",), "(a character device)"),
        ("a dangling link named", "named", ["dangling.py", "trap.py"], (2,), ("trap.py",), "a link to nothing"),
        ("lint '' (its folder, linted, would exit 1)", "big", [""], (2,), (), "an empty path"),
        ("lint '' beside a file", "named", ["", "trap.py"], (2,), ("trap.py",), "an empty path"),
        ("every folder at once", ".", ["."], (2,), ("trap.py", "bom.py", "latin.py"), "cannot be read"),
    ]
    out = []
    for name, folder, argv, expect, lints, says in runs:
        if ("FIFO" in name and "FIFO" in skipped) or ("unreadable" in name and "unreadable" in skipped):
            continue
        if folder == "." and "unreadable" in skipped:
            says = ""
        for form in ("text", "sarif"):
            out.append(Invocation("lint", f"{name} ({form})", ["lint", *argv, "--format", form], expect,
                                  cwd=str(top / folder), timeout=120, lints=lints, sarif=form == "sarif",
                                  shows=(says,) if says else (), no_dac=folder in ("locked", ".")))
    return out


def linted(inv: Invocation, out: str) -> list[str]:
    """The SARIF not written or not parsing; a file of ``inv.lints`` with no finding reported."""
    if inv.sarif:
        try:
            log = json.loads(out)
            if log["version"] != "2.1.0":
                raise ValueError(f"version {log['version']!r}")
            where = [loc["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]
                     for loc in r["locations"]]
        except (ValueError, KeyError, IndexError, TypeError) as e:
            return [f"SARIF not written or does not parse ({type(e).__name__}: {str(e)[:80]})"]
    else:
        where = [m[1] for m in re.finditer(r"^(.+?):\d+:\d+: TL\d+ ", out, re.M)]
    return [f"not linted: {name}" for name in inv.lints if not any(w.rsplit("/", 1)[-1] == name for w in where)]


CATEGORIES = ("probe input", "options", "environment", "closed stdout", "unwritable", "processes", "one bad",
              "unchecked", "sanitize", "bugs", "record signals", "lint")


def campaign(paths: dict, sample: bool, seed: int = 20261125) -> list:
    """Every invocation (``sample``: a few of each category, for the test)."""
    rng = random.Random(seed)
    groups = [probe_input(paths), options(paths, 12 if sample else 660, rng), environment(paths),
              closed_stdout(paths), unwritable(paths), processes(paths), one_bad(paths),
              unchecked(paths), sanitize(paths), bugs(paths), record_signals(paths, 4 if sample else 60), lint(paths)]
    if sample:
        groups = [rng.sample(g, min(len(g), 4)) for g in groups]
    return [inv for g in groups for inv in g]


# ------------------------------------------------------------------ running one and judging it

def marked(mark: str) -> list[int]:
    """Live (not zombie) processes whose environment holds ``MARK=mark``."""
    needle = f"{MARK}={mark}\0".encode()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if needle in Path(f"/proc/{d}/environ").read_bytes() + b"\0" and \
                    Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                out.append(int(d))
        except (OSError, IndexError):
            continue
    return out


def files_under(folder: Path) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d not in ("pids", "shims")]
        for name in filenames + dirnames:
            p = Path(dirpath) / name
            try:
                st = p.lstat()
            except OSError:
                continue
            out[p] = (st.st_mtime_ns, st.st_size)
    return out


def half_written(before: dict, after: dict) -> list[str]:
    """Temporary files left, and new or changed files that do not parse or are empty."""
    bad = []
    for p, stamp in after.items():
        if TEMPORARY.search(p.name):
            bad.append(f"left behind: {p.name}")
        elif before.get(p) != stamp and p.is_file():
            try:
                text = p.read_bytes()
                if p.suffix == ".json":
                    json.loads(text)
                elif p.suffix == ".toml":
                    tomllib.loads(text.decode())
                elif not text and p.suffix in (".md", ".html", ".py"):
                    raise ValueError("empty")
            except (ValueError, UnicodeDecodeError) as e:
                bad.append(f"does not parse: {p.name} ({type(e).__name__})")
    return bad


def start(inv: Invocation, paths: dict, mark: str, pids: Path) -> subprocess.Popen:
    env = {**os.environ, "CASEBOOK_CASES": str(paths["cases"]), "CUDA_VISIBLE_DEVICES": "", MARK: mark,
           "CASEBOOK_FUZZ_PIDS": str(pids), "TMPDIR": str(paths["work"] / "tmp"), **inv.env}
    if inv.cwd:  # ``-m harness`` finds the package in its working folder: elsewhere, this checkout's, not one installed
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))

    drop = read_any_file_dropper() if inv.no_dac else None

    def child():
        if drop is not None:
            drop()
        if inv.stdout_closed:
            os.close(1)
        if inv.memory:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (inv.memory, inv.memory))

    return subprocess.Popen([sys.executable, "-m", "harness", *inv.argv], cwd=inv.cwd or ROOT, env=env, text=True,
                            stdout=None if inv.stdout_closed else subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, preexec_fn=child)


def run(inv: Invocation, paths: dict, n: int) -> dict:
    """Run one invocation; what it did and the problems found."""
    mark, pids = f"{os.getpid()}-{n}", paths["work"] / "pids" / str(n)
    pids.mkdir(parents=True)
    (paths["work"] / "tmp").mkdir(exist_ok=True)
    before, t0 = files_under(paths["work"]), time.monotonic()
    kept = {f: Path(f).read_bytes() if Path(f).exists() else None for f in inv.keeps + inv.unit}
    proc = start(inv, paths, mark, pids)
    if inv.stop_at_temp:
        signal_at_temp(proc, inv)
    elif inv.stop is not None:
        while len(list(pids.iterdir())) < 3 and time.monotonic() - t0 < 120:
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(inv.stop)
    try:
        out, err = proc.communicate(timeout=inv.timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = "timeout"
    seconds = time.monotonic() - t0
    left = linger(mark)
    problems = judge(inv, code, out or "", err or "", left)
    problems += half_written(before, files_under(paths["work"]))
    problems += [f"changed a file it must keep: {Path(f).name}" for f in inv.keeps
                 if (Path(f).read_bytes() if Path(f).exists() else None) != kept[f]]
    problems += torn(inv, kept)
    shutil.rmtree(pids, ignore_errors=True)
    return {"category": inv.category, "name": inv.name, "argv": inv.argv, "code": code,
            "seconds": round(seconds, 1), "left": len(left), "problems": problems, "stderr": err[-600:],
            "unit": unit_state(inv, kept)}


def signal_at_temp(proc: subprocess.Popen, inv: Invocation) -> None:
    """Send ``inv.stop`` ``inv.stop_at_temp[1]`` seconds after a temporary file of the unit appears
    in its folder (or its recorded/ folder): the renames come right after. Watched as fast as this
    process can list the folders; if the record is written before one is seen, no signal is sent."""
    folders = [inv.stop_at_temp[0], os.path.join(inv.stop_at_temp[0], "recorded")]
    while proc.poll() is None:
        try:
            if any(TEMPORARY.search(n) for d in folders for n in os.listdir(d)):
                break
        except OSError:
            pass
    else:
        return
    end = time.perf_counter() + inv.stop_at_temp[1]
    while time.perf_counter() < end:
        pass
    try:
        proc.send_signal(inv.stop)
    except OSError:
        pass


def unit_state(inv: Invocation, before: dict) -> str:
    """"whole" (every file of the unit new), "untouched", "torn", or "" (no unit)."""
    if not inv.unit:
        return ""
    return "torn" if torn(inv, before) else "whole" if all(
        inv.unit_mark.encode() in Path(f).read_bytes() for f in inv.unit if Path(f).exists()) else "untouched"


def torn(inv: Invocation, before: dict) -> list[str]:
    """A unit some of whose files are new (hold ``unit_mark``) and some not, unless all are as they were."""
    if not inv.unit:
        return []
    now = {f: Path(f).read_bytes() if Path(f).exists() else None for f in inv.unit}
    new = [f for f in inv.unit if inv.unit_mark.encode() in (now[f] or b"")]
    if len(new) == len(inv.unit) or all(now[f] == before[f] for f in inv.unit):
        return []
    return [f"a torn record: {', '.join(Path(f).name for f in new) or 'none'} new of {len(inv.unit)}"]


def linger(mark: str) -> list[int]:
    """The processes of ``mark`` still alive LINGER seconds after the command ended (then killed)."""
    deadline = time.monotonic() + LINGER
    while (left := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left


def judge(inv: Invocation, code, out: str, err: str, left: list) -> list[str]:
    problems = []
    if TRACEBACK in err or TRACEBACK in out:  # Python's own, uncaught (not pytest's "Traceback:" of a test's error)
        problems.append("traceback")
    if code == 0 and inv.unchecked:
        problems.append("a passed verdict (exit 0) on an unchecked kernel")
    if code == "timeout":
        problems.append(f"a hang: killed after {inv.timeout:.0f} s")
    elif code not in inv.expect:
        problems.append(f"exit {code}, expected {' or '.join(map(str, inv.expect))}")
    elif inv.own_line and inv.own_line not in err:
        problems.append(f"exit {code} without the line saying whose it is ({inv.own_line!r})")
    elif code in BAD_INPUT and not inv.own_line and not any(ln.startswith("error: ") and len(ln) > 12
                                                            for ln in err.splitlines()):
        problems.append("bad input without an 'error:' line saying why")
    if left:
        problems.append(f"{len(left)} processes left {LINGER:.0f} s after it ended")
    problems += [f"output lacks {s!r}" for s in inv.shows if s not in out + err]
    problems += [f"did not write {Path(w).name}" for w in inv.writes if not Path(w).is_file()]
    if inv.sarif or inv.lints:
        problems += linted(inv, out)
    return problems


# ------------------------------------------------------------------ the campaign and its report

KINDS = {"a hang": "hangs", "SARIF": "SARIF missing or unparseable", "not linted": "files not linted",
         "passed verdict": "passed verdicts on unchecked kernels", "whose it is": "bad input not said",
         "torn record": "torn records", "must keep": "kept files changed",
         "traceback": "tracebacks", "exit": "wrong exit codes", "processes left": "processes left",
         "left behind": "half-written files", "does not parse": "half-written files",
         "output lacks": "one bad failing a command", "did not write": "one bad failing a command",
         "'error:' line": "bad input not said"}


def counts(results: list) -> dict:
    out = {k: 0 for k in dict.fromkeys(KINDS.values())}
    for r in results:
        for p in r["problems"]:
            kind = next((v for k, v in KINDS.items() if k in p), "other")
            out[kind] = out.get(kind, 0) + (r["left"] if kind == "processes left" else 1)
    return out


def versions() -> str:
    from importlib import metadata

    found = []
    for name in ("torch", "triton"):
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"no {name}")
    return ", ".join(found)


def markdown(results: list, seconds: float, skipped: list = (), notes: list = ()) -> str:
    import platform

    total = counts(results)
    cats = list(dict.fromkeys(r["category"] for r in results))
    lines = ["# The command line fuzzed (issue 23's categories, and issue 42's)", "",
             f"`python benchmarks/fuzz_cli.py`: {len(results)} invocations, each a `python -m harness` process, in "
             f"{seconds / 60:.1f} min on this machine ({os.cpu_count()} CPUs, no GPU used, Python "
             f"{platform.python_version()}, {versions()}, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). Each is checked for a traceback, an exit status "
             "it may not end with, a process it started alive 5 s after it ended, a temporary or unparseable "
             "file left, (one bad case or record) the healthy case missing, an exit 0 on a kernel nothing was checked "
             "about, a verified record changed, (timed signals during record) a torn record, a hang (killed at its "
             "timeout), and (lint) a file with findings beside the bad ones not linted or the SARIF not written or not "
             "parsing.", "",
             "| category | invocations | with a problem |", "|---|---|---|"]
    lines += [f"| {c} | {sum(r['category'] == c for r in results)} | "
              f"{sum(bool(r['problems']) for r in results if r['category'] == c)} |" for c in cats]
    lines += ["", "| problem | count |", "|---|---|"] + [f"| {k} | {v} |" for k, v in total.items()]
    units = [r for r in results if r.get("unit")]
    if units:
        said = {k: sum(r["unit"] == k for r in units) for k in ("whole", "untouched", "torn")}
        codes = {c: sum(r["code"] == c for r in units) for c in sorted({r["code"] for r in units}, key=str)}
        lines += ["", f"Timed signals during `record` ({len(units)}): the record afterwards whole (all new) "
                      f"{said['whole']}, untouched {said['untouched']}, torn {said['torn']}; exit statuses "
                      + ", ".join(f"{c}: {n}" for c, n in codes.items()) + " (130/143: the signal landed before "
                      "the command ended; 0/1: after its last write)."]
    if skipped:
        lines += ["", "Left out on this machine: " + "; ".join(skipped) + "."]
    lines += [x for note in notes for x in ("", note)]
    bad = [r for r in results if r["problems"]]
    lines += ["", "## Invocations with a problem", ""] + (
        [f"- {r['category']}: `{' '.join(r['argv'])[:160]}` exit {r['code']}: {'; '.join(r['problems'])}"
         for r in bad] or ["None."])
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sample", action="store_true", help="a few invocations of each category (the test's)")
    p.add_argument("--out", type=Path, default=OUT, help=f"where the Markdown goes (default {OUT.relative_to(ROOT)})")
    args = p.parse_args(argv)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fuzz-cli-") as tmp:
        paths = set_up(Path(tmp), make_case_function()(Path(tmp) / "made"))
        results, skipped, notes = [], paths["skipped"], paths["notes"]
        for n, inv in enumerate(campaign(paths, args.sample)):
            results.append(run(inv, paths, n))
            r = results[-1]
            print(f"{r['category']:15} {r['code']!s:>7} {r['seconds']:6.1f}s  {r['name'][:70]}"
                  + (f"  PROBLEM: {'; '.join(r['problems'])}" if r["problems"] else ""), flush=True)
    args.out.write_text(markdown(results, time.monotonic() - t0, skipped, notes))
    print(json.dumps(counts(results)))
    return 1 if any(r["problems"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
