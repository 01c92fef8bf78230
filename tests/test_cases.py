"""Every case folder, on every backend: the broken kernel does what its case declares,
and the fixed kernel matches the reference.

The runs are made exactly as ``python -m harness case`` makes them (one worker per
case and backend, isolated), all at once for the tests pytest selected: the first
test of a backend runs every selected case of that backend in parallel, and each test
then judges its own variant. Ids read ``nrm2-race-broken-gpu``. GPU tests carry the
``gpu`` mark (``pytest -m gpu``) and skip where CUDA is absent.
"""

import pytest

from harness.core import discovery
from harness.core.table import case_table
from harness.core.verdict import judge
from harness.run.scheduler import run_many

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


_RUNS: dict = {}


def _wanted(items, backend) -> dict:
    """slug -> spec of every case selected (and not skipped) on ``backend``."""
    wanted = {}
    for item in items:
        cs = getattr(item, "callspec", None)
        other = cs.params.get("spec") if cs else None
        if other is not None and cs.params.get("backend") == backend and "skip" not in item.keywords:
            wanted[other.slug] = other
    return wanted


def _batch(specs, backend) -> dict:
    return run_many([(s, backend) for s in specs], jobs=2)


def gpu_ahead(items, start):
    """With a GPU, the batch of every selected GPU case starts at once, beside the other GPU tests."""
    specs = _wanted(items, "gpu").values()
    if specs:
        start(("cases", "gpu"), _batch, list(specs), "gpu")


def _run_of(request, ahead, spec, variant, backend):
    """This test's run, from one batch over every case selected on this backend."""
    if (spec.slug, backend) not in _RUNS:
        wanted = _wanted(request.session.items, backend)
        wanted.setdefault(spec.slug, spec)
        _RUNS.update(ahead(("cases", backend), _batch, list(wanted.values()), backend))
    if (spec.slug, backend) not in _RUNS:  # not in the batch started ahead (a skipped item's case)
        _RUNS.update(_batch([spec], backend))
    return _RUNS[(spec.slug, backend)][variant]


@pytest.mark.parametrize("spec, variant, backend", list(_params()))
def test_behaves_as_declared(request, ahead, spec, variant, backend):
    if spec is None:
        pytest.fail(variant, pytrace=False)  # a malformed folder: variant holds its error line
    run = _run_of(request, ahead, spec, variant, backend)
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
        bad = [t for t in run.trials if t.bad]
        assert not bad, f"trial {bad[0].trial} call {bad[0].call + 1}: {bad[0].result}"
