"""The run layer's small decisions, without running a kernel: counting GPUs without torch,
where workers keep bytecode, which runs share a worker, and the compile hook."""

import os

from harness.run import backends, isolate, scheduler


def test_gpus_are_counted_from_the_driver_and_cuda_visible_devices(tmp_path, monkeypatch):
    root = tmp_path / "gpus"
    for bus in ("0000:18:00.0", "0000:2a:00.0"):
        (root / bus).mkdir(parents=True)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert backends._driver_gpus(str(root)) == 2
    for visible, n in (("", 0), ("0", 1), ("1,0", 2), ("0,-1,1", 1), ("0,1,2,3", 2)):
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
        assert backends._driver_gpus(str(root)) == n, visible
    if not os.path.exists("/dev/kfd"):
        assert backends._driver_gpus(str(tmp_path / "no-driver")) == 0


def test_workers_get_a_bytecode_cache_only_where_torchs_is_missing_and_read_only(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    isdir = os.path.isdir
    monkeypatch.setattr(os.path, "isdir", lambda p: False if str(p).endswith("__pycache__") else isdir(p))
    monkeypatch.setattr(os, "access", lambda p, mode: False)  # no __pycache__ by torch, and read-only
    cache = isolate.bytecode_cache()
    assert cache == str(tmp_path / "triton-casebook" / "pycache")
    assert isolate.worker_env("interpreter")["PYTHONPYCACHEPREFIX"] == cache
    monkeypatch.setattr(os, "access", lambda p, mode: True)  # writable: Python caches there itself
    assert isolate.bytecode_cache() is None
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", "/elsewhere")  # the user's own choice stands
    assert isolate.bytecode_cache() is None


def test_an_interpreter_worker_gets_a_few_threads_where_the_user_set_none(monkeypatch):
    """Each pool thread takes address space under the interpreter worker's limit: on a 64-core
    host, one thread a core made the workers raise MemoryError. The user's own setting stands,
    and GPU workers keep theirs."""
    from harness.run import isolate

    for var in isolate.THREAD_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    env = isolate.worker_env("interpreter")
    assert all(env[v] == str(isolate.INTERPRETER_THREADS) for v in isolate.THREAD_VARS)
    assert not any(v in isolate.worker_env("gpu") for v in isolate.THREAD_VARS)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert isolate.worker_env("interpreter")["OMP_NUM_THREADS"] == "2"
    monkeypatch.setenv("OMP_NUM_THREADS", "16")
    assert isolate.worker_env("interpreter")["OMP_NUM_THREADS"] == "16"


def test_a_memory_error_under_the_probes_own_limit_is_information_not_a_finding(monkeypatch):
    from types import SimpleNamespace

    from harness.probe.context import Context, crash
    from harness.probe.findings import ERROR, INFO

    ctx = Context(target=SimpleNamespace(), backend="interpreter", seed=0, name="race")
    monkeypatch.delenv("CASEBOOK_WORKER_RLIMIT_AS", raising=False)
    assert crash(ctx, MemoryError("no room"), {"n": 7}).severity == ERROR  # no limit of ours: the launcher's own
    monkeypatch.setenv("CASEBOOK_WORKER_RLIMIT_AS", str(8 * 2**30))
    wrapped = RuntimeError("InterpreterError: MemoryError()")
    for e in (MemoryError("no room"), wrapped):
        f = crash(ctx, e, {"n": 7})
        assert f.code == "P001" and f.severity == INFO and "address space the probe gives it" in f.message


class _Spec:
    def __init__(self, slug, variants):
        self.slug, self.variants = slug, variants


def test_a_single_case_runs_its_variants_side_by_side_and_many_cases_one_worker_each():
    one = [(_Spec("a", ["broken", "fixed"]), "gpu")]
    assert sorted(u[2] for u in scheduler.worker_groups(one, None, slots=4)) == [["broken"], ["fixed"]]
    many = [(_Spec(s, ["broken", "fixed", "fast"]), "gpu") for s in "abc"]
    assert [u[2] for u in scheduler.worker_groups(many, None, slots=4)] == [["fixed", "fast", "broken"]] * 3
    assert [u[2] for u in scheduler.worker_groups(one, None, slots=1)] == [["fixed", "broken"]]


def test_an_autotuned_case_is_expected_to_cost_more_than_a_plain_one():
    from types import SimpleNamespace

    def spec(triggers):
        return SimpleNamespace(slug="x", variants=["broken", "fixed"], triggers=triggers, calls=1,
                               trials={"gpu": 5}, expect={"gpu": ["wrong"]}, timeout={"gpu": 60})
    assert scheduler.expected_cost((spec(["autotune"]), "gpu")) > scheduler.expected_cost((spec(["tail"]), "gpu"))


def test_the_compile_hooks_are_chained_and_undone():
    """Ours says "compiling" before and "compiled" after; a hook already set still runs, and
    the cache hook's answer (true: skip the compilation) is the previous hook's, never ours."""
    from triton import knobs

    from harness.run.triton_compat import patched

    rt = knobs.runtime
    calls, before = [], (rt.jit_cache_hook, rt.jit_post_compile_hook)
    rt.jit_cache_hook = lambda **kw: calls.append("previous cache") or "skip"
    rt.jit_post_compile_hook = lambda **kw: calls.append("previous post")
    try:
        with patched(interpreter=True, on_compile=calls.append):
            assert rt.jit_cache_hook(key="k", repr="r") == "skip"
            rt.jit_post_compile_hook(key="k", repr="r")
        assert calls == ["compiling", "previous cache", "compiled", "previous post"]
        rt.jit_cache_hook(key="k")
        rt.jit_post_compile_hook(key="k")
        assert calls[4:] == ["previous cache", "previous post"]  # ours are gone after the block
        rt.jit_cache_hook = None
        with patched(interpreter=True, on_compile=calls.append):
            assert rt.jit_cache_hook(key="k") is None  # alone, ours never asks Triton to skip a compilation
    finally:
        rt.jit_cache_hook, rt.jit_post_compile_hook = before
