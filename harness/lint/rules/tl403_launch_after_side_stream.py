"""TL403: a kernel launched on the current stream right after work queued on another stream."""

from __future__ import annotations

import ast

from harness.lint.model import dotted
from harness.lint.registry import HIGH, rule

BAD = '''
import torch
import triton
import triton.language as tl

@triton.jit
def relu_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=offs < n), 0.0), mask=offs < n)

def matmul_relu(a, b, out):
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.matmul(a, b, out=out)
    relu_kernel[(triton.cdiv(out.numel(), 1024),)](out, out.numel(), BLOCK=1024)
'''

GOOD = BAD.replace("    relu_kernel[", "    torch.cuda.current_stream().wait_stream(side)\n    relu_kernel[")

WAITS = {"wait_stream", "wait_event", "synchronize", "record_stream"}


def queues_work(block: ast.With) -> bool:
    """The ``with`` block does more than allocate (``torch.empty`` queues no kernel on the stream)."""
    calls = [n for stmt in block.body for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    return any(dotted(c.func).rsplit(".", 1)[-1] not in ("empty", "empty_like", "empty_strided", "new_empty")
               for c in calls)


@rule("TL403", "launch-after-side-stream", cases=("stream-no-sync",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="a launch after a `with torch.cuda.stream(...)` block, with no wait_stream/wait_event/synchronize "
              "between them")
def check(module):
    """A Triton kernel runs on the current stream. Work queued inside ``with torch.cuda.stream(side):`` runs
    on ``side``, and nothing orders the two: the kernel may read the other work's output before it is
    written. ``torch.cuda.current_stream().wait_stream(side)`` before the launch orders them. A block that
    only allocates (``torch.empty`` on the other stream) queues nothing and is left alone."""
    for launch in module.launches:
        fn = launch.launcher
        if fn is None:
            continue
        blocks = [n for n in ast.walk(fn) if isinstance(n, ast.With) and any(
            isinstance(i.context_expr, ast.Call) and dotted(i.context_expr.func).endswith("cuda.stream")
            for i in n.items) and n.end_lineno < launch.node.lineno and queues_work(n)]
        if not blocks:
            continue
        last = max(b.end_lineno for b in blocks)
        waits = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr in WAITS and last < n.lineno <= launch.node.lineno]
        if not waits:
            yield launch.node, (f"launched on the current stream after work queued on another stream (the "
                                f"`with` ending on line {last}), and nothing makes this stream wait for it: "
                                f"add torch.cuda.current_stream().wait_stream(...) before the launch")
