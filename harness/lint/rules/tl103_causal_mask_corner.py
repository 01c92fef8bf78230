"""TL103: a causal mask that compares key and query positions directly, in a kernel with two lengths."""

from __future__ import annotations

import ast
import re

from harness.lint.flow import flows
from harness.lint.registry import MEDIUM, rule

BAD = '''
import triton
import triton.language as tl

@triton.jit
def attn_kernel(q_ptr, k_ptr, o_ptr, S_q, S_k, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    for start_n in range(0, S_k, BLOCK_N):
        k = tl.load(k_ptr + start_n + offs_n, mask=start_n + offs_n < S_k, other=0.0)
        causal = (start_n + offs_n)[None, :] <= offs_m[:, None]
        s = tl.where(causal, k[None, :], float("-inf"))
        tl.store(o_ptr + offs_m, tl.max(s, 1), mask=offs_m < S_q)
'''

GOOD = BAD.replace("<= offs_m[:, None]", "<= offs_m[:, None] + S_k - S_q")

Q_LEN = re.compile(r"(?i)^(s|seq|seqlen|seq_len|n_ctx|len|max_seqlen|ctx)_?q(uery)?$|^(q|query)_?(len|seqlen|seq_len)$")
K_LEN = re.compile(r"(?i)^(s|seq|seqlen|seq_len|n_ctx|len|max_seqlen|ctx)_?(k|kv|key)$|^(k|kv|key)_?(len|seqlen|seq_len)$")


@rule("TL103", "causal-mask-top-left", cases=("causal-mask-wrong-corner",), confidence=MEDIUM, bad=BAD, good=GOOD,
      summary="a causal comparison of key offsets with query offsets, with no length term, in a kernel that takes "
              "separate query and key lengths")
def check(module):
    """With a KV cache the queries are the last ``S_q`` of ``S_k`` positions: query ``i`` sits at position
    ``i + S_k - S_q`` and sees keys up to there (the mask is aligned to the bottom-right corner).
    ``k <= i`` aligns it to the top-left, as if ``S_q == S_k``, and hides most of the cache. Fires only in
    kernels with both a query length and a key length argument."""
    for flow in flows(module):
        q_len = [p for p in flow.k.params if Q_LEN.match(p)]
        k_len = [p for p in flow.k.params if K_LEN.match(p)]
        if not q_len or not k_len:
            continue
        for node in flow.nodes:
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and
                    isinstance(node.ops[0], (ast.LtE, ast.Lt, ast.GtE, ast.Gt))):
                continue
            sides = [flow.atoms(node.left), flow.atoms(node.comparators[0])]
            loop_side = [any(a[0] == "loop" for a in s) for s in sides]
            pid_side = [any(a[0] == "pid" for a in s) and not any(a[0] == "loop" for a in s) for s in sides]
            lengths = any(a[0] == "param" and a[1] in q_len + k_len for s in sides for a in s)
            if (loop_side[0] and pid_side[1] or loop_side[1] and pid_side[0]) and not lengths \
                    and not _offset_term(flow, sides):
                yield node, (f"causal mask {ast.unparse(node)} compares key and query offsets directly: with "
                             f"{q_len[0]} < {k_len[0]} (a KV cache) query i sits at i + {k_len[0]} - {q_len[0]}; add "
                             f"that offset (bottom-right alignment)")


def _offset_term(flow, sides) -> bool:
    """A runtime scalar added to a side (``offs_m + Q_START``, ``offs_m + past_len``): the position of the first
    query in the keys, whatever its name, is the bottom-right alignment the rule asks for. Not a constexpr (a
    block size), not a stride, not a factor of a program id (``pid * BLOCK``, which the flow files as a stride)."""
    return any(a[0] == "param" and a[1] not in flow.k.constexprs and "stride" not in a[1].lower()
               and ("stride", a[1]) not in s for s in sides for a in s)
