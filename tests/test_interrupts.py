"""Interrupted commands leave nothing behind: no worker process, no temp folder, no
half-written file (the README's promise under signals and full disks)."""

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import cli
from harness.core import fileio

ROOT = Path(__file__).resolve().parents[1]
HANGS = "def row_mean(x, out):\n    while True:\n        pass\n"
FIELDS = {"expect": {"gpu": "hang", "interpreter": "hang"}, "run": {"timeout": {"interpreter": 120}}}


def _proc(pid) -> tuple[str, str, int, str] | None:
    """(command line, state, parent pid, environment) of a live process, or None."""
    d = Path("/proc") / str(pid)
    try:
        cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        stat = (d / "stat").read_text().rsplit(")", 1)[1].split()
        env = (d / "environ").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    return cmd, stat[0], int(stat[1]), env


def workers_of(marker: str) -> list[int]:
    """Live worker processes of the synthetic cases under ``marker``: a worker started as
    ``python -m harness.run.worker`` (the case folder on its command line), or a child of the
    fork server (``harness.run.zygote``, whose environment names the cases' folder)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or (p := _proc(d.name)) is None or p[1] == "Z":
            continue
        cmd, _, ppid, env = p
        if "harness.run.worker" in cmd and marker in cmd:
            pids.append(int(d.name))
        elif "harness.run.zygote" in cmd and marker in env and "harness.run.zygote" in ((_proc(ppid) or ("",))[0]):
            pids.append(int(d.name))
    return pids


def servers_of(marker: str) -> list[int]:
    """Live fork servers started for the synthetic cases under ``marker``."""
    return [int(d.name) for d in Path("/proc").iterdir()
            if d.name.isdigit() and (p := _proc(d.name)) is not None and p[1] != "Z"
            and "harness.run.zygote" in p[0] and marker in p[3] and int(d.name) not in workers_of(marker)]


def start_hanging(make_case, tmp_path):
    root = tmp_path / "cases"
    make_case("hangs-forever", root=root, files={"broken.py": HANGS}, fields=FIELDS)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "CASEBOOK_CASES": str(root), "TMPDIR": str(tmp), "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.Popen([sys.executable, "-m", "harness", "case", "hangs-forever", "--backend", "interpreter"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not workers_of(str(root)) and time.monotonic() < deadline:  # wait for the worker to be running
        time.sleep(0.2)
    time.sleep(1.0)
    return proc, root, tmp


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_a_hanging_kernel_leaves_nothing_behind(make_case, tmp_path, sig, code):
    proc, root, tmp = start_hanging(make_case, tmp_path)
    assert workers_of(str(root)), "the hanging worker never started"
    proc.send_signal(sig)
    # No bound on how fast (a busy machine may take its time): the kernel never ends and its own timeout
    # (FIELDS: 120 s) is past this wait, so a return at all, with the signal's exit code, is the signal's doing.
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == code, err
    assert "Traceback" not in err and len([ln for ln in err.splitlines() if ln.strip()]) == 1, err
    deadline = time.monotonic() + 30  # when to give up waiting, not a speed: the loop ends once nothing is left
    while (workers_of(str(root)) or list(tmp.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not workers_of(str(root)), "a worker outlived the command"
    assert not servers_of(str(root)), "a fork server outlived the command"
    assert not list(tmp.iterdir()), f"left behind: {list(tmp.iterdir())}"


# ------------------------------------------------------------------ record: all old or all new

def recorded_files(case: Path) -> dict:
    names = [case / "README.md", case / "recorded" / "interpreter.md", case / "recorded" / "interpreter.json"]
    return {p: p.read_bytes() if p.exists() else None for p in names}


def record(case_root: Path, monkeypatch) -> int:
    monkeypatch.setenv("CASEBOOK_CASES", str(case_root))
    try:
        return cli.main(["record", "row-mean-divides-by-block", "--backend", "interpreter"])
    except SystemExit as e:
        return e.code


def test_a_record_interrupted_as_it_starts_writing_leaves_the_old_files(make_case, tmp_path, monkeypatch):
    case = make_case(root=tmp_path / "cases")
    before = recorded_files(case)
    real = fileio._temp_beside

    def interrupted(path, data, fd):
        real(path, data, fd)  # the first temporary file is written, then the signal lands
        raise KeyboardInterrupt

    monkeypatch.setattr(fileio, "_temp_beside", interrupted)
    assert record(tmp_path / "cases", monkeypatch) == 130
    assert recorded_files(case) == before
    assert not [p for p in case.rglob("*.tmp")], "a temporary file was left behind"


def test_a_full_disk_during_record_leaves_the_old_files(make_case, tmp_path, monkeypatch):
    case = make_case(root=tmp_path / "cases")
    before = recorded_files(case)
    real, calls = fileio._temp_beside, []

    def full(path, data, fd):
        calls.append(path)
        if len(calls) == 2:
            os.close(fd)
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, data, fd)

    monkeypatch.setattr(fileio, "_temp_beside", full)
    assert record(tmp_path / "cases", monkeypatch) == 2
    assert recorded_files(case) == before
    assert not [p for p in case.rglob("*.tmp")]


def test_a_record_that_completes_replaces_every_file(make_case, tmp_path, monkeypatch):
    case = make_case(root=tmp_path / "cases")
    before = recorded_files(case)
    assert record(tmp_path / "cases", monkeypatch) in (0, 1)
    after = recorded_files(case)
    assert all(after[p] != before[p] for p in before), "the record was written only in part"


def test_a_run_in_which_the_harness_failed_is_not_recorded(make_case, tmp_path, monkeypatch, capsys):
    """make_inputs raises: the case could not be set up, so there is nothing true to record."""
    case = make_case(root=tmp_path / "cases")
    (case / "case.py").write_text((case / "case.py").read_text().replace(
        "    return {", "    raise RuntimeError('the inputs cannot be made')\n    return {", 1))
    before = recorded_files(case)
    assert record(tmp_path / "cases", monkeypatch) == 2
    assert recorded_files(case) == before
    err = capsys.readouterr().err
    assert "not recorded, the harness could not run it" in err and "unchanged" in err


def test_a_worker_that_asked_to_die_with_its_parent_does_when_the_parent_is_killed_with_sigkill(tmp_path):
    """Workers run in sessions of their own; a harness killed with SIGKILL cleans nothing up, so a
    worker (harness.sanitize.child) asks the kernel for SIGKILL when its parent dies."""
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    pidfile = tmp_path / "child.pid"
    child = ("import os, time; from harness.run.parent import die_with_parent; assert die_with_parent(); "
             f"open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(120)")
    parent = ("import subprocess, sys, time; "
              f"subprocess.Popen([sys.executable, '-c', {child!r}], start_new_session=True); time.sleep(120)")
    root = Path(__file__).resolve().parents[1]
    p = subprocess.Popen([sys.executable, "-c", parent], cwd=root)
    for _ in range(200):
        if pidfile.exists() and pidfile.read_text():
            break
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    p.send_signal(signal.SIGKILL)
    p.wait()
    def alive() -> bool:  # a zombie nobody has reaped yet (PID 1 in a container may not) is dead
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False

    for _ in range(100):
        if not alive():
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the worker outlived its SIGKILLed parent")
    assert "die_with_parent()" in (root / "harness" / "sanitize" / "child.py").read_text()


# ------------------------------------------------------------------ what a kernel's launcher starts

def _fuzz_cli():
    """benchmarks/fuzz_cli.py, whose launchers start children (SPAWNS, ``with_spawns``)."""
    import importlib.util

    if "fuzz_cli" not in sys.modules:
        spec = importlib.util.spec_from_file_location("fuzz_cli", ROOT / "benchmarks" / "fuzz_cli.py")
        sys.modules["fuzz_cli"] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules["fuzz_cli"]


with_spawns = _fuzz_cli().with_spawns  # a launcher that starts a child, one in a session of its own, a daemon


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie (one nobody has reaped yet is dead)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def left_after(command: list[str], pids: Path, env: dict, stop=None) -> tuple[int, list[int]]:
    """Run ``command`` (``stop``: a signal sent once children were started); the exit status and
    the children its kernels started that are alive 5 s after it ended (killed then)."""
    proc = subprocess.Popen(command, cwd=ROOT, env={**env, "CASEBOOK_FUZZ_PIDS": str(pids)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if stop is not None:
        deadline = time.monotonic() + 120
        while len(list(pids.iterdir())) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(stop)
    _, err = proc.communicate(timeout=300)
    noted = [int(p.name) for p in pids.iterdir()]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in noted) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in noted if alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert len(noted) >= 3, f"the launcher never ran: {err[-2000:]}"
    assert "Traceback" not in err, err[-2000:]
    return proc.returncode, left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the keeper is Linux's (PR_SET_CHILD_SUBREAPER)")
@pytest.mark.parametrize("how", ["ends", "hangs", "interrupted", "fresh process"])
def test_nothing_a_launcher_started_outlives_case(make_case, tmp_path, how):
    """A launcher that starts a child, a child in a session of its own and a daemon: none of
    them is left 5 s after ``case`` ends, whether the worker ended, hung or was interrupted,
    forked from the fork server or started fresh."""
    texts = make_case.texts
    files = {f"{v}.py": with_spawns(texts[f"{v}.py"], "row_mean", hang=how in ("hangs", "interrupted"))
             for v in ("broken", "fixed")}
    make_case("spawns-children", root=tmp_path / "cases", files=files,
              fields={"run": {"timeout": {"interpreter": 2}}} if how == "hangs" else None)
    pids = tmp_path / "pids"
    pids.mkdir()
    env = {**os.environ, "CASEBOOK_CASES": str(tmp_path / "cases"), "CUDA_VISIBLE_DEVICES": "",
           "CASEBOOK_FORKSERVER": "0" if how == "fresh process" else "1"}
    code, left = left_after([sys.executable, "-m", "harness", "case", "spawns-children", "--backend",
                             "interpreter", "--trials", "2"], pids, env,
                            stop=signal.SIGINT if how == "interrupted" else None)
    assert not left, f"left running 5 s after case ended ({how}): {left}"
    assert code == {"ends": 0, "fresh process": 0, "hangs": 1, "interrupted": 130}[how]  # a hang is not "wrong"


PROBE_FILE = '''
import torch


def launch(x):
    return x * 2


def make_inputs(*, device, gen, n=64):
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    return x.double() * 2
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the keeper is Linux's (PR_SET_CHILD_SUBREAPER)")
@pytest.mark.parametrize("how", ["ends", "hangs", "killed"])
def test_nothing_a_launcher_started_outlives_probe(tmp_path, how):
    """The same through ``probe``: its detector processes end with everything the launcher
    started, after a normal end, a timeout, and the harness itself killed with SIGKILL."""
    file = tmp_path / "probe_spawns.py"
    file.write_text(with_spawns(PROBE_FILE, "launch", hang=how != "ends"))
    pids = tmp_path / "pids"
    pids.mkdir()
    (tmp_path / "tmp").mkdir()  # a harness killed with SIGKILL cannot remove its temporary folders: not in /tmp
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "TMPDIR": str(tmp_path / "tmp")}
    code, left = left_after([sys.executable, "-m", "harness", "probe", str(file), "--backend", "interpreter",
                             "--only", "reference", "--timeout", "3", "-q"], pids, env,
                            stop=signal.SIGKILL if how == "killed" else None)
    assert not left, f"left running 5 s after probe ended ({how}): {left}"
    assert code == {"ends": 0, "hangs": 1, "killed": -signal.SIGKILL}[how]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the keeper is Linux's (PR_SET_CHILD_SUBREAPER)")
@pytest.mark.parametrize("script, code", [("exit 3", 3), ("kill -KILL $$", -signal.SIGKILL),
                                          ("kill -SEGV $$", -signal.SIGSEGV), ("kill -TERM $$", -signal.SIGTERM)])
def test_a_keeper_ends_as_its_worker_ended(script, code):
    """The harness reads a worker's end from its keeper: an exit status, or the signal that killed
    it (SIGKILL from outside is the out-of-memory killer's, reported as such)."""
    keeper = ROOT / "harness" / "run" / "parent.py"
    r = subprocess.run([sys.executable, "-S", str(keeper), "sh", "-c", script], timeout=60)
    assert r.returncode == code


SIGNAL_AT_RENAME = r"""
import os, signal, sys, threading
from harness import cli
from harness.core import fileio

case, k, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
real, seen = os.replace, []
go, sent = threading.Event(), threading.Event()


def other_thread():  # started before anything is held, as the fork server's reader is
    go.wait()
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)
    sent.set()


threading.Thread(target=other_thread, daemon=True).start()


def replace(src, dst, *a, **kw):
    if os.path.dirname(dst) in (case, os.path.join(case, "recorded")) and not str(dst).endswith(".pyc"):
        # one of the record's renames (not Python's own of a .pyc): the k-th gets the signal just before it
        if len(seen) == k and how == "thread":  # delivered to another thread
            go.set()
            sent.wait()
        elif len(seen) == k:
            os.kill(os.getpid(), signal.SIGINT)
        seen.append(dst)
    return real(src, dst, *a, **kw)


fileio.os.replace = replace
code = cli.main(["record", "row-mean-divides-by-block", "--backend", "interpreter", "--seed", str(100 + k)])
print("renames:", len(seen), file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.parametrize("how", ["thread", "process"])
def test_a_signal_at_any_of_records_renames_leaves_the_record_whole(make_case, tmp_path, how):
    """issue 42: a SIGINT the system hands to another thread between two renames tore the
    record (interpreter.md new, interpreter.json and the README old). At each rename in turn,
    a signal arrives; every record is then whole (all three files new) or untouched, and the command says
    it was interrupted. Each run has its own seed, which the command line in every file names."""
    case = make_case(root=tmp_path / "cases")
    driver = tmp_path / "driver.py"
    driver.write_text(SIGNAL_AT_RENAME)
    env = {**os.environ, "CASEBOOK_CASES": str(tmp_path / "cases"), "CUDA_VISIBLE_DEVICES": "",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    k, renames = 0, None
    while renames is None or k < renames:
        before = recorded_files(case)
        out = subprocess.run([sys.executable, str(driver), str(case), str(k), how], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 130, out.stderr
        after = recorded_files(case)
        new = [p.name for p in after if f"--seed {100 + k}".encode() in (after[p] or b"")]
        assert len(new) == len(after) or after == before, f"signal at rename {k}: a torn record, only {new} new"
        renames = int(out.stderr.rsplit("renames:", 1)[1].split()[0])
        k += 1
    assert k == 3  # interpreter.md, interpreter.json, README.md: each rename had its signal


class Killed(BaseException):
    """SIGKILL or a power cut between two renames: nothing after it runs, not even ``finally``'s cleanup."""


def test_a_record_cut_off_between_its_renames_is_found_torn(make_case, tmp_path, monkeypatch, capsys):
    """Nothing can hold SIGKILL back: a record cut off after its first rename is new .md, old .json.
    ``record --splice-only`` refuses to copy it into the write-up (exit 2, the README untouched)
    and ``report`` shows that record's cells as unreadable, saying why."""
    from harness.core import discovery
    from harness.report import records

    case = make_case(root=tmp_path / "cases")
    assert record(tmp_path / "cases", monkeypatch) in (0, 1)  # a whole record first
    capsys.readouterr()
    real = os.replace

    def cut(src, dst, *a, **kw):
        real(src, dst, *a, **kw)
        if str(dst).endswith("interpreter.md"):
            raise Killed

    monkeypatch.setattr(fileio.os, "replace", cut)
    with pytest.raises(Killed):
        cli.main(["record", "row-mean-divides-by-block", "--backend", "interpreter", "--seed", "7"])
    monkeypatch.setattr(fileio.os, "replace", real)
    md = (case / "recorded" / "interpreter.md").read_text()
    assert "--seed 7" in md and "--seed 7" not in (case / "recorded" / "interpreter.json").read_text()
    readme = (case / "README.md").read_bytes()
    capsys.readouterr()
    assert cli.main(["record", "row-mean-divides-by-block", "--splice-only"]) == 2
    err = capsys.readouterr().err
    assert "recorded/interpreter.md and recorded/interpreter.json are not from the same run" in err
    assert (case / "README.md").read_bytes() == readme
    spec = discovery.load("row-mean-divides-by-block")
    rec = records._from_case_record(spec, "interpreter")
    assert "not from the same run" in rec["unreadable"]
    assert cli.main(["record", "row-mean-divides-by-block", "--backend", "interpreter"]) in (0, 1)
    assert records._from_case_record(spec, "interpreter").get("unreadable") is None  # recorded again: whole


def test_a_signal_as_a_temporary_file_is_made_leaves_none(tmp_path, monkeypatch):
    """The fuzz campaign's timed SIGINTs left `.interpreter.json.*.tmp` behind: the signal landed
    after mkstemp made the file and before write_together knew its name."""
    real = fileio._new_temp

    def made_then_signalled(path):
        got = real(path)
        signal.raise_signal(signal.SIGINT)  # Python raises at its next instruction: still in here
        return got

    monkeypatch.setattr(fileio, "_new_temp", made_then_signalled)
    with pytest.raises(KeyboardInterrupt):
        fileio.write_together({tmp_path / "a.md": "x", tmp_path / "b.json": "{}"})
    assert list(tmp_path.iterdir()) == []


def test_a_signal_as_the_command_ends_is_no_traceback(monkeypatch, capsys):
    """A SIGINT while the command stops its workers, its work done, escaped main() as a
    KeyboardInterrupt (a traceback, exit -2): now the command's own status stands."""
    from harness.run.isolate import WORKERS

    real, sent = WORKERS.stop, []

    def stop():
        if not sent:
            sent.append(True)
            signal.raise_signal(signal.SIGINT)
        return real()

    monkeypatch.setattr(WORKERS, "stop", stop)
    try:
        code = cli.main(["list"])
    except KeyboardInterrupt:
        code = "KeyboardInterrupt escaped"
    assert sent and code == 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back for the caller


def test_files_and_folders_written_whole_have_the_modes_of_any_new_file(tmp_path):
    """mkstemp's 0600 and mkdtemp's 0700 made every file the harness wrote (docs/report.md and its HTML
    page, a case's records and write-up) readable by its owner alone: a fresh clone's ``report`` gave
    pages a web server or another user could not read. New files and folders get the umask's mode,
    a file written over keeps its own."""
    import os

    old = os.umask(0o022)
    try:
        fileio.write_text(tmp_path / "new.md", "x")
        kept = tmp_path / "kept.md"
        kept.write_text("old")
        os.chmod(kept, 0o640)
        fileio.write_text(kept, "new")
        with fileio.new_folder(tmp_path / "pictures") as staging:
            (staging / "a.png").write_bytes(b"png")
    finally:
        os.umask(old)
    mode = lambda p: oct(p.stat().st_mode & 0o777)  # noqa: E731
    assert mode(tmp_path / "new.md") == oct(0o644) and mode(kept) == oct(0o640) and kept.read_text() == "new"
    assert mode(tmp_path / "pictures") == oct(0o755)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.md", "new.md", "pictures"]  # no temporary left
