"""The ``triton-viz`` peer: triton-viz's sanitizer (PyPI ``triton-viz`` 3.0) around the plain
test a kernel's author writes, run the way its README tells a user to::

    TRITON_INTERPRET=1 triton-sanitizer pytest tests/

``triton-sanitizer`` replaces ``triton.jit`` (and ``triton.autotune``) with a traced kernel
whose every load and store is checked symbolically (z3) against its tensor's bounds; the
first access that can leave them prints a report and ends the test (``sys.exit(1)`` inside
it, a failure for pytest). The test (``peer_common.write_test``) makes the inputs on the CPU
(``device="cpu"``: the interpreter), at the default sizes, and asserts the launcher's output
is allclose to the reference.

The symbolic sanitizer does not compute the kernel's values (its output tensors keep what
``torch.empty`` gave them, which passes the comparison only where the allocator hands back the
reference's freed memory), so a failed comparison is not a finding here (every row says
``values: "not computed"``). caught: an out-of-bounds report, or the launcher raising outside the
traced kernel (the test fails as it would without the tool; ``first.raised_in`` names the file).
An exception while triton-viz traces the kernel (an op it does not support, a scalar it keeps as
a Python number, its wrapper where the project's code expects a kernel) is "could not run", and
so is a failure of the test's setup (the glue, the inputs, the reference).

The environment: ``benchmarks/peers/setup.sh triton-viz`` (a venv with
``--system-site-packages`` over this python's torch and triton).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from harness.bugs import peer_common as C

TOOL, DIST = "triton-viz", "triton-viz"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
HEADERS = ("Out-Of-Bounds Access Detected", "ILLEGAL MEMORY ACCESS DETECTED")
# what code that handles its kernels says when it meets triton-viz's wrapper instead of a JITFunction
# (the last: triton-viz 3.0 wrapping an Autotuner, harness/run/viz_worker.py says more)
WRAPPER = ("'TritonTrace' object", "wrap_triton only works on functions annotated with triton.jit",
           "'NoneType' object has no attribute 'warmup'")


def version() -> str:
    v = C.dist_version(TOOL, DIST)
    if v is None:
        return ""
    import importlib.metadata as md

    try:
        tv = md.version("triton")  # the base python's, through --system-site-packages
    except md.PackageNotFoundError:
        tv = ""
    return f"triton-viz {v}" + (f" (triton {tv})" if tv else "")


def _base_bin() -> str:
    """The folder of the venv's base python (its pytest), from pyvenv.cfg."""
    try:
        for line in (C.peers_root() / TOOL / "pyvenv.cfg").read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home":
                return value.strip()
    except OSError:
        pass
    return ""


def report(stdout: str) -> dict | None:
    """The sanitizer's printed report, in a few words: the op, the tensor, the line."""
    text = _ANSI.sub("", stdout)
    if not any(h in text for h in HEADERS):
        return None
    op = re.search(r"^Operation: (\w+)", text, re.M)
    arg = re.search(r"^(?:Tensor Arg:|\s*arg:)\s*(\S+)", text, re.M)
    where = re.search(r"File: (\S+?), Line: (\d+), in (\w+)", text)
    if where is not None:
        file, line, fn = where.group(1), where.group(2), where.group(3)
    else:
        f = re.search(r"^\s*File:\s*(\S+?)(?::(\d+))?\s*$", text, re.M)
        fn_m = re.search(r"^\s*Function:\s*(\S+)", text, re.M)
        ln = re.search(r"^\s*Line (\d+):", text, re.M)
        file = f.group(1) if f else ""
        line = (f.group(2) if f and f.group(2) else "") or (ln.group(1) if ln else "")
        fn = fn_m.group(1) if fn_m else ""
    code = re.search(r"^(?:\s*Code:\s*(.+)|→\s*\d+ │ (.+))$", text, re.M)
    what = f"{op.group(1).lower()} " if op else ""
    msg = f"out-of-bounds {what}access" + (f" of {arg.group(1)}" if arg else "")
    if fn or file:
        msg += f" in {fn} at {Path(file).name}:{line}" if fn else f" at {Path(file).name}:{line}"
    if code:
        msg += f": {(code.group(1) or code.group(2)).strip()}"
    return {"kind": "out-of-bounds", "message": msg[:400], "line": int(line) if str(line).isdigit() else None}


def _tool_failure(call: dict, frames: list) -> bool:
    """An exception out of triton-viz's run rather than the test's: raised while triton-viz traced
    the kernel (its frames on the stack: what its tracer does not support, a scalar it keeps as a
    Python number), or the project's code meeting triton-viz's wrapper instead of its kernel. A
    kernel that raises on its own does so under the plain test too: nothing the sanitizer adds."""
    return any("/triton_viz/" in f for f in frames) or any(w in call["message"] for w in WRAPPER)


def run(entry, variant: str, backend: str, *, timeout: float, sizes: dict | None = None) -> dict:
    """The row for ``entry``'s ``variant``; ``sizes`` over the defaults (none: the plain test)."""
    if (err := C.missing(TOOL, DIST)) is not None:
        return err
    exe = C.peers_root() / TOOL / "bin" / "triton-sanitizer"
    if not exe.exists():
        return {"error": f"could not run: no {exe} (run {C.SETUP} {TOOL})"}
    if why := C.fetch(entry):
        return {"error": f"could not run: {why}"[:300]}
    with C.tempdir(TOOL) as tmp:
        tmp = Path(tmp)
        test = C.write_test(tmp, entry, variant, device="cpu", sizes=sizes)
        out = tmp / "result.jsonl"
        path = os.pathsep.join(p for p in (str(exe.parent), _base_bin(), os.environ.get("PATH", "")) if p)
        env = C.environment({"CASEBOOK_PEER_RESULT": str(out), "TRITON_INTERPRET": "1", "PATH": path})
        done = C.run([exe, "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(test)],
                     env=env, timeout=timeout, cwd=str(tmp))
        rows = C.results(out)
    res = {"seconds": round(done.seconds, 1), "version": version(), "values": "not computed"}
    v = C.verdict(rows, done, timeout=timeout, what="triton-sanitizer")
    if "error" in v:
        return {**res, **v}
    call = v["call"]
    if call["outcome"] == "passed":
        return {**res, "caught": False}
    first = report(call.get("stdout", ""))
    if first is not None:
        return {**res, "caught": True, "first": first}
    frames = call.get("frames") or []
    if call["type"] == "AssertionError" and frames and Path(frames[-1]).name.startswith("test_"):
        return {**res, "caught": False}  # the comparison: see above
    if _tool_failure(call, frames):
        return {**res, "error": f"could not run: triton-viz failed: {call['type']}: {call['message']}"[:300]}
    first = {"kind": "test failed", "type": call["type"], "message": call["message"][:400]}
    if frames:
        first["raised_in"] = C.short_path(frames[-1])
    return {**res, "caught": True, "first": first}

