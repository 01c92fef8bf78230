"""The report as one standalone HTML page, rendered by ``harness.core.markdown`` (markdown-it-py).

The Markdown is parsed once; a few tokens are changed before the shared renderer
writes them out:

- headings get GitHub's anchors (``id``), so the matrix's ``#slug`` links work here too;
- ``diff`` code blocks get one coloured span per added or removed line;
- an image's address may be rewritten (``image_src``: the report inlines its PNGs as
  data URIs, so the page stands alone);
- a table cell made only of the matrix's glyphs gets one coloured span per glyph;
- HTML comments (``<!-- recorded:gpu -->`` markers) are dropped.
"""

from __future__ import annotations

import html
import re
from typing import Callable
from urllib.parse import unquote

from harness.core import markdown

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1280px; margin: 2em auto;
       padding: 0 1.5em; color: #1c2833; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 12px; }
th, td { border: 1px solid #d5d8dc; padding: 3px 7px; vertical-align: top; }
th { background: #f2f4f4; }
pre { background: #f8f9f9; border: 1px solid #e5e8e8; padding: 0.6em; overflow-x: auto; font-size: 12px; }
code { font-size: 12px; } img { max-width: 100%; }
details { margin: 0.5em 0 1.5em; } summary { cursor: pointer; color: #2e86c1; }
h3 { border-top: 2px solid #d5d8dc; padding-top: 1em; margin-top: 2em; }
.add { color: #1e8449; } .del { color: #c0392b; }
.g { font-size: 15px; } .g-caught { color: #1e8449; } .g-missed { color: #aab7b8; } .g-alarm { color: #c0392b; }
.g-na { color: #d5d8dc; } .g-notrun { color: #b9770e; } .g-stale { color: #7d3c98; }
"""

ImageSrc = Callable[[str], str]


def slugify(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _plain(inline) -> str:
    """The text a reader sees in an inline token (markup and raw HTML left out)."""
    kids = inline.children or []
    return "".join(k.content if k.type in ("text", "code_inline") else " " if k.type == "softbreak" else ""
                   for k in kids)


def _heading_ids(tokens) -> None:
    seen: dict[str, int] = {}
    for i, t in enumerate(tokens):
        if t.type != "heading_open":
            continue
        base = slugify(_plain(tokens[i + 1]))
        n = seen.get(base, 0)
        seen[base] = n + 1
        t.attrSet("id", base if n == 0 else f"{base}-{n}")


def _images(tokens, image_src: ImageSrc) -> None:
    for t in tokens:
        for k in (t.children or []) if t.type == "inline" else []:
            if k.type == "image":
                k.attrSet("src", image_src(unquote(str(k.attrGet("src") or ""))))


def diff_html(code: str) -> str:
    """A diff block: each added line in a span.add, each removed line in a span.del."""
    out = []
    for line in code.splitlines():
        esc = html.escape(line)
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
            esc = f'<span class="{"add" if line[0] == "+" else "del"}">{esc}</span>'
        out.append(esc)
    return '<pre><code class="language-diff">' + "\n".join(out) + "\n</code></pre>\n"


def _raw(token_cls, content: str):
    t = token_cls("html_block", "", 0)
    t.content = content
    return t


def _blocks(tokens) -> list:
    """Diff fences coloured, HTML comments dropped."""
    out = []
    for t in tokens:
        if t.type == "fence" and t.info.strip().split(" ")[0] == "diff":
            out.append(_raw(type(t), diff_html(t.content)))
        elif t.type == "html_block" and re.fullmatch(r"\s*<!--.*?-->\s*", t.content, re.S):
            continue
        else:
            out.append(t)
    return out


def _glyph_cells(tokens, glyph_class: dict[str, str]) -> None:
    """A cell made only of glyphs (and spaces): one ``<span class="g ...">`` per glyph."""
    for i, t in enumerate(tokens[1:], 1):
        text = t.content.strip()
        if (t.type != "inline" or tokens[i - 1].type != "td_open" or not text
                or any(c not in glyph_class and c != " " for c in text)):
            continue
        spans = "".join(f'<span class="g {glyph_class[c]}">{c}</span>' if c in glyph_class else c for c in text)
        raw = type(t)("html_inline", "", 0)
        raw.content = spans
        t.children = [raw]


def body(md: str, *, image_src: ImageSrc | None = None, glyph_class: dict[str, str] | None = None) -> str:
    """The HTML of the Markdown ``md``, changed as the module says."""
    tokens = markdown.parse(md)
    _heading_ids(tokens)
    if image_src is not None:
        _images(tokens, image_src)
    if glyph_class:
        _glyph_cells(tokens, glyph_class)
    return markdown.render(_blocks(tokens))


def page(md: str, *, title: str, css: str = CSS, image_src: ImageSrc | None = None,
         glyph_class: dict[str, str] | None = None) -> str:
    """A whole standalone page."""
    return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title)}</title>\n<style>\n{css}\n</style>\n</head>\n<body>\n"
            f"{body(md, image_src=image_src, glyph_class=glyph_class)}\n</body>\n</html>\n")
