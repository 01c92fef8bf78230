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


def test_a_probe_request_crosses_the_process_boundary_whole():
    """The worker's request is one typed object on both sides: its JSON gives it back as it was,
    "failing" only where an earlier process died (``{}``: at the file's own sizes)."""
    import json

    import pytest

    from harness.probe.request import ProbeRequest

    req = ProbeRequest("/x/k.py", inputs="/x/case.py", launcher="add", backend="gpu", detectors=["reference"],
                       sizes={"n": 7}, seed=3, options={"budget": 20.0, "tf32": False}, timeout=30.0, ends=5.5,
                       stop=6.2, events="/tmp/e.jsonl")
    back = ProbeRequest.from_json(json.loads(json.dumps(req.to_json())))
    assert back == req and "failing" not in req.to_json()
    died = req.with_(failing={})
    assert ProbeRequest.from_json(json.loads(json.dumps(died.to_json()))).failing == {} and req.failing is None
    assert back.budget().ends == 5.5 and back.budget().stop == 6.2 and back.budget().seconds == 20.0
    with pytest.raises(TypeError):
        ProbeRequest.from_json({**req.to_json(), "no_such_field": 1})


def test_the_probes_state_is_typed_and_lives_on_its_context():
    """The probe's spine: the request is a ProbeRequest (no ``args.get(``), what the runs showed is
    the Blackboard (no ``ctx.seen[``), and no probe module keeps run state in its globals (no
    ``global`` statement, no function that writes into a module-level container)."""
    import ast
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "harness" / "probe"
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        assert not re.search(r"\bargs\.get\(|\bctx\.seen\b|\.later\[", text), path
        tree = ast.parse(text)
        top = {t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
               for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}
        for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for node in ast.walk(fn):
                assert not isinstance(node, ast.Global), f"{path}:{node.lineno}: global {node.names}"
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, ast.AugAssign) else []
                for t in targets:
                    base = t.value if isinstance(t, (ast.Subscript, ast.Attribute)) else None
                    assert not (isinstance(base, ast.Name) and base.id in top), \
                        f"{path}:{node.lineno}: writes into the module-level {base.id}"
