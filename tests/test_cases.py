"""Every case folder, on every backend: the broken kernel does what its case declares,
and the fixed kernel matches the reference.

Each (case, variant, backend) runs in its own process through the harness, exactly
as ``python -m harness case`` runs it. Ids read ``nrm2-race-broken-gpu``.
GPU tests carry the ``gpu`` mark (``pytest -m gpu``) and skip where CUDA is absent.
"""

import pytest

from harness.core import discovery
from harness.run.isolate import run_isolated
from harness.core.table import case_table
from harness.core.verdict import judge

SPECS, ERRORS = discovery.load_all()


def _malformed():
    """(slug, one-line error) for each case folder that does not parse: each becomes a
    failing test of its own, so ``pytest -k <slug>`` finds it and says why."""
    for path in discovery.case_folders():
        try:
            discovery.load_spec(path)
        except discovery.SpecError as e:
            yield path.name, str(e)


def _params():
    for slug, error in _malformed():
        for backend in ("interpreter", "gpu"):
            yield pytest.param(None, error, backend, id=f"{slug}-malformed-{backend}",
                               marks=[getattr(pytest.mark, backend)])
    for spec in SPECS:
        for backend in ("interpreter", "gpu"):
            for variant in spec.variants:
                marks = [getattr(pytest.mark, backend)]
                if spec.expect[backend][0] == "skip":
                    marks.append(pytest.mark.skip(reason=f"{backend}: {spec.skip_reason[backend]}"))
                yield pytest.param(spec, variant, backend, id=f"{spec.slug}-{variant}-{backend}", marks=marks)


def test_every_case_folder_is_well_formed():
    assert not ERRORS, "\n".join(ERRORS)
    assert SPECS, "no cases found"


@pytest.mark.parametrize("spec, variant, backend", list(_params()))
def test_behaves_as_declared(spec, variant, backend):
    if spec is None:
        pytest.fail(variant, pytrace=False)  # a malformed folder: variant holds its error line
    run = run_isolated(spec, variant, backend, trials=spec.trials[backend], seed=0)
    if run.unavailable:
        pytest.skip(run.message)
    verdicts = judge(spec, run)
    assert run.status != "error", f"the case failed to set up: {run.message}\n{run.output_tail}"
    assert verdicts and all(v.as_declared for v in verdicts), (
        f"{spec.slug} {variant} on {backend} did not behave as declared "
        f"({', '.join(spec.expected(variant, backend))}):\n{case_table(verdicts, spec.calls)}\n{run.output_tail[-1500:]}"
    )
    if variant != "broken":
        # Read the worker's raw results, not the verdict: every requested trial of every
        # call came back, matched the reference and left the guard bands intact.
        assert len(run.trials) == spec.trials[backend] * spec.calls, run.output_tail[-1500:]
        bad = [t for t in run.trials if not t["close"] or t["guard"]["wrote_past_end"] or t["guard"]["unwritten"]]
        assert not bad, f"trial {bad[0]['trial']} call {bad[0]['call'] + 1}: {bad[0]['result']}"
