"""The scalars detector (P208, ``harness/probe/detectors/scalars.py``) alone, on this CPU (the interpreter): on
every *dev* entry of bugs/ (bugs/split.toml; never the frozen test half nor the first-run entries), buggy and
fixed, as the board's default run gives it (the author's switches pinned) and given the trigger; and on every
case's fixed and broken kernel. One line each: what the detector did (skipped and why, or done) and its
findings. A fixed version or a fixed case kernel with an error is a false alarm.

    CASEBOOK_BUG_CACHE=.bugcache python examples/scalars_runs.py            # everything
    python examples/scalars_runs.py --cases                                 # the cases only
    python examples/scalars_runs.py --bugs                                  # the dev entries only
"""

from __future__ import annotations

import os
import sys
import time
import tomllib
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _line(report, path: str, launcher: str, sizes: dict, inputs: str | None = None) -> str:
    ran = next((st for _, d, _, st in report.ran if d == "scalars"), "not run")
    said = "; ".join(f"{f.code} {f.severity}: {' '.join(f.message.split())[:240]}" for f in report.findings)
    if ran == "done":
        ran = f"done: {_varied(path, launcher, sizes, inputs)}"
    return f"{ran[:200]} | {said or '-'}"


def _varied(path: str, launcher: str, sizes: dict, inputs: str | None) -> str:
    """The arguments the detector varies and the values it takes for each (before its budget and its program
    cap), read in this process as its worker reads them."""
    from harness.probe import execute as X
    from harness.probe.detectors import scalars
    from harness.probe.target import load

    t = load(path, inputs, launcher, "interpreter")
    t.sizes = {**t.sizes, **sizes}

    class Ctx:
        target, seed, backend = t, 0, "interpreter"

    made = X.make(t, t.sizes, 0, "interpreter")
    bounds = scalars.value_bounds(made)
    args = scalars.arguments(t, made, scalars.fixed_by_sizes(Ctx, made))
    return ", ".join(f"{a.name} ({a.kind}: {scalars.values_for(a, bounds)})" for a in args)


def bugs() -> None:
    from harness.bugs import board, manifest
    from harness.probe.runner import probe

    for slug in tomllib.loads((ROOT / "bugs" / "split.toml").read_text(encoding="utf-8"))["dev"]:
        entry = manifest.read(manifest.root() / slug)
        if why := board.fetch_entry(entry):
            print(f"{slug} | - | - | could not run: {why}", flush=True)
            continue
        for variant in manifest.VARIANTS:
            prof = board.profile_inputs(entry, variant)
            for run in board.RUNS:
                if "error" in prof:
                    print(f"{slug} | {variant} | {run} | {prof['error']}", flush=True)
                    break
                sizes, options, _ = board.given(entry, "interpreter", prof, run)
                r = probe(str(entry.glue), launcher=entry.launcher(variant), backends=["interpreter"],
                          detectors=["scalars"], sizes=sizes, jobs=1, options=options)
                print(f"{slug} | {variant} | {run} | {_line(r, str(entry.glue), entry.launcher(variant), sizes)}",
                      flush=True)


def cases() -> None:
    from harness.probe.runner import probe

    for folder in sorted(p for p in (ROOT / "cases").iterdir() if (p / "case.toml").is_file()):
        spec = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8"))
        for variant in ("fixed", "broken"):
            r = probe(str(folder / f"{variant}.py"), inputs=str(folder / "case.py"), launcher=spec["launcher"],
                      backends=["interpreter"], detectors=["scalars"], jobs=1)
            line = _line(r, str(folder / f"{variant}.py"), spec["launcher"], {}, str(folder / "case.py"))
            print(f"{folder.name} | {variant} | case | {line}", flush=True)


def main() -> None:
    import platform

    import torch
    import triton

    cmd = " ".join(["python examples/scalars_runs.py", *sys.argv[1:]])
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"Ran on CPU ({platform.machine()}), TRITON_INTERPRET=1; torch {torch.__version__}, triton "
          f"{triton.__version__}, Python {platform.python_version()} ({when}). Made by `{cmd}`.")
    print("\nentry or case | variant | run | the detector | its findings")
    if "--cases" not in sys.argv:
        bugs()
    if "--bugs" not in sys.argv:
        cases()


if __name__ == "__main__":
    main()
