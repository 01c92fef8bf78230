"""A reproduction of rl_games' Triton GAE (rl_games/triton_kernels/gae_kernel.py: the kernel _gae_kernel and
its launcher _triton_gae, which compute_gae dispatches to for CUDA tensors when Triton is enabled, the
default; A2CBase.discount_values calls it for every PPO/A2C rollout): our own kernel and launcher with the
same mechanism, launch pattern and arguments. One program per (env, value) pair, grid num_envs *
value_size; each program scans the horizon backwards in a loop over a constexpr horizon, loading one
scalar reward, value and done a step through the strides the launcher passes for dims 0 and 1 (the last
dim read at unit stride), starting from last_values and last_dones read as flat dense arrays, and stores
lastgaelam into a torch.empty_like(rewards) advantage buffer.

Buggy, as added in PR 346 (commit d907600): the current step's value is loaded at the offset built from
the rewards' strides (the same offset as the reward), the next step's value at the values' own strides,
and the launcher passes its inputs as they are (dones cast to float32 only). Fixed, as PR 358 (commit
a52907e): the current value is loaded through the values' strides, and the launcher makes rewards,
values, dones, last_values and last_dones contiguous (dones as float32) before the launch.

Two things of the released code are left out on purpose, neither the bug: the buggy version defined the
kernel inside _triton_gae with a function-local `import triton.language as tl`, which Triton <= 3.3
cannot resolve (a NameError when it compiles, the other half of PR 358); here the kernel is at module
level on both sides. And the buggy version passed gamma and lam as tl.constexpr (PR 358 made them runtime
scalars so a new gamma does not recompile); here they are runtime scalars on both sides, the same
float32 arithmetic.
"""

import torch
import triton
import triton.language as tl

GAMMA, TAU = 0.99, 0.95  # upstream tests' first (gamma, tau) and rl_games' usual PPO config


@triton.jit
def _gae_kernel(rewards_ptr, values_ptr, dones_ptr, last_values_ptr, last_dones_ptr, advs_ptr,
                gamma, lam, horizon: tl.constexpr, value_size: tl.constexpr,
                r_st, r_se, v_st, v_se, d_st, d_se, a_st, a_se,
                VALUES_OWN_STRIDES: tl.constexpr):
    pid = tl.program_id(0)
    env = pid // value_size
    k = pid % value_size
    last_val = tl.load(last_values_ptr + env * value_size + k)  # flat: assumes a dense (num_envs, value_size)
    last_done = tl.load(last_dones_ptr + env)
    gae = 0.0
    for step in range(horizon):
        t = horizon - 1 - step
        r_off = t * r_st + env * r_se + k
        reward = tl.load(rewards_ptr + r_off)
        if VALUES_OWN_STRIDES:
            value = tl.load(values_ptr + t * v_st + env * v_se + k)
        else:  # BUG: as added in d907600, the current value is read at the rewards' offset
            value = tl.load(values_ptr + r_off)
        if t == horizon - 1:
            next_value = last_val
            not_done = 1.0 - last_done
        else:
            next_value = tl.load(values_ptr + (t + 1) * v_st + env * v_se + k)
            not_done = 1.0 - tl.load(dones_ptr + (t + 1) * d_st + env * d_se)
        delta = reward + gamma * next_value * not_done - value
        gae = delta + gamma * lam * not_done * gae
        tl.store(advs_ptr + t * a_st + env * a_se + k, gae)


def _launch(rewards, values, dones, last_values, last_dones, fixed):
    horizon, num_envs, value_size = rewards.shape
    if fixed:  # PR 358: every input made dense before the launch
        rewards = rewards.contiguous()
        values = values.contiguous()
        dones = dones.float().contiguous()
        last_values = last_values.contiguous()
        last_dones = last_dones.float().contiguous()
    else:  # BUG: as added in d907600, the inputs go to the kernel in whatever layout they came
        if dones.dtype != torch.float32:
            dones = dones.float()
        if last_dones.dtype != torch.float32:
            last_dones = last_dones.float()
    advs = torch.empty_like(rewards)
    _gae_kernel[(num_envs * value_size,)](
        rewards, values, dones, last_values, last_dones, advs, GAMMA, TAU, horizon, value_size,
        rewards.stride(0), rewards.stride(1), values.stride(0), values.stride(1),
        dones.stride(0), dones.stride(1), advs.stride(0), advs.stride(1),
        VALUES_OWN_STRIDES=fixed)
    return advs


def launch_buggy(rewards, values, dones, last_values, last_dones):
    return _launch(rewards, values, dones, last_values, last_dones, False)


def launch_fixed(rewards, values, dones, last_values, last_dones):
    return _launch(rewards, values, dones, last_values, last_dones, True)


def make_inputs(*, device, gen, horizon=8, num_envs=16, value_size=1, values_view=0):
    """As rl_games' tests/test_triton_gae.py (added by the fix) makes them: rewards, values randn
    (horizon, num_envs, value_size), dones and last_dones 1.0 with probability 0.15, last_values randn
    (num_envs, value_size), all float32. Default sizes: the test's first shape (8, 16, 1); FUZZ spans its
    shapes, (8, 16, 1), (36, 64, 3) and (200, 128, 1), and its view case (12, 8, 2).
    values_view (an input switch, 0 by default): 1 hands values in as the last-dim slice [..., :value_size]
    of a (horizon, num_envs, value_size + 1) buffer, the layout of the test's view case
    (test_triton_handles_view_inputs), while rewards stay dense: same shape, other strides."""
    rewards = torch.randn(horizon, num_envs, value_size, generator=gen)
    if values_view:  # sliced on the device: .to(device) copies a view with gaps into a dense tensor
        values = torch.randn(horizon, num_envs, value_size + 1, generator=gen).to(device)[:, :, :value_size]
    else:
        values = torch.randn(horizon, num_envs, value_size, generator=gen)
    dones = (torch.rand(horizon, num_envs, generator=gen) < 0.15).float()
    last_values = torch.randn(num_envs, value_size, generator=gen)
    last_dones = (torch.rand(num_envs, generator=gen) < 0.15).float()
    return {"rewards": rewards.to(device), "values": values.to(device), "dones": dones.to(device),
            "last_values": last_values.to(device), "last_dones": last_dones.to(device)}


def reference(rewards, values, dones, last_values, last_dones):
    """GAE by the backward recursion of rl_games' PyTorch path (_pytorch_gae), in float64:
    delta_t = r_t + gamma * V_{t+1} * (1 - done_{t+1}) - V_t, A_t = delta_t + gamma * tau * (1 - done_{t+1}) * A_{t+1},
    with V_H = last_values and done_H = last_dones."""
    r, v, d = rewards.double(), values.double(), dones.double()
    lv, ld = last_values.double(), last_dones.double()
    horizon = r.shape[0]
    advs = torch.zeros_like(r)
    gae = torch.zeros_like(r[0])
    for t in reversed(range(horizon)):
        if t == horizon - 1:
            not_done, next_value = 1.0 - ld, lv
        else:
            not_done, next_value = 1.0 - d[t + 1], v[t + 1]
        not_done = not_done.unsqueeze(1)
        delta = r[t] + GAMMA * next_value * not_done - v[t]
        gae = delta + GAMMA * TAU * not_done * gae
        advs[t] = gae
    return advs


FUZZ = {"horizon": (1, 200), "num_envs": (1, 128), "value_size": (1, 3), "values_view": (0, 1)}
