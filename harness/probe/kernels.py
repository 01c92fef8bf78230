"""What the user's kernels are made of, read from the modules that define the kernels the
launcher launched (and the probe file's): autotuned or not,
atomics in their source or not (used to skip detectors that cannot apply), and, where no
instrumented run saw them (a GPU), the block sizes their launches and configs give."""

from __future__ import annotations

import os
import sys


def user_modules(target) -> list:
    """The probe file's modules and the modules that define the kernels the launcher launched
    (``triton_compat.launched_kernels``: found from the launches themselves, wherever their
    modules live: beside the probe file, in site-packages, an editable install or a zip)."""
    from harness.run.triton_compat import launched_kernels

    mods = [target.kernel, target.inputs]
    for k in launched_kernels():
        m = _defining_module(k)
        if m is not None and all(m is not x for x in mods):
            mods.append(m)
    return mods


def _defining_module(kernel):
    """The module a launched kernel was defined in: ``sys.modules[kernel.__module__]`` where that
    is the module whose globals the function has, else a stand-in holding those globals."""
    import types

    fn = getattr(kernel, "fn", None)
    glb = getattr(fn, "__globals__", None)
    if not isinstance(glb, dict):
        return None
    m = sys.modules.get(getattr(kernel, "__module__", None) or glb.get("__name__", ""))
    if m is not None and vars(m) is glb:
        return m
    stand_in = types.ModuleType(glb.get("__name__", "kernels"))
    stand_in.__dict__.update(glb)
    return stand_in


def kernel_classes():
    """The classes a ``@triton.jit`` function is, compiled or interpreted."""
    from triton.runtime.jit import JITFunction

    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # an older Triton
        return (JITFunction,)
    return (JITFunction, InterpretedFunction)


def jitted(target) -> list:
    """The ``@triton.jit`` functions of the probe file's modules (``user_modules``), and those inside
    an autotuner or heuristics."""
    from harness.run.triton_compat import wrapped_objects

    return [o for o in wrapped_objects(*user_modules(target)) if isinstance(o, kernel_classes())]


def kernel_source(fn) -> str:
    import inspect

    src = getattr(fn, "src", None)
    if src:
        return src
    try:
        return inspect.getsource(getattr(fn, "fn", fn))
    except (OSError, TypeError):
        return ""


def kernel_facts(target) -> dict:
    """{"atomics": bool, "autotune": bool, "unreset_atomics": [kernel names]} over every
    ``@triton.jit`` function the modules hold; ``unreset_atomics``: autotuned kernels with
    atomics in their source and neither ``reset_to_zero`` nor ``restore_value`` (nor a
    ``pre_hook`` that could reset them)."""
    from triton.runtime.autotuner import Autotuner
    from harness.run.triton_compat import wrapped_objects

    atomics = autotune = False
    unreset = []
    for obj in wrapped_objects(*user_modules(target)):
        if isinstance(obj, Autotuner):
            autotune = True
            fn = obj.fn
            while not isinstance(fn, kernel_classes()) and hasattr(fn, "fn"):  # heuristics inside autotune
                fn = fn.fn
            src = kernel_source(fn)
            hooked = getattr(obj, "reset_to_zero", None) or getattr(obj, "restore_value", None) \
                or any(getattr(c, "pre_hook", None) for c in getattr(obj, "configs", []) or [])
            if "atomic_" in src and not hooked:
                unreset.append(getattr(fn, "__name__", "?"))
        if isinstance(obj, kernel_classes()):
            atomics = atomics or "atomic_" in kernel_source(obj)
    return {"atomics": atomics, "autotune": autotune, "unreset_atomics": sorted(set(unreset))}


def known_facts(ctx) -> dict:
    """``ctx.board`` with the source's facts (``kernel_facts``) added once; what a run already saw
    (atomics counted by the instrumented interpreter) is kept over what the source says."""
    board = ctx.board
    if board.unreset_atomics is None:
        for key, value in kernel_facts(ctx.target).items():
            setattr(board, key, getattr(board, key) or value)
    return board


def _blockish(name, value) -> bool:
    """A constexpr-looking keyword (BLOCK_M, XBLOCK, TILE) given a power of 2 from 2 to 65,536."""
    return (isinstance(name, str) and name.isupper() and any(c.isalpha() for c in name)
            and isinstance(value, int) and not isinstance(value, bool) and 2 <= value <= 1 << 16
            and value & (value - 1) == 0)


def source_blocks(target) -> list[int]:
    """Block sizes read without running anything: every autotune config's power-of-2 constexprs,
    and every power-of-2 literal passed as an UPPERCASE keyword in the modules' source
    (``kernel[grid](..., BLOCK=64)``). The instrumented interpreter records the values a launch
    really used; a GPU run has only these."""
    import ast

    from triton.runtime.autotuner import Autotuner
    from harness.run.triton_compat import wrapped_objects

    mods = user_modules(target)
    out = set()
    for obj in wrapped_objects(*mods):
        if isinstance(obj, Autotuner):
            for c in getattr(obj, "configs", None) or []:
                out |= {v for k, v in (getattr(c, "kwargs", None) or {}).items() if _blockish(k, v)}
    for m in mods:
        try:
            with open(getattr(m, "__file__", "") or "", encoding="utf-8") as f:
                text = f.read(2_000_000)
            tree = ast.parse(text)
        except (OSError, SyntaxError, ValueError):
            continue
        out |= {n.value.value for n in ast.walk(tree) if isinstance(n, ast.keyword)
                and isinstance(n.value, ast.Constant) and _blockish(n.arg, n.value.value)}
    return sorted(out)


def blocks(ctx) -> list[int]:
    """The block sizes the fuzzing and the experiments work around: those an instrumented run
    saw, else (a GPU) those the source gives, read once."""
    if not ctx.blocks and ctx.backend != "interpreter":
        ctx.blocks = source_blocks(ctx.target)
    return ctx.blocks


def source_text(path: str) -> str:
    """A module's source: its file, or its member of a zip archive on the path (a zipimported module)."""
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return f.read()
    import zipfile

    head, tail = path, []
    while head and not os.path.isfile(head):
        head, part = os.path.split(head)
        if not part:
            break
        tail.insert(0, part)
    if head and tail and zipfile.is_zipfile(head):
        with zipfile.ZipFile(head) as z:
            return z.read("/".join(tail)).decode("utf-8")
    raise OSError(f"{path}: no such file")
