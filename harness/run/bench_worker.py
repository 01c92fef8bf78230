"""Times a case's fixed kernel against PyTorch, inside its own process; ``bench`` starts it.

Usage (by the harness, not by people)::

    python -m harness.run.bench_worker '{"path": ..., "events": ...}'

For each size of the case's ``[bench]`` table it writes one ``{"event": "row", ...}``
line (times are medians from ``triton.testing.do_bench``; each size is also checked
against the reference), then ``{"event": "done"}``. A crash part-way leaves the rows
that finished.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.run.worker import Events, apply_memory_limit, call_with, environment, report_failure


def bench_sizes(spec, emit, repeat_ms: int = 200) -> None:
    import torch
    import triton.testing

    from harness.core import compare, discovery

    case = discovery.load_module(spec, "case")
    variant = "fast" if "fast" in spec.variants else "fixed"
    launcher = getattr(discovery.load_module(spec, variant), spec.launcher)
    for sizes in spec.bench["sizes"]:
        inputs = case.make_inputs(device="cuda", gen=torch.Generator().manual_seed(0), **sizes)
        ref = call_with(case.reference, {k: (v.clone() if isinstance(v, torch.Tensor) else v)
                                         for k, v in inputs.items()})
        out = launcher(**inputs)
        torch.cuda.synchronize()
        check = compare.compare(out, ref, spec.rtol, spec.atol)
        del ref, out
        ms_fixed = triton.testing.do_bench(lambda: launcher(**inputs), rep=repeat_ms, return_mode="median")
        ms_torch = triton.testing.do_bench(lambda: call_with(case.torch_equivalent, inputs), rep=repeat_ms,
                                           return_mode="median")
        emit(event="row", sizes=sizes, ms_fixed=ms_fixed, ms_torch=ms_torch, work=call_with(case.bench_work, inputs),
             close=check["close"], result=check["result"])
        inputs = None  # free this size's tensors before the next (the lambdas above are done with them)
        torch.cuda.empty_cache()


def run(args: dict) -> int:
    emit = Events(args["events"])
    try:
        from harness.core.spec import load_spec

        spec = load_spec(Path(args["path"]))
        emit(event="env", **environment("gpu"))
        bench_sizes(spec, emit)
        emit(event="done")
        return 0
    except BaseException as e:  # report everything: a crash must never pass silently
        return report_failure(emit, e, "launch")


if __name__ == "__main__":
    apply_memory_limit()
    sys.exit(run(json.loads(sys.argv[1])))
