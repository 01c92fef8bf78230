"""Every bad field of a parsed ``case.toml``, from one pass over the dict.

``spec.parse_spec`` stops at the first problem, which is right for the commands that
run a case and wrong for ``check``, which must name every bad field. So this module
walks the dict once and checks each field on its own, with ``parse_spec``'s wording;
a field whose check depends on another (``[expect]`` on ``[run] calls``) uses it only
when that one is good. ``check`` still calls ``parse_spec`` once, to build the spec,
and reports what it rejects when nothing here did (rule C206), so the two cannot
drift apart unseen; ``tests/test_check_rules.py`` compares them as well.

Each error has a kind, which picks its rule: a missing field (C202), a value of the
wrong type (C203), a value out of its vocabulary or range (C204), a key a table does
not know (C205).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.core.spec import BACKENDS, BEHAVIOURS, CATEGORIES, DEFECTS, TRIGGERS, SpecError, parse_bench

MISSING, TYPE, VALUE, KEY = "missing", "type", "value", "key"
KNOWN_KEYS = {"title", "category", "defect", "summary", "launcher", "seen_in", "expect", "run", "compare",
              "sizes", "bench", "triggers", "calibration"}
HINTS = {  # how to fix a bad field, by its top-level key
    "title": 'title = "one line that names the trap"',
    "category": "'python -m harness new --help' lists the categories and what each means",
    "defect": "'python -m harness new --help' lists the defects and what each means",
    "summary": 'summary = "one sentence: what goes wrong"',
    "launcher": "the name of the function that broken.py and fixed.py both define",
    "seen_in": 'seen_in = ["https://github.com/..."]',
    "run": "see the case.toml reference in CONTRIBUTING.md",
    "expect": "[expect] says what the broken kernel does: gpu = .. and interpreter = .., from "
              + " | ".join(BEHAVIOURS),
    "compare": "see the case.toml reference in CONTRIBUTING.md",
    "sizes": "[sizes.gpu] and [sizes.interpreter] hold make_inputs' keyword arguments",
    "bench": "[bench] unit, torch and sizes: see the case.toml reference in CONTRIBUTING.md",
    "triggers": "triggers = [...], from: " + ", ".join(TRIGGERS),
    "calibration": "calibration = true or false",
}
RUN_KEYS = ("calls", "trials", "timeout", "gpus")
SIZE_TABLES = BACKENDS + ("sanitizer",)


@dataclass(frozen=True)
class FieldError:
    field: str  # dotted: 'category', 'run.trials', 'expect.gpu'
    kind: str  # MISSING, TYPE, VALUE or KEY
    what: str

    @property
    def fix(self) -> str:
        return HINTS.get(self.field.split(".")[0], "see the case.toml reference in CONTRIBUTING.md")


def is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def field_errors(meta: dict) -> list[FieldError]:
    """Every bad field of ``meta`` (a parsed case.toml), at most one per field, in file order."""
    out: list[FieldError] = []
    out += identity(meta)
    calls = run_table(meta, out)
    expect = expect_table(meta, calls, out)
    out += tags(meta)
    calibration = meta.get("calibration", False)
    if expect is not None and isinstance(calibration, bool):
        shows = [v for vals in expect.values() for v in vals if not set(v.split("|")) <= {"ok", "hidden", "skip"}]
        if calibration and shows:
            out.append(FieldError("expect", VALUE, "a calibration case declares ok on every backend (it is not a bug)"))
        if not calibration and not shows:
            out.append(FieldError("expect", VALUE, "[expect] declares no backend where the bug shows "
                                                   "(all ok/hidden/skip)"))
    out += sizes_table(meta) + compare_table(meta) + bench_table(meta)
    return out


def identity(meta: dict) -> list[FieldError]:
    """title, category, defect, summary and launcher: strings, from their vocabularies."""
    out = []
    for key in ("title", "category", "defect", "summary", "launcher"):
        val = meta.get(key)
        if key not in meta:
            out.append(FieldError(key, MISSING, f"missing field '{key}'"))
        elif not isinstance(val, str):
            out.append(FieldError(key, TYPE, f"field '{key}' must be str, got {type(val).__name__}"))
        elif key in ("category", "defect") and val not in (CATEGORIES if key == "category" else DEFECTS):
            vocab = CATEGORIES if key == "category" else DEFECTS
            out.append(FieldError(key, VALUE, f"{key} '{val}' is not one of {', '.join(sorted(vocab))}"))
        elif key == "launcher" and not val.isidentifier():
            out.append(FieldError(key, VALUE, f"launcher '{val}' is not a Python identifier"))
        elif key in ("title", "summary") and "\n" in val.strip():
            out.append(FieldError(key, VALUE, f"{key} must be one line"))
    return out


def table(meta: dict, key: str, out: list) -> dict | None:
    """``[key]`` ({} when absent), or None after noting that it is not a table."""
    val = meta.get(key, {})
    if isinstance(val, dict):
        return val
    out.append(FieldError(key, TYPE, f"[{key}] must be a table, got {type(val).__name__}"))
    return None


def per_backend(run: dict, name: str, floor: str) -> FieldError | None:
    """``[run] trials`` / ``timeout``: a number, or a table {gpu = .., interpreter = ..}, each >= 1."""
    value, field = run.get(name), f"run.{name}"
    if value is None:
        return None
    if is_int(value):
        values = [value]
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in BACKENDS:
                return FieldError(field, KEY, f"[run] {name} has unknown backend '{k}' (use gpu, interpreter)")
            if not is_int(v):
                return FieldError(field, TYPE, f"[run] {name}.{k} must be int")
        values = list(value.values())
    else:
        return FieldError(field, TYPE, f"[run] {name} must be a number or a table {{gpu = .., interpreter = ..}}")
    if values and min(values) < 1:
        return FieldError(field, VALUE, f"[run] {name} must be >= {floor}")
    return None


def run_table(meta: dict, out: list) -> int | None:
    """Check ``[run]``; return ``calls`` when it is good (None when it is not)."""
    run = table(meta, "run", out)
    if run is None:
        return None
    calls, gpus = run.get("calls", 1), run.get("gpus", 1)
    good_calls = is_int(calls) and calls >= 1
    if not good_calls:
        out.append(FieldError("run.calls", TYPE if not is_int(calls) else VALUE,
                              "[run] calls must be a whole number >= 1"))
    out += [e for e in (per_backend(run, "trials", "1"), per_backend(run, "timeout", "1 second")) if e]
    if not (is_int(gpus) and gpus >= 1):
        out.append(FieldError("run.gpus", TYPE if not is_int(gpus) else VALUE, "[run] gpus must be a whole number >= 1"))
    unknown = sorted(set(run) - set(RUN_KEYS))
    if unknown:
        out.append(FieldError(f"run.{unknown[0]}", KEY, f"[run] has unknown key '{unknown[0]}' "
                                                         f"({', '.join(RUN_KEYS)})"))
    return calls if good_calls else None


def behaviours(b: str, val, calls: int | None) -> tuple[list[str] | None, FieldError | None]:
    """One backend's declaration: a behaviour per call (or several joined by '|')."""
    field = f"expect.{b}"
    vals = [val] * (calls or 1) if isinstance(val, str) else val
    if not isinstance(vals, list) or not all(isinstance(v, str) for v in vals):
        return None, FieldError(field, TYPE, f"[expect] {b} must be a behaviour or a list of them, one per call")
    if calls is not None and len(vals) != calls:
        return None, FieldError(field, VALUE, f"[expect] {b} lists {len(vals)} behaviours but [run] calls = {calls}")
    for v in vals:
        if any(alt not in BEHAVIOURS for alt in v.split("|")):
            return None, FieldError(field, VALUE, f"[expect] {b} = '{v}' is not one of {', '.join(BEHAVIOURS)} "
                                                  f"(or several joined by '|')")
    return vals, None


def reason(exp: dict, b: str, vals: list[str]) -> FieldError | None:
    """A 'skip' needs <b>_skip_reason, several behaviours ('wrong|crash') need <b>_why."""
    if "skip" in vals and set(vals) != {"skip"}:
        return FieldError(f"expect.{b}", VALUE, f"[expect] {b}: 'skip' applies to every call or none")
    needs = []
    if "skip" in vals:
        needs.append((f"{b}_skip_reason", f"{b} = 'skip'"))
    if any("|" in v for v in vals):
        needs.append((f"{b}_why", f"{b} = '{'/'.join(vals)}' (several behaviours)"))
    for key, what in needs:
        text = exp.get(key)
        if not isinstance(text, str) or not text.strip():
            return FieldError(f"expect.{key}", MISSING, f"[expect] {what} needs {key} = \"why\"")
    return None


def expect_table(meta: dict, calls: int | None, out: list) -> dict | None:
    """Check ``[expect]``; return {backend: behaviours} when every backend is good."""
    exp = meta.get("expect")
    if not isinstance(exp, dict):
        kind = MISSING if exp is None else TYPE
        out.append(FieldError("expect", kind, "missing table [expect] with gpu = .. and interpreter = .."))
        return None
    known = set(BACKENDS) | {f"{b}_{k}" for b in BACKENDS for k in ("skip_reason", "why")}
    unknown = sorted(set(exp) - known)
    if unknown:
        out.append(FieldError(f"expect.{unknown[0]}", KEY,
                              f"[expect] has unknown key '{unknown[0]}' ({', '.join(sorted(known))})"))
    good = {}
    for b in BACKENDS:
        if b not in exp:
            out.append(FieldError(f"expect.{b}", MISSING, f"[expect] has no entry for backend '{b}'"))
            continue
        vals, err = behaviours(b, exp[b], calls)
        err = err or reason(exp, b, vals)
        if err:
            out.append(err)
        else:
            good[b] = vals
    return good if len(good) == len(BACKENDS) and calls is not None else None


def tags(meta: dict) -> list[FieldError]:
    """triggers, calibration and seen_in."""
    out = []
    triggers = meta.get("triggers", [])
    if not isinstance(triggers, list) or not all(isinstance(t, str) for t in triggers):
        out.append(FieldError("triggers", TYPE, "triggers must be a list of names"))
    else:
        bad = [t for t in triggers if t not in TRIGGERS]
        if bad:
            out.append(FieldError("triggers", VALUE, f"trigger '{bad[0]}' is not one of {', '.join(TRIGGERS)}"))
    if not isinstance(meta.get("calibration", False), bool):
        out.append(FieldError("calibration", TYPE, "calibration must be true or false"))
    seen_in = meta.get("seen_in", [])
    if not isinstance(seen_in, list) or not all(isinstance(u, str) for u in seen_in):
        out.append(FieldError("seen_in", TYPE, "seen_in must be a list of links"))
    return out


def sizes_table(meta: dict) -> list[FieldError]:
    out: list[FieldError] = []
    sizes = table(meta, "sizes", out)
    if sizes is None:
        return out
    for b in SIZE_TABLES:
        s = sizes.get(b, {})
        if not isinstance(s, dict) or not all(isinstance(k, str) and k.isidentifier() for k in s):
            out.append(FieldError(f"sizes.{b}", TYPE, f"[sizes.{b}] must be a table of make_inputs arguments"))
    unknown = sorted(set(sizes) - set(SIZE_TABLES))
    if unknown:
        out.append(FieldError(f"sizes.{unknown[0]}", KEY, f"[sizes] has unknown table '{unknown[0]}' "
                                                           f"({', '.join(SIZE_TABLES)})"))
    return out


def compare_table(meta: dict) -> list[FieldError]:
    out: list[FieldError] = []
    cmp_ = table(meta, "compare", out)
    if cmp_ is None:
        return out
    for name, default in (("rtol", 1e-5), ("atol", 1e-6)):
        v = cmp_.get(name, default)
        number = isinstance(v, (int, float)) and not isinstance(v, bool)
        if not number or not 0 <= v < float("inf"):
            out.append(FieldError(f"compare.{name}", VALUE if number else TYPE,
                                  f"[compare] {name} must be a number >= 0"))
    if not isinstance(cmp_.get("deterministic", False), bool):
        out.append(FieldError("compare.deterministic", TYPE, "[compare] deterministic must be true or false"))
    return out


def bench_table(meta: dict) -> list[FieldError]:
    """``[bench]``, checked by the contract's own ``parse_bench``."""
    bench = meta.get("bench")
    try:
        parse_bench(bench, "case.toml")
    except SpecError as e:
        return [FieldError("bench", VALUE if isinstance(bench, dict) else TYPE, str(e).removeprefix("case.toml: "))]
    return []


def toml_line(text: str, field: str) -> int | None:
    """The line of ``field`` (dotted) in case.toml's text: its key, else its table's header, else its parent's."""
    table_name, lines = "", text.splitlines()
    for i, line in enumerate(lines, 1):
        s = line.strip()
        header = re.match(r"^\[\s*([A-Za-z0-9_.\- ]+?)\s*\]", s)
        if header:
            table_name = header.group(1).replace(" ", "")
            if table_name == field:
                return i
            continue
        key = re.match(r"^([A-Za-z0-9_.\-]+)\s*=", s)
        if key and ".".join(filter(None, (table_name, key.group(1)))) == field:
            return i
    return toml_line(text, field.rsplit(".", 1)[0]) if "." in field else None
