"""A case's write-up, parsed once through ``harness.core.markdown`` for every rule that reads it."""

from __future__ import annotations

import re

from harness.core import markdown


class Readme:
    """README.md's text, headings and code blocks, and the sections between the headings."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines()
        self.headings = markdown.headings(text)
        self.fences = markdown.fences(text)

    def heading(self, markup: str) -> markdown.Heading | None:
        """The first heading written ``markup`` ('## The fix'), compared case-insensitively."""
        return next((h for h in self.headings if h.markup.lower() == markup.strip().lower()), None)

    def span(self, markup: str) -> tuple[int, int] | None:
        """The 1-based lines (first, last) under ``markup``, up to the next heading of its level or higher."""
        h = self.heading(markup)
        if h is None:
            return None
        later = [g.line - 1 for g in self.headings if g.line > h.line and g.level <= h.level]
        return h.line + 1, min(later, default=len(self.lines))

    def body(self, markup: str) -> str:
        """The text of a section, HTML comments and surrounding blanks dropped ('' when absent)."""
        span = self.span(markup)
        if span is None:
            return ""
        text = "\n".join(self.lines[span[0] - 1:span[1]])
        return re.sub(r"<!--.*?-->", "", text, flags=re.S).strip()

    def section_text(self, markup: str) -> str:
        """The lines of a section as written, comments and code included ('' when absent)."""
        span = self.span(markup)
        return "\n".join(self.lines[span[0] - 1:span[1]]) if span else ""

    def prose(self, markup: str) -> str:
        """The text of a section without its code blocks and HTML comments ('' when absent)."""
        span = self.span(markup)
        if span is None:
            return ""
        code = markdown.code_lines(self.text)
        text = "\n".join(self.lines[i - 1] for i in range(span[0], span[1] + 1) if i not in code)
        return re.sub(r"<!--.*?-->", "", text, flags=re.S).strip()

    def fences_in(self, markup: str) -> list[markdown.Fence]:
        """The code blocks that open inside a section."""
        span = self.span(markup)
        return [f for f in self.fences if span and span[0] <= f.line <= span[1]]

    def section_at(self, line: int, level: int = 2) -> markdown.Heading | None:
        """The last heading of ``level`` above ``line`` (None before the first one)."""
        above = [h for h in self.headings if h.level == level and h.line <= line]
        return above[-1] if above else None

    def first_line(self) -> int:
        """The 1-based number of the first line with text (0 for an empty file)."""
        return next((i for i, line in enumerate(self.lines, 1) if line.strip()), 0)
