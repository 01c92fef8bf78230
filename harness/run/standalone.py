"""``python cases/<slug>/broken.py``: one case file run on its own, like a Triton tutorial.

Every broken.py, fixed.py and fast.py ends with a footer that hands the file to ``main``::

    if __name__ == "__main__":  # python cases/<slug>/broken.py runs it beside the reference
        import pathlib, sys
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repository root
        from harness.run.standalone import main
        sys.exit(main(__file__))

``main`` runs that file's launcher on the case's inputs (``case.py``) on the best backend
this machine has, the GPU when CUDA sees one and Triton's interpreter otherwise, and
prints what it returned beside the reference, call by call, with the verdict the case
declares for it. Nothing here is new machinery: the run goes through the harness's
worker in a process of its own (``run_isolated``), which is what the interpreter needs
(``TRITON_INTERPRET`` is read when ``@triton.jit`` decorates, so it must be set before
the kernel's module is imported) and what keeps a segfault or a hang from taking the
script down with it. ``python -m harness case <slug>`` runs all the variants side by side.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from harness.core import table
from harness.core.spec import SpecError, load_spec
from harness.core.verdict import judge
from harness.errors import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE
from harness.run.backends import cuda_available
from harness.run.isolate import run_isolated

KERNEL_FILES = ("broken", "fixed", "fast")


def parse(argv: list[str] | None, prog: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog, description="Run this case file's kernel and compare it with the "
                                                       "reference, on the GPU if there is one, else the interpreter.")
    p.add_argument("--backend", choices=("auto", "gpu", "interpreter"), default="auto",
                   help="auto (default): the GPU when CUDA has one, else the interpreter")
    p.add_argument("--trials", type=int, default=None, help="runs, 1 to 1000 (default: the case's own number)")
    p.add_argument("--seed", type=int, default=0, help="seed of the inputs (default 0)")
    args = p.parse_args(argv)
    if args.trials is not None and not 1 <= args.trials <= 1000:
        p.error(f"--trials must be from 1 to 1000, got {args.trials}")
    if not 0 <= args.seed < 2**63:
        p.error(f"--seed must be from 0 to 2**63-1, got {args.seed}")
    return args


def pick_backend(choice: str) -> tuple[str, str]:
    """(backend, why it was chosen)."""
    if choice == "gpu":
        if not cuda_available():
            raise SpecError("--backend gpu: no CUDA GPU is available here (use --backend interpreter)")
        return "gpu", "asked for"
    if choice == "interpreter":
        return "interpreter", "asked for"
    if os.environ.get("TRITON_INTERPRET") == "1":
        return "interpreter", "TRITON_INTERPRET=1 is set"
    if cuda_available():
        return "gpu", "CUDA has a GPU"
    return "interpreter", "no CUDA GPU here, so TRITON_INTERPRET=1 in a fresh process"


def call_lines(verdicts, calls: int) -> list[str]:
    """Per call: the verdict, then the result and the reference on lines of their own."""
    out = []
    for v in verdicts:
        mark = "as declared" if v.as_declared else "NOT as declared"
        out.append(f"call {v.call} of {calls}: {v.observed} ({mark}: case.toml expects {v.expected})")
        if v.reference:  # a comparison was made (not a skip, an error, or a crash before any trial)
            out.append(f"  result:    {v.result}")
            out.append(f"  reference: {v.reference}")
        out += [f"  note: {n}" for n in v.notes]
    return out


def report(spec, variant: str, backend: str, why: str, seed: int, run, verdicts) -> None:
    print(f"{spec.slug}/{variant}.py: {spec.title}")
    print(f"backend: {backend} ({why}); {run.requested_trials} trial(s), inputs from seed {seed}")
    for line in table.env_lines([run.env]):
        print(f"  {line}")
    if run.status in ("skip", "error") or (run.status in ("crash", "hang") and not run.trials):
        print(f"{run.status}: {run.message}")
        if run.status in ("error", "crash") and run.output_tail.strip():
            print("  " + run.output_tail.strip()[-1500:].replace("\n", "\n  "))
    else:
        print(table.case_table(verdicts, spec.calls, fmt="simple"))
    print("\n".join(call_lines(verdicts, spec.calls)))
    print(f"(python -m harness case {spec.slug} runs every variant side by side; "
          f"the write-up is cases/{spec.slug}/README.md)")


def main(path: str | os.PathLike, argv: list[str] | None = None) -> int:
    """Run the case file at ``path`` (its variant is the file's name) and print the comparison."""
    file = Path(path).resolve()
    args = parse(sys.argv[1:] if argv is None else argv, prog=f"python {file.parent.name}/{file.name}")
    variant = file.stem
    try:
        if variant not in KERNEL_FILES:
            raise SpecError(f"{file.name}: a case's kernel files are {', '.join(f + '.py' for f in KERNEL_FILES)}")
        spec = load_spec(file.parent)
        backend, why = pick_backend(args.backend)
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    trials = args.trials or spec.trials[backend]
    run = run_isolated(spec, variant, backend, trials=trials, seed=args.seed)
    verdicts = judge(spec, run)
    report(spec, variant, backend, why, args.seed, run, verdicts)
    return EXIT_OK if verdicts and all(v.as_declared for v in verdicts) else EXIT_MISMATCH
