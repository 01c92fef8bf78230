"""Every load, store and atomic checked against its tensor's bounds, at the kernel's line
(the instrumented interpreter: an access is reported before it happens).

It runs at the default sizes and, where a size's default is a multiple of a block size, at the
defaults' own tails (each such size one less): a last, partial block is where a lane past the end
is active. Masked-off lanes of a ``tl.load`` without ``other=`` hold poison: an address made from
them is checked. An access outside that only poison makes (with 0 in those lanes, what today's
GPUs give, it stays inside) is a warning: the kernel relies on values Triton leaves undefined.
"""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import crash, fmt
from harness.probe.detectors import Detector
from harness.probe.findings import ERROR, WARNING, Code

CODES = {"store": "P101", "load": "P102", "atomic": "P103"}


def _hits(ctx, sizes: dict, poison: bool):
    inputs = X.make(ctx.target, sizes, ctx.seed, ctx.backend)
    with ctx.instrument(memcheck=True, poison_masked=poison) as rec:
        c = ctx.call(inputs)
    return rec.oob, c


def tails(ctx) -> dict | None:
    """The defaults with each size that is a multiple of a block size one less (None: none is)."""
    from harness.probe.fuzz import own_tails
    from harness.probe.kernels import blocks

    bs = [b for b in (blocks(ctx) or []) if isinstance(b, int) and b >= 2]
    sizes = dict(ctx.target.sizes)
    for k, v in sizes.items():
        if isinstance(v, int) and not isinstance(v, bool) and own_tails(v, bs, [v - 1]):
            sizes[k] = v - 1
    return None if sizes == ctx.target.sizes else sizes


def run(ctx) -> list:
    t = ctx.target
    poison = ctx.options.get("poison_masked", True)
    oob, c = _hits(ctx, t.sizes, poison)
    at, where = t.sizes, ""
    if not oob and c.error is None and (tail := tails(ctx)) is not None:
        try:
            got = _hits(ctx, tail, poison)
        except Exception:  # noqa: BLE001  make_inputs declines the tail: nothing more to check
            got = {}, c
        if got[0]:  # (a launcher or Triton that refuses the tail, an assert, a power-of-2 arange, is the
            oob, c = got  # size's limit, not the kernel's fault: what it did before refusing still counts)
            at, where = tail, f" at {fmt(tail)}"
    zero = _hits(ctx, at, False)[0] if oob and poison else oob
    out = []
    for (kind, tensor, side, line), hit in sorted(oob.items(), key=lambda kv: kv[0][3]):
        real = (kind, tensor, side, line) in zero
        why = "" if real else ("; only through masked-off lanes of a tl.load without other= (poison there; with "
                               "0, what today's GPUs give and Triton leaves undefined, it stays inside)")
        out.append(ctx.finding(CODES[kind], f"{hit['kernel']}: {kind} {side} of '{tensor}' by up to "
                                            f"{hit['elements']} elements ({hit['lanes']} lanes; first by program "
                                            f"{hit['pid']}){where}{why}", line=line, kernel=hit["kernel"],
                               programs=[hit["pid"]], severity=ERROR if real else WARNING, sizes=dict(at)))
    if c.error is not None:
        out.append(crash(ctx, c.error, at))
    return out


ONLY_POISON = "a warning where only poison in masked-off lanes puts the address outside"
P101 = Code("P101", ERROR, "a store outside the tensor its pointer came from: a mask missing or wrong, an offset past "
                           "the end", ("add-missing-mask", "conv2d-channel-mask"), otherwise=ONLY_POISON, sanitize=ERROR)
P102 = Code("P102", ERROR, "a load outside the tensor its pointer came from", ("matmul-k-tail", "attention-seq-tail"),
            otherwise=ONLY_POISON, sanitize=ERROR)
P103 = Code("P103", ERROR, "an atomic outside the tensor its pointer came from", otherwise=ONLY_POISON,
            sanitize=ERROR)

DETECTOR = Detector("memcheck", "every load and store against its tensor's bounds", run, backends=("interpreter",),
                    process={"interpreter": 1}, rank=2, codes=(P101, P102, P103))
