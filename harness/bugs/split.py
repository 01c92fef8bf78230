"""The benchmark's blind split: *dev* entries the probe may be tuned on, *test* entries it may not.

A number measured on the entries a tool was tuned on says little about the next kernel a
user brings. So ``bugs/`` is split once, by a committed seed, into two halves balanced by
project and by defect class, and the *test* half is frozen: ``bugs/split.toml`` records
which entries are in it and the sha256 of each one's ``bug.toml`` and ``probe.py`` (the
entry, its glue and its expected verdicts) as they stood when the split was made. Those
files are not edited afterwards, except for a documented error in the entry itself,
recorded in ``split.toml``'s ``[[erratum]]`` list with the new hashes and a reason, in a
commit of its own. ``tests/test_bug_split.py`` holds both promises.

Entries added after the split are neither: they are *first-run* entries, scored by the
probe as it stood before anything was changed for them (``split.toml``'s ``[[first_run]]``
list, in the order they were picked). The scoreboard shows dev, test and first-run side
by side; the README quotes test and first-run, never dev alone.

How the halves are drawn (``assign``): the entries in a seeded random order; each goes to
the half where it leaves the counts per project, per defect class and overall most even,
ties broken by the same random stream. The result depends only on the seed and on the
entries' names, projects and defect classes, so anyone can redraw it and compare.
"""

from __future__ import annotations

import hashlib
import random
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import UsageError

SPLITS = ("dev", "test", "first-run")
FROZEN_FILES = ("bug.toml", "probe.py")


@dataclass(frozen=True)
class Item:
    slug: str
    project: str
    defect: str


def assign(items: list[Item], seed: int) -> dict[str, str]:
    """Each item's half, "dev" or "test", drawn by ``seed`` and balanced (see the module doc)."""
    rng = random.Random(seed)
    order = sorted(items, key=lambda it: it.slug)
    rng.shuffle(order)
    counts: dict[tuple[str, str], dict[str, int]] = {}

    def count(key: tuple[str, str], half: str) -> int:
        return counts.get(key, {}).get(half, 0)

    out: dict[str, str] = {}
    for it in order:
        keys = [("project", it.project), ("defect", it.defect), ("all", "")]
        cost = {}
        for half in ("dev", "test"):
            other = "test" if half == "dev" else "dev"
            cost[half] = sum(abs(count(k, half) + 1 - count(k, other)) for k in keys)
        if cost["dev"] == cost["test"]:
            half = rng.choice(("dev", "test"))
        else:
            half = min(cost, key=cost.get)
        out[it.slug] = half
        for k in keys:
            counts.setdefault(k, {}).setdefault(half, 0)
            counts[k][half] += 1
    return out


def digest(folder: Path) -> dict[str, str]:
    """sha256 of an entry's frozen files, by file name."""
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
            for name in FROZEN_FILES if (folder / name).is_file()}


@dataclass
class Split:
    seed: int
    made: str
    dev: list[str]
    test: dict[str, dict[str, str]]          # slug -> file -> sha256 at the freeze
    first_run: list[dict] = field(default_factory=list)
    errata: list[dict] = field(default_factory=list)

    def of(self, slug: str) -> str:
        """Which split an entry is in: "dev", "test" or "first-run" (any entry added after the split)."""
        if slug in self.test:
            return "test"
        if slug in self.dev:
            return "dev"
        return "first-run"

    def allowed(self, slug: str) -> list[dict[str, str]]:
        """The hashes a frozen entry's files may have: the freeze's, then each erratum's."""
        out = [self.test[slug]]
        out += [e["sha256"] for e in self.errata if e.get("entry") == slug]
        return out


def path(base: Path | None = None) -> Path:
    from harness.bugs.manifest import root
    return (base or root()) / "split.toml"


def read(base: Path | None = None) -> Split | None:
    """``bugs/split.toml``, or None where there is none (a benchmark of one's own, not split)."""
    p = path(base)
    if not p.is_file():
        return None
    try:
        meta = tomllib.loads(p.read_text())
        return Split(seed=int(meta["seed"]), made=str(meta.get("made", "")),
                     dev=list(meta["dev"]),
                     test={t["entry"]: dict(t["sha256"]) for t in meta["test"]},
                     first_run=list(meta.get("first_run", [])),
                     errata=list(meta.get("erratum", [])))
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as e:
        raise UsageError(f"{p}: not a split file ({type(e).__name__}: {e})") from None


def render(seed: int, made: str, halves: dict[str, str], base: Path) -> str:
    """The text of a new ``split.toml`` (used once, to make the split; kept for anyone redrawing it)."""
    lines = [
        "# The benchmark's blind split (harness/bugs/split.py says how it was drawn and what it promises).",
        "# The test half is frozen: its entries' bug.toml and probe.py keep these hashes, except for a",
        "# documented error in the entry itself ([[erratum]] below, a commit of its own).",
        f"seed = {seed}",
        f'made = "{made}"',
        "dev = [",
        *[f'    "{s}",' for s in sorted(s for s, h in halves.items() if h == "dev")],
        "]",
        "",
    ]
    for slug in sorted(s for s, h in halves.items() if h == "test"):
        lines += ["[[test]]", f'entry = "{slug}"', "[test.sha256]"]
        lines += [f'"{name}" = "{sha}"' for name, sha in digest(base / slug).items()]
        lines.append("")
    return "\n".join(lines)
