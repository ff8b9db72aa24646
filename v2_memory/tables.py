"""Plain-text tables for the command line, aligned even when cells hold Chinese text.

A Chinese character takes two terminal columns, so widths count East Asian wide characters twice.

    >>> print("\\n".join(format_table(["query", "hits"], [["记忆污染", "2"], ["agent", "10"]])))
    query     hits
    --------  ----
    记忆污染     2
    agent       10
"""
from __future__ import annotations

import unicodedata
from typing import Sequence

__all__ = ["format_table", "text_width", "clip"]


def text_width(text: str) -> int:
    """Terminal columns ``text`` takes: wide (W) and full-width (F) characters count as two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def clip(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` columns, with "…" when something was cut; one line."""
    text = " ".join(str(text).split())
    if text_width(text) <= width:
        return text
    out, used = [], 0
    for char in text:
        used += text_width(char)
        if used > width - 1:
            break
        out.append(char)
    return "".join(out) + "…"


def _pad(cell: str, width: int, left: bool) -> str:
    gap = " " * (width - text_width(cell))
    return cell + gap if left else gap + cell


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> list[str]:
    """Columns separated by two spaces. ``align`` has one letter per column, ``l`` or ``r``;
    by default the first column is left-aligned and the others (numbers, mostly) right-aligned."""
    widths = [max(text_width(str(cell)) for cell in column) for column in zip(headers, *rows)]
    align = align or "l" + "r" * (len(widths) - 1)

    def line(cells: Sequence[str]) -> str:
        return "  ".join(_pad(str(c), w, align[i] == "l") for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(headers), line(["-" * w for w in widths])] + [line(row) for row in rows]
