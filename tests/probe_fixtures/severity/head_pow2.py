"""A per-row scale over a head of ``head`` elements, the block as wide as the head: Triton raises
("Shape element 0 must be a power of 2") at a head size that is not a power of 2. That is the
launcher's domain, said loudly: shape fuzzing reports it once as a note (P405), not a failure."""

import torch
import triton
import triton.language as tl

FUZZ = {"rows": (1, 8), "head": (1, 64)}


@triton.jit
def scale_kernel(x_ptr, out_ptr, HEAD: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([HEAD], dtype=tl.float32)
    offs = tl.arange(0, HEAD)
    acc += tl.load(x_ptr + row * HEAD + offs)
    tl.store(out_ptr + row * HEAD + offs, 2.0 * acc)


def launch(x):
    out = torch.empty_like(x)
    scale_kernel[(x.shape[0],)](x, out, HEAD=x.shape[1])
    return out


def make_inputs(*, device, gen, rows=4, head=16):
    return {"x": torch.randn(rows, head, generator=gen).to(device)}


def reference(x):
    return 2.0 * x.double()
