"""The ``ttsem`` peer: ttsem's sanitizer (PyPI ``ttsem`` 0.1.0) around the plain test a kernel's
author writes, as its README tells a user to run a suite written for ``device="cuda"`` on a
machine without a GPU::

    python -m ttsem.sanitize pytest tests/

The test (``peer_common.write_test``) imports the entry's glue by path, makes the inputs with
``device="cuda"`` at the default sizes and asserts the launcher's output is allclose to the
reference. ttsem compiles every launch with Triton's own frontend (its pinned Triton 3.8.0) and
runs the TTIR on the CPU; an out-of-bounds access, a race between program instances or an
undefined operation raises its ``KernelFault`` out of the launch, at the kernel's line.

caught: the test failed (a ``KernelFault``, a wrong value, the launcher raising: then
``first.raised_in`` names the file that raised, which may be Triton 3.8.0's own code where the
project's code does not run on that Triton). A launch ttsem cannot judge (``Unjudged``: an
unsupported op) or an exception out of ttsem's own code is "could not run", not a finding; so is
a failure of the test's setup (the glue, the inputs, the reference).

The environment: ``benchmarks/peers/setup.sh ttsem`` (Python >= 3.12, torch 2.14.0, triton 3.8.0).
"""

from __future__ import annotations

from pathlib import Path

from harness.bugs import peer_common as C

TOOL, DIST = "ttsem", "ttsem"


def version() -> str:
    v = C.dist_version(TOOL, DIST)
    if v is None:
        return ""
    extra = [f"{d} {C.dist_version(TOOL, d)}" for d in ("triton", "torch") if C.dist_version(TOOL, d)]
    return f"ttsem {v}" + (f" ({', '.join(extra)})" if extra else "")


def run(entry, variant: str, backend: str, *, timeout: float, sizes: dict | None = None) -> dict:
    """The row for ``entry``'s ``variant``; ``sizes`` over the defaults (none: the plain test)."""
    if (err := C.missing(TOOL, DIST)) is not None:
        return err
    if why := C.fetch(entry):
        return {"error": f"could not run: {why}"[:300]}
    with C.tempdir(TOOL) as tmp:
        tmp = Path(tmp)
        test = C.write_test(tmp, entry, variant, device="cuda", sizes=sizes)
        out = tmp / "result.jsonl"
        env = C.environment({"CASEBOOK_PEER_RESULT": str(out)})
        done = C.run([C.venv_python(TOOL), "-m", "ttsem.sanitize", "pytest", "-q", "-p", "no:cacheprovider",
                      "-p", "no:randomly", str(test)], env=env, timeout=timeout, cwd=str(tmp))
        rows = C.results(out)
    res = {"seconds": round(done.seconds, 1), "version": version()}
    v = C.verdict(rows, done, timeout=timeout, what="ttsem")
    if "error" in v:
        return {**res, **v}
    call = v["call"]
    if call["outcome"] == "passed":
        return {**res, "caught": False}
    if call["type"] == "Unjudged":
        return {**res, "error": f"could not run: ttsem could not judge the launch: {call['message']}"[:300]}
    frames = call.get("frames") or []
    if call["type"] != "KernelFault" and any("/site-packages/ttsem/" in f for f in frames[-1:]):
        return {**res, "error": f"could not run: ttsem failed: {call['type']}: {call['message']}"[:300]}
    kind = "fault" if call["type"] == "KernelFault" else "test failed"
    first = {"kind": kind, "type": call["type"], "message": call["message"][:400]}
    if frames and kind == "test failed":  # whose code raised: the glue, the project's, Triton 3.8.0's
        first["raised_in"] = C.short_path(frames[-1])
    return {**res, "caught": True, "first": first}

