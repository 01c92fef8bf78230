"""Peer tools on the benchmark's entries, each behind one function in ``TOOLS``:
``run(name, entry, variant, backend, timeout)`` returns ``{"caught": bool, "first": {...},
"seconds": float, "version": str}``, or ``{"error": "could not run: why"}`` (a tool that is not
installed says so and the scoreboard shows it as not run, never as quiet).

The plain test and random-shape fuzzing are ours (``harness.bugs.plain``); the tools here are
other people's, installed where they work (``benchmarks/peers/`` says how).
"""

from __future__ import annotations


def _lazy(module: str):
    """The adapter's ``run``, imported on first use (so a broken adapter breaks only its column)."""
    def tool(entry, variant: str, backend: str, *, timeout: float) -> dict:
        import importlib

        try:
            mod = importlib.import_module(f"harness.bugs.{module}")
        except Exception as e:  # noqa: BLE001
            return {"error": f"could not run: harness.bugs.{module} does not import: {type(e).__name__}: {e}"[:300]}
        return mod.run(entry, variant, backend, timeout=timeout)

    return tool


# name -> fn(entry, variant, backend, *, timeout); each one module (harness.bugs.peer_*), each
# tool in a virtual environment of its own (benchmarks/peers/setup.sh)
TOOLS: dict = {
    "ttsem": _lazy("peer_ttsem"),
    "triton-viz": _lazy("peer_triton_viz"),
    "gpucheck": _lazy("peer_gpucheck"),
}


def run(name: str, entry, variant: str, backend: str, *, timeout: float) -> dict:
    tool = TOOLS.get(name)
    if tool is None:
        return {"error": f"could not run: no peer tool '{name}' (there are {', '.join(TOOLS) or 'none'})"}
    return tool(entry, variant, backend, timeout=timeout)
