"""Probe files that live in the user's project: the probe file's folder first on sys.path, the
user's working directory as the workers', and the kernels inspected found from the launches
themselves, wherever their modules live (a neighbour module, an installed package in a zip)."""

import os
import re
import textwrap
import zipfile
from pathlib import Path

import pytest

from harness import probe
from harness.core.discovery import REPO_ROOT

pytestmark = pytest.mark.interpreter

# our own tiny kernels (no other project's code): one right, one whose loads have no mask
KERNELS = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs))


    def add(x, y):
        out = x.new_empty(x.shape)
        add_kernel[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)
        return out


    def scale(x):
        out = x.new_empty(x.shape)
        scale_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
        return out
    """)


def probe_file(imports: str, call: str, reference: str, n: int = 200, extra: str = "") -> str:
    return textwrap.dedent(f"""\
        import torch
        from pathlib import Path
        {imports}
        {extra}

        def launch(x, y):
            return {call}

        def make_inputs(*, device, gen, n={n}):
            return {{"x": torch.randn(n, generator=gen).to(device), "y": torch.randn(n, generator=gen).to(device)}}

        def reference(x, y):
            return {reference}
        """)


def test_a_probe_file_imports_its_neighbour_and_reads_paths_from_the_users_directory(tmp_path, monkeypatch):
    """``from mykernels import add`` beside the probe file, and ``Path("scale.txt")`` relative to where
    the user runs the command (not the casebook's root, not the probe file's folder)."""
    work, proj = tmp_path / "work", tmp_path / "work" / "proj"
    proj.mkdir(parents=True)
    (proj / "mykernels.py").write_text(KERNELS)
    (work / "scale.txt").write_text("1.0\n")
    (proj / "probe_add.py").write_text(probe_file("from mykernels import add", "add(x, y)", "x + SCALE * y",
                                                  extra='SCALE = float(Path("scale.txt").read_text())'))
    monkeypatch.chdir(work)
    r = probe("proj/probe_add.py", detectors=["reference"], backends=["interpreter"], budget=0)
    assert r.ok and {d for _, d, _, st in r.ran if st == "done"} == {"reference"}, r.text()
    files = r.meta["interpreter"]["seen"]["kernel_files"]
    assert files == [str(proj / "mykernels.py")]  # the module that defines the kernel launched
    # from another directory the relative data path is not there: one line, as running the file would say
    monkeypatch.chdir(tmp_path)
    from harness.probe.runner import ProbeInputError

    with pytest.raises(ProbeInputError, match="FileNotFoundError at import"):
        probe("work/proj/probe_add.py", detectors=["reference"], backends=["interpreter"], budget=0)


def test_a_kernel_from_an_installed_package_in_a_zip_is_inspected_and_linted(tmp_path, monkeypatch):
    """The kernels inspected are those launched: here from a package installed as a zip on the path,
    which shares no folder with the probe file. The lint cross-check reads that module and prints
    its path as the probe shows paths; the probe file's own path as the user gave it."""
    site = tmp_path / "site"
    site.mkdir()
    archive = site / "tinypkg.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("tinypkg/__init__.py", "")
        z.writestr("tinypkg/kern.py", KERNELS)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(archive)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    work = tmp_path / "work"
    work.mkdir()
    # 256 elements: whole blocks, so the unmasked kernel is right here; only its source says otherwise
    (work / "probe_pkg.py").write_text(probe_file("from tinypkg.kern import scale", "scale(x)", "2 * x", n=256))
    monkeypatch.chdir(work)
    r = probe("probe_pkg.py", detectors=["reference"], backends=["interpreter"], budget=0)
    assert r.ok, r.text()
    kern = os.path.join(str(archive), "tinypkg", "kern.py")
    assert r.meta["interpreter"]["seen"]["kernel_files"] == [kern]
    lint = [x for x in r.lint if x["code"] == "TL101"]
    assert lint and {x["path"] for x in lint} == {kern}, r.lint
    text = r.text()
    assert f"  {kern}:" in text and "the source alone (harness lint):" in text


def test_the_kernel_facts_come_from_the_launched_kernels_module(tmp_path, monkeypatch):
    """What the probe reads of the user's kernels (atomics, autotune: which detectors apply) comes from
    the modules of the kernels launched, here a package in another folder than the probe file."""
    import importlib
    import sys
    from types import SimpleNamespace

    from harness.probe.kernels import kernel_facts
    from harness.run import triton_compat

    site = tmp_path / "site"
    site.mkdir()
    (site / "atompkg_userpath.py").write_text(textwrap.dedent("""\
        import triton
        import triton.language as tl


        @triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])
        @triton.jit
        def total_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))
        """))
    probe_mod = SimpleNamespace(__file__=str(tmp_path / "work" / "probe_total.py"))
    target = SimpleNamespace(kernel=probe_mod, inputs=probe_mod)
    assert kernel_facts(target) == {"atomics": False, "autotune": False, "unreset_atomics": []}
    monkeypatch.syspath_prepend(str(site))
    mod = importlib.import_module("atompkg_userpath")
    try:
        jit = mod.total_kernel.fn  # autotune wraps the @triton.jit function: the launch records that one
        monkeypatch.setitem(triton_compat.LAUNCHED, id(jit), jit)
        assert kernel_facts(target)["atomics"] is True
        assert triton_compat.launched_files()[-1] == str(site / "atompkg_userpath.py")
    finally:
        sys.modules.pop("atompkg_userpath", None)


def test_no_benchmark_path_or_entry_name_in_the_tools():
    """The tools find the user's kernels from the launches, not from where the benchmark keeps its
    files: no benchmark cache name and no entry slug anywhere in harness/ outside the benchmark's
    own command (harness/bugs/)."""
    slugs = sorted(p.name for p in (REPO_ROOT / "bugs").iterdir() if p.is_dir())
    assert len(slugs) > 20
    names = [".bugcache", "bugcache", "triton-casebook/bugs", '"triton-casebook" / "bugs"'] + slugs
    hits = []
    for path in (REPO_ROOT / "harness").rglob("*.py"):
        if path.is_relative_to(REPO_ROOT / "harness" / "bugs"):
            continue
        text = path.read_text(encoding="utf-8")
        hits += [f"{path.relative_to(REPO_ROOT)}: {n}" for n in names if re.search(re.escape(n), text)]
    assert not hits, hits


def test_the_readmes_pytest_example_is_the_file_beside_the_probe_file():
    """README cites examples/rownorm/test_rownorm.py and shows it: the file exists and is what both
    READMEs show (tests/test_probe.py runs that probe file's launch_fixed and holds it clean)."""
    path = REPO_ROOT / "examples" / "rownorm" / "test_rownorm.py"
    body = path.read_text()
    for readme in (REPO_ROOT / "README.md", REPO_ROOT / "examples" / "rownorm" / "README.md"):
        text = readme.read_text()
        assert "test_rownorm.py" in text
        blocks = re.findall(r"```python\n(.*?)```", text, re.S)
        assert body in blocks, readme
    assert "sys.path.insert" not in (REPO_ROOT / "examples" / "rownorm" / "probe_rownorm.py").read_text()


# our own autotuned in-place update (the casebook's inplace-autotune trap), in a package of its own
TUNED = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
    @triton.jit
    def add_inplace_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0) + tl.load(y_ptr + offs, mask=mask,
                                                                                    other=0.0), mask=mask)


    def add_(x, y):
        add_inplace_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
        return x
    """)


def test_an_autotuned_kernel_in_a_package_gets_true_first_calls_where_first_calls_are_compared(tmp_path,
                                                                                                  monkeypatch):
    """The autotuner lives in the package the launcher comes from, not in the probe file's namespace: the
    reference detector (its masked-lane runs, each a first call) and first-call must still see first calls that
    tune (``reset_autotune_caches(..., launched=True)`` clears every autotuner run in the process). Without that,
    the reference detector's second call reused the tuned config and the first call's wrong result (every
    benchmarking run adds y again) passed for masked lanes, and first-call saw two right calls."""
    site = tmp_path / "site"
    (site / "tunedpkg").mkdir(parents=True)
    (site / "tunedpkg" / "__init__.py").write_text("")
    (site / "tunedpkg" / "ops.py").write_text(TUNED)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    work = tmp_path / "work"
    work.mkdir()
    (work / "probe_tuned.py").write_text(probe_file("import tunedpkg.ops", "tunedpkg.ops.add_(x.clone(), y)",
                                                    "x + y", n=300))
    monkeypatch.chdir(work)
    r = probe("probe_tuned.py", detectors=["reference", "first-call"], backends=["interpreter"], budget=0)
    assert [f.severity for f in r.by_code("P502")] == ["error"], r.text()
    assert not r.by_code("P203") and r.errors, r.text()  # wrong at its first call: not taken for masked lanes
    assert r.diagnosis and r.diagnosis[0]["defect"] == "autotune-accumulation", r.text()
