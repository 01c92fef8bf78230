"""``python -m harness sanitize --backend gpu``: the user's command on the GPU under NVIDIA's
compute-sanitizer memcheck, its reports mapped back to kernel lines as the interpreter's are.

The command runs in the same child as on the CPU (``harness.sanitize.child``, with ``backend``
gpu: no interpreter, no fake CUDA), under ``compute-sanitizer --tool memcheck`` (the command
line ``harness.run.gpu_tools.wrapper`` builds, with a log file of its own so the reports
and the command's output stay apart) and ``PYTORCH_NO_CUDA_MEMORY_CACHING=1`` (every tensor its
own allocation: the caching allocator's slack would hide an access past the end). Where the
installed Triton has Triton's own global-memory race sanitizer (``TRITON_INSTRUMENTATION_MODE=
gsan``, ``triton_compat.instrumentation_modes``) it is switched on too, with the scratch allocator
it needs; its device-side assertion is a P301 finding at the launch.

Each memcheck report block (the documented form)::

    ========= Invalid __global__ write of size 4 bytes
    =========     at add_kernel+0x2b0 in /home/me/kernels.py:24
    =========     by thread (107,0,0) in block (9,0,0)
    =========     Address 0x7f3c2e8271ac is out of bounds
    =========     and is 429 bytes after the nearest allocation at 0x7f3c2e800000 of size 160012 bytes

becomes a hit: P101 for a write, P102 for a read, P103 for an atomic, at the kernel's line
(Triton keeps line information in what it compiles), the block as the program id.
"""

from __future__ import annotations

import os
import re

from harness.errors import UsageError

_BLOCK = re.compile(r"^=+ (Invalid __global__ (read|write|atomic)[^\n]*)\n((?:=+ {2,}[^\n]*\n?)*)", re.M)
# "at add_kernel+0x2b0 in /x/k.py:24" (2022 and later; C++ names with their arguments), or
# "at 0x000002b0 in /x/k.py:24:add_kernel" (older)
_AT = [re.compile(r"at (?P<fn>[^\s(+]+)(?:\([^)]*\))?\+0x[0-9a-f]+(?: in (?P<file>\S+):(?P<line>\d+))?"),
       re.compile(r"at 0x[0-9a-f]+ in (?P<file>[^\s:]+):(?P<line>\d+):(?P<fn>[^\s(]+)")]
_BLOCK_ID = re.compile(r"in block \((\d+),(\d+),(\d+)\)")
_NEAREST = re.compile(r"is ([\d,]+) bytes (after|before) the nearest allocation at (0x[0-9a-f]+) "
                      r"of size ([\d,]+) bytes")
_GSAN = re.compile(r"(GSan[^\n]*)")
CODES = {"write": "P101", "read": "P102", "atomic": "P103"}
ERROR_EXIT = 99  # compute-sanitizer's exit status where it reported an error (``run.gpu_tools.wrapper``)


def _where(path: str, line: str) -> str:
    if not path:
        return ""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        rel = path
    return f"{path if rel.startswith('..') else rel}:{line}"


def _pid(block: str) -> str:
    m = _BLOCK_ID.search(block)
    if m is None:
        return "?"
    x, y, z = m.groups()
    return x if (y, z) == ("0", "0") else f"({x}, {y}, {z})"


def parse(text: str) -> list[dict]:
    """compute-sanitizer's memcheck reports (and GSan's assertions) as hits, in order."""
    return [hit for _, hit in parse_at(text)]


def parse_at(text: str) -> list[tuple[int, dict]]:
    """``parse``'s hits, each with the byte offset in ``text`` where its report starts."""
    hits = []
    for m in _BLOCK.finditer(text):
        head, kind, body = m.group(1), m.group(2), m.group(3)
        at = next((m for m in (p.search(body) for p in _AT) if m), None)
        kernel = at.group("fn") if at else "?"
        line = _where(at.group("file"), at.group("line")) if at and at.group("file") else ""
        near = _NEAREST.search(body)
        side = ("past the end" if near.group(2) == "after" else "before the start") if near else "outside"
        far = f"{near.group(1)} bytes {near.group(2)} an allocation of {near.group(4)} bytes" if near else \
            "outside every allocation"
        hit = {"code": CODES[kind], "kernel": kernel, "line": line, "kind": "store" if kind == "write" else
               "load" if kind == "read" else "atomic", "tensor": near.group(3) if near else "?", "side": side,
               "elements": 0, "programs": [_pid(body)], "backend": "gpu",
               "message": f"{kernel}: {head.strip()}, {far} (first by program {_pid(body)})"}
        hits.append((_bytes(text, m.start()), hit))
    for m in _GSAN.finditer(text):
        hit = {"code": "P301", "kernel": "?", "line": "", "backend": "gpu", "programs": [],
               "message": f"Triton's GSan: {m.group(1).strip()}"[:300]}
        hits.append((_bytes(text, m.start()), hit))
    return sorted(hits, key=lambda oh: oh[0])


def _bytes(text: str, at: int) -> int:
    return len(text[:at].encode("utf-8", errors="replace"))


def environment(env: dict) -> dict:
    """The GPU run's variables: no caching allocator; GSan where this Triton has it."""
    from harness.run.triton_compat import instrumentation_modes

    env = {**env, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
    env.pop("TRITON_INTERPRET", None)
    if "gsan" in instrumentation_modes():
        env["TRITON_INSTRUMENTATION_MODE"] = "gsan"
    return env


def wrapper(log: str) -> list[str]:
    """compute-sanitizer memcheck, every report to ``log`` (up to 100)."""
    from harness.run.gpu_tools import compute_sanitizer
    from harness.run.gpu_tools import wrapper as base

    cs = compute_sanitizer()
    if cs is None:
        raise UsageError("sanitize --backend gpu: compute-sanitizer not found (put it on PATH or set CUDA_HOME)")
    cmd = base(cs, "memcheck")
    cmd[cmd.index("--print-limit") + 1] = "100"
    return cmd + ["--log-file", log]


def require() -> None:
    """A GPU and compute-sanitizer, or a UsageError that says which is missing."""
    from harness.run.gpu_tools import compute_sanitizer
    from harness.run.backends import cuda_available

    if not cuda_available():
        raise UsageError("sanitize --backend gpu: no CUDA GPU is available here (use --backend interpreter)")
    if compute_sanitizer() is None:
        raise UsageError("sanitize --backend gpu: compute-sanitizer not found (put it on PATH or set CUDA_HOME)")


# ---------------------------------------------------------------- the command's two passes

BLIND = ("compute-sanitizer sees accesses outside an allocation; it does not see races between programs "
         "through global memory (racecheck covers shared memory only), masked lanes or program order: "
         "the interpreter's checks run the same tests for those")


def run(job, tmp: str, start, say, begin=None) -> tuple[int, list, int | None]:
    """The job on the GPU under memcheck (a pytest suite in as many processes as lost CUDA contexts
    take, ``run_pytest``) and the same job under the instrumented interpreter (CPU mode, real CUDA
    tensors), so that the GPU mode finds all that the CPU mode does. ``start(job, results, backend,
    env, prefix)`` starts the command's child and waits for it (``harness.sanitize.runner``); ``say``
    prints one line for the user; ``begin(job, results, backend, env, prefix, held=...)`` starts one
    without waiting (``runner.Pass``). A pytest suite's interpreter pass runs beside the GPU's, its
    output held and printed after the GPU's (each pass is its own pytest session, with its own
    temporary folders): the GPU mode takes the longer pass's time, not their sum (issue 40). A script
    or module (which may write its own files) runs its passes one after the other, and so does a suite
    given ``--basetemp`` (pytest empties that folder as a session starts: two at once would empty each
    other's). Returns the exit status, the hits (the GPU's folded into the interpreter's where both saw
    one access), and the interpreter's launch count."""
    from harness.sanitize.session import read_sink

    results = os.path.join(tmp, "hits.jsonl")
    beside = job.kind == "pytest" and begin is not None and not _shared_basetemp(job.args)
    interp = begin(job, results, "interpreter", {}, [], held=True) if beside else None
    try:
        if job.kind == "pytest":
            code, gpu_hits = run_pytest(job, tmp, start, say, begin)
        else:
            log = os.path.join(tmp, "compute-sanitizer.log")
            code = start(job, os.path.join(tmp, "gpu-hits.jsonl"), "gpu", {}, wrapper(log))
            gpu_hits = parse(_read(log))
    except BaseException:
        if interp is not None:
            interp.stop()
        raise
    say(f"sanitize --backend gpu: {BLIND}")
    interp_code = interp.finish() if interp is not None else start(job, results, "interpreter", {}, [])
    hits, launches = read_sink(results)
    return code if code else interp_code, fold(gpu_hits, hits), launches


def run_pytest(job, tmp: str, start, say, begin=None) -> tuple[int, list]:
    """The suite under memcheck, a fresh process for the tests left each time one loses its CUDA
    context (``harness.sanitize.gpu_plugin``): every test runs, and each report is the test's that
    was running when compute-sanitizer wrote it. With ``begin``, the next process starts while this
    one runs, as a spare: it starts compute-sanitizer, Python, torch and collects the suite, then
    waits for its turn (``gpu_plugin.TURN_ENV``) to run the tests left, or is ended where none are
    (under a wrapper no process can be forked from one that has imported torch already). Returns
    pytest's combined exit status (a test that lost the context failed) and the hits, each with its test."""
    from harness.sanitize import gpu_plugin as P

    progress, done = os.path.join(tmp, "gpu-progress.jsonl"), os.path.join(tmp, "gpu-done.txt")
    hits, codes = [], []

    def env(n: int) -> tuple[dict, str]:
        log = os.path.join(tmp, f"compute-sanitizer-{n}.log")
        return {P.PROGRESS_ENV: progress, P.DONE_ENV: done, P.LOG_ENV: log}, log

    def spare(n: int):
        extra, log = env(n)
        return begin(job, os.path.join(tmp, "gpu-hits.jsonl"), "gpu", {**extra, P.TURN_ENV: _turn(tmp, n)},
                     wrapper(log), held=True)

    attempt, current, waiting = 1, None, None
    try:
        while True:
            extra, log = env(attempt)
            seen = len(_records(progress))
            waiting = spare(attempt + 1) if begin else None  # collecting while this one runs
            if current is None:
                code = start(job, os.path.join(tmp, "gpu-hits.jsonl"), "gpu", extra, wrapper(log))
            else:
                P.take_turn(_turn(tmp, attempt))
                code = current.finish()
            current = None
            records = _records(progress)[seen:]
            starts = [(r["start"], r.get("log", 0)) for r in records if "start" in r]
            ends = {r["end"]: r.get("lost", "") for r in records if "end" in r}
            hits += _attribute(parse_at(_read(log)), starts)
            collected = next((r["collected"] for r in records if "collected" in r), None)
            lost = [(t, ends.get(t) or _died(code)) for t, _ in starts if ends.get(t) or t not in ends]
            codes.append(1 if lost else code)
            if collected is None or not starts or not lost or _exitfirst(job.args):
                break  # it ended as pytest ends (or never got to a test: another process would not either)
            with open(done, "a", encoding="utf-8") as f:
                f.writelines(t + "\n" for t, _ in starts)
            left = [t for t in collected if t not in {s for s, _ in starts}]
            for test, why in lost:
                say(f"sanitize --backend gpu: {test} lost the CUDA context ({why})"
                    + (f"; the {len(left)} tests left run in a fresh process" if left else ""))
            if not left:
                break
            attempt += 1
            current, waiting = waiting, None
    finally:
        for unused in (current, waiting):  # a spare not needed (or an interrupted run): ended unheard
            if unused is not None:
                unused.stop()
    return _combined(codes), hits


def _shared_basetemp(args: list) -> bool:
    """Whether the suite's arguments (or ``PYTEST_ADDOPTS``) name pytest's ``--basetemp``: one folder for every
    session started."""
    words = list(args) + os.environ.get("PYTEST_ADDOPTS", "").split()
    return any(a == "--basetemp" or a.startswith("--basetemp=") for a in words)


def _turn(tmp: str, n: int) -> str:
    return os.path.join(tmp, f"gpu-turn-{n}.txt")


def _exitfirst(args: list) -> bool:
    """pytest's -x / --maxfail: the user asked the run to stop at a failure, and a lost test failed."""
    return any(a in ("-x", "--exitfirst") or a.startswith("--maxfail") for a in args)


def _records(path: str) -> list[dict]:
    import json

    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue  # a line cut short by a process that died
    except FileNotFoundError:
        pass
    return out


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _died(code: int) -> str:
    if code == ERROR_EXIT:
        return "memcheck reported an error and the process ended"
    if code < 0:
        import signal

        return f"the process died of {signal.Signals(-code).name if -code in signal.valid_signals() else -code}"
    return f"the process ended with status {code} inside it"


def _attribute(located: list, starts: list) -> list[dict]:
    """Each report's test: the last one started at or before the log offset where it was written
    (a report before the first test: nobody's, like a launch at import)."""
    out = []
    for at, hit in located:
        test = ""
        for t, offset in starts:
            if offset <= at:
                test = t
        out.append({**hit, "test": test})
    return out


def _combined(codes: list) -> int:
    """pytest's exit statuses of the processes as one: an interruption, internal or usage error
    first, then a failure, then "no tests" only where every process said so."""
    for c in codes:
        if c not in (0, 1, 5):
            return c
    if 1 in codes:
        return 1
    return 5 if codes and all(c == 5 for c in codes) else 0


def _place(line: str) -> tuple:
    """A kernel line as (file name, line number): compute-sanitizer names the file without its folder."""
    path, _, n = line.rpartition(":")
    return (os.path.basename(path), n) if path else (line, "")


def fold(gpu_hits: list, hits: list) -> list:
    """The interpreter's hits, each marked ``backend`` "gpu+interpreter" where the GPU reported
    the same code in the same test and kernel at the same line (or, where its report names no
    line, anywhere in that kernel); then the GPU's hits that the interpreter did not match, their
    file named as the interpreter's hits name it where one has the same file name (the
    interpreter's name the tensor, the lanes and the launching line)."""
    def keys(h: dict) -> list:
        where = ("kernel", h["code"], h.get("kernel", ""), h.get("test", ""))
        return [where] + ([(*where, _place(h["line"]))] if h.get("line") else [])

    mine: dict = {}
    for h in gpu_hits:
        mine.setdefault(keys(h)[-1], []).append(h)  # by its line where it names one, else by its kernel
    matched, out = set(), []
    for h in hits:
        hit = next((k for k in reversed(keys(h)) if k in mine), None)
        if hit is not None:
            matched.add(hit)
            h = {**h, "backend": "gpu+interpreter"}
        out.append(h)
    full = {os.path.basename(h["line"].rpartition(":")[0]): h["line"].rpartition(":")[0]
            for h in hits if h.get("line")}
    left = [h for k, group in mine.items() if k not in matched for h in group]
    return out + [{**h, "line": f"{full[_place(h['line'])[0]]}:{_place(h['line'])[1]}"}
                  if h.get("line") and _place(h["line"])[0] in full else h for h in left]

OWN = {"--casebook-sanitize", "--casebook-sanitize-tf32", "--casebook-sanitize-orders", "--casebook-sanitize-backend"}


def user_args(args) -> list[str]:
    """A pytest command line without the plugin's own options (and their values)."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            if a in ("fail", "report", "gpu", "interpreter"):
                continue
        name = a.split("=", 1)[0]
        if name in OWN:
            skip = "=" not in a and name in ("--casebook-sanitize", "--casebook-sanitize-backend")
            continue
        out.append(a)
    return out

