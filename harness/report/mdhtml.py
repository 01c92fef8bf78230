"""Markdown to HTML, enough for the casebook's own pages (no dependency, no server).

Covers what the write-ups and the report use: ATX headings (with GitHub-style ids),
paragraphs, fenced code (``diff`` lines coloured), GitHub pipe tables, nested
bullet and numbered lists, block quotes, rules, raw HTML blocks (``<details>``),
HTML comments (dropped), and inline code, bold, italics, links, images and
autolinks. ``image_src`` may rewrite each image's address (the report inlines its
PNGs as data URIs, so the page stands alone).
"""

from __future__ import annotations

import html
import re
from typing import Callable

_FENCE = re.compile(r"^(\s*)(```|~~~)\s*([\w+-]*)\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+(.*)$")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_RAW_BLOCK = re.compile(r"^\s*</?(details|summary|div|p|table|figure|img|section|br|hr|a)\b", re.I)
_INLINE_TAG = re.compile(r"</?(br|span|sub|sup|b|i|em|strong|kbd|a|img|details|summary)(\s[^<>]*)?/?>", re.I)


def slugify(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def inline(text: str, image_src: Callable[[str], str] | None = None) -> str:
    """One line (or paragraph) of inline Markdown to HTML."""
    keep: list[str] = []

    def stash(s: str) -> str:
        keep.append(s)
        return f"\x00{len(keep) - 1}\x00"

    text = re.sub(r"(`+)(.+?)\1", lambda m: stash(f"<code>{html.escape(m.group(2).strip())}</code>"), text)
    text = re.sub(r"<(https?://[^>\s]+)>", lambda m: stash(f'<a href="{html.escape(m.group(1))}">'
                                                           f"{html.escape(m.group(1))}</a>"), text)
    text = _INLINE_TAG.sub(lambda m: stash(m.group(0)), text)
    text = html.escape(text, quote=False)

    def image(m):
        src = html.unescape(m.group(2))
        src = image_src(src) if image_src else src
        return stash(f'<img alt="{html.escape(html.unescape(m.group(1)))}" src="{html.escape(src)}">')

    text = re.sub(r"!\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", image, text)
    text = re.sub(r"\[([^\]]+)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)",
                  lambda m: f'<a href="{html.escape(html.unescape(m.group(2)))}">{m.group(1)}</a>', text)
    text = re.sub(r"\*\*(.+?)\*\*|__(.+?)__", lambda m: f"<strong>{m.group(1) or m.group(2)}</strong>", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])|(?<![\w])_(?!\s)(.+?)(?<!\s)_(?![\w])",
                  lambda m: f"<em>{m.group(1) or m.group(2)}</em>", text)
    for _ in range(3):  # stashed pieces may hold stashed pieces (a link around code)
        text = re.sub(r"\x00(\d+)\x00", lambda m: keep[int(m.group(1))], text)
    return text


def _cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)]


def _table(lines: list[str], image_src) -> str:
    head, body = _cells(lines[0]), [_cells(line) for line in lines[2:]]
    aligns = []
    for c in _cells(lines[1]):
        aligns.append("center" if c.startswith(":") and c.endswith(":") else "right" if c.endswith(":") else "")

    def row(cells, tag):
        out = []
        for i, c in enumerate(cells):
            a = aligns[i] if i < len(aligns) and aligns[i] else ""
            style = f' style="text-align:{a}"' if a else ""
            out.append(f"<{tag}{style}>{inline(c, image_src)}</{tag}>")
        return "<tr>" + "".join(out) + "</tr>"

    rows = "\n".join(row(r, "td") for r in body)
    return f"<table>\n<thead>{row(head, 'th')}</thead>\n<tbody>\n{rows}\n</tbody>\n</table>"


def _code(lines: list[str], lang: str) -> str:
    body = []
    for line in lines:
        esc = html.escape(line)
        if lang == "diff" and line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
            esc = f'<span class="{"add" if line[0] == "+" else "del"}">{esc}</span>'
        body.append(esc)
    cls = f' class="language-{lang}"' if lang else ""
    return f"<pre><code{cls}>" + "\n".join(body) + "</code></pre>"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _list(lines: list[str], image_src) -> str:
    base = _indent(lines[0])
    ordered = _LIST.match(lines[0]).group(2)[0].isdigit()
    items: list[list[str]] = []
    for line in lines:
        m = _LIST.match(line)
        if m and _indent(line) == base:
            items.append([m.group(3)])
        elif items:
            items[-1].append(line[base + 2:] if _indent(line) >= base + 2 else line.strip())
    parts = []
    for it in items:
        inner = blocks(it, image_src)
        if inner.count("<p>") == 1 and inner.startswith("<p>"):
            inner = inner[3:].replace("</p>", "", 1)
        parts.append(f"<li>{inner}</li>")
    tag = "ol" if ordered else "ul"
    return f"<{tag}>\n" + "\n".join(parts) + f"\n</{tag}>"


def blocks(lines: list[str], image_src=None) -> str:
    """Block-level Markdown (a list of lines) to HTML."""
    out: list[str] = []
    para: list[str] = []
    i, n = 0, len(lines)

    def flush():
        if para:
            out.append(f"<p>{inline(' '.join(s.strip() for s in para), image_src)}</p>")
            para.clear()

    while i < n:
        line = lines[i]
        if not line.strip():
            flush()
            i += 1
            continue
        if line.lstrip().startswith("<!--"):
            flush()
            while i < n and "-->" not in lines[i]:
                i += 1
            i += 1
            continue
        if m := _FENCE.match(line):
            flush()
            fence, lang, code = m.group(2), m.group(3), []
            i += 1
            while i < n and not lines[i].strip().startswith(fence):
                code.append(lines[i][len(m.group(1)):] if lines[i].startswith(m.group(1)) else lines[i])
                i += 1
            out.append(_code(code, lang))
            i += 1
            continue
        if m := _HEADING.match(line):
            flush()
            level, text = len(m.group(1)), m.group(2)
            out.append(f'<h{level} id="{slugify(text)}">{inline(text, image_src)}</h{level}>')
            i += 1
            continue
        if "|" in line and i + 1 < n and _TABLE_SEP.match(lines[i + 1]) and "-" in lines[i + 1]:
            flush()
            j = i + 2
            while j < n and lines[j].strip() and "|" in lines[j]:
                j += 1
            out.append(_table(lines[i:j], image_src))
            i = j
            continue
        if _RULE.match(line) and not para:
            out.append("<hr>")
            i += 1
            continue
        if _RAW_BLOCK.match(line):
            flush()
            out.append(inline(line.strip(), image_src) if not line.strip().startswith("<") else line.strip())
            i += 1
            continue
        if line.lstrip().startswith(">"):
            flush()
            j = i
            quoted = []
            while j < n and lines[j].lstrip().startswith(">"):
                quoted.append(re.sub(r"^\s*>\s?", "", lines[j]))
                j += 1
            out.append(f"<blockquote>\n{blocks(quoted, image_src)}\n</blockquote>")
            i = j
            continue
        if _LIST.match(line):
            flush()
            base = _indent(line)
            j = i + 1
            while j < n:
                nxt = lines[j]
                if not nxt.strip():
                    k = j + 1
                    if k < n and (_indent(lines[k]) > base or (_LIST.match(lines[k]) and _indent(lines[k]) == base)):
                        j += 1
                        continue
                    break
                if _indent(nxt) <= base and not _LIST.match(nxt):
                    if _FENCE.match(nxt) or _HEADING.match(nxt) or nxt.lstrip().startswith(("|", "<", ">")):
                        break
                    if j > 0 and not lines[j - 1].strip():
                        break
                if _LIST.match(nxt) and _indent(nxt) < base:
                    break
                j += 1
            out.append(_list([x for x in lines[i:j]], image_src))
            i = j
            continue
        para.append(line)
        i += 1
    flush()
    return "\n".join(out)


def to_html(markdown: str, *, title: str, css: str = "", image_src=None) -> str:
    """A whole standalone page."""
    body = blocks(markdown.splitlines(), image_src)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title)}</title>\n<style>\n{css}\n</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")
