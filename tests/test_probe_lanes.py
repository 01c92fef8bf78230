"""The lanes of one program over each other (harness.run.analyses.lanes, the race detector's P304 and
P305; issue #20): what the interpreter's lockstep hides. A store whose lanes write one address with
different values; a load of what other lanes stored with no tl.debug_barrier() between."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

KERNELS = textwrap.dedent('''
    import triton
    import triton.language as tl


    @triton.jit
    def scatter(out_ptr, SAME: tl.constexpr, MASKED: tl.constexpr, BLOCK: tl.constexpr):
        i = tl.arange(0, BLOCK)
        val = i // 2 if SAME else i  # lanes 2k and 2k+1 both write out[k]: the same value, or not
        mask = (i % 2 == 0) if MASKED else i < BLOCK
        tl.store(out_ptr + i // 2, val, mask=mask)


    @triton.jit
    def stage(buf_ptr, out_ptr, SHIFT: tl.constexpr, BARRIER: tl.constexpr, BLOCK: tl.constexpr):
        base = tl.program_id(0) * BLOCK
        i = tl.arange(0, BLOCK)
        tl.store(buf_ptr + base + i, i * 1.0)
        if BARRIER:
            tl.debug_barrier()
        x = tl.load(buf_ptr + base + (i + SHIFT) % BLOCK)  # lane i reads what lane i + SHIFT stored
        tl.store(out_ptr + base + i, x)


    @triton.jit
    def spread(x_ptr, g_ptr, n, D: tl.constexpr, GATHER: tl.constexpr, BLOCK: tl.constexpr, OUT: tl.constexpr):
        i = tl.arange(0, BLOCK)
        g = tl.load(g_ptr + i)
        if GATHER:  # each x[j] read, changed and stored once, by one lane: x[j] += g[j] + g[j - D] + g[j - 2D]
            j = tl.arange(0, OUT)
            g0 = tl.load(g_ptr + j, mask=j < BLOCK, other=0.0)
            g1 = tl.load(g_ptr + j - D, mask=(j >= D) & (j < BLOCK + D), other=0.0)
            g2 = tl.load(g_ptr + j - 2 * D, mask=(j >= 2 * D) & (j < n), other=0.0)
            tl.store(x_ptr + j, tl.load(x_ptr + j, mask=j < n) + g0 + g1 + g2, mask=j < n)
        else:  # scattered: x[i], x[i + D], x[i + 2D] += g[i], three tiles loaded, then three stored back
            a = tl.load(x_ptr + i)
            b = tl.load(x_ptr + D + i)
            c = tl.load(x_ptr + 2 * D + i)
            tl.store(x_ptr + i, a + g)
            tl.store(x_ptr + D + i, b + g)
            tl.store(x_ptr + 2 * D + i, c + g)
''')


@pytest.fixture
def kernels(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from harness.core.discovery import import_file

    (tmp_path / "lane_kernels.py").write_text(KERNELS)
    return import_file(tmp_path / "lane_kernels.py", "lane_kernels")


def _line(text: str) -> int:
    return next(n for n, line in enumerate(KERNELS.splitlines(), 1) if text in line)


def _scatter(kernels, same: bool, masked: bool, block: int = 16):
    import torch

    from harness.run import interp_instrument as I

    out = torch.zeros(block // 2, dtype=torch.int32)
    with I.instrumented(I.Options(race=True)) as rec:
        kernels.scatter[(1,)](out, SAME=same, MASKED=masked, BLOCK=block)
    return rec, out


def _stage(kernels, shift: int, barrier: bool, block: int = 16, programs: int = 3):
    import torch

    from harness.run import interp_instrument as I

    buf, out = torch.zeros(programs * block), torch.zeros(programs * block)
    with I.instrumented(I.Options(race=True)) as rec:
        kernels.stage[(programs,)](buf, out, SHIFT=shift, BARRIER=barrier, BLOCK=block)
    return rec, out


def test_lanes_of_one_store_writing_one_address_with_different_values_collide(kernels):
    block = 16
    rec, out = _scatter(kernels, same=False, masked=False, block=block)
    (hit,) = rec.collisions
    assert hit["store_line"].endswith(f"lane_kernels.py:{_line('tl.store(out_ptr + i // 2')}")
    assert hit["addresses"] == block // 2 and hit["address"] == "out_ptr[0]" and hit["pid"] == "0"
    assert out.tolist() == list(range(1, block, 2))  # the interpreter's last lane wins: hidden
    assert rec.cross_lane == []


def test_lanes_writing_the_same_value_or_masked_off_do_not_collide(kernels):
    assert _scatter(kernels, same=True, masked=False)[0].collisions == []  # a broadcast
    assert _scatter(kernels, same=False, masked=True)[0].collisions == []  # one active lane per address


def test_a_load_of_what_other_lanes_stored_without_a_barrier_is_recorded(kernels):
    block, programs = 16, 3
    rec, out = _stage(kernels, shift=1, barrier=False, block=block, programs=programs)
    (hit,) = rec.cross_lane
    assert hit["load_line"].endswith(f"lane_kernels.py:{_line('x = tl.load(')}")
    assert hit["store_line"].endswith(f"lane_kernels.py:{_line('tl.store(buf_ptr')}")
    assert hit["addresses"] == block * programs and hit["address"] == "buf_ptr[0]" and hit["pid"] == "0"
    assert rec.collisions == [] and rec.races == []


@pytest.mark.parametrize("shift, barrier", [(1, True), (0, False)], ids=["barrier-between", "own-lane"])
def test_a_barrier_between_or_a_lane_reading_its_own_store_is_fine(kernels, shift, barrier):
    rec, out = _stage(kernels, shift=shift, barrier=barrier)
    assert rec.cross_lane == [] and rec.collisions == []
    assert out.tolist() == [float((i + shift) % 16) for i in range(16)] * 3


def test_the_analyses_run_only_with_the_race_detector(kernels):
    import torch

    from harness.run import interp_instrument as I

    buf, out = torch.zeros(16), torch.zeros(16)
    with I.instrumented(I.Options()) as rec:
        kernels.scatter[(1,)](out, SAME=False, MASKED=False, BLOCK=16)
        kernels.stage[(1,)](buf, out, SHIFT=1, BARRIER=False, BLOCK=16)
    assert "lanes" not in [a.name for a in rec.active] and rec.collisions == [] and rec.cross_lane == []


@pytest.mark.parametrize("slug, code", [("duplicate-index-store", "P304"), ("store-then-load-no-barrier", "P305")])
def test_the_cases_broken_kernel_is_a_warning_at_its_line_and_the_fixed_one_quiet(slug, code):
    """The race detector on the interpreter: the broken kernel's trap at the line marked BUG, a
    warning that names the case; the fixed kernel nothing."""
    from harness import probe
    from harness.core.spec import load_spec
    from harness.probe.findings import WARNING

    spec = load_spec(ROOT / "cases" / slug)
    runs = {v: probe(str(spec.path / f"{v}.py"), inputs=str(spec.path / "case.py"), launcher=spec.launcher,
                     backends=["interpreter"], detectors=["race"], jobs=1) for v in ("broken", "fixed")}
    (hit,) = [f for f in runs["broken"].findings if f.code == code]
    bugs = {f"broken.py:{n}" for n, line in enumerate((spec.path / "broken.py").read_text().splitlines(), 1)
            if "# BUG" in line}
    assert hit.severity == WARNING and hit.line.rpartition("/")[2] in bugs, runs["broken"].text()
    assert runs["broken"].diagnosis[0]["case"] == slug, runs["broken"].diagnosis
    assert not [f for f in runs["fixed"].findings if f.code in ("P304", "P305")], runs["fixed"].text()


def _spread(kernels, gather: bool, block: int = 16, d: int = 2):
    import torch

    from harness.run import interp_instrument as I

    n = block + 2 * d
    g = torch.arange(1.0, block + 1)
    x = torch.zeros(n)
    with I.instrumented(I.Options(race=True)) as rec:
        kernels.spread[(1,)](x, g, n, D=d, GATHER=gather, BLOCK=block, OUT=32)
    want = torch.zeros(n)
    for k in range(3):
        want[k * d:k * d + block] += g
    return rec, x, want


def test_lanes_that_read_change_and_store_back_what_other_lanes_stored_lose_updates(kernels):
    """A tile scattered into overlapping ranges (cherimoya 0.0.1's dilated-conv backward): every lane loads its
    three addresses before any lane stores, so each store overwrites what other lanes stored, from a stale read:
    the interpreter loses the updates too (in any order), and the overwrites are recorded as read-modify-writes."""
    rec, x, want = _spread(kernels, gather=False)
    assert not x.equal(want)  # updates lost
    assert rec.overwrites and all(h["rmw"] > 0 for h in rec.overwrites), rec.overwrites
    lines = {h["store_line"].rpartition(":")[2] for h in rec.overwrites}
    assert str(_line("tl.store(x_ptr + D + i")) in lines and str(_line("tl.store(x_ptr + 2 * D + i")) in lines
    assert rec.collisions == []  # each store's own lanes write distinct addresses


def test_each_address_read_changed_and_stored_by_one_lane_is_no_overwrite(kernels):
    rec, x, want = _spread(kernels, gather=True)
    assert x.equal(want) and rec.overwrites == [] and rec.collisions == []
    rec, out = _stage(kernels, shift=0, barrier=False)  # a lane storing, then storing again, its own address
    assert rec.overwrites == []


SPREAD_PROBE = """
import torch
import triton
from lane_kernels import spread


def launch(g, d):
    n = g.numel() + 2 * d
    x = torch.zeros(n, device=g.device)
    spread[(1,)](x, g, n, D=d, GATHER=False, BLOCK=g.numel(), OUT=triton.next_power_of_2(n))
    return x


def make_inputs(*, device, gen, block=16, d=2):
    return {"g": torch.randn(block, generator=gen).to(device), "d": d}


def reference(g, d):
    g = g.double()
    x = torch.zeros(g.numel() + 2 * d, dtype=torch.float64)
    for k in range(3):
        x[k * d:k * d + g.numel()] += g
    return x
"""


def test_the_probe_names_the_lost_update_first_where_the_result_is_wrong(tmp_path):
    """The overwrites stay a warning (which lane's store lands is the GPU's choice), but a read-modify-write over
    other lanes' stores loses updates in any order: where the result at the defaults is wrong, it is the mechanism
    shown there (diagnosis.IN_ANY_ORDER), named before a formula."""
    from harness import probe
    from harness.probe.findings import WARNING

    (tmp_path / "lane_kernels.py").write_text(KERNELS)
    (tmp_path / "spread_probe.py").write_text(SPREAD_PROBE)
    r = probe(str(tmp_path / "spread_probe.py"), backends=["interpreter"], detectors=["reference", "race", "diagnose"],
              budget=0, jobs=1)
    assert [f.code for f in r.errors] == ["P201"], r.text()
    assert {f.severity for f in r.by_code("P304")} == {WARNING}, r.text()
    assert r.diagnosis[0]["defect"] == "lost-update", r.diagnosis
