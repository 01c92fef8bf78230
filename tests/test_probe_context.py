"""The probe's run state lives on its Context: the guard bands' width is the run's (``Context.pad``),
never a module global that one run sets for the next."""

import textwrap

PAST_THE_END = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=0.0), mask=offs < n + 1)


    def launch(x):
        out = torch.empty_like(x)
        copy_kernel[(1,)](x, out, x.numel(), BLOCK=64)
        return out


    def make_inputs(*, device, gen, n=50):
        return {"x": torch.randn(n, generator=gen).to(device)}


    def reference(x):
        return x.double()
''')


def test_each_context_runs_with_its_own_guard_bands(tmp_path, monkeypatch):
    """A run with the default bands sees the store one past the end; a run with none (a GPU tool's,
    ``pad: 0``: its inputs copied with no band around them; here under memcheck, which drops the
    store) cannot, and neither changes the default another run starts from."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from harness.probe import execute
    from harness.probe.context import Context
    from harness.probe.target import load

    widths = []
    plain_padded = execute.padded
    monkeypatch.setattr(execute, "padded", lambda name, t, *a: widths.append(a[-1]) or plain_padded(name, t, *a))
    path = tmp_path / "past_the_end.py"
    path.write_text(PAST_THE_END)
    target = load(str(path))
    banded, bare = Context(target, "interpreter", 0, "test"), Context(target, "interpreter", 0, "test", pad=0)
    inputs = execute.make(target, target.sizes, 0, "interpreter")
    with bare.instrument(memcheck=True) as rec:
        assert bare.call(execute.clone_inputs(inputs)).guard["wrote_past_end"] == {}
    assert [k[:3] for k in rec.oob] == [("store", "out_ptr", "past the end")]
    assert banded.call(execute.clone_inputs(inputs)).guard["wrote_past_end"] == {"?": 1}  # "?": a tensor the launcher allocated
    assert widths == [0, execute.PAD] and banded.pad == execute.PAD > 0
