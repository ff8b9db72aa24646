"""LoCoMo by leave-one-conversation-out: the four scorers, each with parameters it did not see tested.

``locomo.py`` measures one fixed configuration. Choosing that configuration on the same
conversations it is reported on flatters it, so here every scorer's parameters are chosen by
**leave-one-conversation-out**: for each conversation, the grid point with the best recall@10 on
categories 1–4 over the *other* conversations (their questions pooled; the first grid point wins a
tie) is used on the held-out one. The report pools the held-out results — every question scored
by parameters chosen without its conversation — and lists the choice per fold. The same grid and
rule for every conversation: no per-conversation switches.

    article  the article's cosine             neighbours ∈ {1, 2}
    bm25     Bm25Scorer                        k1 ∈ {0.9, 1.2, 2.0}, b ∈ {0.5, 0.75},
                                               context_weight ∈ {0.5, 0.75}, neighbours ∈ {1, 2}
    dense    cosine of the embedder's vectors  the text embedded: the turn alone, or with its
             (clamped to [0, 1])               neighbours (``neighbours`` ∈ {0, 1})
    hybrid   ``Fusion`` of bm25 (its defaults, neighbours 2) and dense (the turn alone):
                                               weight ∈ {0.2, 0.3, 0.4, 0.5, 0.6}, floor ∈ {0.1, 0.2, 0.3}

Embeddings are computed once per text and reused across the grid (and, with ``cache``, across
runs: a JSON file keyed by the model's name and each text's SHA-256).
"""
from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any, Callable, Sequence

from ..retrieval.embedder import Embedder, embed, signature
from ..retrieval.hybrid import Fusion, fuse
from ..retrieval.scorers import ArticleScorer, Bm25Scorer
from ..retrieval.semantic import SemanticIndex
from ..text.tokenizer import tokenize
from .locomo import ANSWERABLE, DEFAULT_THRESHOLDS, Conversation, Retrieval, build_store, summarize, turn_index_text

__all__ = ["GRIDS", "KINDS", "CachedEmbedder", "leave_one_out"]

KINDS = ("article", "bm25", "dense", "hybrid")


def _product(**axes: Sequence[Any]) -> list[dict[str, Any]]:
    return [dict(zip(axes, values)) for values in itertools.product(*axes.values())]


GRIDS: dict[str, list[dict[str, Any]]] = {
    "article": _product(neighbours=[1, 2]),
    "bm25": _product(k1=[0.9, 1.2, 2.0], b=[0.5, 0.75], context_weight=[0.5, 0.75], neighbours=[1, 2]),
    "dense": _product(neighbours=[0, 1]),
    "hybrid": _product(weight=[0.2, 0.3, 0.4, 0.5, 0.6], floor=[0.1, 0.2, 0.3]),
}
HYBRID_LEXICAL = {"k1": 1.2, "b": 0.75, "context_weight": 0.5, "neighbours": 2}  # Bm25Scorer's defaults


class CachedEmbedder:
    """An embedder that remembers every vector it made, optionally in a JSON file (model name → text hash → vector)."""

    def __init__(self, embedder: Embedder, path: Path | str | None = None) -> None:
        self.inner, self.name, self.dimension = embedder, embedder.name, embedder.dimension
        self.path = Path(path) if path is not None else None
        stored = json.loads(self.path.read_text(encoding="utf-8")) if self.path and self.path.exists() else {}
        self._vectors: dict[str, list[float]] = stored.get(self.name, {})
        self._all = stored

    def __call__(self, texts: list[str]) -> list[list[float]]:
        keys = [hashlib.sha256(text.encode("utf-8")).hexdigest() for text in texts]
        missing = list(dict.fromkeys(key for key in keys if key not in self._vectors))
        if missing:
            by_key = dict(zip(keys, texts))
            self._vectors.update(zip(missing, embed(self.inner, [by_key[key] for key in missing])))
            self._save()
        return [self._vectors[key] for key in keys]

    def _save(self) -> None:
        if self.path is not None:
            self._all[self.name] = self._vectors
            self.path.write_text(json.dumps(self._all), encoding="utf-8")


def _hits(conversation: Conversation, scored: dict[int, float], records: list[dict[str, Any]], depth: int):
    """The first ``depth`` of ``scored`` (record_id -> score) as Retrieval hits, ties in insertion order."""
    order = sorted(range(len(records)), key=lambda i: (-scored.get(records[i]["record_id"], 0.0), i))[:depth]
    return tuple((scored.get(records[i]["record_id"], 0.0), records[i]["dia_id"], len(tokenize(records[i]["content"])))
                 for i in order)


class _Conversation:
    """One conversation's searches, computed once and shared by every grid point that needs them."""

    def __init__(self, conversation: Conversation, embedder: Embedder | None, depth: int) -> None:
        self.conversation, self.embedder, self.depth = conversation, embedder, depth
        self._lexical: dict[tuple, list[dict[int, float]]] = {}
        self._cosines: dict[int, list[dict[int, float]]] = {}
        store = build_store(conversation, ArticleScorer(), 0, False)  # the records and their ids: nothing searched
        self.records: list[dict[str, Any]] = store.records(conversation.sample_id)

    def lexical(self, scorer: Any, neighbours: int, every: bool = False) -> list[dict[int, float]]:
        """record_id -> score per question: for the first ``depth`` records, or (``every``) all of them."""
        key = (scorer, neighbours, every)
        if key not in self._lexical:
            store = build_store(self.conversation, scorer, neighbours)
            depth = len(self.records) if every else self.depth
            self._lexical[key] = [
                {record["record_id"]: score for score, record in
                 store.search(q.question, self.conversation.sample_id, top_k=depth)}
                for q in self.conversation.questions]
        return self._lexical[key]

    def cosines(self, neighbours: int) -> list[dict[int, float]]:
        """record_id -> cosine for every record, per question; a turn embedded with ``neighbours`` around it."""
        if neighbours not in self._cosines:
            turns, index = self.conversation.turns, SemanticIndex(self.embedder)
            texts = [(turns[i].content, turn_index_text(turns, i, neighbours, False) if neighbours else None)
                     for i in range(len(turns))]
            index.add_texts((record["record_id"], f"{content}\n{extra}" if extra else content)
                            for record, (content, extra) in zip(self.records, texts))
            vectors = embed(self.embedder, [q.question for q in self.conversation.questions])
            self._cosines[neighbours] = [index.scores_for_vector(vector) for vector in vectors]
        return self._cosines[neighbours]

    def retrieve(self, kind: str, params: dict[str, Any]) -> list[Retrieval]:
        """Every question's blind search under one grid point."""
        if kind == "article":
            per_question = self.lexical(ArticleScorer(), params["neighbours"])
        elif kind == "bm25":
            per_question = self.lexical(_bm25(params), params["neighbours"])
        elif kind == "dense":
            per_question = self.cosines(params["neighbours"])
        else:
            fusion, order = Fusion(**params), [record["record_id"] for record in self.records]
            lexical = self.lexical(_bm25(HYBRID_LEXICAL), HYBRID_LEXICAL["neighbours"], every=True)
            per_question = [{hit.record_id: hit.score for hit in fuse(lex, cos, order, fusion, len(order))}
                            for lex, cos in zip(lexical, self.cosines(0))]
        return [Retrieval(q.category, frozenset(q.evidence), _hits(self.conversation, scored, self.records, self.depth))
                for q, scored in zip(self.conversation.questions, per_question)]


def _bm25(params: dict[str, Any]) -> Bm25Scorer:
    return Bm25Scorer(k1=params["k1"], b=params["b"], context_weight=params["context_weight"])


def _recall_at_10(results: Sequence[Retrieval]) -> float:
    scored = [r.recall(r.hits[:10]) for r in results if r.category in ANSWERABLE and r.evidence]
    return sum(scored) / len(scored) if scored else 0.0


def leave_one_out(conversations: Sequence[Conversation], kind: str, *, embedder: Embedder | None = None,
                  grid: Sequence[dict[str, Any]] | None = None, top_k: int = 10, threshold: float = 0.2,
                  thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
                  progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Choose ``kind``'s parameters on all but one conversation, report on that one; pool the folds."""
    if kind not in KINDS:
        raise ValueError(f"unknown scorer {kind!r}; expected one of {list(KINDS)}")
    if kind in ("dense", "hybrid") and embedder is None:
        raise ValueError(f"the {kind} scorer needs an embedder")
    if len(conversations) < 2:
        raise ValueError("leave-one-conversation-out needs at least two conversations")
    grid = list(grid if grid is not None else GRIDS[kind])
    shared = [_Conversation(c, embedder, max(10, top_k)) for c in conversations]
    # results[g][c]: grid point g's retrievals on conversation c
    results = []
    for number, params in enumerate(grid, start=1):
        progress(f"{kind}: grid point {number}/{len(grid)} {params}")
        results.append([conversation.retrieve(kind, params) for conversation in shared])
    folds, held_out = [], []
    for c, conversation in enumerate(conversations):
        train = [[r for other, rs in enumerate(per_conversation) if other != c for r in rs] for per_conversation in results]
        best = max(range(len(grid)), key=lambda g: (_recall_at_10(train[g]), -g))
        folds.append({"held_out": conversation.sample_id, "chosen": grid[best],
                      "train_recall@10": _recall_at_10(train[best]), "held_out_recall@10": _recall_at_10(results[best][c])})
        held_out += results[best][c]
    described = {"name": kind, **({"embedder": signature(embedder)["name"]} if kind in ("dense", "hybrid") else {})}
    return {"scorer": described, "protocol": "leave-one-conversation-out", "grid": grid, "folds": folds,
            "top_k": top_k, "threshold": threshold, **summarize(held_out, top_k, threshold, thresholds)}
