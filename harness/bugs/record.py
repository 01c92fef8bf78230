"""What the benchmark writes: each entry's verification (``bugs/<slug>/recorded/verify-<backend>.json``)
and the scoreboard (``docs/bugs/scoreboard-<backend>.md`` and ``.json``), atomically, with the
device and versions inside."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from harness.core import fileio, table

DOCS = Path(__file__).resolve().parents[2] / "docs" / "bugs"


def write_verify(entry, result: dict) -> Path:
    out = entry.path / "recorded" / f"verify-{result['backend']}.json"
    out.parent.mkdir(exist_ok=True)
    return fileio.write_text(out, table.dumps(result) + "\n")


def read_verify(entry, backend: str) -> dict | None:
    try:
        return json.loads((entry.path / "recorded" / f"verify-{backend}.json").read_text())
    except (OSError, ValueError):
        return None


def verified(entries: dict, backend: str) -> dict:
    """{slug: True/False/None (no record)} for the backend, from the committed records
    (``gpu+interpreter``: verified on either)."""
    from harness.bugs.board import parts

    out = {}
    for slug, e in entries.items():
        said = [r for r in (read_verify(e, b) for b in parts(backend)) if r is not None]
        out[slug] = None if not said else any(bool(r.get("verified")) for r in said)
    return out


def _cell(p: dict | None) -> str:
    if not p:
        return ""
    if "error" in p:
        return "n/a"
    if not p["caught"]:
        return "quiet"
    first = p.get("first") or {}
    code = first.get("code") or ""
    return f"**flagged** {code}".strip()


def _pct(a: int, b: int) -> str:
    return f"{a} of {b}" + (f" ({100 * a / b:.0f}%)" if b else "")


def _totals_table(totals: dict, peers: tuple) -> list:
    """The summary table: the probe and each peer, caught, false alarms, diagnosis, seconds (no peer
    columns for the probe alone)."""
    t, tp = totals, totals["peers"]

    def row(label: str, probe: str, each=None) -> str:
        return "| " + " | ".join([label, probe] + [each(p) if each else "" for p in peers]) + " |"

    return ["| | probe |" + "".join(f" {p} |" for p in peers), "|---|---|" + "---|" * len(peers),
            row("bugs caught, of those visible here", _pct(t['caught_visible'], t['visible']),
                lambda p: _pct(tp[p]['caught_visible'], tp[p]['visible'])),
            row("bugs caught, of all that ran", _pct(t['caught_all'], t['ran'])),
            row("false alarms on fixed versions", f"{t['false_alarms']} of {t['ran']}",
                lambda p: f"{tp[p]['false_alarms']} of {tp[p]['ran']}"),
            row("true findings on fixed versions (bug.toml [[fixed_known]])",
                f"{t.get('fixed_true_findings', 0)} of {t['ran']}"),
            row("right defect class named first, of bugs caught", _pct(t['diagnosis_first'], t['caught_all'])),
            row("... in the first three", _pct(t['diagnosis_top3'], t['caught_all'])),
            row("seconds per probe: median, max", f"{t['median_s']}, {t['max_s']}"), ""]


SPLIT_HEADS = {"dev": "dev (the probe tuned on these)", "test": "test (frozen, never tuned on)",
               "first-run": "first-run (scored before any change for them)",
               "first-run-now": "first-run, newest rows (the probe since changed: not blind)"}


def reasons() -> dict:
    """docs/bugs/reasons.toml: why a test-half entry is missed, misnamed or falsely flagged, by slug."""
    import tomllib

    try:
        return tomllib.loads((DOCS / "reasons.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def shortfalls(lines: list, half: str = "test") -> list:
    """(slug, kind) for each entry of ``half`` the probe missed (visible, not caught), named the wrong
    defect class first for (caught), or flagged on its fixed version: what the board must explain."""
    from harness.bugs.board import caught, false_alarm

    out = []
    for x in lines:
        if x.get("split") != half or "error" in x:
            continue
        if x["visible"] and not caught(x):
            out.append((x["slug"], "miss"))
        elif caught(x) and not x["buggy"]["probe"].get("diagnosis_first_right"):
            out.append((x["slug"], "diagnosis"))
        if false_alarm(x):
            out.append((x["slug"], "false_alarm"))
    return out


def _shortfalls_section(lines: list) -> list:
    found = shortfalls(lines)
    if not found:
        return []
    why = reasons()
    words = {"miss": "missed", "diagnosis": "wrong class first", "false_alarm": "false alarm on the fixed version"}
    return ["## The test half's shortfalls, each with its reason (docs/bugs/reasons.toml)", "",
            *[f"- {slug}: {words[kind]}: {why.get(slug, {}).get(kind) or 'no reason written yet'}"
              for slug, kind in found], ""]


def _splits_table(totals: dict) -> list:
    """Dev, test and first-run side by side (bugs/split.toml): caught, false alarms, right class first."""
    sp = totals.get("splits")
    if not sp:
        return []
    order = [k for k in SPLIT_HEADS if k in sp]

    def row(label, each):
        return "| " + " | ".join([label] + [each(sp[k]) for k in order]) + " |"

    return ["## Dev, test and first-run", "",
            "The blind split (bugs/split.toml, harness/bugs/split.py): *dev* entries the probe may be tuned on, "
            "*test* entries frozen before any tuning, *first-run* entries added after the split and counted "
            "here as the probe first scored them (docs/bugs/first-run/, with the probe's commit); beside them the same "
            "entries' newest rows, made by the probe as it has since changed (tuned on some of them: not a blind "
            "number).", "",
            "| | " + " | ".join(SPLIT_HEADS[k] for k in order) + " |", "|---|" + "---|" * len(order),
            row("entries that ran", lambda t: f"{t['ran']} of {t['entries']}"),
            row("bugs caught, of those visible here", lambda t: _pct(t["caught_visible"], t["visible"])),
            row("false alarms on fixed versions", lambda t: f"{t['false_alarms']} of {t['ran']}"),
            row("right defect class named first, of bugs caught",
                lambda t: _pct(t["diagnosis_first"], t["caught_all"])),
            *([row("of these, rows made before the default run pinned the author's switches (re-run them)",
                   lambda t: str(t.get("legacy", 0)))] if any(sp[k].get("legacy") for k in order) else []),
            ""] + _trigger_table(totals, [k for k in order if k in (totals.get("trigger") or {})])


def _trigger_table(totals: dict, order: list) -> list:
    """The given-the-trigger run's columns (bugs/README.md): the same numbers, with the trigger's
    sizes, GPU_SIZES, the author's switches and --large given."""
    tr = totals.get("trigger")
    if not tr or not any(tr[k]["ran"] for k in order if k in tr):
        return []

    def row(label, each):
        return "| " + " | ".join([label] + [each(tr[k]) for k in order]) + " |"

    return ["## Given the trigger", "",
            "The same entries, the probe given what the entry's author knew (bugs/README.md): the trigger's sizes "
            "as the defaults, the GPU's trigger as GPU_SIZES, the author's input switches left to the probe, "
            "`--large` wherever there is a GPU. Not what a user's test holds: a measure of what the probe "
            "does once it is pointed at the bug (first-run entries: their newest rows).", "",
            "| | " + " | ".join(f"{k}, given the trigger" for k in order) + " |", "|---|" + "---|" * len(order),
            row("entries that ran", lambda t: f"{t['ran']} of {t['entries']}"),
            row("bugs caught, of those visible here", lambda t: _pct(t["caught_visible"], t["visible"])),
            row("false alarms on fixed versions", lambda t: f"{t['false_alarms']} of {t['ran']}"),
            row("right defect class named first, of bugs caught",
                lambda t: _pct(t["diagnosis_first"], t["caught_all"])),
            ""]


def _by_class(lines: list) -> list:
    from tabulate import tabulate

    from harness.bugs.board import caught, false_alarm

    classes: dict = {}
    for x in lines:
        if "error" not in x and x["visible"]:
            c = classes.setdefault(x["defect"], [0, 0, 0, 0])
            c[0] += 1
            c[1] += caught(x)
            c[2] += x["buggy"]["probe"]["diagnosis_first_right"]
            c[3] += false_alarm(x)
    return ["## By defect class (bugs visible here)", "",
            tabulate([[d, *c] for d, c in sorted(classes.items())],
                     headers=["defect", "entries", "probe caught", "named first", "false alarm on fixed"],
                     tablefmt="github"), ""]


def _diagnosis_cell(p: dict) -> str:
    """The first three diagnoses; those resting only on the fixed version's recorded defects are
    marked, since the first one after them is the one scored."""
    scored = p.get("diagnosis_scored")
    if scored is None:
        return ", ".join(p["diagnosis"][:3])
    aside = [d for d in p["diagnosis"] if d not in scored]
    return ", ".join(([f"({d}: the fixed version's defect too)" for d in aside] + scored)[:4])


def _entry_row(x: dict, peers: tuple) -> list:
    split = [x["split"]] if "split" in x else []
    if "error" in x:
        return [x["slug"], *split, "", "", "", x["error"], "", "", "", ""] + ["" for _ in peers]
    b, f = x["buggy"], x["fixed"]
    first = b["probe"].get("first") or {}
    where = f" at {first['line']}" if first.get("line") else ""
    return [x["slug"], *split, x["defect"], "yes" if x["visible"] else "no",
            {True: "yes", False: "NO", None: "not recorded"}[x["verified"]],
            ("only the fixed version's recorded finding too (bug.toml [[fixed_known]]): not this bug"
             if x.get("buggy_known_only") else
             f"{_cell(b['probe'])} ({first.get('detector')}): {first.get('message', '')[:120]}{where}"
             if b["probe"]["caught"] else "quiet"),
            _diagnosis_cell(b["probe"]),
            (f"**true finding** {', '.join(f['probe']['codes'])} (bug.toml [[fixed_known]]: {x['fixed_known'][:100]})"
             if x.get("fixed_known") else
             _cell(f["probe"]) + (f" ({', '.join(f['probe']['codes'])})" if f["probe"]["caught"] else "")),
            f"{b['probe']['seconds']} / {f['probe']['seconds']}",
            f"{_cell(b.get('trigger'))} / {_cell(f.get('trigger'))}" if b.get("trigger") else "not run"] + [
        f"{_cell(b.get(p))} / {_cell(f.get(p))}" for p in peers]


def _span(dates: list) -> str:
    """The dates of a machine's runs: one, or the first and the last ("YYYY-MM-DD HH:MM UTC")."""
    d = sorted(set(dates))
    return d[0] if len(d) == 1 else f"{d[0]} to {d[-1]}"


def scoreboard_md(lines: list, totals: dict, backend: str, envs: list, peers: tuple) -> str:
    from tabulate import tabulate

    dates: dict = {}
    for e in envs:  # one line per machine and versions, with the dates of its runs
        dates.setdefault(table.versions(e), []).append(str(e.get("date")))
    ran_on = "; ".join(f"{v} ({_span(d)})" for v, d in dates.items())
    head = [f"# Real-bug scoreboard: {backend}", "",
            *([f"One probe of both backends at once, as `python -m harness probe` runs by default on a machine "
               f"with a GPU: what it finds on either counts, and its diagnosis weighs the evidence of both. The "
               f"seconds are the whole probe's (the backends run side by side).", ""] if "+" in backend else []),
            f"Ran on {ran_on}. Made by `python -m harness bugs --backend {backend} --record`.", "",
            "Each entry is a real bug in a public project: the version with the bug (buggy) and the version "
            "that fixed it (fixed), run by the probe at its default settings (no trigger given) and by the "
            "peers. \"visible\": the bug can show on this backend.", ""] + _totals_table(totals, peers)
    versions = {p: sorted({str(x[v][p]["version"]) for x in lines if "error" not in x for v in ("buggy", "fixed")
                           if isinstance(x[v].get(p), dict) and x[v][p].get("version")}) for p in peers}
    if any(versions.values()):
        head += ["Peer tools: " + "; ".join(f"{p} {', '.join(v)}" for p, v in versions.items() if v)
                 + " (`plain` and `fuzz` are ours: harness/bugs/plain.py).", ""]
    if totals["could_not_run"]:
        head += [f"{totals['could_not_run']} entries could not run (below).", ""]
    body = tabulate([_entry_row(x, peers) for x in lines],
                    headers=["entry", *(["split"] if any("split" in x for x in lines) else []), "defect",
                             "visible", "verified", "probe on buggy: first finding",
                             "diagnosis (first three)", "probe on fixed", "seconds buggy / fixed",
                             "given the trigger: buggy / fixed"]
                    + [f"{p}: buggy / fixed" for p in peers], tablefmt="github", disable_numparse=True)
    return "\n".join(head + _splits_table(totals) + _shortfalls_section(lines) + _by_class(lines)
                     + ["## Every entry", "", body, ""])


def _rows_dir(backend: str) -> Path:
    return DOCS / "rows" / backend


_ROWS_LOCK = threading.Lock()


def write_rows(rows: list, backend: str, env: dict) -> None:
    """Each (entry, version) row, with the run's device and versions, in place of that entry's
    row of an earlier run (the other version's row is kept); the scoreboard is made from all
    rows there are. Called as each task ends, so a run cut short keeps what it finished."""
    import fcntl

    d = _rows_dir(backend)
    d.mkdir(parents=True, exist_ok=True)
    with _ROWS_LOCK, open(d / ".lock", "w") as lock:  # threads here, and other runs (peers beside the probe)
        fcntl.flock(lock, fcntl.LOCK_EX)
        files = {}
        for r in rows:
            path = d / f"{r['slug']}.json"
            if path not in files:
                try:
                    files[path] = json.loads(path.read_text())
                except (OSError, ValueError):
                    files[path] = {}
            old = files[path].get(r["variant"], {}) if "error" not in r else {}
            tools = {k: env for k, v in r.items() if isinstance(v, dict) and k not in ("env", "envs")}
            # a run of some tools (peer columns added later) keeps the other tools' results
            files[path][r["variant"]] = {**{k: v for k, v in old.items() if k != "error"}, **r,
                                         "env": env if "probe" in r else old.get("env", env),
                                         "envs": {**old.get("envs", {}), **tools}}
        fileio.write_together({path: table.dumps(v) + "\n" for path, v in files.items()})


def _first_dir(backend: str) -> Path:
    return DOCS / "first-run" / backend


def probe_commit() -> str:
    """The commit the probe's code stood at (``+dirty`` where harness/ has uncommitted changes):
    a first-run row says which probe scored it."""
    import subprocess

    root = DOCS.parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "harness"], cwd=root, capture_output=True,
                               text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head or "unknown") + ("+dirty" if dirty else "")


def keep_first_rows(rows: list, backend: str, commit: str) -> list:
    """A first-run entry's rows as the probe first scored them, kept apart and never replaced
    (``docs/bugs/first-run/<backend>/<slug>.json``, with the probe's commit): later runs, after
    the probe changed, update the entry's rows but not these. Only an (entry, version) not yet
    kept is written. Returns the files written."""
    d = _first_dir(backend)
    out = {}
    for r in rows:
        if "error" in r and str(r["error"]).startswith("could not run"):
            continue  # nothing of the probe ran: not a score
        path = d / f"{r['slug']}.json"
        try:
            have = out.get(path) or json.loads(path.read_text())
        except (OSError, ValueError):
            have = {}
        if r["variant"] in have:
            continue
        out[path] = {**have, r["variant"]: {**r, "probe_commit": commit}}
    if out:
        d.mkdir(parents=True, exist_ok=True)
        fileio.write_together({p: table.dumps(v) + "\n" for p, v in out.items()})
    return sorted(out)


def read_first_rows(backend: str, slugs) -> list:
    """The kept first-run rows of these entries (both versions where kept)."""
    return _read_variants(_first_dir(backend), slugs)


def read_rows(backend: str, slugs) -> list:
    """The recorded rows of these entries (both versions each), the newest run of each entry."""
    return _read_variants(_rows_dir(backend), slugs)


def _read_variants(d: Path, slugs) -> list:
    out = []
    for slug in sorted(slugs):
        try:
            variants = json.loads((d / f"{slug}.json").read_text())
        except (OSError, ValueError):
            continue
        out += [variants[v] for v in ("buggy", "fixed") if isinstance(variants, dict) and v in variants]
    return out


def write_scoreboard(lines: list, totals: dict, backend: str, envs: list, peers: tuple, text: str) -> list:
    DOCS.mkdir(parents=True, exist_ok=True)
    stem = f"scoreboard-{backend}"
    payload = {"backend": backend, "envs": envs, "peers": list(peers), "totals": totals, "entries": lines}
    return fileio.write_together({DOCS / f"{stem}.md": text, DOCS / f"{stem}.json": table.dumps(payload) + "\n"})


README = DOCS.parents[1] / "README.md"
ORDER = ("gpu+interpreter", "gpu", "interpreter")  # the scoreboards, in the README's order


def _budgets(board: dict) -> str:
    """What --budget the board's probes ran under, as its rows record it (rows made before they
    recorded it: no budget, the GPU's default then)."""
    seen = {float(v.get("probe", {}).get("budget", 0.0) or 0.0) for e in board.get("entries", [])
            for v in (e.get("buggy"), e.get("fixed")) if isinstance(v, dict)}
    if not seen:
        return "no budget"
    return " or ".join("no budget" if x == 0 else f"a {x:g} s budget" for x in sorted(seen))


def _said(t: dict) -> str:
    """One split's or board's numbers, in words."""
    return (f"the probe caught {t['caught_visible']} of the {t['visible']} bugs that can show there, named the "
            f"right defect class first for {t['diagnosis_first']} of the {t['caught_all']} bugs it flagged, and "
            f"raised false alarms on {t['false_alarms']} of the {t['ran']} fixed versions")


def summary(boards: dict, prefix: str = "") -> str:
    """The README's paragraph on the scoreboards, from their JSON ({backend: payload}). Where bugs/ is
    split (the totals carry ``splits``) it quotes the *test* half and the *first-run* entries, never
    the dev half alone (that one the probe was tuned on; it is on the scoreboards). ``prefix``: the
    path from the README that quotes it to the repository's root (the links)."""
    parts = []
    for backend, b in sorted(boards.items(), key=lambda kv: ORDER.index(kv[0])):
        t = b["totals"]
        device = ", ".join(sorted({e.get("device", "") for e in b.get("envs", [])}))
        last = max((str(e.get("date", "")) for e in b.get("envs", [])), default="")
        where = f"with the GPU's detectors alone ({device}; newest rows {last})" if backend == "gpu" else \
            f"with a GPU ({device}; the GPU and the interpreter at once, as the probe runs there, " \
            f"{_budgets(b)}; newest rows {last})" if "+" in backend else \
            f"under the interpreter on a CPU (newest rows {last})"
        plain = t["peers"].get("plain")
        beside = (f"; a plain test at the default sizes caught {plain['caught_visible']} of {plain['visible']}, "
                  f"with {plain['false_alarms']} false alarms" if plain else "")
        if sp := t.get("splits"):
            test, first = sp["test"], sp["first-run"]
            said_first = (f"on the {first['ran']} first-run entries (added after the split, scored once by the "
                          f"probe as it stood before anything was changed for them) {_said(first)}"
                          if first["ran"] else "no first-run entry has been scored there yet")
            tr = t.get("trigger") or {}
            said_trigger = "; ".join(f"{k}: caught {x['caught_visible']} of {x['visible']}, right class first for "
                                     f"{x['diagnosis_first']} of {x['caught_all']}, false alarms on "
                                     f"{x['false_alarms']} of {x['ran']}" for k, x in
                                     ((k, tr.get(k)) for k in ("test", "first-run")) if x and x["ran"])
            stale = sum(sp[k].get("legacy", 0) for k in ("dev", "test"))
            parts.append(f"{where}, on the {test['ran']} frozen *test* entries (never tuned on) {_said(test)}; "
                         f"{said_first}" + (f" (given the trigger, the entry author's sizes and input switches: "
                                            f"{said_trigger})" if said_trigger else "")
                         + (f" ({stale} of the dev and test rows were made before the default run held only "
                            f"what a user's probe file would: a re-run is due)" if stale else ""))
        else:
            parts.append(f"{where}, {_said(t)}{beside}")
    links = ", ".join(f"[{b}]({prefix}docs/bugs/scoreboard-{b}.md)" for b in sorted(boards))
    if not parts:
        return ""
    weak = []
    totals = [b["totals"] for b in boards.values()]
    if any(t["caught_all"] and 2 * t["diagnosis_first"] < t["caught_all"] for t in totals):
        weak.append("it names the wrong trap for most of the bugs it flags")
    if flagged := [f"{b}: {x['totals']['false_alarms']} of {x['totals']['ran']}" for b, x in sorted(boards.items())
                   if x["totals"]["false_alarms"]]:
        weak.append(f"it flags correct (fixed) kernels ({'; '.join(flagged)})")
    verdict = f" Where the probe falls short: {' and '.join(weak)}." if weak else ""
    split = any(b["totals"].get("splits") for b in boards.values())
    return ("What the benchmark shows today: " + ". ".join(p[0].upper() + p[1:] for p in parts)
            + f" (scoreboards: {links}; every entry's row, "
            + ("the dev half's numbers, " if split else "") + "the peers' columns and the times are there)."
            + verdict + "\n")


BUGS_README = DOCS.parents[1] / "bugs" / "README.md"


def write_summary() -> bool:
    from harness.core import recorded

    boards = {}
    for backend in ORDER:
        try:
            boards[backend] = json.loads((DOCS / f"scoreboard-{backend}.json").read_text())
        except (OSError, ValueError):
            continue
    if not boards:
        return False
    done = recorded.splice(README, "bugs", summary(boards))
    if BUGS_README.is_file():
        done = recorded.splice(BUGS_README, "bugs", summary(boards, prefix="../")) and done
    return done
