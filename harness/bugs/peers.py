"""Peer tools on the benchmark's entries, each behind one function in ``TOOLS``:
``run(name, entry, variant, backend, timeout)`` returns ``{"caught": bool, "first": {...},
"seconds": float, "version": str}``, or ``{"error": "could not run: why"}`` (a tool that is not
installed says so and the scoreboard shows it as not run, never as quiet).

The plain test and random-shape fuzzing are ours (``harness.bugs.plain``); the tools here are
other people's, installed where they work (``benchmarks/peers/`` says how).
"""

from __future__ import annotations

TOOLS: dict = {}


def run(name: str, entry, variant: str, backend: str, *, timeout: float) -> dict:
    tool = TOOLS.get(name)
    if tool is None:
        return {"error": f"could not run: no peer tool '{name}' (there are {', '.join(TOOLS) or 'none'})"}
    return tool(entry, variant, backend, timeout=timeout)
