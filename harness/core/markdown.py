"""Reading Markdown the way a renderer does: headings, code blocks, and the tokens the report renders.

The one Markdown scanner of the harness, built on markdown-it-py (CommonMark), so a
``#`` inside a code block is never a heading and an indented block is code, exactly as
the report's HTML shows them. ``markdown_it`` is imported on first use, so commands
that never read Markdown never need it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Heading:
    line: int  # 1-based line of the heading in the text
    level: int  # 1 for '#', 2 for '##' ...
    text: str  # without the '#'s

    @property
    def markup(self) -> str:
        return "#" * self.level + " " + self.text


@dataclass(frozen=True)
class Fence:
    line: int  # 1-based line of the opening fence
    info: str  # the word after the fence: python, diff, ... ('' for none or an indented block)
    content: str


@lru_cache(maxsize=1)
def parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def _tokens(text: str):
    return parser().parse(text)


def headings(text: str) -> list[Heading]:
    """Every heading outside code, in order."""
    toks, out = _tokens(text), []
    for i, t in enumerate(toks):
        if t.type == "heading_open":
            out.append(Heading(t.map[0] + 1, int(t.tag[1]), toks[i + 1].content.strip()))
    return out


def fences(text: str) -> list[Fence]:
    """Every fenced or indented code block, in order."""
    return [Fence(t.map[0] + 1, (t.info or "").strip().split(" ")[0] if t.type == "fence" else "", t.content)
            for t in _tokens(text) if t.type in ("fence", "code_block")]


def parse(text: str):
    """markdown-it-py's tokens of ``text``, for callers that change a few before rendering them."""
    return _tokens(text)


def render(tokens) -> str:
    """The HTML of tokens from ``parse`` (CommonMark and GitHub tables)."""
    p = parser()
    return p.renderer.render(tokens, p.options, {})


def code_lines(text: str) -> set[int]:
    """The 1-based lines of every fenced or indented code block, fences included."""
    out: set[int] = set()
    for t in _tokens(text):
        if t.type in ("fence", "code_block") and t.map:
            out.update(range(t.map[0] + 1, t.map[1] + 1))
    return out


# --- generated blocks: a page's part that a command writes from a registry, between two markers -----------

def generated_markers(name: str) -> tuple[str, str]:
    """The markers around a generated block: ``<!-- generated:NAME -->`` and ``<!-- /generated:NAME -->``
    (lint's rule docs, the probe's code tables); a test compares what is between them with the registry."""
    return f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"


def generated_block(text: str, name: str) -> str | None:
    """The block ``name`` of ``text``, its markers included; None where it has none."""
    begin, end = generated_markers(name)
    if begin not in text or end not in text[text.index(begin):]:
        return None
    start = text.index(begin)
    return text[start:text.index(end, start) + len(end)]


def with_generated(text: str, name: str, block: str) -> str | None:
    """``text`` with its block ``name`` replaced by ``block`` (markers included); None where it has none."""
    old = generated_block(text, name)
    return None if old is None else text.replace(old, block, 1)
