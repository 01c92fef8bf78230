"""The diagnosis experiments (``harness.probe.experiments``), run where the kernel was wrong.

It runs after the reference detector and shape fuzzing in the same process, at the sizes
where they saw a wrong result (``ctx.board.failing``), each experiment within the
detector's time; the evidence goes to the runner (``ctx.board.evidence``), which ranks
it with the other detectors' findings (``harness.probe.diagnosis``).
"""

from __future__ import annotations

from harness.probe.detectors import Detector


def run(ctx) -> list:
    from harness.errors import error_line
    from harness.probe.experiments import registry

    failing = ctx.board.failing
    ran = []
    # its own time, and a share of the budget left where shape fuzzing left sizes for shapes-rest
    ctx.budget.begin_diagnosis(ctx.backend, rest_left=ctx.board.fuzz_left is not None)
    if ctx.backend == "interpreter":  # the block sizes of this run, not those shape fuzzing met at other sizes
        from harness.probe.experiments import outcome

        ctx.blocks = []
        if outcome(ctx, dict(failing))[0] != "wrong" and failing != ctx.target.sizes:
            # wrong only after shape fuzzing's other launches (a config its autotune cache kept): start
            # where a fresh process is wrong too, the default sizes
            ctx.blocks = []
            if outcome(ctx, dict(ctx.target.sizes))[0] == "wrong":
                failing = dict(ctx.target.sizes)
    board = ctx.board
    board.experiments = ran  # kept as they go: the budget's end may stop the experiments (partial)
    for name, exp in registry().items():
        if ctx.late():
            break
        t0 = ctx.budget.now()
        try:
            got = exp.run(ctx, dict(failing))
            board.add_evidence(got)
            ran.append(f"{name} {ctx.budget.now() - t0:.1f}s")
        except Exception as e:  # noqa: BLE001  one experiment failing leaves the others' evidence
            ran.append(f"{name} {ctx.budget.now() - t0:.1f}s (failed: {error_line(e)})"[:200])
    return _facts(ctx)


def _facts(ctx) -> list:
    """What the source says beside the runs' evidence: atomics, and autotuned atomics with nothing
    to undo the benchmarking runs. Also what the diagnosis keeps when the budget's end stops it:
    the experiments' evidence so far is in ``ctx.board`` already."""
    from harness.probe.kernels import known_facts

    known_facts(ctx)
    evidence = {}
    if ctx.board.atomics:
        evidence["atomics"] = "the kernels use atomics"
    if ctx.board.unreset_atomics:
        names = ", ".join(ctx.board.unreset_atomics[:3])
        evidence["autotuned-atomics"] = f"{names}: autotuned, with atomics, and no reset_to_zero or restore_value: " \
                                        f"each benchmarking run of the first call adds to the output again"
    ctx.board.add_evidence(evidence)
    return []


def _skip(ctx) -> str | None:
    if not ctx.board.failing:
        return "no wrong result to take apart (the reference and shape fuzzing found none)"
    return None


DETECTOR = Detector("diagnose", "experiments that take a wrong result apart (harness/probe/experiments)", run,
                    process={"interpreter": 0, "gpu": 0}, rank=8, skip=_skip,
                    timeout_severity="info", partial=_facts)
