"""Every entry of the real-bug benchmark (bugs/): its manifest reads, its glue holds no upstream
kernel, its verification is recorded, and (under the interpreter, in CI) it still verifies:
the buggy version fails at its trigger and the fixed one passes. The interpreter runs fetch
the released versions from PyPI into the cache (harness/bugs/source.py) the first time."""

from __future__ import annotations

import ast
import json

import pytest

from harness.bugs import board, manifest

FOLDERS = manifest.discover()
ENTRIES = {f.name: f for f in FOLDERS}


def _read(slug):
    return manifest.read(ENTRIES[slug])


@pytest.mark.parametrize("slug", sorted(ENTRIES))
def test_manifest_reads(slug):
    e = _read(slug)
    assert e.slug == slug and e.summary and e.links["fix"].startswith("https://")


def _jit_functions(path) -> dict[str, int]:
    """{name: lines} of every function decorated with triton.jit or autotune in the file."""
    tree = ast.parse(path.read_text())
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                text = ast.unparse(d)
                if "triton.jit" in text or text in ("jit", "triton.autotune") or "autotune(" in text:
                    out[node.name] = node.end_lineno - node.lineno
    return out


@pytest.mark.parametrize("slug", sorted(ENTRIES))
def test_released_glue_holds_no_kernel(slug):
    """A released entry runs the project's own code: its folder defines no Triton kernel of its own.
    (A few-line @triton.jit helper that stands in for what the interpreter lacks, such as a
    libdevice function, is glue.) A reproduction's kernels are ours, and its changed lines are
    marked # BUG:."""
    e = _read(slug)
    files = sorted(e.path.glob("*.py"))
    kernels = {f.name: _jit_functions(f) for f in files}
    if e.kind == "released":
        big = {f: {k: n for k, n in ks.items() if n > 4 or k == e.kernel} for f, ks in kernels.items()}
        assert not any(big.values()), f"{slug}: kernels in a released entry's glue: {big}"
        assert e.module and e.files
    else:
        assert any(kernels.values()), f"{slug}: a reproduction with no kernel of its own"
        assert any("# BUG:" in f.read_text() for f in files), f"{slug}: no '# BUG:' marks the changed lines"


def _record(e, backend):
    try:
        return json.loads((e.path / "recorded" / f"verify-{backend}.json").read_text())
    except FileNotFoundError:
        return None


@pytest.mark.parametrize("slug", sorted(ENTRIES))
def test_verification_recorded(slug):
    """Each backend the bug shows on has a verification record that says verified, with the device and
    versions it ran with."""
    e = _read(slug)
    wanted = [b for b in manifest.BACKENDS if board.visible(e, b)]
    for backend in wanted:
        r = _record(e, backend)
        if r is None and backend == "gpu":
            pytest.skip(f"{slug}: not yet verified on a GPU")
        assert r is not None, f"{slug}: no recorded/verify-{backend}.json (python -m harness bugs --verify " \
                              f"{slug} --backend {backend} --record)"
        assert r["verified"], f"{slug} on {backend}: {r.get('why')}"
        assert r["env"]["device"] and r["env"]["triton"] and r["env"]["torch"]


CI_ENTRIES = sorted(s for s in ENTRIES if board.visible(_read(s), "interpreter") and _read(s).verify.get("ci", True))


@pytest.mark.interpreter
@pytest.mark.parametrize("slug", CI_ENTRIES)
def test_verifies_under_the_interpreter(slug):
    r = board.verify(_read(slug), "interpreter")
    assert r["verified"], f"{slug}: {r['why']}"


def _glue_module(e):
    import sys

    from harness.core.discovery import import_file

    sys.modules.pop("repro", None)  # reproductions' own module, one name in many folders
    return import_file(e.glue, f"glue_{e.slug.replace('-', '_')}")


@pytest.mark.parametrize("slug", sorted(ENTRIES))
def test_make_inputs_keeps_its_layout_on_a_device(slug):
    """A view made on the CPU and then moved with ``.to(device)`` arrives dense on a GPU (torch keeps the strides
    of a dense tensor only): a layout switch built that way gives the GPU contiguous tensors, and the entry's
    bug does not show there (two first-run entries' GPU verification, session 22). The meta device moves the
    same way, so each tensor make_inputs gives, at its defaults and its interpreter trigger, has the strides on
    'meta' it has on the CPU."""
    import torch

    e = _read(slug)
    mod = _glue_module(e)
    seen = []
    for sizes in ({}, e.verify_sizes("interpreter")):  # (a GPU's trigger may be past 2**31 elements: not here)
        if sizes in seen:
            continue
        seen.append(sizes)
        try:
            on = {d: mod.make_inputs(device=d, gen=torch.Generator().manual_seed(0), **sizes) for d in ("cpu", "meta")}
        except Exception as ex:  # noqa: BLE001  inputs from upstream code that meta tensors cannot run
            pytest.skip(f"make_inputs does not run on the meta device: {type(ex).__name__}")
        moved = [k for k, v in on["cpu"].items() if isinstance(v, torch.Tensor) and v.dim()
                 and isinstance(on["meta"].get(k), torch.Tensor) and v.stride() != on["meta"][k].stride()]
        assert not moved, f"{slug} at {sizes}: {moved} lose their layout on a device (make the view there)"
