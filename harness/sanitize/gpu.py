"""``python -m harness sanitize --backend gpu``: the user's command on the GPU under NVIDIA's
compute-sanitizer memcheck, its reports mapped back to kernel lines as the interpreter's are.

The command runs in the same child as on the CPU (``harness.sanitize.child``, with ``backend``
gpu: no interpreter, no fake CUDA), under ``compute-sanitizer --tool memcheck`` (the command
line ``harness.detectors.sanitizer.wrapper`` builds, with a log file of its own so the reports
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
_NEAREST = re.compile(r"is (\d+) bytes (after|before) the nearest allocation at (0x[0-9a-f]+) of size (\d+) bytes")
_GSAN = re.compile(r"(GSan[^\n]*)")
CODES = {"write": "P101", "read": "P102", "atomic": "P103"}


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
        hits.append({"code": CODES[kind], "kernel": kernel, "line": line, "kind": "store" if kind == "write" else
                     "load" if kind == "read" else "atomic", "tensor": near.group(3) if near else "?", "side": side,
                     "elements": 0, "programs": [_pid(body)], "backend": "gpu",
                     "message": f"{kernel}: {head.strip()}, {far} (first by program {_pid(body)})"})
    for m in _GSAN.finditer(text):
        hits.append({"code": "P301", "kernel": "?", "line": "", "backend": "gpu", "programs": [],
                     "message": f"Triton's GSan: {m.group(1).strip()}"[:300]})
    return hits


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
    from harness.detectors.sanitizer import compute_sanitizer
    from harness.detectors.sanitizer import wrapper as base

    cs = compute_sanitizer()
    if cs is None:
        raise UsageError("sanitize --backend gpu: compute-sanitizer not found (put it on PATH or set CUDA_HOME)")
    cmd = base(cs, "memcheck")
    cmd[cmd.index("--print-limit") + 1] = "100"
    return cmd + ["--log-file", log]


def require() -> None:
    """A GPU and compute-sanitizer, or a UsageError that says which is missing."""
    from harness.detectors.sanitizer import compute_sanitizer
    from harness.run.backends import cuda_available

    if not cuda_available():
        raise UsageError("sanitize --backend gpu: no CUDA GPU is available here (use --backend interpreter)")
    if compute_sanitizer() is None:
        raise UsageError("sanitize --backend gpu: compute-sanitizer not found (put it on PATH or set CUDA_HOME)")
