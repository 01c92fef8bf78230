"""The tables people read (tabulate) and the JSON that machines read."""

from __future__ import annotations

import json
import math

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
    declared = v.expected.replace("|", " or ")  # 'wrong|crash': a '|' would split a Markdown table cell
    label = v.observed if v.observed == v.expected else f"{v.observed} (declared {declared})"
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
    from tabulate import tabulate  # here, not at the top: lint and --help need only the standard library
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


def strict(obj):
    """``obj`` with every float infinity or NaN as a string ("inf", "-inf", "nan"): strict JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {k: strict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strict(v) for v in obj]
    if hasattr(obj, "to_json"):
        return strict(obj.to_json())
    return obj


def dumps(obj) -> str:
    """Strict JSON (no Infinity or NaN tokens: they are the strings "inf", "-inf", "nan")."""
    return json.dumps(strict(obj), indent=2, default=str, allow_nan=False)


NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def _restore(obj, key=None):
    if isinstance(obj, str) and key is not None and key.startswith(("max_", "min_")) and obj in NON_FINITE:
        return NON_FINITE[obj]
    if isinstance(obj, dict):
        return {k: _restore(v, k) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_restore(v, key) for v in obj]
    return obj


def loads(text: str):
    """Read what ``dumps`` wrote: the numbers it had to write as strings (max_abs = "inf") come back as floats."""
    return _restore(json.loads(text))
