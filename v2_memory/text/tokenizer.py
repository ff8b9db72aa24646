"""The article's lexical "embedding": a tokenizer and term-frequency cosine.

This is not a neural embedding. It is the dependency-free fallback the article uses so that a
reader can see every number: words split on whitespace, plus overlapping two-character pieces of
every run of Chinese characters, compared by the cosine of their counts.

    >>> tokenize("记忆污染 阈值 Agent")
    ['记忆污染', '阈值', 'agent', '记忆', '忆污', '污染', '阈值']
    >>> round(cosine_similarity("如何治理记忆污染", "记忆污染 阈值 Agent"), 3)
    0.354
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping

__all__ = ["tokenize", "token_count", "term_counts", "vector_norm", "cosine_similarity"]

# The four separators the article turns into spaces; all other punctuation stays on its word.
_SEPARATORS = ("，", "。", "：", "/")
# A maximal run of CJK Unified Ideographs (the basic block, as in the article).
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")


def tokenize(text: str) -> list[str]:
    """Split ``text`` into the article's tokens. Duplicates are kept: they are term frequency.

    Step 1: lowercase and turn ``，。：/`` into spaces; split on whitespace (whole words).
    Step 2: append every overlapping bigram of each CJK run of the *original* text.

        >>> tokenize("如何治理记忆污染？")
        ['如何治理记忆污染？', '如何', '何治', '治理', '理记', '记忆', '忆污', '污染']
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize() expects str, got {type(text).__name__}")
    bigrams = [run[i : i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)]
    return _words(text) + bigrams


def token_count(text: str) -> int:
    """``len(tokenize(text))``, without building the tokens (a run of n CJK characters has n - 1 bigrams).

        >>> token_count("如何治理记忆污染？"), len(tokenize("如何治理记忆污染？"))
        (8, 8)
    """
    return len(_words(text)) + sum(len(run) - 1 for run in _CJK_RUN.findall(text))


def _words(text: str) -> list[str]:
    # ``replace`` per separator, not ``str.translate``: translate looks every character up in a
    # dict, ten times slower on a long context, with the same result.
    text = text.lower()
    for separator in _SEPARATORS:
        text = text.replace(separator, " ")
    return text.split()


def term_counts(tokens_or_text: str | Mapping[str, int] | Iterable[str]) -> Counter[str]:
    """Token counts of a text, a token list, or an existing count mapping."""
    if isinstance(tokens_or_text, str):
        return Counter(tokenize(tokens_or_text))
    if isinstance(tokens_or_text, Mapping):
        return Counter(tokens_or_text)
    return Counter(tokens_or_text)


def vector_norm(counts: Mapping[str, int]) -> float:
    """Euclidean length of a count vector: ``sqrt(sum(count**2))``."""
    return math.sqrt(sum(count * count for count in counts.values()))


def cosine_similarity(
    a: str | Mapping[str, int] | Iterable[str], b: str | Mapping[str, int] | Iterable[str]
) -> float:
    """Term-frequency cosine of two texts (or token lists, or count mappings).

    ``dot(a, b) / (|a| * |b|)``, and 0.0 when either side has no tokens. For the article's query
    ``"记忆污染 阈值 Agent"`` (counts: 阈值 2, the five others 1, so ``|q| = 3``) and the record
    ``"如何治理记忆污染"`` (8 distinct tokens, ``|d| = sqrt(8)``) the shared tokens are 记忆, 忆污,
    污染, so the score is ``3 / (3 * sqrt(8)) = 0.3536``.
    """
    counts_a, counts_b = term_counts(a), term_counts(b)
    if not counts_a or not counts_b:
        return 0.0
    dot = sum(count * counts_b[term] for term, count in counts_a.items() if term in counts_b)
    # subtle: rounding can push identical texts to 1.0000000000000002; scores stay within [0, 1].
    return min(dot / (vector_norm(counts_a) * vector_norm(counts_b)), 1.0)
