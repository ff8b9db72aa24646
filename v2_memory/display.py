"""How values show themselves in a notebook: a short ``repr`` and an HTML table, from one description.

``tables.py`` lays text out for a terminal; this module describes a value once — its name, a few
``key = value`` fields and, for values that hold many items, one table — and renders that
description twice: as one readable ``repr`` (numbers rounded, texts clipped) and as HTML for
Jupyter's ``_repr_html_``. A class mixes in ``Displayed`` and says what to show in ``_shown()``:

    >>> class Point(Displayed):
    ...     def _shown(self) -> Shown:
    ...         return Shown("Point", (("weight", 0.8573749999999999), ("label", "<b>&")))
    >>> Point()
    Point(weight=0.857, label='<b>&')
    >>> "&lt;b&gt;&amp;" in Point()._repr_html_()  # the label is text: escaped, never markup
    True

Memory holds whatever a user or a model once wrote, so every piece of text a display shows —
keys, headers and values alike — goes through one path: personal data redacted (a notebook's
outputs are saved with it and shared), then, for the ``repr``, ``tables.clip`` (one line, control
and bidi characters escaped, cut with "…"), and for HTML, ``html.escape`` inside its own ``<bdi>``,
so a stored bidi override (U+202A–U+202E, U+2066–U+2069) cannot reorder the rest of its row.
Only the values shown are rounded and clipped; the objects keep their exact numbers and texts.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Mapping, Sequence

from .text.sensitive import find_sensitive, redact
from .tables import clip, escape, format_table

__all__ = ["Displayed", "Shown", "number", "plain", "text_cell", "html_text"]

REPR_WIDTH = 60  # columns a text may take in a repr (a Chinese character takes two)
HTML_CHARS = 2000  # characters a text may take in HTML: enough to read, bounded for huge memories
REPR_ROWS = 20  # table rows a repr shows; the rest are counted
HTML_ROWS = 200  # table rows the HTML shows; the rest are counted


def number(value: float, digits: int = 3) -> str:
    """A float as people read it: ``digits`` decimals, trailing noise gone.

        >>> number(0.8573749999999999), number(1.0), number(0.01), number(0.00042)
        ('0.857', '1.0', '0.01', '0.0004')

    A value that rounds to zero but is not zero keeps one significant digit, so it never reads
    as "0.0" when it is not.
    """
    if not math.isfinite(value):
        return str(value)
    rounded = round(value, digits)
    if rounded == 0 and value != 0:
        return f"{value:.1g}" if abs(value) >= 1e-4 else f"{value:.0e}"
    return repr(rounded)


def _redacted(text: str) -> str:
    """``text`` with every personal value replaced by its kind (``[mobile]``), before any cut: a
    cut first could leave half a card number that no detector recognizes."""
    return redact(text, find_sensitive(text))


def plain(value: Any) -> str:
    """Any shown value as one string: floats rounded, sequences and mappings spelled out, text
    redacted. ``None`` is ``None``, as Python writes it.

        >>> plain({"key": "persona:diet", "weight": 0.33333333}), plain((3, 4)), plain(None)
        ('{key: persona:diet, weight: 0.333}', '[3, 4]', 'None')
    """
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return number(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{plain(k)}: {plain(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (tuple, list, set, frozenset)):
        return "[" + ", ".join(plain(v) for v in value) + "]"
    return _redacted(str(value))


def text_cell(value: Any, width: int = REPR_WIDTH) -> str:
    """A value for a repr: ``plain``, then ``tables.clip`` (one line, hidden characters escaped,
    at most ``width`` columns); strings and paths are quoted so a reader sees where they start and
    end. A path is cut at its start, since its end names the file:

        >>> text_cell(PurePath("/tmp/" + "x" * 80 + "/memory_store.json"), 30)
        "'…xxxxxxxxxxx/memory_store.json'"
    """
    if isinstance(value, PurePath):
        # Escape first, so reversing cannot split an escape; then cut the reversed text.
        return f"'{clip(escape(plain(value))[::-1], width)[::-1]}'"
    shown = clip(plain(value), width)
    return f"'{shown}'" if isinstance(value, str) else shown


def html_text(value: Any, limit: int = HTML_CHARS) -> str:
    """A value for HTML: ``plain``, cut to ``limit`` characters (saying how long it was), escaped
    (``<``, ``>``, ``&`` and both quotes) and isolated in its own ``<bdi>``.

        >>> html_text('<script>"x" & \\u202e')
        '<bdi>&lt;script&gt;&quot;x&quot; &amp; \\u202e</bdi>'
    """
    shown = plain(value)
    if len(shown) > limit:
        shown = f"{shown[:limit - 1]}… ({len(shown):,} characters)"
    return f"<bdi>{html.escape(shown, quote=True)}</bdi>"


@dataclass(frozen=True)
class Shown:
    """What a value shows: its ``name``, ``key = value`` ``fields``, and optionally one table
    (``headers`` and ``rows``) of the items it holds. Rows past what a rendering has room for are
    counted ("… and 10 more"), never dropped in silence."""

    name: str
    fields: tuple[tuple[str, Any], ...] = ()
    headers: tuple[str, ...] = ()
    rows: tuple[Sequence[Any], ...] = ()

    def text(self) -> str:
        """The repr: ``Name(key=value, ...)``, then the table's first ``REPR_ROWS`` rows."""
        head = f"{self.name}(" + ", ".join(f"{key}={text_cell(value)}" for key, value in self.fields) + ")"
        if not self.headers:
            return head
        body = [[clip(plain(cell), REPR_WIDTH) for cell in row] for row in self.rows[:REPR_ROWS]]
        lines = format_table(self.headers, body, "l" * len(self.headers)) if body else []
        return "\n".join([head, *("  " + line for line in lines), *_more(len(self.rows), REPR_ROWS)])

    def html(self) -> str:
        """A ``<table>`` of the fields under the name, then the items' table (``HTML_ROWS`` rows)."""
        parts = ['<div class="v2-memory">', f"<table><caption><b>{html_text(self.name)}</b></caption><tbody>"]
        parts += [f'<tr><th style="text-align:left">{html_text(key)}</th><td style="text-align:left">'
                  f"{html_text(value)}</td></tr>" for key, value in self.fields]
        parts.append("</tbody></table>")
        if self.headers:
            parts.append(_html_grid(self.headers, self.rows[:HTML_ROWS]))
            parts += [f"<p>{html_text(line.strip())}</p>" for line in _more(len(self.rows), HTML_ROWS)]
        parts.append("</div>")
        return "\n".join(parts)


def _more(total: int, shown: int) -> list[str]:
    return [f"  … and {total - shown} more"] if total > shown else []


def _html_grid(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f'<th style="text-align:left">{html_text(h)}</th>' for h in headers)
    body = "".join("<tr>" + "".join(f'<td style="text-align:left">{html_text(c)}</td>' for c in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class Displayed:
    """Mixin: ``__repr__`` and ``_repr_html_`` from the one description ``_shown()`` returns.

    A dataclass that mixes it in says ``repr=False``, or the dataclass's own repr wins."""

    __slots__ = ()

    def _shown(self) -> Shown:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self._shown().text()

    def _repr_html_(self) -> str:
        return self._shown().html()
