"""harness.run.analyses: the instrumented interpreter's patched methods call each analysis whose
option is on, at each point of a launch, and no other."""

import importlib.util
import textwrap

KERNEL = textwrap.dedent('''
    import triton
    import triton.language as tl


    @triton.jit
    def shift(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs + 1, mask=offs < n)  # one lane past the end of x
        tl.store(out_ptr + offs, x, mask=offs < n)
''')


def _kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    path = tmp_path / "shift_kernel.py"
    path.write_text(KERNEL)
    spec = importlib.util.spec_from_file_location("shift_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_each_active_analysis_is_called_at_each_point_of_a_launch(tmp_path, monkeypatch):
    import torch

    from harness.run import interp_instrument as I
    from harness.run.analyses.base import Analysis

    class Count(Analysis):
        def __init__(self, name, on):
            self.name, self.is_on, self.seen = name, on, []

        def on(self, options):
            return self.is_on

        def access(self, rec, ptrs, addrs, mask, kind):
            self.seen.append(I.KIND_NAMES[kind])
            return mask

        def program_starts(self, rec):
            self.seen.append("program")

        def launch_ends(self, rec):
            self.seen.append("end")

    mod = _kernel(tmp_path, monkeypatch)
    on, off = Count("on", True), Count("off", False)
    x, out = torch.arange(16, dtype=torch.float32)[:10], torch.zeros(10)  # the lane past x is x's storage
    with I.instrumented(I.Options(memcheck=True), analyses=[I.default_analyses()[0], on, off]) as rec:
        mod.shift[(2,)](x, out, 10, BLOCK=8)
    assert on.seen == ["program", "load", "store"] * 2 + ["end"] and off.seen == []
    ((kind, tensor, side, _), hit), = rec.oob.items()  # memcheck, first in the list, took the lane out
    assert (kind, tensor, side, hit["lanes"]) == ("load", "x_ptr", "past the end", 1)
    assert out[:9].tolist() == x[1:].tolist()


def test_an_option_turned_off_between_launches_turns_its_analysis_off(tmp_path, monkeypatch):
    import torch

    from harness.run import interp_instrument as I

    mod = _kernel(tmp_path, monkeypatch)
    x, out = torch.arange(16, dtype=torch.float32)[:10], torch.zeros(10)
    with I.instrumented(I.Options(memcheck=True)) as rec:
        mod.shift[(2,)](x, out, 10, BLOCK=8)
        rec.options.memcheck = False
        rec.oob.clear()
        mod.shift[(2,)](x, out, 10, BLOCK=8)
        assert out[9] == 10 and rec.oob == {} and [a.name for a in rec.active] == ["poison", "tf32"]
