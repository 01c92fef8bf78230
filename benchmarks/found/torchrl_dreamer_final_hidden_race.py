"""torchrl 0.14.1's ``DreamerV3BlockGRU(recurrent_backend="triton")``, called as released on a GPU: is the final
hidden state it returns the last row of the outputs it returns, on every run?

Lint's TL703 (store-then-load-no-barrier, a default rule) flags torchrl/modules/models/_dreamer_v3_block_gru_triton.py
line 603: after the time loop ``_block_gru_fwd_kernel`` loads ``output[:, T - 1, :]`` as one ``[BLOCK_B, H]`` tile and
stores it as the final hidden state, right after storing that row block by block as ``[BLOCK_B, D]`` tiles (line
579), with no ``tl.debug_barrier()`` between: a warp can read a block another warp has not stored yet. The final
hidden state is a copy of ``output[:, -1]``, so any difference between them is that race; and the same inputs must
give the same outputs on every run (the forward has no atomics), so a second distinct result is a race too. A candidate until this
run shows it (no difference in any trial says the race did not show, not that it cannot). The code is not copied
here. GPU only (the backend raises without CUDA).

    pip download --no-deps --only-binary :all: --python-version 3.12 -d wheels/ \\
        torchrl==0.14.1 "tensordict>=0.14.3,<0.15" pyvers==0.2.3 hoptorch==0.1.4      # where there is internet
    pip install --no-deps --target /tmp/torchrl wheels/*.whl                           # on the GPU machine
    python benchmarks/found/torchrl_dreamer_final_hidden_race.py /tmp/torchrl [TRIALS]
"""

import sys


def main(site: str, trials: int) -> int:
    from _released import released

    loaded = released(site, "torchrl", "torchrl.modules", "DreamerV3BlockGRU",
                      "recurrent_backend='triton' is CUDA only")
    if loaded is None:
        return 2
    import torch

    _, DreamerV3BlockGRU = loaded
    races = 0
    # the last two: the shape of torchrl's flaky gradient-parity test (pytorch/rl #4257: batch 2, 4 blocks, hidden
    # 32, projection 48), and a longer one
    shapes = ((256, 64, 512, 8, 512), (1024, 16, 1024, 8, 512), (64, 128, 256, 4, 512), (2, 3, 32, 4, 48),
              (2, 256, 32, 4, 48))
    for batch, time, hidden, blocks, projection in shapes:
        torch.manual_seed(0)
        gru = DreamerV3BlockGRU(64, hidden, projection_size=projection, num_blocks=blocks, recurrent_backend="triton",
                                device="cuda")
        ref = DreamerV3BlockGRU(64, hidden, projection_size=projection, num_blocks=blocks, device="cuda")
        ref.load_state_dict(gru.state_dict())
        x = torch.randn(batch, time, 64, device="cuda")
        with torch.no_grad():
            want_out, want_h = ref(x)
            differ, runs = 0, set()
            try:
                gru(x)
            except Exception as e:  # the released kernel does not compile everywhere (Triton 3.6: static_range)
                print(f"could not run: {type(e).__name__}: {str(e).strip().splitlines()[-1][:300]}")
                return 2
            for _ in range(trials):
                out, h = gru(x)
                differ += int(not torch.equal(h, out[:, -1]))
                runs.add((hash(out.cpu().numpy().tobytes()), hash(h.cpu().numpy().tobytes())))
            err = (out - want_out).abs().max().item()
        races += differ
        print(f"B={batch} T={time} H={hidden} blocks={blocks} projection={projection}: final hidden != output[:, -1] in "
              f"{differ} of {trials} runs; {len(runs)} distinct (outputs, final state) results; last run's max "
              f"|output - reference backend| {err:.2e}")
        races += len(runs) - 1  # the same inputs, the same launches: any second result is a race
    print("a race showed" if races else "no race showed in these runs")
    return 1 if races else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args[0] if args else ".", int(args[1]) if len(args) > 1 else 200))
