"""Pollution metrics: what one context got right and wrong, and the totals over many contexts.

A strategy answers a query with a *context*: a list of ``Item`` s, each a memory or a persona fact
line, named by the key the script gave it (``"w3"``, ``"fact:device=Mac"``). The query's ``Labels``
say which pieces of information should be there and which memories must not. Against them:

    admitted    items in the context
    relevant    items that carry something the query should see
    needs, met  pieces of information the query should see / those some item carries
    polluting   items labelled must-not (counted per kind of pollution as well)
    leaks       items of another user or tenant                      (must-not kind ``other_user``)
    residue     items of an erased memory, or whose text holds an erased memory's text
    superseded  items a later correction superseded                   (must-not kind ``stale``)
    flips       queries whose context shows a preference the user negated as if it held
                (any item of must-not kind ``negation``: "推荐拿铁咖啡" after "别推荐咖啡")
    tokens      ``tokenize`` of every context line

Totals add the counts first and divide last ("micro-averaged": every item counts once, whichever
query it came from):

    precision = relevant / admitted     recall = met / needs     pollution rate = polluting / admitted

Worked example: a context of items w1 (should), w2 (must-not, noise) and w3 (unlabelled) for a
query that needs w1 and w4 has precision 1/3, recall 1/2 and pollution rate 1/3.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..text.tokenizer import tokenize

__all__ = ["Item", "Labels", "Tally", "carries", "must_not_kind", "score_query"]


@dataclass(frozen=True)
class Item:
    """One thing a strategy put into the context."""

    key: str  # "w3" (a scripted write) or "fact:device=Mac" / "fact:recommend=NOT 咖啡" (a persona fact)
    text: str  # the line the model would read


@dataclass(frozen=True)
class Labels:
    """What one query should and must not see, as the script implies it."""

    needs: tuple[tuple[str, ...], ...] = ()  # each need: alternative keys, any one of which carries it
    must_not: Mapping[str, str] = field(default_factory=dict)  # key -> kind of pollution
    related: tuple[str, ...] = ()  # harmless, not needed: neither relevant nor polluting
    erased_texts: tuple[str, ...] = ()  # what erased memories said: none of it may come back


def carries(item_key: str, label: str) -> bool:
    """Whether an item named ``item_key`` carries what ``label`` names.

    Memories match by key. A persona fact matches on key and polarity, and the label's value must
    appear in the fact's value (the library may keep a word more: "an iPhone" for "iPhone"):

        >>> carries("w3", "w3"), carries("w3", "w30")
        (True, False)
        >>> carries("fact:device=an iPhone", "fact:device=iPhone")
        True
        >>> carries("fact:recommend=咖啡", "fact:recommend=NOT 咖啡")
        False
    """
    if not (item_key.startswith("fact:") and label.startswith("fact:")):
        return item_key == label
    item_name, _, item_value = item_key.partition("=")
    label_name, _, label_value = label.partition("=")
    if item_name != label_name or item_value.startswith("NOT ") != label_value.startswith("NOT "):
        return False
    return label_value.removeprefix("NOT ").casefold() in item_value.removeprefix("NOT ").casefold()


def must_not_kind(item: Item, labels: Labels) -> str | None:
    """The kind of pollution ``item`` is for this query, or None when it may be there."""
    return next((kind for label, kind in labels.must_not.items() if carries(item.key, label)), None)


@dataclass(frozen=True)
class Tally:
    """Counts over one query or many; add tallies with ``+`` and read the rates last."""

    queries: int = 0
    admitted: int = 0
    relevant: int = 0
    needs: int = 0
    met: int = 0
    polluting: int = 0
    leaks: int = 0
    residue: int = 0
    superseded: int = 0
    flips: int = 0
    tokens: int = 0
    by_kind: Mapping[str, int] = field(default_factory=dict)  # must-not kind -> items admitted

    def __add__(self, other: Tally) -> Tally:
        counts = {name: getattr(self, name) + getattr(other, name) for name in _COUNTS}
        return Tally(**counts, by_kind=dict(Counter(self.by_kind) + Counter(other.by_kind)))

    @property
    def precision(self) -> float | None:
        """relevant / admitted; None when nothing was admitted (no context, nothing to judge)."""
        return self.relevant / self.admitted if self.admitted else None

    @property
    def recall(self) -> float | None:
        """met / needs; None when no query needed anything."""
        return self.met / self.needs if self.needs else None

    @property
    def pollution_rate(self) -> float:
        """polluting / admitted; an empty context pollutes nothing (0.0)."""
        return self.polluting / self.admitted if self.admitted else 0.0

    @property
    def tokens_per_query(self) -> float:
        return self.tokens / self.queries if self.queries else 0.0

    def to_dict(self) -> dict[str, object]:
        counts = {name: getattr(self, name) for name in _COUNTS}
        return {**counts, "by_kind": dict(sorted(self.by_kind.items())), "precision": self.precision,
                "recall": self.recall, "pollution_rate": self.pollution_rate, "tokens_per_query": self.tokens_per_query}


_COUNTS = ("queries", "admitted", "relevant", "needs", "met", "polluting", "leaks", "residue", "superseded",
           "flips", "tokens")


def score_query(items: Sequence[Item], labels: Labels) -> Tally:
    """Measure one context against one query's labels (see the module docstring)."""
    kinds = [must_not_kind(item, labels) for item in items]
    wanted = {label for need in labels.needs for label in need}
    # An item of an erased memory is residue by its key; any line quoting an erased text is too.
    residue = sum(kind == "erased" or any(text in item.text for text in labels.erased_texts)
                  for item, kind in zip(items, kinds))
    return Tally(
        queries=1,
        admitted=len(items),
        relevant=sum(any(carries(item.key, label) for label in wanted) for item in items),
        needs=len(labels.needs),
        met=sum(any(carries(item.key, label) for item in items for label in need) for need in labels.needs),
        polluting=sum(kind is not None for kind in kinds),
        leaks=kinds.count("other_user"),
        residue=residue,
        superseded=kinds.count("stale"),
        flips=int("negation" in kinds),
        tokens=sum(len(tokenize(item.text)) for item in items),
        by_kind=dict(Counter(kind for kind in kinds if kind is not None)),
    )
