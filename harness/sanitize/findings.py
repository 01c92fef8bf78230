"""What ``sanitize`` found: the launches' hits folded into findings, one per kernel, line and
kind (with a count of the launches that made it), with the probe's stable codes, severities and
casebook cases (``harness.probe.findings``), and the summary printed at the end.

A hit is a plain dict made by ``harness.sanitize.session`` for one launch: ``code``, ``kernel``,
``line`` (the kernel's source line), ``launched_at`` and ``called_from`` (the user's lines),
``test`` (the pytest node id, or ""), and per code: ``tensor``, ``side``, ``elements``,
``lanes``, ``programs`` (out of bounds); ``other_line``, ``other_kind``, ``address``,
``programs`` (a race); ``lines``, ``differ`` (masked lanes); ``order``, ``differ`` (program
order); ``axis``, ``grid``, ``limit`` (a grid past CUDA's limit).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.probe.findings import CODES, ERROR, WARNING, Finding, attach_cases, case_specs

# the [diagnosis] evidence (case.toml) that each code is: cases declaring it are named first
EVIDENCE = {"P101": "oob-store", "P103": "oob-store", "P102": "oob-load", "P301": "race", "P302": "race",
            "P303": "atomic-order", "P204": "tf32", "P403": "grid-limit"}


def severity(code: str) -> str:
    """The severity ``sanitize`` reports ``code`` with: the detector's declaration says it (``Code.sanitize``;
    README's table of codes is generated from the same declarations)."""
    from harness.probe.detectors import codes

    declared = codes().get(code)
    return (declared[0].sanitize if declared else "") or ERROR


@dataclass
class SanitizeFinding(Finding):
    count: int = 1  # launches that made it
    launched_at: list = field(default_factory=list)  # the user's lines that launched the kernel (first few)
    called_from: list = field(default_factory=list)  # the test's or script's lines, where other frames
    tests: list = field(default_factory=list)  # pytest node ids, where under pytest
    tensor: str = ""
    side: str = ""
    elements: int = 0  # the furthest lane out of bounds, in elements


def _key(hit: dict) -> tuple:
    return (hit["code"], hit["kernel"], hit["line"], hit.get("tensor", ""), hit.get("side", ""),
            hit.get("other_line", ""), hit.get("launched_at", "") if not hit["line"] else "",
            hit.get("severity", ""))


def _message(hit: dict) -> str:
    k, code = hit["kernel"], hit["code"]
    if code in ("P101", "P102", "P103"):
        return (f"{k}: {hit['kind']} {hit['side']} of '{hit['tensor']}' by up to {hit['elements']} elements "
                f"({hit['lanes']} lanes; first by program {hit['programs'][0]})")
    if code == "P301":
        same = (": every program order tried gives the same result (the programs store the same value "
                "there), so which store wins does not change it" if hit.get("same_value") else "")
        return (f"{k}: programs {hit['programs'][0]} and {hit['programs'][1]} both access {hit['address']}: a "
                f"store at {hit['line']}, a {hit['other_kind']} at {hit['other_line']} ({hit['addresses']} such "
                f"addresses){same}")
    if code == "P203":
        return (f"{k}: {sum(hit['differ'].values())} output elements change when the masked-off lanes of "
                f"tl.load without other= hold NaN instead of 0 (loads at {', '.join(hit['lines'])})")
    if code in ("P302", "P303"):
        return f"{k}: {sum(hit['differ'].values())} elements differ when the programs run in {hit['order']} order"
    if code == "P204":
        return f"{k}: fp32 tl.dot rounded like TF32 (the GPU's default input_precision), as --tf32 asks"
    if code == "P403":
        return (f"{k}: grid {tuple(hit['grid'])} has {hit['programs_on_axis']:,} programs on axis {hit['axis']}, "
                f"CUDA allows at most {hit['limit']:,}")
    return f"{k}: {CODES.get(code, ('?',))[0]}"


def collect(hits: list[dict], cases: bool = True) -> list[SanitizeFinding]:
    """The hits folded by kernel, line and kind, in the order first seen; the cases attached."""
    out: dict[tuple, SanitizeFinding] = {}
    for hit in hits:
        key = _key(hit)
        f = out.get(key)
        if f is None:
            f = out[key] = SanitizeFinding(
                code=hit["code"], detector="sanitize", backend=hit.get("backend", "interpreter"),
                message=hit.get("message") or _message(hit),
                severity=hit.get("severity") or severity(hit["code"]),
                line=hit["line"] or hit.get("launched_at", ""), kernel=hit["kernel"],
                programs=list(hit.get("programs", [])), tensor=hit.get("tensor", ""), side=hit.get("side", ""),
                elements=hit.get("elements", 0), count=0)
        f.count += 1
        f.elements = max(f.elements, hit.get("elements", 0))
        for attr, value in (("launched_at", hit.get("launched_at")), ("called_from", hit.get("called_from")),
                            ("tests", hit.get("test"))):
            values = getattr(f, attr)
            if value and value not in values and len(values) < 5:
                values.append(value)
    found = list(out.values())
    if cases and found:
        attach_cases(found)
        _evidence_first(found)
        _mechanism_first(found)
    return found


def _evidence_first(found: list) -> None:
    """Each finding's cases: those of its defect class that declare what it observed as their
    evidence, then other cases that declare it, then the rest of its defect class."""
    by_evidence: dict = {}
    for spec, readme in case_specs():
        for ev in spec.diagnosis or []:
            by_evidence.setdefault(ev, []).append({"slug": spec.slug, "title": spec.title, "readme": readme})
    for f in found:
        declared = by_evidence.get(EVIDENCE.get(f.code, ""), [])
        same = {c["slug"] for c in f.cases}
        first = [c for c in declared if c["slug"] in same] + [c for c in declared if c["slug"] not in same]
        slugs = {c["slug"] for c in first}
        f.cases = first + [c for c in f.cases if c["slug"] not in slugs]


OOB = ("P101", "P102", "P103")


def _mechanism_first(found: list) -> None:
    """The accesses outside a tensor that one kernel made in one test are one mechanism, and the
    probe's diagnosis (``harness.probe.diagnosis``) names it from all of them: loads and stores past
    the end together are a missing mask on the whole tail (add-missing-mask), a load alone a read
    past a tensor (matmul-k-tail), one tensor loaded and stored past one end a read-modify-write.
    The case it names comes first on each of those findings, the load's as the store's."""
    from harness.probe.diagnosis import diagnose
    from harness.probe.findings import case_specs

    groups: dict = {}
    for f in found:
        if f.code in OOB and f.severity == ERROR:
            groups.setdefault((f.kernel, tuple(f.tests) or tuple(f.launched_at)), []).append(f)
    readme = None
    for group in groups.values():
        slug = next((d["case"] for d in diagnose(group) if d["case"]), None)
        if slug is None:
            continue
        readme = readme if readme is not None else {s.slug: (s.title, r) for s, r in case_specs()}
        if slug not in readme:
            continue
        title, path = readme[slug]
        for f in group:
            f.cases = [{"slug": slug, "title": title, "readme": path}] + [c for c in f.cases if c["slug"] != slug]


def headline(findings: list) -> str:
    """One line: the error findings' codes, titles and kernel lines."""
    return "casebook sanitize: " + "; ".join(f"{f.code} {f.title} at {f.line}" for f in errors(findings))


def errors(findings: list) -> list:
    return [f for f in findings if f.severity == ERROR]


def summary(findings: list, launches: int | None = None, max_cases: int = 3, ended_early: bool = False,
            checks: bool = True) -> str:
    """The end-of-run report: one block per finding, then a count line (``launches``: how many
    were checked, where known; ``ended_early``: the run ended before the sanitizer's end, so the
    launches after that point were never checked; ``checks`` False: the ``--no-checks`` baseline,
    where launches ran and nothing was checked)."""
    if not checks:
        ran = f"{launches} launches ran" if launches is not None else "the launches ran"
        return (f"casebook sanitize: {ran} with no checks (--no-checks: CUDA faked, the interpreter's fixes), "
                f"nothing was checked" + (", and the run ended early" if ended_early else ""))
    checked = f"{launches} launches checked" if launches is not None else "launches checked"
    if raised := sum(f.count for f in findings if f.code == "P001"):
        checked += f", {raised} raised before they could be checked"
    if ended_early:
        checked = "the run ended early, only the launches before that checked"
    if not findings:
        return f"casebook sanitize: {checked}, {'no findings in them' if ended_early else 'no findings'}"
    lines = []
    for f in findings:
        times = f" ({f.count} launches)" if f.count > 1 else ""
        lines.append(f"{f.code} {f.severity}: {f.title}{times}")
        lines.append(f"    at {f.line}" + (f" in {f.kernel}" if f.kernel else ""))
        lines.append(f"    {f.message}")
        where = ", ".join(f.launched_at + [c for c in f.called_from if c not in f.launched_at])
        if where:
            lines.append(f"    launched from {where}")
        if f.tests:
            lines.append(f"    in {', '.join(f.tests)}")
        for c in f.cases[:max_cases]:
            lines.append(f"    like {c['readme']}: {c['title']}")
    n_err, n_warn = len(errors(findings)), sum(f.severity == WARNING for f in findings)
    n_info = len(findings) - n_err - n_warn
    lines.append(f"casebook sanitize: {checked}: {n_err} errors, {n_warn} warnings, "
                 f"{n_info} notes")
    return "\n".join(lines)


def to_json(findings: list, launches: int, **extra) -> dict:
    return {"launches": launches, "errors": len(errors(findings)),
            "findings": [f.to_json() for f in findings], **extra}
