"""``python benchmarks/real_suites.py``: public projects' own Triton test suites, unchanged, under
``python -m harness sanitize pytest`` and ``pytest --casebook-sanitize``, beside the baseline
``python -m harness sanitize --no-checks pytest`` (the fake CUDA and the interpreter's fixes, no
check), on a CPU (issue 41 item 5).

Nothing of the projects is in this repository: each is downloaded from PyPI at run time as its
source distribution (``pip download --no-deps --no-binary :all:``, which carries its tests), unpacked
into the scratch folder (``--scratch``, default /tmp/casebook-real-suites) with its test-only
dependencies (``pip install --no-deps --target``), and run from there with the scratch folder and
this checkout on PYTHONPATH. torch, triton and pytest are the machine's own.

The selections (``SELECTIONS``) were fixed before the first run, by the tests' parameters alone,
to keep the three runs of both projects to some tens of minutes on a 2-core CPU:

- cut-cross-entropy 25.1.1 (Apple's linear cross-entropy, Triton forward and backward): every test
  of ``impl="cce"`` (the ``torch_compile`` ones compile PyTorch's own reference and launch no kernel
  of the package); ``test_cce_lse`` and ``test_cce_indexed_dot`` at the aligned shape and the shape
  unaligned in every dimension (shape0, shape2), every dtype and softcap; ``test_loss_forward`` at
  shape2 with every dtype, softcap, shift and invalids; ``test_loss_backward`` at shape2 with
  ``reduction="mean"``, every dtype, softcap, shift and invalids.
- stanford-stk 0.7.1 (block-sparse matmuls in Triton): every test of ``matrix_ops_test`` and
  ``random_ops_test``; ``linear_ops_test`` (Sdd, Dsd, Dds) and ``eltwise_ops_test`` at the two
  smallest problems of their size lists (128 x 128 x 128 dense, 256 x 256 x 256 half sparse: the
  parameter indices 0 and 1), every transpose and dtype.
- conch-triton-kernels 1.3 (Stack AV's Triton ports of vLLM's and others' kernels; added third, after the
  two above had run, to the four tests of normalisation and activation): ``rms_norm_test`` (both tests),
  ``gemma_rms_norm_test``, ``silu_and_mul_test`` and ``gelu_tanh_and_mul_test``, each at the smallest
  value of every size parameter (80 tokens of 855, 2 positions of 1024, 20 tokens of 855 in batches of
  4, 128 tokens of 2048), every dtype, epsilon and flag.

A test failed under a checked run and passed in the baseline is a failure the tool caused; one
that fails in the baseline too is not. Each finding of the checked runs is looked up in ``TRIAGE``
(bug, hazard or false alarm, with the reason); one with no entry is printed as untriaged and the
script exits 1. Writes docs/measurements/real-suites.md (``--out``) and its JSON beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PLUGIN = "harness.sanitize.pytest_plugin"


def _cce() -> list[str]:
    t = "tests/"
    sel = [f"{t}test_cce_lse.py", f"{t}test_cce_indexed_dot.py", f"{t}test_cce_loss_forward.py",
           f"{t}test_cce_loss_backward.py"]
    keep = ("(test_lse or test_indexed_dot) and (shape0 or shape2)"
            " or test_loss_forward and shape2 and cce"
            " or test_loss_backward and shape2 and mean and cce")
    return sel + ["-k", f"not torch_compile and ({keep})"]


def _stk() -> list[str]:
    ops = "stk/ops/"
    ids = [f"{ops}linear_ops_test.py::LinearOpsTest::testLinearOps_{op}{i}"
           for op in ("Sdd", "Dsd", "Dds") for i in range(16)]  # sizes 0 and 1: 8 (transpose x dtype) each
    ids += [f"{ops}eltwise_ops_test.py::EltwiseOpsTest::testEltwiseMul{i}" for i in range(4)]  # 2 dtypes each
    return [f"{ops}matrix_ops_test.py", "stk/random/random_ops_test.py", *ids]


def _conch() -> list[str]:
    t = "tests/"
    files = ["rms_norm_test.py", "gemma_rms_norm_test.py", "silu_and_mul_test.py", "gelu_tanh_and_mul_test.py"]
    keep = "rms_norm_test and 80-855 or gemma and 1024-2] or silu and 20-4-855 or gelu and 2048-128]"
    return [t + f for f in files] + ["-k", keep]


PROJECTS = {
    "cut-cross-entropy": {"spec": "cut-cross-entropy==25.1.1", "folder": "cut_cross_entropy-25.1.1",
                          "deps": [], "selection": _cce},
    "stanford-stk": {"spec": "stanford-stk==0.7.1", "folder": "stanford_stk-0.7.1",
                     "deps": ["absl-py==2.1.0"], "selection": _stk},  # its tests' parameterized cases
    "conch-triton-kernels": {"spec": "conch-triton-kernels==1.3", "folder": "conch_triton_kernels-1.3",
                             "deps": [], "selection": _conch},

}

# (project, code, kernel) -> (class, reason): the triage of every finding the checked runs made
TRIAGE: dict[tuple[str, str, str], tuple[str, str]] = {
    ("conch-triton-kernels", "P203", "_rms_norm_kernel"): (
        "hazard",
        "`x` and `w` are loaded with `mask=` and no `other=` (rms_norm.py:43-44) over a block rounded up to a "
        "power of two (1024 for 855 columns), and `tl.sum(x * x)` then sums the 169 masked-off lanes too: "
        "right only while they read 0, which Triton leaves undefined (today's NVIDIA GPUs and the plain "
        "interpreter give 0, so the tests pass). `other=0.0` on both loads makes it defined; the "
        "masked-load-no-other lesson. Not an error: no backend is shown wrong today."),
}

MODES = ("baseline", "sanitize", "plugin")

# what the first runs of these selections showed, and the harness's fixes they led to (each with a
# test that failed before it); rendered into the measurement as written here
NOTES = [
    "Before the two fixes below, the baseline itself failed tests of cut-cross-entropy's selection (tests "
    "run one by one while choosing it): the package wraps helpers in `torch.compile` (`softcapping`, and "
    "`sort_logit_avg` on the backward's path), and Inductor, asked to compile for the fake device, raised "
    "`AttributeError: '_Props' object has no attribute 'gcnArchName'` (a softcap test of `test_lse`, a "
    "backward test); and the bf16 tests tried failed with errors up to 2e11, because the interpreter's "
    "`tl.dot` of bf16 blocks multiplied the bit patterns as integers. Fixed in general terms: the fake "
    "CUDA gives `torch.compile`'s function back, run eagerly (`test_fake_cuda_runs_torch_compile_eagerly`), "
    "and `interp_numerics` computes a bf16 `tl.dot` on the float32 values where the interpreter is found to "
    "multiply patterns (`bf16-dot` in tests/test_interp_numerics.py). Neither was caused by the checks: "
    "both failed in the baseline too.",
    "`--no-checks` (`--casebook-sanitize-no-checks`) was added for this baseline: the same command and "
    "fake CUDA with the interpreter's fixes, no launch instrumented or judged.",
    "No finding on cut-cross-entropy or stanford-stk: their kernels mask or wrap every access (`% B` on row indices, "
    "`other=0.0` on the masked loads) and keep each output element to one program, to atomics, or to a "
    "spin lock (cut-cross-entropy's `lse` read-modify-write between `tl.atomic_cas` and `tl.atomic_xchg`, "
    "which the race check takes for a lock held by every program that touched it); the checks ran on "
    "every launch the baseline ran (the launch counts are equal). Their float `tl.atomic_add`s are "
    "order-dependent in their bits; that is the opt-in `--orders` check's (P303, a warning), not run here.",
]


def sh(cmd: list, **kw) -> None:
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, **kw)


def prepare(scratch: Path, name: str) -> Path:
    """The project's sdist unpacked under ``scratch``, its test dependencies in scratch/site."""
    p = PROJECTS[name]
    src = scratch / "src" / p["folder"]
    if not src.is_dir():
        dl = scratch / "dl"
        sh([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
            p["spec"], "-d", str(dl)])
        sdist = next(dl.glob(p["folder"] + ".tar.gz"))
        with tarfile.open(sdist) as tar:
            tar.extractall(scratch / "src", filter="data")
    for dep in p["deps"]:
        site = scratch / "site"
        if not any(site.glob(dep.split("==")[0].replace("-", "_") + "*")):
            sh([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), dep])
    return src


def plugin_registered() -> bool:
    from importlib.metadata import entry_points

    return any(ep.value == PLUGIN for ep in entry_points(group="pytest11"))


def command(mode: str, selection: list, junit: Path) -> list:
    tail = [*selection, "-p", "no:cacheprovider", f"--junitxml={junit}"]
    if mode == "baseline":
        return [sys.executable, "-m", "harness", "sanitize", "--no-checks", "--json", "pytest", *tail]
    if mode == "sanitize":
        return [sys.executable, "-m", "harness", "sanitize", "--json", "pytest", *tail]
    plugin = [] if plugin_registered() else ["-p", PLUGIN]  # the entry point where the package is installed
    return [sys.executable, "-m", "pytest", *plugin, "--casebook-sanitize", *tail]


def outcomes(junit: Path) -> dict:
    """node id -> passed / failed / error / skipped, from pytest's JUnit XML."""
    out = {}
    if not junit.exists():
        return out
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = [c.tag for c in case]
        out[name] = ("failed" if "failure" in kinds else "error" if "error" in kinds
                     else "skipped" if "skipped" in kinds else "passed")
    return out


def plugin_counts(text: str) -> dict:
    """The plugin's summary line: launches checked and errors, warnings, notes."""
    import re

    for line in reversed(text.splitlines()):
        m = re.search(r"casebook sanitize: (\d+) launches checked(?:, (\d+) raised[^:,]*)?"
                      r"(?:: (\d+) errors, (\d+) warnings, (\d+) notes|, no findings)", line)
        if m:
            n = [int(g) if g else 0 for g in m.groups()]
            return {"launches": n[0], "raised": n[1], "errors": n[2], "warnings": n[3], "notes": n[4]}
    return {}


def run_mode(name: str, mode: str, src: Path, scratch: Path, timeout: float) -> dict:
    junit = scratch / "junit" / f"{name}-{mode}.xml"
    junit.parent.mkdir(parents=True, exist_ok=True)
    junit.unlink(missing_ok=True)
    cmd = command(mode, PROJECTS[name]["selection"](), junit)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(src), str(scratch / "site")])}
    env.pop("TRITON_INTERPRET", None)
    print(f"[{name} {mode}]", " ".join(cmd[1:]), file=sys.stderr, flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=src, env=env, capture_output=True, text=True, timeout=timeout)
        code, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        code, out, err = "timeout", e.stdout or "", e.stderr or ""
        out, err = (s.decode() if isinstance(s, bytes) else s for s in (out, err))
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    log = scratch / "logs" / f"{name}-{mode}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"$ {' '.join(cmd)}\n--- stdout\n{out}\n--- stderr\n{err}")
    res = {"mode": mode, "command": " ".join(["python"] + cmd[1:]).replace(str(junit), "JUNIT.xml"),
           "returncode": code, "wall_s": round(wall, 1),
           "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
           "tests": outcomes(junit), "findings": [], "launches": None}
    if mode == "plugin":
        res.update(plugin_counts(out))
        res["plugin_failed_by_findings"] = sorted(
            t for t, o in res["tests"].items() if o == "failed" and _failed_by_sanitizer(junit, t))
    else:
        try:
            doc = json.loads(out)
        except ValueError:
            doc = {}
        res["launches"] = doc.get("launches")
        res["findings"] = doc.get("findings", [])
    return res


def _failed_by_sanitizer(junit: Path, test: str) -> bool:
    for case in ET.parse(junit).getroot().iter("testcase"):
        if f"{case.get('classname')}::{case.get('name')}" == test:
            return any((c.get("message") or "").startswith("casebook sanitize") for c in case)
    return False


def counts(tests: dict) -> dict:
    c = {k: 0 for k in ("passed", "failed", "error", "skipped")}
    for o in tests.values():
        c[o] += 1
    return {"collected": len(tests), **c}


def caused(base: dict, run: dict) -> list:
    """Tests that failed (or errored) under the run and passed in the baseline."""
    return sorted(t for t, o in run["tests"].items() if o in ("failed", "error") and base["tests"].get(t) == "passed")


def render(doc: dict) -> str:
    env = doc["environment"]
    lines = ["# Real suites under sanitize (issue 41)", "",
             f"Made by `python benchmarks/real_suites.py` on {env['machine']}; Python {env['python']}, "
             f"torch {env['torch']}, triton {env['triton']}; "
             + "; ".join(f"{n} on {r['environment']['date']} with the casebook at {r['environment']['commit']}"
                         for n, r in doc["projects"].items() if "environment" in r)
             + ". Every project is "
             "downloaded from PyPI at run time (its source distribution, which carries its tests) and run unchanged; "
             "the selections and why: the script's docstring.", "",
             "Modes: **baseline** `python -m harness sanitize --no-checks pytest SEL` (CUDA faked, the interpreter's "
             "fixes, nothing checked); **sanitize** `python -m harness sanitize pytest SEL`; **plugin** `pytest "
             "--casebook-sanitize SEL`. *Caused* counts the tests that failed under a checked mode and passed in "
             "the baseline: failures the tool caused.", "",
             "| project | mode | collected | passed | failed | errors | skipped | caused | launches | findings (E/W/N) "
             "| exit | wall s | CPU s |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, runs in doc["projects"].items():
        base = runs["baseline"]
        for mode in MODES:
            r = runs[mode]
            c = counts(r["tests"])
            if mode == "plugin":
                fnd = f"{r.get('errors', '?')}/{r.get('warnings', '?')}/{r.get('notes', '?')}"
                launches = r.get("launches", "?")
            else:
                sev = [f["severity"] for f in r["findings"]]
                fnd = "-" if mode == "baseline" else f"{sev.count('error')}/{sev.count('warning')}/{sev.count('info')}"
                launches = r["launches"]
            cause = "-" if mode == "baseline" else len(caused(base, r))
            lines.append(f"| {name} | {mode} | {c['collected']} | {c['passed']} | {c['failed']} | {c['error']} | "
                         f"{c['skipped']} | {cause} | {launches} | {fnd} | {r['returncode']} | {r['wall_s']} | "
                         f"{r['cpu_s']} |")
    lines += ["", "What the checks cost, CPU time against the baseline's: " + "; ".join(
        f"{n}: sanitize {r['sanitize']['cpu_s'] / r['baseline']['cpu_s']:.2f}x, plugin "
        f"{r['plugin']['cpu_s'] / r['baseline']['cpu_s']:.2f}x" for n, r in doc["projects"].items()
        if all(m in r and r[m]["cpu_s"] for m in MODES)) + " (wall times share the 2 cores with other work).", "",
              "## Failures", ""]
    for name, runs in doc["projects"].items():
        base = runs["baseline"]
        failed = sorted(t for t, o in base["tests"].items() if o in ("failed", "error"))
        lines.append(f"- **{name}**, baseline: {len(failed)} failed" + (": " + ", ".join(f"`{t}`" for t in failed[:12])
                                                                        + (" ..." if len(failed) > 12 else "")
                                                                        if failed else ""))
        for mode in MODES[1:]:
            cz = caused(base, runs[mode])
            lines.append(f"- **{name}**, {mode}: caused by the tool: {len(cz)}"
                         + (": " + ", ".join(f"`{t}`" for t in cz) if cz else ""))
            if mode == "plugin" and runs[mode].get("plugin_failed_by_findings"):
                lines.append(f"  - failed by an error finding: {len(runs[mode]['plugin_failed_by_findings'])}")
    lines += ["", "## What the first runs showed", ""] + [f"- {n}" for n in NOTES]
    lines += ["", "## Findings, triaged", "",
              "From the sanitize command's JSON (the plugin's run reports the same checks per test; its counts are "
              "in the table).", "", "| project | code | severity | kernel | at | launches | tests named (at most 5) | triage | why |",
              "|---|---|---|---|---|---|---|---|---|"]
    for name, runs in doc["projects"].items():
        for f in runs["sanitize"]["findings"]:
            cls, why = TRIAGE.get((name, f["code"], f.get("kernel", "")), ("UNTRIAGED", ""))
            lines.append(f"| {name} | {f['code']} | {f['severity']} | {f.get('kernel', '')} | {f.get('line', '')} | "
                         f"{f.get('count', '')} | {len(f.get('tests', []))} | {cls} | {why} |")
        if not runs["sanitize"]["findings"]:
            lines.append(f"| {name} | - | - | - | - | - | - | no finding | |")
    return "\n".join(lines) + "\n"


def untriaged(doc: dict) -> list:
    return [(n, f["code"], f.get("kernel", "")) for n, runs in doc["projects"].items()
            for f in runs["sanitize"]["findings"] if (n, f["code"], f.get("kernel", "")) not in TRIAGE]


def environment() -> dict:
    import torch
    import triton

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.machine()} CPU, {os.cpu_count()} cores, no GPU" if not torch.cuda.is_available()
            else f"GPU {torch.cuda.get_device_name()}", "python": platform.python_version(),
            "torch": torch.__version__, "triton": triton.__version__, "commit": commit}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scratch", default="/tmp/casebook-real-suites")
    ap.add_argument("--out", default=str(ROOT / "docs" / "measurements" / "real-suites.md"))
    ap.add_argument("--only", default="", help="projects, comma-separated (default: all)")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    ap.add_argument("--render", action="store_true", help="write the .md again from the .json")
    a = ap.parse_args()
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    from harness.core.fileio import write_text

    if a.render:
        doc = json.loads(out.with_suffix(".json").read_text())
    else:
        scratch = Path(a.scratch)
        scratch.mkdir(parents=True, exist_ok=True)
        names = [n for n in PROJECTS if not a.only or n in a.only.split(",")]
        old = json.loads(out.with_suffix(".json").read_text()) if out.with_suffix(".json").exists() else {}
        doc = {"environment": environment(), "projects": dict(old.get("projects", {}))}
        for name in names:
            src = prepare(scratch, name)
            runs = dict(doc["projects"].get(name, {}))
            runs["environment"] = doc["environment"]  # each project's runs: their own date and commit
            for mode in a.modes.split(","):
                runs[mode] = run_mode(name, mode, src, scratch, a.timeout)
                print(f"[{name} {mode}] {counts(runs[mode]['tests'])} rc={runs[mode]['returncode']} "
                      f"{runs[mode]['wall_s']} s", file=sys.stderr, flush=True)
                doc["projects"][name] = runs  # kept after each run: a later one that fails loses nothing
                write_text(out.with_suffix(".json"), json.dumps(doc, indent=1, sort_keys=True) + "\n")
    write_text(out, render(doc))
    left = untriaged(doc)
    for n, code, kernel in left:
        print(f"untriaged: {n} {code} {kernel}", file=sys.stderr)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
