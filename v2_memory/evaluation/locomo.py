"""``python -m v2_memory eval locomo PATH``: how much of the evidence does retrieval find?

LoCoMo (Maharana et al., ACL 2024, arXiv:2402.17753; data CC BY-NC 4.0, kept out of this
repository) is a set of long two-person conversations, each with questions whose ``evidence``
names the turns (``dia_id`` like ``"D3:7"``: session 3, turn 7) that answer them. This module
replays a file in that format through the library and measures retrieval, nothing else: no
model answers the questions.

The protocol, per conversation:

1. the conversation is one user (its ``sample_id``); every turn of every ``session_<n>`` is one
   record, content ``"speaker: text"``, with ``speaker``, ``dia_id``, ``session`` and
   ``created_at`` (the session's date, one second per turn) in its metadata;
2. with ``--neighbours 1`` (the default) a turn is also indexed with the text of the turn before
   and after it in the same session (``index_text``), since turns are often meaningless alone
   ("Yes, it was amazing!"); a hit still returns the turn itself. On the development file this
   lifts BM25's recall@10 on categories 1–4 from 0.600 to 0.701 (the previous turn only: 0.691;
   two turns each side: 0.705; with the neighbours' speaker names too: 0.689);
3. each question is a search for that user: ``top_k`` = max(10, ``--top-k``), no threshold.

**Evidence recall@k** of one question = |E ∩ R_k| / |E|, where E is the set of distinct dia_ids
its evidence names that exist in the conversation, and R_k the dia_ids of the first k results.
Per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop) and overall (1–4) we report
the mean over questions with a non-empty E. **Admitted** results are the first ``--top-k`` whose
score is ``>= --threshold`` (what ``store.search(..., threshold=t)`` returns; derived from the one
blind search, which is the same thing since scores are sorted); **context tokens** counts their
content with the article's tokenizer. For category 5 (adversarial, unanswerable) the **no-memory
rate** is the share of questions for which nothing is admitted: the correct answer there is "I
have no memory of that". The **sweep** repeats the admitted numbers for several thresholds.

**Malformed evidence** is parsed defensively: every ``D<session>:<turn>`` inside an entry counts
(``"D8:6; D9:17"`` and space-joined lists give two ids, ``"D:11:26"`` reads as ``D11:26``,
``"D01:3"`` as ``D1:3``); an entry naming no id (``"D"``) or an id with no such turn
(``"D10:19"`` when session 10 is shorter) is skipped and counted in the report.

Deterministic: no randomness, conversations and questions in file order. Progress on stderr.
The parameters of each scorer are chosen by leave-one-conversation-out in ``locomo_tuning.py``;
the command and its tables are in ``locomo_command.py``.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from statistics import fmean
from typing import Any, Callable, Iterable, Sequence

from ..retrieval.scorers import Scorer, resolve_scorer
from ..storage.json_store import JsonVectorStore
from ..text.tokenizer import tokenize

__all__ = ["Turn", "Question", "Conversation", "LocomoFormatError", "load_locomo", "parse_evidence",
           "parse_session_date", "neighbour_text", "date_text", "turn_index_text", "build_store", "Retrieval",
           "retrieve_all", "summarize", "evaluate", "data_summary"]

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ANSWERABLE = (1, 2, 3, 4)
DEFAULT_THRESHOLDS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_PLAIN_ID = re.compile(r"D[1-9]\d*:[1-9]\d*")
_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.I)
_MONTHS = {name: number for number, name in enumerate(
    "january february march april may june july august september october november december".split(), start=1)}


class LocomoFormatError(ValueError):
    """The file is not in LoCoMo's format; the message says where."""


# -- 1. the data --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Turn:
    dia_id: str  # "D<session>:<turn>"
    session: int
    speaker: str
    text: str
    when: datetime | None  # the session's date and time plus one second per earlier turn; None if unparsed

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Question:
    question: str
    category: int
    evidence: tuple[str, ...]  # distinct dia_ids of existing turns, in the order named
    skipped: tuple[str, ...] = ()  # evidence entries (or ids in them) that name no existing turn
    repaired: tuple[str, ...] = ()  # entries read defensively: not one plain "D<s>:<t>" ("D8:6; D9:17")


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def parse_evidence(entry: object) -> list[str]:
    """Every dia_id named in one evidence entry, normalised; [] when it names none.

    >>> parse_evidence("D8:6; D9:17"), parse_evidence("D:11:26"), parse_evidence("D1:3 D01:5"), parse_evidence("D")
    (['D8:6', 'D9:17'], ['D11:26'], ['D1:3', 'D1:5'], [])
    """
    if not isinstance(entry, str):
        return []
    return [f"D{int(session)}:{int(turn)}" for session, turn in _DIA_ID.findall(entry)]


def parse_session_date(text: object) -> datetime | None:
    """LoCoMo's ``"1:56 pm on 8 May, 2023"`` as an aware UTC datetime; None if it does not parse.

    >>> parse_session_date("1:56 pm on 8 May, 2023").isoformat()
    '2023-05-08T13:56:00+00:00'
    """
    match = _DATE.search(text) if isinstance(text, str) else None
    month = _MONTHS.get(match.group(5).lower()) if match else None
    if match is None or month is None:
        return None
    hour, minute, half, day, _, year = match.groups()
    hour = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    try:
        return datetime(int(year), month, int(day), hour, int(minute), tzinfo=timezone.utc)
    except ValueError:  # "31 February"
        return None


def load_locomo(path: Path | str) -> list[Conversation]:
    """Read a LoCoMo-format file: a JSON list of conversations (see the module docstring)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise LocomoFormatError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(data, list):
        raise LocomoFormatError(f"{path}: expected a JSON list of conversations")
    return [_conversation(item, number, path) for number, item in enumerate(data, start=1)]


def _conversation(item: object, number: int, path: Path | str) -> Conversation:
    if not isinstance(item, dict) or not isinstance(item.get("conversation"), dict):
        raise LocomoFormatError(f"{path}: conversation #{number} has no 'conversation' object")
    sample_id = str(item.get("sample_id") or f"conversation-{number}")
    turns = tuple(_turns(item["conversation"]))
    existing = {turn.dia_id for turn in turns}
    qa = item.get("qa") if isinstance(item.get("qa"), list) else []
    questions = tuple(q for q in (_question(raw, existing) for raw in qa) if q is not None)
    return Conversation(sample_id, turns, questions)


def _turns(sessions: dict[str, Any]) -> Iterable[Turn]:
    """Turns of every ``session_<n>`` in session order (not the date keys: some files have more)."""
    numbered = sorted((int(m.group(1)), key) for key in sessions if (m := _SESSION_KEY.fullmatch(key)))
    for session, key in numbered:
        if not isinstance(sessions[key], list):
            continue
        start = parse_session_date(sessions.get(f"{key}_date_time"))
        for offset, raw in enumerate(sessions[key]):
            ids = parse_evidence(raw.get("dia_id")) if isinstance(raw, dict) else []
            if ids and isinstance(raw.get("text"), str):  # a turn without an id or text cannot be evidence
                when = start + timedelta(seconds=offset) if start is not None else None
                yield Turn(ids[0], session, str(raw.get("speaker") or "unknown"), raw["text"], when)


def _question(raw: object, existing: set[str]) -> Question | None:
    """One question with its usable evidence; None for an entry without a question or category."""
    if not isinstance(raw, dict) or not isinstance(raw.get("question"), str):
        return None
    try:
        category = int(raw.get("category"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    entries = raw.get("evidence")
    entries = [entries] if isinstance(entries, str) else entries if isinstance(entries, list) else []
    found: dict[str, None] = {}
    skipped: list[str] = []
    repaired = [str(entry) for entry in entries if not (isinstance(entry, str) and _PLAIN_ID.fullmatch(entry))]
    for entry in entries:
        ids = parse_evidence(entry)
        skipped += [str(entry)] if not ids else [dia_id for dia_id in ids if dia_id not in existing]
        found.update(dict.fromkeys(dia_id for dia_id in ids if dia_id in existing))
    return Question(raw["question"], category, tuple(found), tuple(skipped), tuple(repaired))


# -- 2. the store -------------------------------------------------------------------------------
def neighbour_text(turns: Sequence[Turn], position: int, reach: int = 1) -> str | None:
    """The text (without speaker names) of up to ``reach`` turns before and after, same session."""
    session = turns[position].session
    around = [i for i in range(position - reach, position + reach + 1)
              if i != position and 0 <= i < len(turns) and turns[i].session == session]
    return " ".join(turns[i].text for i in around) or None


def date_text(turn: Turn) -> str | None:
    """When the turn was said, in words a question uses: ``"8 May 2023"``."""
    return f"{turn.when.day} {turn.when.strftime('%B')} {turn.when.year}" if turn.when is not None else None


def turn_index_text(turns: Sequence[Turn], position: int, neighbours: int, dates: bool) -> str | None:
    """A turn's ``index_text``: its neighbours' text, then (``dates``) the date it was said."""
    parts = [neighbour_text(turns, position, neighbours) if neighbours else None,
             date_text(turns[position]) if dates else None]
    return " ".join(part for part in parts if part) or None


def build_store(conversation: Conversation, scorer: str | Scorer, neighbours: int = 1,
                dates: bool = True) -> JsonVectorStore:
    """An in-memory store holding the conversation's turns as one user's records."""
    store = JsonVectorStore(None, scorer=scorer)
    with store.batch():
        for position, turn in enumerate(conversation.turns):
            index_text = turn_index_text(conversation.turns, position, neighbours, dates)
            dated = {"created_at": turn.when.isoformat()} if turn.when is not None else {}
            store.add(conversation.sample_id, "user", turn.content, index_text=index_text, speaker=turn.speaker,
                      dia_id=turn.dia_id, session=turn.session, **dated)
    return store


# -- 3. the measurements ------------------------------------------------------------------------
@dataclass(frozen=True)
class Retrieval:
    """One question's blind search: ``hits`` are ``(score, dia_id, context tokens)``, best first."""

    category: int
    evidence: frozenset[str]
    hits: tuple[tuple[float, str, int], ...]

    def admitted(self, top_k: int, threshold: float) -> list[tuple[float, str, int]]:
        return [hit for hit in self.hits[:top_k] if hit[0] >= threshold]

    def recall(self, hits: Sequence[tuple[float, str, int]]) -> float:
        return len(self.evidence.intersection(dia_id for _, dia_id, _ in hits)) / len(self.evidence)


def retrieve_all(conversation: Conversation, scorer: str | Scorer, neighbours: int, depth: int,
                 dates: bool = True) -> list[Retrieval]:
    """Search every question of the conversation once, blind, ``depth`` results deep."""
    store = build_store(conversation, scorer, neighbours, dates)
    results = []
    for question in conversation.questions:
        hits = store.search(question.question, conversation.sample_id, top_k=depth)
        results.append(Retrieval(question.category, frozenset(question.evidence), tuple(
            (score, record["dia_id"], len(tokenize(record["content"]))) for score, record in hits)))
    return results


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return fmean(values) if values else None


def _row(results: Sequence[Retrieval], top_k: int, threshold: float) -> dict[str, Any]:
    """Recall and context size over questions with evidence, for one threshold."""
    admitted = [r.admitted(top_k, threshold) for r in results]
    return {"questions": len(results), "recall@5": _mean(r.recall(r.hits[:5]) for r in results),
            "recall@10": _mean(r.recall(r.hits[:10]) for r in results),
            "admitted_recall": _mean(r.recall(hits) for r, hits in zip(results, admitted)),
            "mean_admitted": _mean(len(hits) for hits in admitted),
            "mean_context_tokens": _mean(sum(tokens for _, _, tokens in hits) for hits in admitted),
            "nothing_admitted": _mean(float(not hits) for hits in admitted)}


def summarize(results: Sequence[Retrieval], top_k: int, threshold: float, thresholds: Sequence[float]) -> dict[str, Any]:
    """Per-category rows at ``threshold``, category 5's no-memory rate, and the threshold sweep."""
    answerable = [r for r in results if r.category in ANSWERABLE and r.evidence]
    adversarial = [r for r in results if r.category == 5]
    categories = [{"category": c, "name": CATEGORIES[c],
                   **_row([r for r in answerable if r.category == c], top_k, threshold)} for c in ANSWERABLE]
    categories.append({"category": "1-4", "name": "all answerable", **_row(answerable, top_k, threshold)})

    def no_memory(t: float) -> float | None:
        return _mean(float(not r.admitted(top_k, t)) for r in adversarial)

    sweep = [{"threshold": t, **{k: v for k, v in _row(answerable, top_k, t).items() if "@" not in k},
              "category_5_no_memory": no_memory(t)} for t in thresholds]
    return {"categories": categories, "category_5": {"questions": len(adversarial), "no_memory": no_memory(threshold)},
            "sweep": sweep}


def evaluate(conversations: Sequence[Conversation], scorer: str | Scorer = "bm25", *, neighbours: int = 1,
             dates: bool = True, top_k: int = 10, threshold: float = 0.2,
             thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
             progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Run the protocol for one scorer over every conversation; the report as a dict."""
    chosen = resolve_scorer(scorer)
    results: list[Retrieval] = []
    for number, conversation in enumerate(conversations, start=1):
        progress(f"{chosen.name}: {conversation.sample_id} ({number}/{len(conversations)}), "
                 f"{len(conversation.turns)} turns, {len(conversation.questions)} questions")
        results += retrieve_all(conversation, chosen, neighbours, max(10, top_k), dates)
    return {"scorer": chosen.to_dict(), "neighbours": neighbours, "dates": dates, "top_k": top_k, "threshold": threshold,
            **summarize(results, top_k, threshold, thresholds)}


def data_summary(conversations: Sequence[Conversation]) -> dict[str, Any]:
    """What the file holds, and what its evidence parsing skipped (and why)."""
    questions = [q for c in conversations for q in c.questions]
    skipped = [{"sample_id": c.sample_id, "question": q.question, "entry": entry,
                "reason": "no such turn" if parse_evidence(entry) else "names no turn"}
               for c in conversations for q in c.questions for entry in q.skipped]
    return {"conversations": len(conversations), "turns": sum(len(c.turns) for c in conversations),
            "questions": {str(c): sum(q.category == c for q in questions) for c in sorted({q.category for q in questions})},
            "evidence_ids_used": sum(len(q.evidence) for q in questions), "evidence_skipped": len(skipped),
            "evidence_repaired": sum(len(q.repaired) for q in questions), "skipped": skipped,
            "answerable_without_evidence": sum(q.category in ANSWERABLE and not q.evidence for q in questions)}
