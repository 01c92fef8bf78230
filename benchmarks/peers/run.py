"""Run the peer tools (harness/bugs/peers.py) on the benchmark's entries, one (entry, variant,
tool) at a time, and print one line each; with --out, append each row as a JSON line.

    python benchmarks/peers/run.py [--tools ttsem,triton-viz,gpucheck] [--timeout 240] [--out rows.jsonl] [SLUG...]

--at-trigger runs the test of ttsem and triton-viz at each entry's [verify] sizes instead of the
defaults (not the scoreboard's setting: how far the tool gets once the test meets the trigger).

The tools' environments come from benchmarks/peers/setup.sh; a tool that is missing gives its
"could not run" row. The entries are bugs/ (or $CASEBOOK_BUGS).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness.bugs import manifest, peers  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("slugs", nargs="*")
    ap.add_argument("--tools", default=",".join(peers.TOOLS))
    ap.add_argument("--variants", default="buggy,fixed")
    ap.add_argument("--backend", default="interpreter")
    ap.add_argument("--timeout", type=float, default=240.0)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--at-trigger", action="store_true", help="ttsem, triton-viz: the [verify] sizes")
    a = ap.parse_args()
    folders = [manifest.root() / s for s in a.slugs] if a.slugs else manifest.discover()
    for folder in folders:
        try:
            entry = manifest.read(folder)
        except manifest.ManifestError as e:
            print(f"{folder.name}: {e}", flush=True)
            continue
        for tool in a.tools.split(","):
            for variant in a.variants.split(","):
                t0 = time.monotonic()
                if a.at_trigger and tool in ("ttsem", "triton-viz"):
                    import importlib

                    mod = importlib.import_module("harness.bugs.peer_" + tool.replace("-", "_"))
                    sizes = {k: v for k, v in entry.verify_sizes(a.backend).items()
                             if isinstance(v, int) and not isinstance(v, bool)}
                    row = {"sizes": sizes, **mod.run(entry, variant, a.backend, timeout=a.timeout, sizes=sizes)}
                else:
                    row = peers.run(tool, entry, variant, a.backend, timeout=a.timeout)
                row = {"slug": entry.slug, "tool": tool, "variant": variant, "wall": round(time.monotonic() - t0, 1), **row}
                if "error" in row:
                    what = row["error"]
                else:
                    what = ("FLAGGED: " + str((row.get("first") or {}).get("message", ""))) if row["caught"] else "quiet"
                print(f"{entry.slug} {tool} {variant} {row['wall']}s: {what[:220]}", flush=True)
                if a.out:
                    with a.out.open("a") as f:
                        f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
