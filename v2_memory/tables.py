"""Plain text for the terminal: tables aligned even when cells hold Chinese text, and memory text
that cannot drive the terminal.

A Chinese character takes two terminal columns, so widths count East Asian wide characters twice.

    >>> print("\\n".join(format_table(["query", "hits"], [["记忆污染", "2"], ["agent", "10"]])))
    query     hits
    --------  ----
    记忆污染     2
    agent       10

Memory holds whatever a user or a model once wrote, escape sequences included, so every cell and
every clipped string is passed through ``escape`` first:

    >>> escape("ok\\x1b[31m red \\u202e!")
    'ok\\\\x1b[31m red \\\\u202e!'
"""
from __future__ import annotations

import unicodedata
from typing import Sequence

__all__ = ["format_table", "text_width", "clip", "escape"]

# Control (Cc), format (Cf: bidi overrides, zero-width marks), line/paragraph separators and lone
# surrogates: characters a terminal acts on or hides instead of showing.
_HIDDEN = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def escape(text: str) -> str:
    """``text`` with every control, format and separator character written as an escape (``\\x1b``,
    ``\\n``, ``\\u202e``), as ``repr`` does, so a stored escape sequence or bidi override is shown,
    never obeyed. Ordinary spaces and wide characters stay as they are."""
    return "".join(
        char.encode("unicode_escape", "backslashreplace").decode("ascii")
        if unicodedata.category(char) in _HIDDEN else char
        for char in str(text)
    )


def text_width(text: str) -> int:
    """Terminal columns ``text`` takes: wide (W) and full-width (F) characters count as two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def clip(text: str, width: int) -> str:
    """``text`` on one line (whitespace runs become one space, other hidden characters escaped),
    cut to at most ``width`` columns, with "…" when something was cut."""
    text = escape(" ".join(str(text).split()))
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
    by default the first column is left-aligned and the others (numbers, mostly) right-aligned.
    Cells are escaped, so one row stays one line."""
    cells = [[escape(str(c)) for c in row] for row in [headers, *rows]]
    widths = [max(text_width(cell) for cell in column) for column in zip(*cells)]
    align = align or "l" + "r" * (len(widths) - 1)

    def line(row: Sequence[str]) -> str:
        return "  ".join(_pad(c, w, align[i] == "l") for i, (c, w) in enumerate(zip(row, widths))).rstrip()

    return [line(cells[0]), line(["-" * w for w in widths])] + [line(row) for row in cells[1:]]
