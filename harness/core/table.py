"""The tables people read (tabulate) and the JSON that machines read."""

from __future__ import annotations

import json

from tabulate import tabulate

from harness.core.verdict import CallVerdict

HEADERS = ["backend", "variant", "call", "result", "reference", "max abs err", "max rel err",
           "distinct / trials", "verdict"]


def _err(v: float | None) -> str:
    if v is None:
        return ""
    return "inf" if v == float("inf") else f"{v:.3g}"


def backend_label(v: CallVerdict) -> str:
    if v.backend == "gpu":
        return f"gpu ({v.device})" if v.device else "gpu"
    return "interpreter (CPU)"


def verdict_text(v: CallVerdict) -> str:
    mark = "as declared" if v.as_declared else "NOT AS DECLARED"
    label = v.observed if v.observed == v.expected else f"{v.observed} (declared {v.expected})"
    return f"{label}: {mark}"


def rows(verdicts: list[CallVerdict], calls: int) -> list[list]:
    out = []
    for v in verdicts:
        result = v.result
        if v.notes:
            result = f"{result}; {'; '.join(v.notes)}" if result else "; ".join(v.notes)
        call = {1: "first", 2: "second"}.get(v.call, str(v.call)) if calls > 1 else ""
        if v.observed in ("crash", "hang"):
            trials = f"{v.observed} after {v.trials} of {v.requested} trials"
        else:
            trials = f"{v.distinct} / {v.trials}" if v.trials else ""
        out.append([backend_label(v), v.variant, call, result, v.reference, _err(v.max_abs), _err(v.max_rel),
                    trials, verdict_text(v)])
    return out


def case_table(verdicts: list[CallVerdict], calls: int, fmt: str = "github") -> str:
    headers = list(HEADERS)
    body = rows(verdicts, calls)
    if calls == 1:
        i = headers.index("call")
        headers.pop(i)
        for r in body:
            r.pop(i)
    return tabulate(body, headers=headers, tablefmt=fmt, disable_numparse=True, maxcolwidths=None)


def versions(e: dict) -> str:
    """Device and software of one run: 'NVIDIA H200; torch .., triton .., CUDA .., Python ..'."""
    cuda = f", CUDA {e['cuda']}" if e.get("cuda") else ""
    return f"{e.get('device')}; torch {e.get('torch')}, triton {e.get('triton')}{cuda}, Python {e.get('python')}"


def env_lines(envs: list[dict]) -> list[str]:
    lines, seen = [], set()
    for e in envs:
        if not e:
            continue
        key = (e.get("backend"), e.get("device"))
        if key in seen:
            continue
        seen.add(key)
        lines.append(f"{e.get('backend')}: {versions(e)}; {e.get('date')}")
    return lines


def dumps(obj) -> str:
    def default(o):
        if hasattr(o, "to_json"):
            return o.to_json()
        return str(o)

    return json.dumps(obj, indent=2, default=default, allow_nan=True)
