"""harness.run.triton_compat, tested directly, on whichever Triton is installed.

- Under the interpreter (in a child process with TRITON_INTERPRET=1, as the worker
  runs): a ``for start in range(0, n, BLOCK)`` loop over a runtime ``n``; a
  multi-config ``@triton.autotune`` whose kernel counts its own launches, so the
  harness's count is checked against the kernel's; every patch undone after the block.
- In this process, with no GPU: Triton's real ``Autotuner`` around a real
  ``JITFunction`` whose launch is simulated (it calls Triton's launch hooks, as a
  compiled launch does), to test both ways of counting tuning launches: the public
  listener (Triton 3.8 and later) and the ``_bench`` wrapper.
- ``index_patch`` with stand-ins for both forms of Triton's ``_patch_lang_tensor``.
- harness.run.interp_instrument's instrumented interpreter (the probe's), under the
  interpreter in a child process: each place where Triton 3.4 to 3.9 differ (pre-run
  hooks, ``_patch_lang``'s scope, ``warmup=``, keyword-only arguments, block pointers,
  tensor descriptors), every patch undone after the block.
"""

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from harness.run import triton_compat
from harness.run.patching import Patcher

ROOT = Path(__file__).resolve().parents[1]

INTERPRETED = r'''
import json
import torch
import triton
import triton.language as tl
from triton.runtime import autotuner, interpreter
from harness.run import triton_compat


@triton.jit
def loop_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc))


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (16, 32, 64)], key=["n"])
@triton.jit
def count_launches(count_ptr, n, BLOCK: tl.constexpr):
    tl.atomic_add(count_ptr, 1)  # one program: +1 per launch, tuning launches included


def loop():
    x, out = torch.arange(100, dtype=torch.float32), torch.zeros(1)
    try:
        loop_sum[(1,)](x, out, 100, BLOCK=32)
        return out.item()
    except Exception as e:
        return type(e).__name__


def internals():
    return [autotuner.Autotuner.__dict__.get("do_bench"), autotuner.Autotuner.__dict__.get("_bench"),
            interpreter._patch_lang_tensor]


r = {"unpatched_loop": loop()}
before = internals()
with triton_compat.patched(interpreter=True) as counter:
    r["changed_inside"] = [a is not b for a, b in zip(internals(), before)]
    with triton_compat.launch_ints() as ints:
        r["loop"] = loop()
    r["ints"] = sorted(ints)
    count = torch.zeros(1, dtype=torch.int32)
    count_launches[(1,)](count, 10)
    r["how"], r["first"], r["launched_first"] = counter.how, list(counter.calls), int(count.item())
    counter.clear()
    count_launches[(1,)](count, 10)
    r["second"], r["launched_second"] = list(counter.calls), int(count.item()) - r["launched_first"]
r["restored"] = [a is b for a, b in zip(internals(), before)]
print("RESULT " + json.dumps(r))
'''


def run_interpreted(script: str) -> dict:
    """What ``script`` printed on its RESULT line, run as the worker runs: TRITON_INTERPRET=1,
    its own process."""
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
    assert p.returncode == 0 and lines, p.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


@pytest.fixture(scope="module")
def interpreted():
    """What the script above printed."""
    return run_interpreted(INTERPRETED)


def test_a_loop_over_a_runtime_bound_runs_under_the_interpreter(interpreted):
    assert interpreted["loop"] == sum(range(100)), interpreted


def test_each_launch_gives_its_integer_arguments_on_every_supported_triton(interpreted):
    """``launch_ints`` (the layout detector reads what strides a launcher passed): the loop's n and BLOCK,
    on Triton 3.4 and 3.5 too, where an interpreted kernel launches through ``kernel[grid]`` alone."""
    assert {100, 32} <= set(interpreted["ints"]), interpreted


def test_the_interpreter_counts_every_tuning_launch_the_kernel_made(interpreted):
    # the wrapper: one count per config, and each launch the kernel saw is counted once
    assert interpreted["how"] == "wrapper"
    assert len(interpreted["first"]) == 3 and all(n >= 7 for n in interpreted["first"]), interpreted
    assert sum(interpreted["first"]) + 1 == interpreted["launched_first"], interpreted
    # the second call uses the tuned config: no benchmark, one launch
    assert interpreted["second"] == [] and interpreted["launched_second"] == 1, interpreted


def test_the_interpreter_patches_are_undone_after_the_block(interpreted):
    assert interpreted["changed_inside"] == [True, True, True]
    assert interpreted["restored"] == [True, True, True]


# ---------------------------------------------------------------- counting with a simulated launch


def fake_autotuned(launches: list):
    """A real Autotuner (two configs, a do_bench that calls the kernel 4 times) around a real
    JITFunction whose ``run`` calls Triton's launch hooks instead of a GPU."""
    import triton
    from triton import knobs
    from triton.runtime.jit import JITFunction

    def tuned_kernel(x, n, BLOCK):
        pass

    jit = JITFunction(tuned_kernel)  # not triton.jit: compiled, even where TRITON_INTERPRET is set

    def run(*args, **kwargs):
        hook = getattr(knobs.runtime, "launch_enter_hook", None)
        if hook is not None:
            hook(types.SimpleNamespace(data={"name": jit.__name__, "function": None, "stream": 0}))
        launches.append(kwargs.get("BLOCK"))

    jit.run = run

    def do_bench(kernel_call, quantiles):
        for _ in range(4):
            kernel_call()
        return [1.0, 1.0, 1.0]

    configs = [triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})]
    return triton.autotune(configs=configs, key=["n"], do_bench=do_bench)(jit)


def tune_twice(tuned, counter, launches) -> list:
    """Two calls with a new key each (two tunings), then a cached call: the counts after each."""
    seen = []
    for n in (10, 20, 20):
        counter.clear()
        tuned.run(None, n)
        seen.append((list(counter.calls), len(launches)))
    return seen


def test_the_bench_wrapper_counts_each_configs_launches(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setattr(triton_compat, "public_tuning_hooks", lambda: None)  # as before Triton 3.8
    from triton.runtime.autotuner import Autotuner

    original = Autotuner.__dict__["_bench"]
    launches = []
    tuned = fake_autotuned(launches)
    with triton_compat.patched(interpreter=False) as counter:
        assert counter.how == "wrapper" and Autotuner.__dict__["_bench"] is not original
        seen = tune_twice(tuned, counter, launches)
    assert Autotuner.__dict__["_bench"] is original
    # 2 configs x 4 benchmark launches, then the real launch; the cached call launches once
    assert seen == [([4, 4], 9), ([4, 4], 18), ([], 19)]


@pytest.mark.skipif(triton_compat.public_tuning_hooks() is None,
                    reason="this Triton has no autotuning listener (added in 3.8)")
def test_the_listener_counts_tuning_launches_without_touching_internals(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    from triton import knobs
    from triton.runtime.autotuner import Autotuner

    heard = []
    monkeypatch.setattr(knobs.autotuning, "listener", lambda **kw: heard.append(kw["cache_hit"]))
    mine, hooks_before = knobs.autotuning.listener, list(knobs.runtime.launch_enter_hook.calls)
    original = Autotuner.__dict__["_bench"]
    launches = []
    tuned = fake_autotuned(launches)
    with triton_compat.patched(interpreter=False) as counter:
        assert counter.how == "listener" and Autotuner.__dict__["_bench"] is original
        seen = tune_twice(tuned, counter, launches)
    assert seen == [([8], 9), ([8], 18), ([], 19)]  # one count per tuning
    assert heard == [False, False]  # a listener already set still hears every tuning
    assert knobs.autotuning.listener is mine and knobs.runtime.launch_enter_hook.calls == hooks_before


def test_the_interpreter_never_uses_the_listener():
    # Triton 3.8 and 3.9's autotuner fails under the interpreter when a listener is set,
    # and the interpreter calls no launch hook: the wrapper counts there.
    counter = triton_compat.TuningCounter()
    with Patcher() as patcher:
        triton_compat._launch_counter(counter, interpreter=True, patcher=patcher)
    assert counter.how == "wrapper"


# ---------------------------------------------------------------- index_patch on both forms


class FakeTensor:
    pass


class Scope:
    def __init__(self):
        self.set = []

    def set_attr(self, obj, name, value):
        self.set.append(name)
        setattr(obj, name, value)


def element(value):
    return types.SimpleNamespace(handle=types.SimpleNamespace(data=np.array([value], dtype=np.int64)))


def triton_3_5_form(tensor):  # Triton 3.4 and 3.5: int() of a one-element array
    tensor.__index__ = lambda self: int(self.handle.data)


def triton_3_6_form(tensor, scope):  # Triton 3.6
    scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data))


def triton_3_7_form(tensor, scope):  # Triton 3.7 and later already squeeze
    scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))


def test_index_patch_takes_the_one_argument_form():
    cls = type("T", (FakeTensor,), {})
    triton_compat.index_patch(triton_3_5_form)(cls)
    assert cls.__index__(element(41)) == 41


def test_index_patch_takes_the_scope_form():
    cls, scope = type("T", (FakeTensor,), {}), Scope()
    triton_compat.index_patch(triton_3_6_form)(cls, scope)
    assert cls.__index__(element(42)) == 42
    assert scope.set == ["__index__", "__index__"]  # through the scope, so Triton undoes it


def test_index_patch_keeps_an_index_that_already_works():
    cls, scope = type("T", (FakeTensor,), {}), Scope()
    triton_compat.index_patch(triton_3_7_form)(cls, scope)
    assert scope.set == ["__index__"] and cls.__index__(element(43)) == 43


# ---------------------------------------------------------------- the instrumented interpreter (probe)

INSTRUMENTED = r"""
import json
import torch
import triton
import triton.language as tl
from triton.runtime import interpreter
from harness.run import interp_instrument as ii


@triton.jit
def copy_unmasked(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def copy_block_ptr(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, shape=(n,), strides=(1,), offsets=(tl.program_id(0) * BLOCK,),
                            block_shape=(BLOCK,), order=(0,))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(src), mask=offs < 64)


@triton.jit
def copy_descriptor(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    desc = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, desc.load([tl.program_id(0) * BLOCK]), mask=offs < 64)


@triton.jit
def scale_kwonly(x_ptr, out_ptr, *, factor, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * factor)


def patched_objects():
    objs = [(interpreter.GridExecutor, "__call__")]
    objs += [(interpreter.InterpreterBuilder, n) for n in ("create_masked_load", "create_masked_store",
                                                           "create_atomic_rmw", "create_dot")]
    objs += [(getattr(interpreter, n), "materialize_pointers") for n in ii._POINTER_HANDLES
             if hasattr(interpreter, n)]
    return [cls.__dict__.get(name) for cls, name in objs]


def oob(rec):
    return sorted([kind, tensor, side] for kind, tensor, side, _ in rec.oob)


def attempt(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001
        return "error: " + repr(e)[:300]


r = {"supported": ii.supported(), "block_pointers": hasattr(interpreter, "BlockPointerHandle"),
     "pre_run_hooks": None}
before = patched_objects()
x = torch.arange(64, dtype=torch.float32)
with ii.instrumented(ii.Options(memcheck=True)) as rec:
    r["changed_inside"] = [a is not b for a, b in zip(patched_objects(), before)]
    out = torch.zeros(64)
    copy_unmasked[(3,)](x, out, BLOCK=32)
    r["plain"] = {"launches": rec.launches, "oob": oob(rec), "out": out.tolist() == x.tolist()}

    rec.oob.clear()
    out = torch.zeros(64)
    r["warmup"] = {"error": attempt(lambda: copy_unmasked.run(x, out, BLOCK=32, grid=(3,), warmup=True)),
                   "launches": rec.launches, "oob": oob(rec), "untouched": not out.any().item()}

    if hasattr(copy_unmasked, "add_pre_run_hook"):
        heard = []
        copy_unmasked.add_pre_run_hook(lambda *a, **k: heard.append(len(a) + len(k)))
        copy_unmasked[(2,)](x, torch.zeros(64), BLOCK=32)
        r["pre_run_hooks"] = heard
    for name, kernel in (("block_ptr", copy_block_ptr), ("descriptor", copy_descriptor)):
        rec.oob.clear()
        out = torch.zeros(64)
        r[name] = {"error": attempt(lambda: kernel[(3,)](x, out, 96, BLOCK=32)), "oob": oob(rec),
                   "out": out.tolist() == x.tolist()}
r["restored"] = [a is b for a, b in zip(patched_objects(), before)]

out = torch.zeros(64)
r["kwonly_plain"] = attempt(lambda: scale_kwonly[(1,)](x, out, factor=2.0, BLOCK=64)) or out.sum().item()
with ii.instrumented(ii.Options()) as rec:
    out = torch.zeros(64)
    r["kwonly_instrumented"] = attempt(lambda: scale_kwonly[(1,)](x, out, factor=2.0, BLOCK=64)) or out.sum().item()
print("RESULT " + json.dumps(r))
"""


@pytest.fixture(scope="module")
def instrumented():
    """What the script above printed."""
    return run_interpreted(INSTRUMENTED)


def test_this_tritons_interpreter_can_be_instrumented(instrumented):
    assert instrumented["supported"] is None


def test_an_instrumented_launch_checks_memory_and_every_patch_is_undone(instrumented):
    # _patch_lang returns a scope to restore (3.6 and later) or None (3.4, 3.5): both run
    assert instrumented["plain"] == {"launches": 1, "out": True, "oob": [["load", "x_ptr", "past the end"],
                                                                          ["store", "out_ptr", "past the end"]]}
    assert all(instrumented["changed_inside"]) and all(instrumented["restored"]), instrumented


def test_a_warm_up_runs_no_program(instrumented):
    # Triton 3.4 and 3.5 pass warmup= on to GridExecutor.__call__; later ones stop before it
    assert instrumented["warmup"] == {"error": None, "launches": 1, "oob": [], "untouched": True}


def test_pre_run_hooks_run_where_the_kernel_has_them(instrumented):
    if instrumented["pre_run_hooks"] is None:
        pytest.skip("this Triton's interpreted kernels have no add_pre_run_hook (added in 3.6)")
    assert instrumented["pre_run_hooks"] == [3]  # once, with the launch's three arguments


def test_block_pointers_carry_the_tensor_they_point_into(instrumented):
    if not instrumented["block_pointers"]:
        pytest.skip("this Triton has no block pointers (tl.make_block_ptr is gone in 3.8)")
    assert instrumented["block_ptr"] == {"error": None, "out": True, "oob": [["load", "x_ptr", "past the end"]]}


def test_tensor_descriptors_carry_the_tensor_they_point_into(instrumented):
    # create_descriptor_load calls create_masked_load with keyword arguments
    assert instrumented["descriptor"] == {"error": None, "out": True, "oob": [["load", "x_ptr", "past the end"]]}


def test_keyword_only_arguments_fare_as_in_the_plain_interpreter(instrumented):
    # kept by 3.9's GridExecutor, dropped (so the launch fails) by the earlier ones
    assert instrumented["kwonly_instrumented"] == instrumented["kwonly_plain"], instrumented


def test_an_interpreter_lacking_what_the_patches_need_is_refused_in_one_line(monkeypatch):
    from harness.run import interp_instrument as ii

    monkeypatch.setattr(ii, "supported", lambda: "this Triton's interpreter lacks GridExecutor")
    with pytest.raises(RuntimeError, match=r"^not available with triton \S+: this Triton's interpreter lacks "
                                           r"GridExecutor$"):
        with ii.instrumented():
            pass


def test_instrumentation_modes_are_read_from_the_nvidia_backends_source():
    import inspect

    modes = triton_compat.instrumentation_modes()
    assert isinstance(modes, tuple) and all(m.endswith("san") for m in modes), modes
    try:
        from triton import knobs
        from triton.backends.nvidia import compiler
    except ImportError:
        assert modes == ()
        return
    if not hasattr(knobs.compilation, "instrumentation_mode"):  # before Triton 3.6
        assert modes == ()
    else:
        src = inspect.getsource(compiler)
        assert all(f'"{m}"' in src or f"'{m}'" in src for m in modes), modes


def test_a_jit_helper_decorated_before_triton_interpret_runs_inside_an_interpreted_kernel(tmp_path):
    """Triton's own tl.sum is a compiled JITFunction when triton was imported before
    TRITON_INTERPRET was set (another test, a user's early import); under the everyday fixes it
    runs inside an interpreted kernel as it would have had it been decorated under the flag."""
    import subprocess
    import sys

    code = """
import os, sys, torch, triton, triton.language as tl
sys.path.insert(0, os.getcwd())

@triton.jit
def twice(x):
    return 2 * x

os.environ["TRITON_INTERPRET"] = "1"

@triton.jit
def k(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr, tl.sum(twice(tl.load(x_ptr + offs)), axis=0))

x, out = torch.arange(8, dtype=torch.float32), torch.zeros(1)
try:
    k[(1,)](x, out, BLOCK=8)
    print("plain: ran")
except Exception as e:
    print("plain:", type(e).__name__)
from harness.run.triton_compat import patched
with patched(interpreter=True):
    k[(1,)](x, out, BLOCK=8)
print("fixed:", float(out))
"""
    script = tmp_path / "early_import.py"  # @triton.jit reads its source from a file
    script.write_text(code)
    got = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                         cwd=str(Path(__file__).resolve().parents[1]),
                         env={k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"})
    assert "plain: ran" not in got.stdout, got.stdout + got.stderr  # the trap: without the fix it refuses
    assert "fixed: 56.0" in got.stdout, got.stdout + got.stderr


def test_gpu_benchmarks_take_turns(tmp_path):
    """A worker's autotune benchmark runs holding the GPU's lock file after its first call (which
    compiles the config, CPU work the workers do side by side); while another worker holds the lock
    it waits (on a fake clock) and, past the wait, runs anyway rather than hang behind a stuck one."""
    import fcntl

    from harness.run.triton_compat import in_turns

    lock = tmp_path / "gpu.lock"
    seen = []

    def state():
        with open(lock, "a") as other:  # a second open file: another worker's view of the lock
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(other, fcntl.LOCK_UN)
                return "free"
            except OSError:
                return "held"

    def bench(fn, quantiles=None):  # do_bench's shape: the function called a few times
        for _ in range(3):
            fn()
        return 1.5

    now = [0.0]
    slept = []

    def sleep(s):
        slept.append(s)
        now[0] += s

    turn = in_turns(bench, lambda: str(lock), wait_s=1.0, clock=lambda: now[0], sleep=sleep)
    assert turn(lambda: seen.append(state()), quantiles=(0.5,)) == 1.5
    assert seen == ["free", "held", "held"] and not slept  # first call outside the turn, the rest in it
    assert state() == "free"  # given back

    seen.clear()
    with open(lock, "a") as holder:  # another worker is benchmarking
        fcntl.flock(holder, fcntl.LOCK_EX)
        assert turn(lambda: seen.append(state())) == 1.5
    assert seen == ["held"] * 3 and 1.0 <= now[0] < 1.1  # it waited its 1 s, then ran anyway
    seen.clear()
    assert turn(lambda: seen.append(state())) == 1.5 and seen == ["free", "held", "held"]
    assert now[0] < 1.1  # the lock was free again: no wait


def test_gpu_workers_and_only_they_take_turns():
    from harness.run.isolate import worker_env
    from harness.run.triton_compat import BENCH_TURNS_ENV

    assert worker_env("gpu")[BENCH_TURNS_ENV] == "1"
    assert BENCH_TURNS_ENV not in worker_env("interpreter")
