"""What the scripts of benchmarks/found share: the released package imported from the folder it was installed
into (``pip install --no-deps --target SITE``), on a CUDA device for the GPU-only ones, or one line on stderr
saying why nothing ran."""

import importlib
import sys


def released(site: str, package: str, module: str, name: str, why_gpu: str):
    """``(package module, the function or class named)`` from ``SITE``, with a line naming the package, torch,
    Triton and the device printed; None (after an ``error:`` line on stderr) when there is no CUDA device or the
    package does not import."""
    sys.path.insert(0, site)
    import torch
    import triton

    if not torch.cuda.is_available():
        print(f"error: needs a CUDA device ({why_gpu}); nothing ran", file=sys.stderr)
        return None
    try:
        top = importlib.import_module(package)
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        print(f"error: {package} not importable from {site}: {exc}", file=sys.stderr)
        return None
    print(f"{package} {top.__version__}, torch {torch.__version__}, triton {triton.__version__}; "
          f"{torch.cuda.get_device_name()}")
    return top, found


def installed(site: str, dist: str, pin: str):
    """The version of the distribution ``dist`` installed in ``SITE`` (its ``<dist>-*.dist-info``), or None after
    an ``error:`` line on stderr saying how to install ``pin`` there."""
    from importlib.metadata import PathDistribution
    from pathlib import Path

    found = next(Path(site).glob(f"{dist}-*.dist-info"), None)
    if found is None:
        print(f"error: {dist} not installed in {site} (pip install --no-deps --target {site} {pin})", file=sys.stderr)
        return None
    return PathDistribution(found).version


def from_file(path, name: str):
    """The module at ``path`` (one file of a release, loaded by path under the name ``name``), or None when the
    file is missing."""
    import importlib.util
    from pathlib import Path

    if not Path(path).is_file():
        return None
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bare_packages(folders: dict) -> None:
    """Register each ``{package name: folder}`` as a package with no ``__init__`` run, so that a submodule can be
    imported without the package's own (heavier) ``__init__``; names already imported are left alone."""
    import types

    for name, folder in folders.items():
        package = types.ModuleType(name)
        package.__path__ = [str(folder)]
        sys.modules.setdefault(name, package)


def run_on(gpu: bool, what: str) -> str | None:
    """The device a script's run takes (``--gpu``: "cuda", else "cpu" under TRITON_INTERPRET=1), after the line
    naming ``what`` (the package and its version), torch, Triton and the device; None after an ``error:`` line on
    stderr where ``--gpu`` finds no CUDA device."""
    import torch
    import triton

    if gpu and not torch.cuda.is_available():
        print("error: --gpu needs a CUDA device; nothing ran", file=sys.stderr)
        return None
    where = torch.cuda.get_device_name() if gpu else "CPU, TRITON_INTERPRET=1"
    print(f"{what}, torch {torch.__version__}, triton {triton.__version__}; {where}")
    return "cuda" if gpu else "cpu"
