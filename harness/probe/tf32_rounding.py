"""The TF32 rounding of an fp32 ``tl.dot`` left at Triton's default ``input_precision``: whether it
alone makes a result wrong (the call again without it: the interpreter's emulation off, or on a GPU
Triton's fp32 default set to "ieee", ``ieee``), whether the source chose TF32 itself (``chosen``),
and the P204 finding that says so: a warning, with the matmul-tf32-default lesson, where the dot is
left at the default; information where the source asks for TF32 (issue #37). Used by the reference
detector, shape fuzzing and the tf32 experiment."""

from __future__ import annotations

import contextlib

from harness.probe.kernels import jitted


def _forget(kernels) -> None:
    for k in kernels:  # the compiled binaries a launch would reuse
        for attr in ("device_caches", "cache"):
            c = getattr(k, attr, None)
            if hasattr(c, "clear"):
                c.clear()


@contextlib.contextmanager
def ieee(target):
    import os
    import tempfile

    from triton import knobs

    from harness.run.patching import Patcher

    kernels = jitted(target)
    with tempfile.TemporaryDirectory(prefix="casebook-ieee-") as d, Patcher() as patch:
        patch.callback(lambda: _forget(kernels))  # undone last: the kernels built under ieee are dropped
        # the environment first: setting a knob also writes its variable, and the stack must hold the old one
        patch.setitem(os.environ, "TRITON_F32_DEFAULT", "ieee")
        patch.setitem(os.environ, "TRITON_CACHE_DIR", d)
        patch.setattr(knobs.language, "fp32_default", "ieee")
        patch.setattr(knobs.cache, "dir", d)
        _forget(kernels)
        yield




def _dot_lines(target) -> list:
    """file:line of each ``.dot(`` in the jitted kernels' source (a GPU run records no lines)."""
    import inspect
    import os

    out = []
    for k in jitted(target):
        fn = getattr(k, "fn", None)
        try:
            lines, start = inspect.getsourcelines(fn)
            path = os.path.relpath(inspect.getsourcefile(fn))
        except (TypeError, OSError):
            continue
        out += [f"{path}:{start + i}" for i, text in enumerate(lines) if ".dot(" in text]
    return out


def could_round(ctx, inputs: dict, rec=None) -> bool:
    """Whether TF32 rounding of an fp32 ``tl.dot`` may have made the run wrong, as ``right_without_tf32`` decides
    before it runs again: under the interpreter a dot it rounded (``rec``, the run's Recorder), on a GPU a dot in
    the kernels' source and an fp32 input."""
    if ctx.backend == "interpreter":
        return rec is not None and bool(rec.tf32_dots)
    import torch

    src = " ".join(getattr(k, "src", "") or "" for k in jitted(ctx.target))
    return ".dot(" in src and any(isinstance(v, torch.Tensor) and v.dtype == torch.float32 for v in inputs.values())


def right_without_tf32(ctx, inputs: dict, ref, rec=None) -> list | None:
    """The lines of the fp32 ``tl.dot`` calls whose TF32 rounding alone makes the result wrong: the
    call on ``inputs`` again without it (the interpreter's emulation off, with 0 in masked lanes; on
    a GPU Triton's fp32 default set to "ieee") is right. None where it is still wrong, or there is no
    such dot. ``rec``: the wrong run's Recorder (the interpreter)."""
    from harness.probe import execute as X

    if not could_round(ctx, inputs, rec):  # no dot, or (GPU) no fp32 operand it could round: a rerun would
        return None  # recompile every kernel for nothing
    if ctx.backend == "interpreter":
        with ctx.instrument(tf32=False, poison_masked=False):
            again = ctx.call(X.clone_inputs(inputs), ref=ref)
        lines = list(rec.dot_lines)
    else:
        try:
            with ieee(ctx.target):
                again = ctx.call(X.clone_inputs(inputs), ref=ref)
        except (ImportError, AttributeError):  # a Triton without these knobs
            return None
        lines = _dot_lines(ctx.target)
    return lines if again.error is None and again.cmp["close"] else None


def chosen(lines: list) -> bool:
    """Whether every one of these ``tl.dot`` calls names its precision (``input_precision=``,
    ``allow_tf32=``): TF32 then is the author's choice, not Triton's default left in place."""
    import linecache

    def names_it(where: str) -> bool:
        path, _, line = where.rpartition(":")
        if not line.isdigit():
            return False
        text, n = "", int(line)
        for i in range(n, n + 6):  # the call, to its closing parenthesis
            text += linecache.getline(path, i).partition("#")[0]  # the code, not its comment
            if text.count("(") and text.count("(") <= text.count(")"):
                break
        return "input_precision" in text or "allow_tf32" in text

    return bool(lines) and all(names_it(w) for w in lines)


LESSON = "matmul-tf32-default"


def finding(ctx, lines: list, evidence: str, sizes: dict | None = None, asked: bool | None = None):
    """P204: a warning where the dots are left at Triton's default (named, with the lesson), information
    where the source chose TF32 (the kernel's own number format; ``asked``: ``chosen(lines)``, as the
    worker, which reads the source where it runs, found it)."""
    from harness.probe.findings import INFO, WARNING

    if chosen(lines) if asked is None else asked:
        return ctx.finding("P204", f"tl.dot rounds its fp32 operands to TF32, as its source asks (input_precision): "
                                   f"{evidence} (information: the kernel's chosen precision)"[:400],
                           line=", ".join(lines), severity=INFO)
    return ctx.finding("P204", f"tl.dot of fp32 operands left at Triton's default input_precision rounds them like "
                               f"TF32 (10-bit mantissa) on NVIDIA GPUs: {evidence}; with input_precision=\"ieee\" it "
                               f"matches (warning: Triton's documented default; lesson cases/{LESSON})"[:400],
                       line=", ".join(lines), severity=WARNING, sizes=dict(sizes or {}))
