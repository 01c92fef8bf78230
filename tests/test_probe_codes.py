"""The probe's codes: each detector declares the codes it can emit (``Detector.codes``), README's and
docs/detectors.md's code tables are generated from those declarations (``python -m harness.probe.codes``),
and no module of ``harness/probe`` or ``harness/sanitize`` emits a code nobody declares."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from harness.probe import codes as generator
from harness.probe.detectors import EVERY, codes, registry
from harness.probe.findings import CODES, ERROR, EVERY_DETECTOR, INFO, WARNING

REPO = Path(__file__).resolve().parents[1]
CODE = re.compile(r"P\d{3}")


def emitted(source: str) -> set[str]:
    """Every string constant of ``source`` that is a code, whole."""
    return {n.value for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and CODE.fullmatch(n.value)}


def emitted_under(folder: str) -> dict[str, set[str]]:
    return {str(p.relative_to(REPO)): found for p in sorted((REPO / folder).rglob("*.py"))
            if (found := emitted(p.read_text(encoding="utf-8")))}


def test_the_scanner_finds_a_code_however_it_is_written():
    src = 'f("P999")\nx = {"a": "P998"}\ng(code="P997", note="P996 in a sentence")\n"""P995: a docstring"""'
    assert emitted(src) == {"P999", "P998", "P997"}
    assert "P999" not in codes()


def test_every_code_emitted_in_the_probe_is_declared():
    undeclared = {f: sorted(c - set(codes())) for f, c in emitted_under("harness/probe").items() if c - set(codes())}
    assert not undeclared, f"codes emitted that no detector declares (Detector.codes): {undeclared}"
    assert set(CODES) == set(codes()), "findings.CODES (titles) and the declarations name different codes"


def test_each_detector_declares_the_codes_its_module_emits():
    every = {c.code for c in EVERY_DETECTOR}
    for det in registry().values():
        module = REPO / "harness" / "probe" / "detectors" / f"{det.name.replace('-', '_')}.py"
        missing = emitted(module.read_text(encoding="utf-8")) - {c.code for c in det.codes} - every
        assert not missing, f"{det.name} emits {sorted(missing)} without declaring them"


def test_every_code_sanitize_emits_is_declared_with_its_sanitize_severity():
    from harness.sanitize.findings import severity

    reported = {k for k, (c, _) in codes().items() if c.sanitize}
    strays = {f: sorted(c - reported) for f, c in emitted_under("harness/sanitize").items() if c - reported}
    assert not strays, f"sanitize emits codes whose declaration has no sanitize severity (Code.sanitize): {strays}"
    assert (severity("P204"), severity("P303"), severity("P101"), severity("P001")) == (INFO, WARNING, ERROR, INFO)


def test_declarations_are_whole():
    cases = {p.name for p in (REPO / "cases").iterdir() if (p / "case.toml").is_file()}
    for code, (c, by) in codes().items():
        assert c.severity in (ERROR, WARNING, INFO) and c.sanitize in ("", ERROR, WARNING, INFO), code
        assert c.meaning and "\n" not in c.meaning and by, code
        assert set(c.cases) <= cases, f"{code} names cases that do not exist: {sorted(set(c.cases) - cases)}"
        assert not c.flag or c.sanitize, f"{code}: a sanitize flag on a code sanitize never reports"
    assert codes()["P001"][1] == (EVERY,) and "shapes-rest" in codes()["P401"][1]


@pytest.mark.parametrize("name", sorted(generator.PAGES))
def test_the_pages_hold_the_tables_as_generated(name):
    page = generator.PAGES[name][0]
    assert generator.generated_block(page.read_text(encoding="utf-8"), name) == generator.block(name), \
        f"{page.name}: run python -m harness.probe.codes --write"


def test_a_stale_table_is_found_and_rewritten(tmp_path, monkeypatch):
    pages = {}
    for name, (page, prefix) in generator.PAGES.items():
        copy = tmp_path / page.name
        copy.write_text(page.read_text(encoding="utf-8").replace("| P403 |", "| P499 |"), encoding="utf-8")
        pages[name] = (copy, prefix)
    monkeypatch.setattr(generator, "PAGES", pages)
    monkeypatch.setattr(generator, "REPO", tmp_path)
    assert len(generator.stale()) == 2
    assert sorted(p.name for p in generator.write()) == ["README.md", "detectors.md"]
    assert generator.stale() == []
    (tmp_path / "README.md").write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="README.md: no <!-- generated:sanitize-codes -->"):
        generator.write()


def test_a_code_declared_twice_differently_is_refused(monkeypatch):
    from dataclasses import replace

    import harness.probe.detectors as D

    det = registry()["guards"]
    other = replace(det, name="guards2", codes=(replace(det.codes[0], severity=WARNING),))
    monkeypatch.setattr(D, "registry", lambda: {**registry(), "guards2": other})
    D.codes.cache_clear()
    try:
        with pytest.raises(ValueError, match="P111 declared differently by guards2"):
            D.codes()
    finally:
        D.codes.cache_clear()
