"""``python -m harness bugs``: the benchmark of real Triton bugs (``bugs/``), the probe and its
peers scored on code nobody here wrote.

    python -m harness bugs --list                     the entries, one line each
    python -m harness bugs --fetch [NAME...]          both versions of each into the cache
    python -m harness bugs --verify [NAME...]         the buggy version fails at its trigger, the fixed passes
    python -m harness bugs [NAME...]                  the scoreboard: the probe and the peers on both versions
    python -m harness bugs --shard I/N --record       one shard's rows (run N at once); then --no-run: the board

``--record`` writes what ran: verification beside each entry (``recorded/verify-<backend>.json``),
the scoreboard as ``docs/bugs/scoreboard-<backend>.md`` and ``.json``. ``--ray ADDRESS`` runs each
(entry, version) as a task on a Ray cluster. Exit status: 0 every entry ran (and, with
``--verify``, every one verified), 1 an entry failed verification, 2 bad input or an entry that
could not run (a bad manifest, a version that will not be fetched, a glue that exits or dies, a
variant no detector gave a result about), the others still run. Each entry that could not run is
one ``error:`` line on stderr, and its verification record, if any, is left as it was.
"""

from __future__ import annotations

import sys

import json

from harness.errors import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, UsageError
from harness.options import positive_int, seconds


def _entries(names: list) -> tuple[dict, dict]:
    """{slug: Entry} for the names (all when none), and {slug: why} for folders that cannot be read."""
    from harness.bugs import manifest

    base = manifest.root()
    folders = manifest.discover(base)
    if names:
        known = {f.name for f in folders}
        if unknown := [n for n in names if n not in known]:
            raise UsageError(f"bugs: no entry {', '.join(unknown)} in {base} (see 'python -m harness bugs --list')")
        folders = [f for f in folders if f.name in names]
    good, bad = {}, {}
    for f in folders:
        try:
            good[f.name] = manifest.read(f)
        except manifest.ManifestError as e:
            bad[f.name] = str(e)
    return good, bad


def _list(good: dict, bad: dict) -> int:
    from tabulate import tabulate

    rows = [[e.slug, e.project, e.kind, e.defect, ",".join(e.shows_on) or "(no output change)",
             f"{e.buggy.get('version') or e.buggy.get('commit', '')[:10]} -> "
             f"{e.fixed.get('version') or e.fixed.get('commit', '')[:10]}"] for e in good.values()]
    rows += [[slug, "", "", "", "", f"could not read: {why}"] for slug, why in bad.items()]
    print(tabulate(rows, headers=["entry", "project", "kind", "defect", "shows on", "versions"], tablefmt="simple",
                   disable_numparse=True) if rows else "no entries")
    return EXIT_USAGE if bad else EXIT_OK


def _fetch(good: dict, bad: dict) -> int:
    from harness.bugs.board import fetch_entry

    failed = dict(bad)
    for slug, e in good.items():
        why = fetch_entry(e)
        if why:
            print(f"error: {slug}: could not fetch: {why}", file=sys.stderr, flush=True)
            failed[slug] = why
        else:
            print(f"{slug}: fetched", flush=True)
    for slug, why in bad.items():
        print(f"error: {slug}: could not read: {why}", file=sys.stderr)
    return EXIT_USAGE if failed else EXIT_OK


def _verify(args, good: dict, bad: dict) -> int:
    """Each entry as it ends: its line, and (--record) its record, so a run cut short keeps what
    it finished."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from harness.bugs import board, record
    from harness.run.worker import environment

    status = EXIT_USAGE if bad else EXIT_OK
    for slug, why in bad.items():
        print(f"error: {slug}: could not run: {why}", file=sys.stderr)
    for backend in args.backends:
        todo = [e for e in good.values() if board.visible(e, backend)]
        env = environment(backend) if todo else {}
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            running = {pool.submit(board.verify, e, backend, timeout=args.timeout): e for e in todo}
            for done in as_completed(running):
                e, r = running[done], done.result()
                not_run = r.get("could_not_run") or r["why"].startswith("could not")
                if not_run:  # nothing was verified either way: an error, and any record stays as it was
                    print(f"error: {backend} {e.slug}: {r['why']}"
                          f"{'; its record is unchanged' if args.record else ''}", file=sys.stderr, flush=True)
                    status = max(status, EXIT_USAGE)
                    continue
                print(f"{backend} {e.slug}: {'verified' if r['verified'] else 'NOT verified: ' + r['why']}",
                      flush=True)
                if not r["verified"]:
                    status = max(status, EXIT_MISMATCH)
                if args.record:
                    record.write_verify(e, {**r, "env": env})
    return status


def _keeper(backend: str, env: dict):
    """What --record does with each row as it ends: kept with the others, and a first-run entry's
    first score also kept apart, as it came (with the probe's commit)."""
    from harness.bugs import record, split

    commit, halves = record.probe_commit(), split.read()

    def keep(r):
        record.write_rows([r], backend, env)
        if halves is not None and halves.of(r["slug"]) == "first-run" and "probe" in r:
            record.keep_first_rows([{**r, "env": env}], backend, commit)
    return keep


def run(args) -> int:
    from harness.run.backends import resolve_backends

    good, bad = _entries(args.names)
    if args.shard:
        good, bad = shard(good, *args.shard), shard(bad, *args.shard)
    if args.list:
        return _list(good, bad)
    if args.fetch:
        return _fetch(good, bad)
    from harness.bugs.board import WITH_GPU

    if args.no_run:
        args.backends = [args.backend if args.backend in ("gpu", WITH_GPU) else "interpreter"]
    elif args.backend == WITH_GPU:  # verified on each backend; scored as one probe of both
        args.backends = resolve_backends("all") if args.verify else resolve_backends("gpu") and [WITH_GPU]
    else:
        args.backends = resolve_backends(args.backend)
    if args.verify:
        return _verify(args, good, bad)
    from harness.bugs import board, record
    from harness.core import table

    status = EXIT_OK
    peers = tuple(args.peers)
    for backend in args.backends:
        rows = [] if args.no_run else _score(args, backend, list(good) + list(bad), peers)
        shown_entries = good
        if args.shard and args.record:  # a shard keeps its rows; the board of all is made by --no-run
            status = max(status, _shard_done(args, backend, rows))
            continue
        if args.record or args.no_run:  # the scoreboard of every entry: its newest rows, each tool's newest result
            shown_entries, others = _entries([])
            rows = record.read_rows(backend, list(shown_entries) + list(others))
        shown = peer_columns(rows, peers)
        verified = record.verified(shown_entries, backend)
        lines = board.combine(shown_entries, rows, backend, verified)
        first = board.combine(shown_entries, record.read_first_rows(backend, shown_entries), backend, verified)
        envs = sorted({table.dumps(r["env"]) for r in rows if r.get("env")})
        envs = [json.loads(e) for e in envs]
        totals = board.totals(lines, shown, first_run=first)
        text = record.scoreboard_md(lines, totals, backend, envs, shown)
        print(text)
        if args.record or args.no_run:
            record.write_scoreboard(lines, totals, backend, envs, shown, text)
            record.write_summary()
        for x in lines:
            why = x.get("error") or (x.get("trigger") or {}).get("error")
            if why:  # on stderr too, so that a script sees why the status is 2
                print(f"error: {backend} {x['slug']}: {why}", file=sys.stderr)
                status = EXIT_USAGE
    return status


def peer_columns(rows: list, peers: tuple) -> tuple:
    """The peers' columns of a board: those asked for and those the rows hold (a row's dicts other
    than the probe's runs and the environment), plain and fuzz first."""
    from harness.bugs.board import RUNS

    tools = set(peers) | {k for r in rows for k, v in r.items()
                          if isinstance(v, dict) and k not in (*RUNS, "env", "envs")}
    return tuple([t for t in ("plain", "fuzz") if t in tools] + sorted(tools - {"plain", "fuzz"}))


def _score(args, backend: str, slugs: list, peers: tuple) -> list:
    """The probe's runs and the peers on both versions of each entry, each row recorded as it ends
    (--record), with the machine's environment."""
    from harness.bugs import board
    from harness.run.worker import environment

    tasks = [(slug, v, backend, peers, 2, args.timeout, not args.no_probe, tuple(args.runs))
             for slug in slugs for v in ("buggy", "fixed")]
    say = None if args.quiet else (lambda m: print(f"  {m}", file=sys.stderr, flush=True))
    env = environment(board.parts(backend)[0])
    rows = board.run_tasks(tasks, jobs=args.jobs, ray_address=args.ray,
                           gpus=1 if "gpu" in board.parts(backend) else 0, progress=say,
                           on_row=_keeper(backend, env) if args.record else None)
    return [{**r, "env": env} for r in rows]


def _shard_done(args, backend: str, rows: list) -> int:
    """A shard's end: its rows are recorded; it says so, and each row that could not run (exit 2)."""
    print(f"shard {args.shard[0]}/{args.shard[1]}: {len(rows)} rows recorded in docs/bugs/rows/{backend}/ "
          f"(merge: python -m harness bugs --no-run --backend {backend})", flush=True)
    status = EXIT_OK
    for r in rows:
        why = r.get("error") or next((r[k]["error"] for k in args.runs if "error" in r.get(k, {})), None)
        if why:
            print(f"error: {backend} {r['slug']} {r['variant']}: {why}", file=sys.stderr)
            status = EXIT_USAGE
    return status


def shard(entries: dict, i: int, n: int) -> dict:
    """Shard ``i`` of ``n`` (1-based) of the entries: every n-th of them in name order, from the
    i-th. The shards of one ``n`` hold every entry once; each writes its own entries' rows, and
    ``--no-run`` makes the board of all of them."""
    names = sorted(entries)
    return {k: entries[k] for k in names[i - 1::n]}


def _shard(text: str) -> tuple[int, int]:
    """--shard I/N: 1 <= I <= N."""
    import argparse

    i, sep, n = text.partition("/")
    if not sep or not i.strip().isdigit() or not n.strip().isdigit() or not 1 <= int(i) <= int(n):
        raise argparse.ArgumentTypeError(f"{text!r} is not I/N with 1 <= I <= N (e.g. 3/8)")
    return int(i), int(n)


def _runs(text: str) -> list:
    """--runs: default and/or trigger (the row keys "probe" and "trigger")."""
    import argparse

    names = [x.strip() for x in text.split(",") if x.strip()]
    if not names or [n for n in names if n not in ("default", "trigger")]:
        raise argparse.ArgumentTypeError(f"{text!r}: give default, trigger or default,trigger")
    return ["probe" if n == "default" else n for n in dict.fromkeys(names)]


def _peers(text: str) -> list:
    """--peers: known peer names, comma-separated (an unknown one would be a column of "could not run")."""
    import argparse

    from harness.bugs.board import PEERS
    from harness.bugs.peers import TOOLS

    names = [x.strip() for x in text.split(",") if x.strip()]
    known = list(PEERS) + list(TOOLS)
    if unknown := [n for n in names if n not in known]:
        raise argparse.ArgumentTypeError(f"no peer {', '.join(unknown)} (there are {', '.join(known)})")
    return names


def _address(text: str) -> str:
    """--ray: an address (an empty one would quietly run here, not on a cluster)."""
    import argparse

    if not text.strip():
        raise argparse.ArgumentTypeError("is empty: give the cluster's address (HOST:PORT, ray://HOST:PORT or auto)")
    return text.strip()


def register(sub) -> None:
    p = sub.add_parser("bugs", help="the benchmark of real Triton bugs: verify each entry, score the probe "
                                    "and its peers on the buggy and fixed versions")
    p.add_argument("names", nargs="*", metavar="NAME", help="entries (folders of bugs/); all when none")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list the entries")
    what.add_argument("--fetch", action="store_true", help="download both versions of each entry into the cache")
    what.add_argument("--verify", action="store_true",
                      help="check that the buggy version fails at its trigger and the fixed one passes")
    p.add_argument("--backend", choices=["gpu", "interpreter", "all", "gpu+interpreter"], default="all",
                   help="where to run (default: the GPU if there is one, and the interpreter, each a scoreboard "
                        "of its own); gpu+interpreter: one probe of both at once, probe's default on a GPU "
                        "machine, its own scoreboard")
    p.add_argument("--peers", type=_peers, default=["plain", "fuzz"],
                   metavar="NAMES", help="peer columns, comma-separated (default plain,fuzz; also ttsem, "
                                         "triton-viz, gpucheck where installed)")
    p.add_argument("--jobs", type=positive_int, default=None, help="entries at once (default: half the cores)")
    p.add_argument("--timeout", type=seconds, default=120.0, help="seconds a detector may run (default 120)")
    p.add_argument("--ray", metavar="ADDRESS", default=None, type=_address,
                   help="run each entry as a task on this Ray cluster (pip install -e .[ray])")
    p.add_argument("--record", action="store_true",
                   help="write the verification records, or this run's rows and the scoreboard of every entry")
    p.add_argument("--no-run", action="store_true", help="remake the scoreboard from the recorded rows only")
    p.add_argument("--no-probe", action="store_true",
                   help="run only the peers (--peers), adding their columns to the recorded rows")
    p.add_argument("--shard", type=_shard, default=None, metavar="I/N",
                   help="only the I-th of N shards of the entries (every N-th by name); with --record it writes "
                        "their rows only: --no-run then makes the board of every shard's rows")
    p.add_argument("--runs", type=_runs, default=["probe", "trigger"], metavar="RUNS",
                   help="the probe's runs, comma-separated: default (what a user's probe file holds: the scored "
                        "column) and trigger (given the trigger); both by default (bugs/README.md). A run left "
                        "out keeps its recorded rows")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from harness.bugs.board import default_jobs

    if args.jobs is None:
        args.jobs = default_jobs()
    if args.no_probe and not args.record:
        raise UsageError("bugs --no-probe adds peer columns to the recorded rows: give --record too")
    return run(args)
