"""``python -m harness sanitize`` and ``pytest --casebook-sanitize`` (issue #21) on a small user
suite written for ``device="cuda"`` (tests/sanitize_fixtures): the unmasked add is an
out-of-bounds load and store at its lines with add-missing-mask named, the sum into out[0] a
store race with a store-race case named, the masked add and the row kernel nothing; exit 1.
The same per test from the pytest plugin; scripts and modules; the exit status; bad input;
Ctrl-C; the plugin inert without its option; compute-sanitizer's report read back; fake CUDA."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUITE = "tests/sanitize_fixtures"
KERNELS = f"{SUITE}/kernels.py"
PLUGIN = ["-p", "harness.sanitize.pytest_plugin"]  # the entry point's own name: one plugin either way
QUIET = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly"]


def run(args, cwd=ROOT, timeout=300):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TRITON_INTERPRET", None)
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def sanitize(*args, cwd=ROOT):
    out = run(["-m", "harness", "sanitize", "--json", *args], cwd=cwd)
    return out, json.loads(out.stdout)


def by_line(doc) -> dict:
    return {(f["code"], f["line"]): f for f in doc["findings"]}


@pytest.fixture(scope="module")
def suite_run():
    return sanitize("pytest", SUITE, *QUIET)


def test_the_suite_survives_and_exits_1(suite_run):
    out, doc = suite_run
    assert out.returncode == 1, out.stderr[-2000:]
    assert "passed" in out.stderr and "failed" in out.stderr  # pytest ran to its end (its output on stderr with --json)
    assert doc["launches"] == 6  # add x2, sum, three row sums


def test_unmasked_add_is_an_out_of_bounds_load_and_store_at_its_lines(suite_run):
    found = by_line(suite_run[1])
    loads = [found[("P102", f"{KERNELS}:{n}")] for n in (16, 17)]
    store = found[("P101", f"{KERNELS}:18")]
    assert {f["tensor"] for f in loads} == {"x_ptr", "y_ptr"} and store["tensor"] == "out_ptr"
    assert all(f["severity"] == "error" and f["side"] == "past the end" and f["elements"] == 24
               for f in loads + [store])
    assert "add-missing-mask" in [c["slug"] for c in store["cases"]]
    assert store["programs"] == ["3"]
    assert store["launched_at"] == [f"{KERNELS}:48"]
    assert store["called_from"] == [f"{SUITE}/test_kernels.py:19"]
    assert store["tests"] == [f"{SUITE}/test_kernels.py::test_add_unmasked"]


def test_the_sum_into_out0_is_a_store_race_at_its_line(suite_run):
    race = by_line(suite_run[1])[("P301", f"{KERNELS}:34")]
    assert race["severity"] == "error" and race["programs"] == ["0", "1"]
    assert "out_ptr[0]" in race["message"]
    assert {"sum-reduction-store-race", "nrm2-race"} <= {c["slug"] for c in race["cases"]}
    assert race["tests"] == [f"{SUITE}/test_kernels.py::test_total"]


def test_the_masked_add_and_the_row_kernel_raise_nothing(suite_run):
    doc = suite_run[1]
    assert sorted({f["code"] for f in doc["findings"]}) == ["P101", "P102", "P301"]
    tests = {t.split("::")[-1] for f in doc["findings"] for t in f["tests"]}
    assert tests == {"test_add_unmasked", "test_total"}


def outcomes(stdout: str) -> dict:
    """test name -> PASSED/FAILED from pytest's -rA summary."""
    out = {}
    for line in stdout.splitlines():
        for word in ("PASSED", "FAILED"):
            if line.startswith(word + " "):
                out[line.split()[1].split("::")[-1]] = word
    return out


def test_the_pytest_plugin_fails_the_tests_that_made_errors():
    out = run(["-m", "pytest", *PLUGIN, "--casebook-sanitize", SUITE, *QUIET, "-rA"])
    got = outcomes(out.stdout)
    assert got.pop("test_add_unmasked") == "FAILED" and got.pop("test_total") == "FAILED", out.stdout[-3000:]
    assert set(got.values()) == {"PASSED"} and len(got) == 4
    assert "casebook sanitize: P102 out-of-bounds load at tests/sanitize_fixtures/kernels.py:16" in out.stdout
    assert "casebook sanitize: 6 launches checked: 4 errors, 0 warnings, 0 notes" in out.stdout
    assert out.returncode == 1


def test_the_pytest_plugin_in_report_mode_only_reports():
    out = run(["-m", "pytest", *PLUGIN, "--casebook-sanitize=report", SUITE, *QUIET, "-rA"])
    got = outcomes(out.stdout)
    assert got["test_add_unmasked"] == "PASSED" and got["test_total"] == "FAILED"  # its own assert
    assert "P101 error: out-of-bounds store" in out.stdout and "add-missing-mask" in out.stdout


def test_report_only_modes_exit_alike_with_the_commands_own_status():
    """sanitize --report-only and pytest --casebook-sanitize=report: the findings reported, the exit
    status pytest's own (here 0: the unmasked add's test passes, its stray accesses dropped)."""
    plugin = run(["-m", "pytest", *PLUGIN, "--casebook-sanitize=report", SUITE, *QUIET, "-k", "add_"])
    command = run(["-m", "harness", "sanitize", "--report-only", "pytest", SUITE, *QUIET, "-k", "add_"])
    assert "P101" in plugin.stdout and "P101" in command.stdout, command.stdout[-2000:]
    assert plugin.returncode == command.returncode == 0, (plugin.stdout[-1500:], command.stdout[-1500:])


def test_the_fake_cuda_is_there_before_any_conftest_is_imported(tmp_path):
    """A conftest that asks torch.cuda at import (or makes a fixture's tensors on "cuda") sees the
    fake CUDA, under the plugin and under the sanitize command alike."""
    (tmp_path / "conftest.py").write_text(
        "import torch\n"
        "if not torch.cuda.is_available():\n"
        "    raise RuntimeError('this suite needs CUDA')\n"
        "ON_CUDA = torch.ones(2, device='cuda')\n")
    (tmp_path / "test_conf.py").write_text(
        "from conftest import ON_CUDA\n"
        "def test_made_at_import():\n"
        "    assert ON_CUDA.is_cuda\n")
    plugin = run(["-m", "pytest", *PLUGIN, "--casebook-sanitize", str(tmp_path), *QUIET], cwd=tmp_path)
    assert plugin.returncode == 0, plugin.stdout[-2000:]
    command = run(["-m", "harness", "sanitize", "pytest", str(tmp_path), *QUIET], cwd=tmp_path)
    assert command.returncode == 0, (command.stdout + command.stderr)[-2000:]


def test_the_plugin_is_inert_without_its_option(tmp_path):
    (tmp_path / "test_light.py").write_text(
        "import os, sys\n"
        "def test_nothing_heavy():\n"
        "    assert 'torch' not in sys.modules and 'triton' not in sys.modules\n"
        "    assert 'TRITON_INTERPRET' not in os.environ\n"
        "    assert not any(m.startswith('harness.sanitize.') and m != 'harness.sanitize.pytest_plugin'\n"
        "                   for m in sys.modules)\n")
    out = run(["-m", "pytest", *PLUGIN, str(tmp_path), *QUIET], cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-2000:]
    help_text = run(["-m", "pytest", *PLUGIN, "--help"], cwd=tmp_path).stdout
    assert "--casebook-sanitize" in help_text and "--casebook-sanitize-orders" in help_text


def test_a_script_is_checked_at_its_own_line():
    out, doc = sanitize(f"{SUITE}/script_add.py")
    assert out.returncode == 1
    assert "max error" in out.stderr  # the script's own output, on stderr with --json
    store = by_line(doc)[("P101", f"{KERNELS}:18")]
    assert store["called_from"] == [f"{SUITE}/script_add.py:9"]


def test_the_exit_status_is_the_commands_own_without_errors():
    out, doc = sanitize(f"{SUITE}/script_clean.py")
    assert out.returncode == 3 and doc["findings"] == [] and doc["launches"] == 2


def test_masked_lanes_without_other_that_reach_the_result_are_a_warning():
    out, doc = sanitize(f"{SUITE}/script_masked_other.py")
    assert out.returncode == 0
    (f,) = doc["findings"]
    assert f["code"] == "P203" and f["severity"] == "warning"
    assert f["line"] == f"{SUITE}/script_masked_other.py:13"
    assert "masked-load-no-other" in [c["slug"] for c in f["cases"]]


def test_a_module_with_program_orders():
    out, doc = sanitize("--orders", "-m", "script_race", cwd=ROOT / SUITE)
    assert out.returncode == 1
    codes = {f["code"] for f in doc["findings"]}
    assert codes == {"P301", "P302"}
    assert by_line(doc)[("P301", "kernels.py:34")]["called_from"] == ["script_race.py:7"]


@pytest.mark.parametrize("args, says", [
    ([], "name what to run"),
    (["no_such_script.py"], "no such script: no_such_script.py"),
    (["-m", "no_such_module_here"], "no module named 'no_such_module_here'"),
    (["--backend", "gpu", "pytest"], "sanitize --backend gpu:"),
])
def test_bad_input_is_one_line_and_exit_2(args, says):
    if args[:2] == ["--backend", "gpu"]:
        import torch

        if torch.cuda.is_available():
            pytest.skip("a GPU is here")
    out = run(["-m", "harness", "sanitize", *args])
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "Traceback" not in out.stderr


def interrupted(script: str, pid_file: Path):
    """``sanitize SCRIPT PID_FILE`` sent Ctrl-C once the script wrote its process id: (returncode,
    stdout, stderr), after checking that the script's process is gone."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "harness", "sanitize", script, str(pid_file)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.2)
    child = int(pid_file.read_text())
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
    return proc.returncode, out, err


def test_ctrl_c_leaves_no_process_behind(tmp_path):
    code, _, err = interrupted(f"{SUITE}/script_sleep.py", tmp_path / "pid")
    assert code == 130 and err.strip().splitlines()[-1] == "error: interrupted"


SAMPLE = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at add_unmasked_kernel+0x2b0 in {root}/tests/sanitize_fixtures/kernels.py:18
=========     by thread (232,0,0) in block (3,0,0)
=========     Address 0x7f3c2e800fa0 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f3c2e800000 of size 4000 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========     Host Frame: [0x2e90c5] in libcuda.so.1
=========
========= Invalid __global__ read of size 4 bytes
=========     at add_unmasked_kernel+0x1a0 in {root}/tests/sanitize_fixtures/kernels.py:16
=========     by thread (232,0,0) in block (3,0,0)
=========     Address 0x7f3c2e801fa0 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f3c2e801000 of size 4000 bytes
=========
========= Invalid __global__ write of size 4 bytes
=========     at add_unmasked_kernel+0x2b0 in {root}/tests/sanitize_fixtures/kernels.py:18
=========     by thread (233,0,0) in block (3,0,0)
=========     Address 0x7f3c2e800fa4 is out of bounds
=========     and is 5 bytes after the nearest allocation at 0x7f3c2e800000 of size 4000 bytes
=========
========= Invalid __global__ read of size 4
=========     at 0x000001a0 in {root}/tests/sanitize_fixtures/kernels.py:17:add_unmasked_kernel
=========     by thread (232,0,0) in block (3,0,0)
=========     Address 0x7f3c2e802fa0 is out of bounds
=========
========= ERROR SUMMARY: 4 errors
"""


def test_compute_sanitizer_reports_map_back_to_kernel_lines(monkeypatch):
    from harness.sanitize import findings as F
    from harness.sanitize import gpu

    monkeypatch.chdir(ROOT)
    hits = gpu.parse(SAMPLE.format(root=ROOT))
    assert [(h["code"], h["line"], h["programs"]) for h in hits] == [
        ("P101", f"{KERNELS}:18", ["3"]), ("P102", f"{KERNELS}:16", ["3"]), ("P101", f"{KERNELS}:18", ["3"]),
        ("P102", f"{KERNELS}:17", ["3"])]  # the last in the older form of the "at" line
    assert {h["kernel"] for h in hits} == {"add_unmasked_kernel"}
    found = F.collect(hits)
    store = found[0]
    assert (store.code, store.count, store.backend, store.kernel) == ("P101", 2, "gpu", "add_unmasked_kernel")
    assert "add-missing-mask" in [c["slug"] for c in store.cases]
    assert "1 bytes after an allocation of 4000 bytes" in store.message
    assert gpu.parse("========= ERROR SUMMARY: 0 errors\n") == []


def test_fake_cuda_answers_what_gpu_tests_ask():
    import torch

    from harness.sanitize import fakecuda

    real = torch.cuda.is_available()
    undo = fakecuda.install()
    try:
        x = torch.randn(4, device="cuda")
        y = torch.ones(4).cuda()
        assert x.is_cuda and x.device.type == "cuda" and torch.empty(2, device=x.device).is_cuda
        assert torch.cuda.is_available() and torch.cuda.device_count() == 1
        assert torch.cuda.get_device_properties(0).multi_processor_count > 0
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(torch.cuda.Stream()):
            start.record()
            z = x + y
            end.record()
        torch.cuda.synchronize()
        assert start.elapsed_time(end) >= 0 and z.shape == (4,)
        assert torch.cuda.memory_allocated() == 0 and torch.cuda.max_memory_allocated() == 0
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.manual_seed(0)
        a = torch.randn(3, device="cuda")
        torch.cuda.manual_seed(0)
        assert torch.equal(a, torch.randn(3, device="cuda"))
    finally:
        undo()
    assert torch.cuda.is_available() == real
    assert torch.randn(2).device.type == "cpu"


def test_fake_cuda_reports_what_the_interpreter_can_do():
    """bf16 unsupported (the interpreter gets its results wrong), and the host's memory, not a GPU's
    80 GiB: a suite that skips when a tensor does not fit, or sizes tensors by the free memory, does so
    for this machine."""
    import os

    import torch

    from harness.sanitize import fakecuda

    page = os.sysconf("SC_PAGE_SIZE")
    total = os.sysconf("SC_PHYS_PAGES") * page
    undo = fakecuda.install()
    try:
        assert torch.cuda.is_bf16_supported() is False
        free, whole = torch.cuda.mem_get_info()
        assert whole == total and 0 < free <= total
        assert torch.cuda.get_device_properties(0).total_memory == total
    finally:
        undo()


def test_fake_cuda_autocast_gives_a_gpus_dtypes():
    """torch.autocast("cuda") and its other spellings: autocast on the CPU with CUDA's float16 default."""
    import torch

    from harness.sanitize import fakecuda

    undo = fakecuda.install()
    try:
        a = torch.randn(4, 4, device="cuda")
        with torch.autocast("cuda"):
            assert (a @ a).dtype == torch.float16
        with torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16):
            assert (a @ a).dtype == torch.bfloat16
        with torch.cuda.amp.autocast():
            assert (a @ a).dtype == torch.float16
        assert torch.autocast("cuda")(lambda x: x @ x)(a).dtype == torch.float16
    finally:
        undo()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert (a @ a).dtype == torch.bfloat16  # the real one is back


def test_sanitize_help_imports_neither_torch_nor_triton():
    code = ("import contextlib, io, sys\nfrom harness.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main(['sanitize', '--help'])\n    except SystemExit:\n        pass\n"
            "print(sorted(m for m in ('torch', 'triton') if m in sys.modules))")
    assert run(["-c", code]).stdout.strip() == "[]"


def test_the_quick_race_check_answers_as_the_full_one():
    """``session.quick_races`` looks only at written elements, by one pass with an owner array: on
    random launches (overlapping tensors, loads, stores, atomics, several programs) it must give
    exactly what interp_instrument's own analyses give."""
    import numpy as np

    from harness.run import interp_instrument as I
    from harness.sanitize.session import quick_races

    rng = np.random.default_rng(0)
    analyses = [(I.find_races, [], (I.STORE,))]
    if hasattr(I, "cross_program_writes"):
        analyses.append((I.cross_program_writes, 0, (I.STORE, I.ATOMIC)))
    for trial in range(300):
        base = 4096 * (1 + trial)
        spans = {"a": I.Span("a", base, base + 64 * 4, 4), "b": I.Span("b", base + 1024, base + 1024 + 32 * 4, 4)}
        launch = I.Launch("k", spans, (4, 1, 1))
        for _ in range(int(rng.integers(1, 12))):
            name = "a" if rng.random() < 0.6 else "b"
            sp = spans[name]
            n = (sp.hi - sp.lo) // 4
            addrs = (sp.lo + 4 * rng.integers(0, n, size=int(rng.integers(1, 6)))).astype(np.uint64)
            launch.accesses.append((addrs, int(rng.integers(0, 4)), int(rng.integers(0, 3)), f"k.py:{trial}", 0))
        for original, nothing, kinds in analyses:
            assert quick_races(original, nothing, kinds)(launch) == original(launch), trial


def test_a_grid_past_cudas_limit_raises_as_on_a_gpu_and_is_reported():
    out, doc = sanitize(f"{SUITE}/script_grid.py")
    assert out.returncode == 1
    (f,) = doc["findings"]
    assert (f["code"], f["severity"], f["line"]) == ("P403", "error", f"{SUITE}/script_grid.py:14")
    assert f["cases"][0]["slug"] == "grid-y-over-65535"
    assert f"GridLimitError: fill_kernel: grid (1, 70000, 1)" in out.stderr
    assert f"(launched at {SUITE}/script_grid.py:14)" in out.stderr


def test_a_kernel_decorated_before_the_session_is_interpreted_and_checked(tmp_path):
    """A ``@triton.jit`` made before ``TRITON_INTERPRET=1`` was set (a conftest that imported the
    kernels first) is a compiled JITFunction: the session launches it through the interpreter."""
    code = (
        "import torch, triton, triton.language as tl\n"
        "from triton.runtime.jit import JITFunction\n"
        "@triton.jit\n"
        "def k(x_ptr, BLOCK: tl.constexpr):\n"
        "    o = tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + o, tl.load(x_ptr + o) + 1)\n"
        "assert isinstance(k, JITFunction)\n"
        "from harness.sanitize.session import Session\n"
        "with Session() as s:\n"
        "    x = torch.zeros(100, device='cuda')\n"
        "    k[(1,)](x, BLOCK=128)\n"
        "assert x.sum().item() == 100, x\n"
        "print(sorted({h['code'] for h in s.hits}), s.launches)\n")
    (tmp_path / "early.py").write_text(code)  # Triton reads a kernel's source from its file
    out = run([str(tmp_path / "early.py")])
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "['P101', 'P102'] 1"


MASKED_SUM = (
    "import math, torch, triton, triton.language as tl\n"
    "from harness.sanitize.session import Session\n"
    "@triton.jit\n"
    "def shift(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n"
    "    x = tl.load(x_ptr + offs, mask=offs < n)  # no other=: the masked lanes enter the sum\n"
    "    tl.store(out_ptr + offs, x - tl.sum(x, axis=0), mask=offs < n)\n")


def in_a_session(tmp_path, name: str, code: str) -> str:
    """``code`` run as a script (MASKED_SUM's kernel defined) inside a ``Session``: its hits' codes and
    launch count, as the script's last line prints them."""
    (tmp_path / name).write_text(MASKED_SUM + "with Session() as s:\n" + code
                                 + "print(sorted({h['code'] for h in s.hits}), s.launches)\n")
    out = run([str(tmp_path / name)])
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


def test_the_masked_lane_rerun_keeps_autograd_whole(tmp_path):
    """The re-run with 0 in the masked lanes restores the inputs outside autograd: a leaf that
    requires grad is not written in place, and a tensor saved for backward does not look modified."""
    assert in_a_session(tmp_path, "grad.py", (
        "    x = torch.randn(100, requires_grad=True)\n"
        "    loss = (x * x).sum()  # saves x for backward\n"
        "    out = torch.empty(100)\n"
        "    shift[(1,)](x, out, 100, BLOCK=128)\n"
        "    loss.backward()\n"
        "    assert torch.allclose(x.grad, 2 * x.detach())\n"
        "    assert torch.allclose(out, x.detach() - x.detach().sum(), atol=1e-5), out\n")) == "['P203'] 1"


def test_a_nan_prefilled_output_does_not_hide_masked_lanes(tmp_path):
    """An output filled with NaN before the launch: the poison's NaN is not new there, yet it reached
    the result; the launch runs again with 0 (the program goes on with that) and P203 is reported."""
    assert in_a_session(tmp_path, "nan.py", (
        "    x = torch.randn(100)\n"
        "    out = torch.full((100,), math.nan)\n"
        "    shift[(1,)](x, out, 100, BLOCK=128)\n"
        "    assert torch.allclose(out, x - x.sum(), atol=1e-5), out\n")) == "['P203'] 1"


def test_float_and_bool_arguments_work_as_compiled(tmp_path):
    """A float argument's ``.to()`` and a bool argument in an ``if``: Triton 3.7's interpreter raises
    on both, compiled Triton takes them (fp32 and int1 scalars); under the sanitizer every launch runs."""
    code = (
        "import torch, triton, triton.language as tl\n"
        "from harness.sanitize.session import Session\n"
        "@triton.jit\n"
        "def scaled(x_ptr, scale, n, flag, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    if flag:\n"
        "        x = x * scale.to(tl.float32)\n"
        "    tl.store(x_ptr + offs, x, mask=offs < n)\n"
        "with Session() as s:\n"
        "    x = torch.ones(10, device='cuda')\n"
        "    scaled[(1,)](x, 2.5, 10, True, BLOCK=16)\n"
        "    scaled[(1,)](x, 2.5, 10, False, BLOCK=16)\n"
        "assert x.tolist() == [2.5] * 10, x\n"
        "print(s.hits, s.launches)\n")
    (tmp_path / "scalars.py").write_text(code)
    out = run([str(tmp_path / "scalars.py")])
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[] 2"


def test_a_launch_that_raises_is_not_counted_as_checked(tmp_path):
    """A launch that raises before its end (here the kernel's own bad attribute) is a note that it was
    not checked, and the count of launches checked leaves it out; the script sees the exception."""
    (tmp_path / "raises.py").write_text(
        "import torch, triton, triton.language as tl\n"
        "@triton.jit\n"
        "def copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    tl.store(out_ptr + offs, x, mask=offs < n)\n"
        "@triton.jit\n"
        "def broken(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    tl.store(x_ptr + offs, x.no_such_method(), mask=offs < n)\n"
        "x, out = torch.ones(10, device='cuda'), torch.empty(10, device='cuda')\n"
        "copy[(1,)](x, out, 10, BLOCK=16)\n"
        "try:\n"
        "    broken[(1,)](x, 10, BLOCK=16)\n"
        "except Exception as e:\n"
        "    print('raised', type(e).__name__)\n")
    out, doc = sanitize(str(tmp_path / "raises.py"))
    assert out.returncode == 0 and "raised" in out.stderr, out.stderr[-2000:]
    assert doc["launches"] == 1
    (f,) = doc["findings"]
    assert f["code"] == "P001" and f["severity"] == "info" and "broken: the launch raised" in f["message"], f
    text = run(["-m", "harness", "sanitize", str(tmp_path / "raises.py")])
    assert "1 launches checked, 1 raised before they could be checked" in text.stdout, text.stdout[-1500:]


def test_ctrl_c_prints_the_findings_so_far(tmp_path):
    """Interrupted after a launch that made a finding: the finding is printed, then the usual line
    and status; nothing is left running."""
    pid_file = tmp_path / "pid"
    (tmp_path / "then_wait.py").write_text(
        "import os, sys, time, torch, triton, triton.language as tl\n"
        "@triton.jit\n"
        "def unmasked(x_ptr, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)\n"
        "unmasked[(1,)](torch.zeros(100, device='cuda'), BLOCK=128)\n"
        "with open(sys.argv[1], 'w') as f:\n"
        "    f.write(str(os.getpid()))\n"
        "time.sleep(600)\n")
    code, out, err = interrupted(str(tmp_path / "then_wait.py"), pid_file)
    assert code == 130 and err.strip().splitlines()[-1] == "error: interrupted"
    assert "P101 error: out-of-bounds store" in out and "then_wait.py:6" in out, out
    assert "interrupted: the findings above are those made before it" in out


def test_a_store_race_of_one_same_value_is_a_warning(tmp_path):
    """Every program stores the same value to one address (a "done" flag): a race on paper, the same
    result in every program order: a warning, exit 0. Programs storing their own values there stay an
    error (the sum into out[0] of the suite above)."""
    (tmp_path / "flag.py").write_text(
        "import torch, triton, triton.language as tl\n"
        "@triton.jit\n"
        "def copy_and_flag(x_ptr, out_ptr, flag_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n"
        "    tl.store(flag_ptr, 1)\n"
        "@triton.jit\n"
        "def last_block(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    tl.store(out_ptr, tl.program_id(0))\n"
        "x = torch.randn(1000, device='cuda')\n"
        "out, flag = torch.empty_like(x), torch.zeros(1, dtype=torch.int32, device='cuda')\n"
        "copy_and_flag[(4,)](x, out, flag, 1000, BLOCK=256)\n"
        "assert torch.equal(out, x) and flag.item() == 1\n")
    out, doc = sanitize(str(tmp_path / "flag.py"))
    assert out.returncode == 0, out.stderr[-2000:]
    (f,) = doc["findings"]
    assert f["code"] == "P301" and f["severity"] == "warning" and "store the same value" in f["message"], f
    text = (tmp_path / "flag.py").read_text().replace("copy_and_flag[(4,)](x, out, flag, 1000, BLOCK=256)",
                                                       "last_block[(4,)](x, flag, 1000, BLOCK=256)")
    (tmp_path / "last.py").write_text(text.replace("assert torch.equal(out, x) and flag.item() == 1\n", ""))
    out, doc = sanitize(str(tmp_path / "last.py"))
    assert out.returncode == 1 and [(f["code"], f["severity"]) for f in doc["findings"]] == [("P301", "error")]


# ------------------------------------------------------------------ what ran and whose exit status (issue 42)

def _suite(tmp_path, tests: str, ini: str = "") -> Path:
    d = tmp_path / "suite"
    d.mkdir()
    (d / "test_it.py").write_text(tests)
    if ini:
        (d / "pytest.ini").write_text(ini)
    return d


def _installed_plugin(tmp_path) -> Path:
    """A site folder in which the casebook is "installed" as pip installs it: a dist-info with the
    pytest11 entry point and a RECORD naming the harness package (pytest marks that for rewriting)."""
    info = tmp_path / "site" / "casebook_as_installed-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: casebook-as-installed\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[pytest11]\nharness.sanitize.pytest_plugin = harness.sanitize.pytest_plugin\n")
    (info / "RECORD").write_text("harness/__init__.py,,\nharness/sanitize/__init__.py,,\n")
    return info.parent


def test_a_suite_with_warnings_as_errors_runs(tmp_path):
    """``filterwarnings = error`` (common in pytest.ini): the child imported harness before pytest
    marked the installed plugin's package for rewriting; PytestAssertRewriteWarning became an error,
    a 52-line traceback, and the summary said "no findings"."""
    d = _suite(tmp_path, "def test_one():\n    assert 1\n", "[pytest]\nfilterwarnings =\n    error\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(_installed_plugin(tmp_path))])}
    env.pop("TRITON_INTERPRET", None)
    out = subprocess.run([sys.executable, "-m", "harness", "sanitize", "pytest", "-q", "-p", "no:cacheprovider"],
                         cwd=d, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Traceback" not in out.stdout + out.stderr and "1 passed" in out.stdout
    assert "0 launches checked, no findings" in out.stdout


def test_a_test_that_ends_the_process_is_not_no_findings(tmp_path):
    """A test calling os._exit(0) ended the run: "launches checked, no findings", exit 0, though the
    tests after it never ran."""
    d = _suite(tmp_path, "import os\n\ndef test_one():\n    assert 1\n\ndef test_two():\n    os._exit(0)\n\n"
                         "def test_three():\n    assert 0\n")
    out = run(["-m", "harness", "sanitize", "pytest", *QUIET], cwd=d)
    assert out.returncode == 2, out.stdout + out.stderr
    err = [x for x in out.stderr.splitlines() if x.startswith("error:")]
    assert len(err) == 1 and "ended before the sanitizer's end of run" in err[0] and "not checked" in err[0]
    assert "ended early" in out.stdout and "launches checked, no findings" not in out.stdout
    out = run(["-m", "harness", "sanitize", "--json", "pytest", *QUIET], cwd=d)
    assert out.returncode == 2 and json.loads(out.stdout)["finished"] is False


def test_pytests_own_exit_status_passes_through_saying_it_is_pytests(tmp_path):
    """A collection error is pytest's exit 2: it passed through with no line, like bad input."""
    d = _suite(tmp_path, "import no_such_module_anywhere\n\ndef test_one():\n    assert 1\n")
    out = run(["-m", "harness", "sanitize", "pytest", *QUIET], cwd=d)
    assert out.returncode == 2
    assert "sanitize: exit status 2 is pytest's own: interrupted (a collection error" in out.stderr
    assert "error: " not in out.stderr.replace("ModuleNotFoundError", "")  # not the harness's own bad input
    (d / "test_it.py").write_text("def test_one():\n    assert 1\n")
    out = run(["-m", "harness", "sanitize", "pytest", *QUIET, "-k", "matches_nothing"], cwd=d)
    assert out.returncode == 5 and "sanitize: exit status 5 is pytest's own: no tests were collected" in out.stderr


def test_a_module_that_does_not_exist_prints_no_summary():
    out = run(["-m", "harness", "sanitize", "-m", "no_such_module_here"])
    assert out.returncode == 2 and out.stdout == "", out.stdout


def test_a_mode_that_is_not_one_is_refused(tmp_path):
    """``--casebook-sanitize=bogus`` was taken as ``fail``."""
    d = _suite(tmp_path, "def test_one():\n    assert 1\n")
    out = run(["-m", "pytest", *QUIET, *PLUGIN, "--casebook-sanitize=bogus"], cwd=d)
    assert out.returncode == 4, out.stdout + out.stderr
    assert "--casebook-sanitize=bogus: no such mode (use --casebook-sanitize=fail or" in out.stderr
    out = run(["-m", "pytest", *QUIET, *PLUGIN, "--casebook-sanitize=report"], cwd=d)
    assert out.returncode == 0 and "1 passed" in out.stdout


def test_a_command_that_removes_the_results_file_keeps_its_findings(tmp_path):
    """The findings lived only in one results file, which the user's command could remove (here the
    whole temporary folder, after the unmasked add was launched)."""
    script = tmp_path / "then_removes.py"
    script.write_text(f"import os, runpy, shutil, sys\n"
                      f"sys.path.insert(0, {str(ROOT / SUITE)!r})\n"
                      f"runpy.run_path({str(ROOT / SUITE / 'script_add.py')!r}, run_name='__main__')\n"
                      f"shutil.rmtree(os.path.dirname(os.environ['CASEBOOK_SANITIZE_RESULTS']))\n")
    out, doc = sanitize(str(script))
    assert out.returncode == 1, out.stderr
    assert "P101" in {f["code"] for f in doc["findings"]} and doc["launches"] == 1 and doc["finished"] is not False


def test_no_checks_is_the_baseline_the_same_command_with_nothing_checked():
    """``--no-checks`` (and the plugin's ``--casebook-sanitize-no-checks``): the suite under the plain
    interpreter with CUDA faked, no launch checked and no finding. The unmasked add is left out: without
    the checks its stray accesses are the plain interpreter's, which may corrupt the heap. The sum into
    out[0] fails on its own assert either way. Exit status: the command's own."""
    keep = ["-k", "not add_unmasked"]
    out, doc = sanitize("--no-checks", "pytest", SUITE, *QUIET, *keep)
    assert doc["findings"] == [] and doc["checks"] is False and doc["launches"] == 5, out.stderr[-2000:]
    assert out.returncode == 1 and "1 failed, 4 passed" in out.stderr
    plugin = run(["-m", "pytest", *PLUGIN, "--casebook-sanitize", "--casebook-sanitize-no-checks", SUITE, *QUIET,
                  *keep, "-rA"])
    got = outcomes(plugin.stdout)
    assert got.pop("test_total") == "FAILED" and set(got.values()) == {"PASSED"} and len(got) == 4, plugin.stdout
    assert "5 launches ran with no checks" in plugin.stdout and "P301" not in plugin.stdout
    checked = run(["-m", "pytest", *PLUGIN, "--casebook-sanitize", SUITE, *QUIET, *keep])
    assert "P301" in checked.stdout  # the same selection with the checks: the race is found
    text = run(["-m", "harness", "sanitize", "--no-checks", "pytest", SUITE, *QUIET, "-k", "add_masked"])
    assert text.returncode == 0 and "nothing was checked" in text.stdout and "no findings" not in text.stdout


@pytest.mark.parametrize("args", [["--no-checks", "--orders"], ["--no-checks", "--backend", "gpu"]])
def test_no_checks_refuses_the_options_that_check(args):
    out = run(["-m", "harness", "sanitize", *args, "pytest", SUITE])
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_fake_cuda_runs_torch_compile_eagerly():
    """torch.compile (a call, a decorator with options) gives the function back: Inductor would make
    kernels for the GPU that is not there and fail on the fake device (a suite whose package compiles
    a helper failed every test that reached it, with the fake CUDA and no checks too)."""
    import torch

    from harness.sanitize import fakecuda

    undo = fakecuda.install()
    try:
        def double(x):
            return x * 2

        x = torch.arange(4.0, device="cuda")
        assert torch.compile(double) is double
        assert torch.equal(torch.compile(fullgraph=True, dynamic=True)(double)(x), x * 2)
        assert torch.compile(torch.nn.Identity())(x) is x
    finally:
        undo()
    assert torch.compile(double) is not double


def test_fake_cuda_takes_set_default_device_cuda():
    """``torch.set_default_device("cuda")`` (a suite's every test, e.g. under a platform helper) raised
    as torch initialised CUDA; under the fake it sets the CPU, the factories' tensors saying CUDA, and the
    default the suite had is back once the fake is undone."""
    import torch

    from harness.sanitize import fakecuda

    before = torch.get_default_device()
    undo = fakecuda.install()
    try:
        torch.set_default_device("cuda")
        x = torch.rand(3)
        torch.set_default_device(torch.device("cuda", 0))
        assert x.is_cuda and x.device.type == "cuda" and torch.empty(2).is_cuda
    finally:
        undo()
    assert torch.get_default_device() == before and torch.rand(1).device.type == "cpu"
