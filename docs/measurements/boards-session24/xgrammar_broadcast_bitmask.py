"""xgrammar 0.1.23 (the fixed version of bugs/xgrammar-bitmask-logits-row-stride) given one grammar's bitmask for
the whole batch as a broadcast view (``bitmask[:1].expand(batch, -1)``, stride (0, 1)): its kernel takes the
bitmask's row stride as the number of 32-bit words in a row (``bitmask_offsets < bitmask_strides``), so at stride 0
no word is loaded and every token reads as forbidden. Run under TRITON_INTERPRET=1 through the entry's own glue
(``launch_fixed``), beside the same bitmask made contiguous. Usage: python this_file.py (from the repository root,
with CASEBOOK_BUG_CACHE set to a filled cache)."""

import os
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")
sys.path.insert(0, os.getcwd())

import importlib.util  # noqa: E402

import torch  # noqa: E402

spec = importlib.util.spec_from_file_location("glue", "bugs/xgrammar-bitmask-logits-row-stride/probe.py")
glue = importlib.util.module_from_spec(spec)
spec.loader.exec_module(glue)

inputs = glue.make_inputs(device="cpu", gen=torch.Generator().manual_seed(0), batch=2, vocab=100)
one = inputs["bitmask"][:1]
for name, bitmask in [("contiguous copy", one.expand(2, -1).contiguous()), ("broadcast view", one.expand(2, -1))]:
    logits = inputs["logits"].clone()
    want = glue.reference(logits.double(), bitmask).float()
    got = glue.launch_fixed(logits, bitmask)
    wrong = int((~((got == want) | (torch.isinf(got) & torch.isinf(want) & (got.sign() == want.sign())))).sum())
    print(f"{name}: bitmask stride {tuple(bitmask.stride())}; {wrong} of {got.numel()} logits differ from the "
          f"reference; -inf in {int(torch.isinf(got).sum())} (the reference {int(torch.isinf(want).sum())})")
print("torch", torch.__version__, "triton", __import__("triton").__version__, "interpreter, CPU")
