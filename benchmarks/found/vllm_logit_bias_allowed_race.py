"""vllm 0.33.0's ``apply_logit_bias`` (vllm/v1/worker/gpu/sample/logit_bias.py, kernel ``_bias_kernel``; the GPU
model runner's logits processor for ``allowed_token_ids``, ``logit_bias`` and ``min_tokens``), called as released:
does a token that a request both allows and biases keep its logit?

Lint's TL703 (store-then-load-no-barrier) flags logit_bias.py:234: the kernel restores the allowed tokens'
saved logits (line 219, a store at ``allowed_token_ids``) and then loads the logits of the biased tokens (line 234,
at ``logit_bias`` token ids) with no ``tl.debug_barrier()`` between, though it puts barriers around its other
phases. When one token sits at different positions of the two lists, its restore and its bias read are made by
different warps: the read can see the ``-inf`` written just before, and the token's logit ends as
``-inf + bias``, so an allowed token can never be sampled. OpenAI-style requests pass both lists (a classifier
prompt: ``allowed_token_ids`` and a ``logit_bias`` on some of them). Under the interpreter the programs run
lane-parallel in order, so the race cannot show; the question is for a GPU. A candidate until a run shows it.
The same kernel's first race (the save of the allowed logits against the -inf overwrite) was seen on GPUs and
fixed upstream by vllm pull request #46245 (June 2026), which added the two barriers around the overwrite; the
restore-then-bias pair checked here was left without one.

Only this one file of the release is used (loaded by path; the names it imports from the rest of vllm are
given stand-ins that it uses only in its host-side state class, which is not run):

    pip download --no-deps vllm==0.33.0 -d /tmp/vllm-whl
    python -m zipfile -e /tmp/vllm-whl/vllm-0.33.0-*.whl /tmp/vllm-src   # or extract only the one file
    python benchmarks/found/vllm_logit_bias_allowed_race.py /tmp/vllm-src [TRIALS]           # a CUDA GPU
    TRITON_INTERPRET=1 python benchmarks/found/vllm_logit_bias_allowed_race.py /tmp/vllm-src 1   # CPU check

Exit 1 when some allowed and biased token ends at -inf or a logit differs from the expected (the race shown),
0 when none does in any trial, 2 when the file is missing or there is no device.
"""

import os
import sys
import types
from pathlib import Path


def load(root: str):
    path = Path(root) / "vllm" / "v1" / "worker" / "gpu" / "sample" / "logit_bias.py"
    if not path.is_file():
        return None, path
    import triton
    import triton.language as tl

    stand_ins = {
        "vllm": {},
        "vllm.sampling_params": {"SamplingParams": object},
        "vllm.triton_utils": {"tl": tl, "triton": triton},
        "vllm.v1": {}, "vllm.v1.worker": {}, "vllm.v1.worker.gpu": {},
        "vllm.v1.worker.gpu.buffer_utils": {"StagedWriteTensor": object, "UvaBackedTensor": object},
        "vllm.v1.worker.gpu.sample": {}, "vllm.v1.worker.gpu.sample.logits_processor": {},
        "vllm.v1.worker.gpu.sample.logits_processor.interface": {
            "LogitsContext": object, "LogitsProcessor": object, "LogitsProcRequestState": object},
    }
    for name, attrs in stand_ins.items():
        if name not in sys.modules:
            module = types.ModuleType(name)
            module.__dict__.update(attrs)
            sys.modules[name] = module
    from _released import from_file

    return from_file(path, "vllm_logit_bias_033"), path


def main(root: str, trials: int) -> int:
    import torch
    import triton

    module, path = load(root)
    if module is None:
        print(f"error: {path} not found (extract the vllm 0.33.0 wheel there)", file=sys.stderr)
        return 2
    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    if not interpreted and not torch.cuda.is_available():
        print("error: needs a CUDA device (or TRITON_INTERPRET=1 for the CPU check); nothing ran", file=sys.stderr)
        return 2
    device = "cpu" if interpreted else "cuda"
    where = "CPU, TRITON_INTERPRET=1" if interpreted else torch.cuda.get_device_name()
    print(f"vllm 0.33.0 ({path.name} as released), torch {torch.__version__}, triton {triton.__version__}; {where}")

    rows, vocab, n = (4, 4096, 1024) if interpreted else (2048, 32000, 1024)
    gen = torch.Generator().manual_seed(0)
    allowed = torch.stack([torch.randperm(vocab, generator=gen)[:n] for _ in range(rows)]).to(torch.int32)
    bias_ids = allowed.flip(1).contiguous()  # the same tokens, reversed: another warp holds each one
    bias = (torch.rand(rows, n, generator=gen) * 4 + 1).to(torch.float32)
    base = torch.randn(rows, vocab, generator=gen)
    expected = torch.full((rows, vocab), float("-inf"))
    for r in range(rows):
        expected[r, allowed[r].long()] = base[r, allowed[r].long()]
        expected[r, bias_ids[r].long()] += bias[r]

    def t(x):
        return x.to(device)

    ints = lambda v: t(torch.full((rows,), v, dtype=torch.int32))  # noqa: E731
    wrong_runs, killed_total, other_total = 0, 0, 0
    for trial in range(trials):
        logits = t(base.clone())
        module.apply_logit_bias(
            logits, t(torch.arange(rows, dtype=torch.int32)), t(torch.full((rows,), 100, dtype=torch.int64)),
            ints(n), t(allowed), ints(n), t(bias_ids), t(bias),
            ints(0), ints(0), ints(0), t(torch.zeros(rows, 128, dtype=torch.int32)))
        got = logits.cpu()
        killed_mask = torch.isinf(got) & ~torch.isinf(expected)
        killed = int(killed_mask.sum())
        other = int((((got - expected).abs() > 1e-5) & ~killed_mask).sum())  # -inf - -inf is NaN: not counted
        killed_total += killed
        other_total += other
        wrong_runs += bool(killed or other)
    print(f"{trials} launches of {rows} rows x {n} allowed tokens, each also biased (at the reversed position): "
          f"{wrong_runs} launches wrong; allowed and biased tokens left at -inf: {killed_total}; other logits "
          f"off: {other_total} (expected 0 and 0)")
    return 1 if wrong_runs else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args[0] if args else ".", int(args[1]) if len(args) > 1 else 50))
