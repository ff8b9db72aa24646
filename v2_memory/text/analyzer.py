"""The cleaned tokenizer the BM25 scorer reads text with: words that mean something, in one form.

The article's ``tokenize`` (``tokenizer.py``) keeps punctuation on its words ("污染？" is not
"污染"), every "the" and "is", and "paints" apart from "painted". That is right for the article's
demo, whose table we reproduce, and wrong for real conversations. ``analyze`` cleans up, in five
steps:

1. normalise: Unicode NFKC (full-width ``Ａ１`` becomes ``A1``), then ``casefold``;
2. split: letters and digits are words, everything else (punctuation, apostrophes, spaces) splits
   them; a run of CJK characters is cut into its overlapping two-character bigrams (a lone
   character stays itself), as the article does, but without the whole run as an extra token;
3. drop what only asks: Chinese question words and particles (什么时候, 怎么, 哪, 谁, 吗, 呢, 来着
   ...) are cut out of their run, with the function characters touching them (是, 在, 跟 ...),
   so that no bigram straddles them ("钢琴课是什么时候" → 钢琴, 琴课: no "课是", no "么时");
   English question phrases lose their asking noun ("what time", "how long"), and a question its
   verbs of saying and thinking ("what did the doctor say about my knee" is about the knee);
4. drop English stop words ("the", "is", "i", "what", "when" ...) and Chinese function bigrams
   (我的, 我们, 可以, 没有 ...): they are in every message and tell records apart by nothing but
   length;
5. stem: the Porter stemmer (``stemmer.py``) folds inflected and derived forms onto one stem
   (``paints``, ``painted``, ``paintings`` → ``paint``; ``inspiration``, ``inspiring`` → ``inspir``).

    >>> analyze("Caroline's paintings, painted at the LGBTQ support-group!")
    ['carolin', 'paint', 'paint', 'lgbtq', 'support', 'group']
    >>> analyze("如何治理记忆污染？ Agent")
    ['治理', '理记', '记忆', '忆污', '污染', 'agent']
    >>> analyze("What time is 钢琴课 on Saturday? 钢琴课是什么时候？")
    ['钢琴', '琴课', 'saturdai', '钢琴', '琴课']

Duplicates are kept: they are term frequency. A stem is not a word ("carolin"); it only has to be
the same for every form of the word, in the records and in the query alike. Every step is one pass
over the text (the question-word pattern is an alternation of fixed strings: no backtracking).
"""
from __future__ import annotations

import re
import unicodedata

from .memo import text_cache
from .stemmer import porter_stem

__all__ = ["analyze", "stem", "STOP_WORDS", "FUNCTION_BIGRAMS", "QUESTION_WORDS_ZH", "BOUNDARY_CHARACTERS", "FRAME_VERBS"]

# Ideographs (the basic block, extension A, compatibility ideographs) and Japanese kana: written
# without spaces, so they are cut into bigrams rather than split into words.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A CJK run, or a run of letters and digits that are not CJK (``[^\W_]`` is a letter or a digit):
# ``findall`` gives (run, word) pairs, one of the two empty, so the kind of a piece is known at once.
_PIECE = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)")

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

# Chinese bigrams that carry grammar, not topic ("我的猫" and "我的快递" share only 我的): dropped
# by ``analyze`` like the English stop words (a question whose topic the user never wrote would
# otherwise be matched on 我的 alone); admission also uses them to ask whether a memory shares any
# *content* word with a query.
FUNCTION_BIGRAMS = frozenset("""
我的 你的 他的 她的 它的 我们 你们 他们 什么 怎么 这个 那个 一个 一下 可以 就是 还是 不是 是不 是什
有没 没有 的是 了吗 是的 有点 一些 哪个 哪里 为什 么样
""".split())

# Question words and particles: they say *that* something is asked, never *what* about, so they are
# no evidence of a topic. Chinese ones are cut out of a CJK run (the run splits there, so no bigram
# straddles them: "钢琴课是什么时候" gives no "么时"); compound words before the characters they
# contain, so the longest wins. 吧 is missing on purpose: it is also the 吧 of 酒吧 (a bar).
QUESTION_WORDS_ZH = tuple(sorted(set("""
什么时候 什么样 什么 为什么 为啥 如何 干什么 干嘛 怎么样 怎么办 怎么 怎样 怎 哪里 哪儿 哪个 哪些 哪天 哪家 哪位 哪年 哪
谁 几点 几号 几时 几天 几个 星期几 礼拜几 周几 多少 多久 多长 多大 是不是 有没有 是否 啥 咋 吗 呢 来着 啊 呀 嘛 啦 哦
""".split()), key=len, reverse=True))
_QUESTION_ZH = re.compile("|".join(QUESTION_WORDS_ZH))
# One-character function words (copula, prepositions, aspect particles) left beside a question word
# ("课是|什么时候", "周五跟|谁"): stripped from that edge, so "课是" and "五跟" are not made into terms.
BOUNDARY_CHARACTERS = frozenset("是在跟和与同的了去到有要给对把被从向叫让")
# English question phrases whose second word asks, like the first: "what time", "how long".
_ASKING_PAIRS = {"what": frozenset("time day date year month kind sort type".split()),
                 "which": frozenset("time day date year month kind sort type one".split()),
                 "how": frozenset("long many much often far soon".split())}
# Once a text has asked (what, who, how ...), a verb of saying or thinking frames the question
# rather than naming its topic: "what did the doctor *say* about my knee" is about the knee.
_WH_WORDS = frozenset("what when where who whom whose which why how".split())
FRAME_VERBS = frozenset("say said says saying tell told tells telling mention mentioned mentions think thought "
                        "thinks happen happened happens".split())


def analyze(text: str) -> list[str]:
    """The cleaned terms of ``text``, in order (see the module docstring for the steps)."""
    if not isinstance(text, str):
        raise TypeError(f"analyze() expects str, got {type(text).__name__}")
    return list(_terms(text))


@text_cache(maxsize=1024)  # a read analyses the same candidate memories again and again
def _terms(text: str) -> tuple[str, ...]:
    terms: list[str] = []
    asking: frozenset[str] = frozenset()  # words that ask when they follow the previous piece
    framing: frozenset[str] = frozenset()  # the frame verbs, once a wh-word has been seen
    for run, word in _PIECE.findall(unicodedata.normalize("NFKC", text).casefold()):
        if run:
            terms.extend(_cjk_terms(run))
            asking = frozenset()  # a CJK run asks nothing of the next piece, and frames nothing
            continue
        if word not in STOP_WORDS and word not in asking and word not in framing:
            terms.append(stem(word))
        asking = _ASKING_PAIRS.get(word, frozenset())
        if word in _WH_WORDS:
            framing = FRAME_VERBS
    return tuple(terms)


def _cjk_terms(run: str) -> list[str]:
    """Overlapping bigrams of each stretch of ``run`` between question words; a lone character is itself.

        >>> _cjk_terms("钢琴课是什么时候"), _cjk_terms("周五跟谁吃饭来着")
        (['钢琴', '琴课'], ['周五', '吃饭'])
    """
    terms: list[str] = []
    start = 0
    for match in _QUESTION_ZH.finditer(run):
        terms += _bigrams(_strip_boundary(run[start : match.start()], start > 0, True))
        start = match.end()
    terms += _bigrams(_strip_boundary(run[start:], start > 0, False))
    return terms


def _strip_boundary(stretch: str, after_question: bool, before_question: bool) -> str:
    """Drop function characters from the edges of ``stretch`` that touch a question word."""
    if after_question:
        stretch = stretch.lstrip("".join(BOUNDARY_CHARACTERS))
    if before_question:
        stretch = stretch.rstrip("".join(BOUNDARY_CHARACTERS))
    return stretch


def _bigrams(stretch: str) -> list[str]:
    """The stretch's overlapping bigrams but the function ones; a lone character is itself."""
    if len(stretch) < 2:
        return [stretch] if stretch else []
    pairs = (stretch[i : i + 2] for i in range(len(stretch) - 1))
    return [pair for pair in pairs if pair not in FUNCTION_BIGRAMS]


@text_cache(maxsize=2048)
def stem(word: str) -> str:
    """The Porter stem of an English word; numbers, words of up to three letters and non-ASCII words
    stay as they are.

        >>> [stem(w) for w in ["studies", "boxes", "cats", "running", "falling", "loved", "loving", "thing", "2023"]]
        ['studi', 'box', 'cat', 'run', 'fall', 'love', 'love', 'thing', '2023']
    """
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word  # Porter would make "bus" "bu" and "gas" "ga": three letters are left alone
    return porter_stem(word)
