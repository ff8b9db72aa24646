"""The cleaned tokenizer the BM25 scorer reads text with: words that mean something, in one form.

The article's ``tokenize`` (``tokenizer.py``) keeps punctuation on its words ("污染？" is not
"污染"), every "the" and "is", and "paints" apart from "painted". That is right for the article's
demo, whose table we reproduce, and wrong for real conversations. ``analyze`` cleans up, in four
steps:

1. normalise: Unicode NFKC (full-width ``Ａ１`` becomes ``A1``), then ``casefold``;
2. split: letters and digits are words, everything else (punctuation, apostrophes, spaces) splits
   them; a run of CJK characters is cut into its overlapping two-character bigrams (a lone
   character stays itself), as the article does, but without the whole run as an extra token;
3. drop English stop words ("the", "is", "i", "and" ...): they are in every message and tell
   records apart by nothing but length;
4. stem: a light suffix stripper folds plurals and ``-ing`` / ``-ed`` forms onto one stem
   (``paints``, ``painted``, ``paintings`` → ``paint``), and drops a final ``e`` so that ``love``,
   ``loved`` and ``loving`` meet at ``lov`` (and "Caroline" becomes ``carolin``).

    >>> analyze("Caroline's paintings, painted at the LGBTQ support-group!")
    ['carolin', 'paint', 'paint', 'lgbtq', 'support', 'group']
    >>> analyze("如何治理记忆污染？ Agent")
    ['如何', '何治', '治理', '理记', '记忆', '忆污', '污染', 'agent']

Duplicates are kept: they are term frequency. A stem is not a word ("lov"); it only has to be the
same for every form of the word, in the records and in the query alike.
"""
from __future__ import annotations

import re
import unicodedata

__all__ = ["analyze", "stem", "STOP_WORDS", "FUNCTION_BIGRAMS"]

# Ideographs (the basic block, extension A, compatibility ideographs) and Japanese kana: written
# without spaces, so they are cut into bigrams rather than split into words.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A CJK run, or a run of letters and digits that are not CJK (``[^\W_]`` is a letter or a digit).
_PIECE = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_IS_CJK = re.compile(rf"[{_CJK}]")

# English function words, with the pieces contractions leave once apostrophes split them
# ("don't" → "don", "t"; "it's" → "it", "s").
STOP_WORDS = frozenset("""
a about above after again against all am an and any are aren as at be because been before being below
between both but by can cannot could couldn d did didn do does doesn doing don down during each few for
from further had hadn has hasn have haven having he her here hers herself him himself his how i if in
into is isn it its itself just ll m me more most my myself no nor not now of off on once only or other
our ours ourselves out over own re s same shan she should shouldn so some such t than that the their
theirs them themselves then there these they this those through to too under until up ve very was
wasn we were weren what when where which while who whom why will with won would wouldn y you your
yours yourself yourselves also yeah yes oh ok okay hey hi
""".split())

# Chinese bigrams that carry grammar, not topic ("我的猫" and "我的快递" share only 我的). Not
# dropped by ``analyze`` (BM25 weighs them down by itself); admission uses them to ask whether a
# memory shares any *content* word with a query.
FUNCTION_BIGRAMS = frozenset("""
我的 你的 他的 她的 它的 我们 你们 他们 什么 怎么 这个 那个 一个 一下 可以 就是 还是 不是 是不 是什
有没 没有 的是 了吗 是的 有点 一些 哪个 哪里 为什 么样
""".split())

_VOWELS = set("aeiouy")
_SIBILANT_ES = ("sses", "xes", "ches", "shes", "zes")
_KEEP_DOUBLE = set("lsz")  # "falling" → "fall", but "running" → "run"


def analyze(text: str) -> list[str]:
    """The cleaned terms of ``text``, in order (see the module docstring for the four steps)."""
    if not isinstance(text, str):
        raise TypeError(f"analyze() expects str, got {type(text).__name__}")
    terms: list[str] = []
    for piece in _PIECE.findall(unicodedata.normalize("NFKC", text).casefold()):
        if _IS_CJK.match(piece):
            # Step 2 for CJK: overlapping bigrams; a single character is its own term.
            terms.extend([piece[i : i + 2] for i in range(len(piece) - 1)] if len(piece) > 1 else [piece])
        elif piece not in STOP_WORDS:
            terms.append(stem(piece))
    return terms


def stem(word: str) -> str:
    """Fold a lowercase word's plural, ``-ing`` and ``-ed`` forms, then its final ``e``.

    A plural ending, then a verb ending, each only if a stem of three letters with a vowel is left:

        >>> [stem(w) for w in ["studies", "boxes", "cats", "running", "falling", "loved", "love", "thing"]]
        ['study', 'box', 'cat', 'run', 'fall', 'lov', 'lov', 'thing']
    """
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word  # short words, numbers and non-English words stay as they are
    base = _strip_verb_ending(_strip_plural(word))
    # "love", "loved" and "loving" must meet: drop a final "e" (but keep "tree", "coffee").
    if base.endswith("e") and not base.endswith("ee") and len(base) > 3:
        base = base[:-1]
    return base


def _strip_plural(word: str) -> str:
    """The word without a plural ``-s`` / ``-es`` / ``-ies`` (or ``-ied``, which ends the same way)."""
    if word.endswith(("ies", "ied")) and len(word) > 4:
        return word[:-3] + "y"  # studies, studied → study
    if word.endswith(_SIBILANT_ES):
        return word[:-2]  # classes → class, boxes → box, wishes → wish
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]  # cats → cat (but not glass, bus, this)
    return word


def _strip_verb_ending(word: str) -> str:
    """The word without ``-ing`` or ``-ed``, if a stem with a vowel and 3+ letters is left."""
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and not word.endswith("eed"):
            rest = word[: -len(suffix)]
            if len(rest) >= 3 and _VOWELS.intersection(rest):
                return _undouble(rest)
    return word


def _undouble(rest: str) -> str:
    """``runn`` → ``run``, ``stopp`` → ``stop``; ``fall`` and ``pass`` keep their double letter."""
    if len(rest) > 3 and rest[-1] == rest[-2] and rest[-1] not in _VOWELS and rest[-1] not in _KEEP_DOUBLE:
        return rest[:-1]
    return rest
