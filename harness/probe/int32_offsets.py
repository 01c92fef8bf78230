"""Evidence that a launched kernel's addresses can wrap: an int32 offset that grows with a size.

The rule (lint's TL501, ``harness.lint.rules.tl501_int32_pointer_offset.offsets``, read on the
kernels the launcher actually launched, at their own lines): an address of a ``tl.load`` or
``tl.store`` holds ``a * b`` where ``a`` comes from ``tl.program_id`` (or an index loaded through an
address that does, or any value loaded through a pointer whose tensor has elements of 4 bytes or fewer at
the launch: an int32 index map's destination row, ``launch_facts``) with no 64-bit cast on the way and
``b`` is a runtime argument of the kernel (not a constexpr, not a pointer, not annotated ``tl.int64``).

Why that is enough to spend a GPU run past 2**31 elements on: ``tl.program_id`` is int32, and
Triton passes a Python int below 2**31 as int32, so the product is computed in int32 whatever the
kernel does with it. The program id runs over the grid, which grows with the problem (one program
per row, per block of rows), and the runtime argument is a size or a stride, which grows with the
other sizes: their product is an element offset into a tensor, so it reaches 2**31, and wraps
negative, exactly when that tensor passes 2**31 elements. Nothing else about the kernel needs to be
known: the address is wrong there unless the kernel never sees such a tensor, which only a run at
that size can show. (Where the program id runs over an inner axis, a head index times a head
stride, the product is bounded by one outer slice and wraps only at a far larger tensor: still an
int32 product, so still named, and the GPU run says whether it matters at the sizes it reaches.)
A kernel that widens first (``tl.program_id(0).to(tl.int64)``, a stride declared ``tl.int64``) has no
such product and stays quiet; nor does an offset into a pointer argument that was None at the
launch (a branch a constexpr turns off). The rule cannot see products built
through helper functions or block pointers; it never claims a wrong result (a hazard until the
GPU run shows one: ``large``'s P404).
"""

from __future__ import annotations

import ast
import os


def spans(kernels) -> list[dict]:
    """Where each launched ``@triton.jit`` function is: {"name", "file", "first", "last"} (its source lines,
    decorators included); a kernel whose source cannot be found is left out."""
    import inspect

    out = []
    for k in kernels:
        fn = getattr(k, "fn", None)
        code = getattr(fn, "__code__", None)
        if code is None or not code.co_filename or code.co_filename.startswith("<"):
            continue
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            continue
        out.append({"name": getattr(fn, "__name__", "?"), "file": code.co_filename, "first": first,
                    "last": first + len(lines) - 1})
    return out


def evidence(kernel_spans: list[dict], read=None, narrow: dict | None = None) -> list[dict]:
    """The int32 offsets in the launched kernels (``spans``), each once, in file and line order:
    {"kernel", "file", "line", "expr" (the product), "pointer" (the kernel argument the address is
    based on, or "")}. ``read(path)`` gives a file's source (default: the file; a zip's member too);
    ``narrow`` ({kernel: pointer arguments holding 32-bit or narrower values at the launch}) makes a value
    loaded through one an int32 source (``launch_facts``)."""
    from harness.lint.model import Module
    from harness.lint.rules._common import pointer_param
    from harness.lint.rules.tl501_int32_pointer_offset import offsets

    read = read or _read
    by_file: dict = {}
    for s in kernel_spans:
        by_file.setdefault(s["file"], []).append(s)
    out, seen = [], set()
    for path, mine in by_file.items():
        try:
            module = Module(read(path), path)
            found = list(offsets(module, narrow))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        for flow, node, pointer in found:
            kernel = next((s for s in mine if s["first"] <= node.lineno <= s["last"]), None)
            if kernel is None or (path, node.lineno, ast.unparse(node)) in seen:
                continue
            seen.add((path, node.lineno, ast.unparse(node)))
            out.append({"kernel": kernel["name"], "file": path, "line": node.lineno, "expr": ast.unparse(node),
                        "pointer": pointer_param(flow, pointer) or ""})
    return sorted(out, key=lambda e: (e["file"], e["line"]))


def _read(path: str) -> str:
    from harness.probe.kernels import source_text  # a module's source, from its file or its zip

    return source_text(path)


def here(ctx) -> list[dict]:
    """The evidence in the kernels launched so far in this process (where none was launched yet, after one
    call of the launcher at the default sizes; [] where that raises: the reference detector says so), each
    offset into a tensor the launch was given (``addressed``), those into the largest tensor first."""
    from harness.probe import execute as X
    from harness.run.triton_compat import launched_kernels
    from harness.run.worker import call_with

    numels, narrow = launch_facts(ctx)
    if not launched_kernels():  # the launcher raised before any launch: the reference detector says so
        return []
    found = evidence(spans(launched_kernels()), narrow=narrow)
    return addressed(found, numels) if found else []


def addressed(found: list[dict], numels: dict) -> list[dict]:
    """The offsets into a tensor the kernel was given (``numels``: {(kernel, argument): numel} of one launch), the
    largest tensor's first: an offset whose pointer argument was None there (a branch a constexpr turns off, as
    an optional scale's) is no evidence. Where the launch was not seen (``numels`` empty), or lint could not
    name the pointer, the offset stays."""
    if numels:
        found = [e for e in found if not e["pointer"] or numels.get((e["kernel"], e["pointer"]), 0) > 0]
    return largest_first(found, numels)


def largest_first(found: list[dict], numels: dict) -> list[dict]:
    """The offsets, those into the largest tensor first (``numels``: {(kernel, argument): numel} at the defaults,
    ``launch_tensors``'): that tensor passes 2**31 elements first, so the warning names it."""
    return sorted(found, key=lambda e: -numels.get((e["kernel"], e["pointer"]), 0))


def launch_facts(ctx) -> tuple[dict, dict]:
    """From one call of the launcher at the default sizes: {(kernel, argument): numel} of the kernels' tensor
    arguments, and {kernel: the arguments whose elements are 4 bytes or fewer}. A value loaded through such an
    argument and used in an address is an integer of 32 bits or fewer (an address takes no float), so a product
    with it is int32: an index map's destination row times the hidden size wraps as a program id would. An int64
    index tensor (8 bytes) gives int64 products. ({}, {}) where the launcher raises."""
    from harness.probe import execute as X
    from harness.run.triton_compat import launch_tensors
    from harness.run.worker import call_with

    try:
        with launch_tensors() as got:
            call_with(ctx.target.launcher, X.make(ctx.target, ctx.target.sizes, ctx.seed, ctx.backend))
    except Exception:  # noqa: BLE001  the launcher's own failure: another detector's finding
        return {}, {}
    narrow: dict = {}
    for (kernel, name), (_, itemsize) in got.items():
        if itemsize <= 4:
            narrow.setdefault(kernel, set()).add(name)
    return {k: n for k, (n, _) in got.items()}, narrow


def hazard_text(found: list[dict], size: str | None, tensor_fallback: str = "") -> str:
    """The warning's words: the offsets, the size they grow with, and the tensor that has to pass 2**31."""
    first = found[0]
    tensor = f"the tensor at {first['pointer']}" if first["pointer"] else (tensor_fallback or "the tensor it addresses")
    exprs = ", ".join(dict.fromkeys(f"`{e['expr']}`" for e in found))
    grows = f"grows with {size}" if size else "grows with the sizes"
    return (f"int32 offset {grows}; wraps once {tensor} passes 2**31 elements: {exprs} in {first['kernel']} "
            f"multiplies a program id by a runtime size in int32, never widened to int64 (a hazard: not shown "
            f"wrong; a GPU with the memory runs it past 2**31)")


def where(found: list[dict]) -> str:
    """The finding's line: each offset's file:line (as the probe shows paths), the first three."""
    from harness.probe.findings import shown_path

    lines = list(dict.fromkeys(f"{shown_path(os.path.abspath(e['file']))}:{e['line']}" for e in found))
    return ", ".join(lines[:3]) + (f" (+{len(lines) - 3} more)" if len(lines) > 3 else "")
