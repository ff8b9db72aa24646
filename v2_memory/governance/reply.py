"""Replies to the assistant: the user's yes verifies what the assistant said, a no rejects it.

An assistant message is stored unverified and weak (the model's own words, ``policy.py``): it
never enters the summary and rarely wins admission. When the user's very next message answers
it, governance reads that answer's first clause:

    accept   a yes to a question or an offer ("Want it?" "yes please, book that"; "要不要我提醒你？"
             "好啊，就这么办"; "要约吗？" "约吧": the verb echoed), a yes that says it is true
             ("correct", "exactly", "没错", "对"), or taking up what was offered, in any tense
             ("the Wednesday one works, book it", "perfect, that's the one, just booked it", "就订这个";
             committing to it: "perfect, I'll do that", "就做这个"; not "let's do it later")
             → the assistant message is verified: full weight, and the summary may keep it
             (a bare "ok" / "好的" after a statement acknowledges it; it does not vouch for it)
    deny     a no ("no, the earlier one", "nope, O negative", "不是，是周五上午十点半", "不对，是猕猴桃")
             → the assistant message is superseded by the user's: it leaves every track
    choose   one of the options it laid out ("the 7:15 …, or the 9:50 …" — "the second one",
             "第一个吧", words only one option has, or a yes to an offer that leaned to one)
             → verified, the other options superseded with the message; a split keeps the rest
             (``chosen_option``)

Anything else — a new topic, a question, "let's do it later" — leaves it as it was: unverified.
Only the user's own reply counts, and only to the message right before it: the model cannot
confirm itself, and a yes cannot reach back past another turn.

    >>> reply_to("yes please, book that", asked=True), reply_to("nope, O negative"), reply_to("嗯对，就订这个")
    ('accept', 'deny', 'accept')
    >>> reply_to("好的", asked=True), reply_to("好的", asked=False)
    ('accept', None)
    >>> reply_to("what about Friday?"), reply_to("meh, let's do it later") is None
    (None, True)
"""
from __future__ import annotations

import re

from ..text.analyzer import analyze
from ..text.segmenter import read_message

__all__ = ["reply_to", "asks", "options_of", "chosen_option"]

_YES_EN = (r"yes|yeah|yep|yup|ya|sure|ok(?:ay)?|correct|right|exactly|perfect|great|absolutely|definitely|"
           r"sounds\s{1,3}(?:good|great|perfect)|that'?s\s{1,3}(?:right|correct|it|perfect)|that\s{1,3}works|deal|go\s{1,3}ahead|do\s{1,3}it|please\s{1,3}do")
_YES_ZH = r"是的|对的|对|好的|好啊|好呀|好嘞|好|行|可以|嗯{1,4}|没错|正确|就是|就这个|就这么办|就这样|妥"
LIMIT = 400  # a reply is short: its first characters say yes or no
_ACCEPT = re.compile(rf"^(?:(?:{_YES_EN})\b|(?:{_YES_ZH}))", re.I)
# A yes that vouches for what was said, not only for going ahead.
_TRUE = re.compile(r"\b(?:correct|right|exactly|that'?s\s{1,3}(?:right|correct|it)|absolutely|indeed|yes|yep|yeah)\b|没错|正确|对|是的|就是", re.I)
# Taking up what was offered, with a word pointing back at it.
# (A taking-up verb in any tense: "book it", "just booked it", "went with that one".)
# (A choosing verb may be past: "just booked it", "went with that one"; "used it", "took that one",
# "sent it" tell what happened before, not a choice of what was offered.)
_TAKE_UP = re.compile(r"\b(?:book(?:ed)?|take|go(?:ing)?\s{1,3}with|went\s{1,3}with|use|pick(?:ed)?|choose|chose|"
                      r"order(?:ed)?|add|keep|send|schedul(?:e|ed)|reserv(?:e|ed)|grab(?:bed)?)"
                      r"\s{1,3}(?:it|that|this|them|that\s{1,3}one|this\s{1,3}one)\b"
                      r"|\b(?:that|this|the\s{1,3}[\w-]{1,20})\s{1,3}one\s{1,3}(?:works|is\s{1,3}(?:fine|good|perfect))\b|\b(?:that|this)\s{1,3}works\b"
                      r"|\b(?:that'?s|this\s{1,3}is|it'?s)\s{1,3}the\s{1,3}one\b(?!\s{1,3}(?:that|which|who|where|i|we|you)\b)"
                      r"|\block\s{1,3}(?:it|that|this|them)\s{1,3}in\b|\b(?:love|like)\s{1,3}(?:it|that|this)\s{0,3}(?:[,.!]|$)"
                      # committing to do what was proposed: "i'll do that", "gonna try this", "let's do that" —
                      # not doing it oneself ("I'll do that myself"), nor put off ("later", "when ...", "after ...")
                      r"|\b(?:i'?ll|i\s{1,3}will|gonna|going\s{1,3}to|let'?s)\s{1,3}(?:do|try|follow|make|cook)\s{1,3}(?:it|that|this|them)\b"
                      r"(?!\s{1,3}(?:myself|ourselves|later|another|some|sometime|next|tomorrow|eventually|one\s{1,3}day|after|when|once|until|if|in|before)\b)"
                      r"|就(?:订|要|选|用|买|约|按)|就(?:做|试试?)(?:这个|那个|这道|那道|这款|那款|这家|那家)|就(?:它|这个|那个|这款|那款|这家|那家)(?:了|吧|啦)?(?:$|[，,。!！])|(?:这个|那个|这款|那款|这家|那家)(?:吧|就行|可以|挺好)|帮我(?:订|约|加|买)(?:了|上|吧)?$|加到", re.I)
_NO = re.compile(r"^(?:no|nope|nah|not\s{1,3}(?:quite|really|exactly|right)|wrong|incorrect|that'?s\s{1,3}(?:wrong|not\s{1,3}(?:right|it))|"
                 r"不是|不对|错了|没有|不不|不用了|不要)\b", re.I)
_NOT_NO = re.compile(r"^(?:no\s{1,3}(?:worries|problem|prob|biggie|rush|doubt)|不错|不客气|没问题|没事)", re.I)  # yes, in a no's words
_NOT_YES = re.compile(r"^(?:no|nope|nah|not|never|不|没(?!错|问题)|别)", re.I)


def reply_to(text: str, *, asked: bool = False, offer: str = "") -> str | None:
    """"accept", "deny" or None: how ``text`` answers the assistant message right before it
    (``asked``: that message asked or offered something, so a plain "ok" takes it up; ``offer``:
    its text, whose verb a Chinese yes may echo: "要约吗？" "约吧")."""
    clauses = read_message(text[:LIMIT])
    if not clauses:
        return None
    first = clauses[0]
    sentence = [c for c in clauses if c.sentence == first.sentence]
    vouches = _VOUCH.match(first.text.strip())
    # subtle: "correct" alone reads as a tag question to the segmenter; only a "?" makes it one here.
    if (first.act == "conditional" or (first.act == "report" and not vouches)
            or "?" in text[first.start:sentence[-1].end + 1] or "？" in text[first.start:sentence[-1].end + 1]):
        return None
    if _NO.match(first.text.strip()) and not _NOT_NO.match(first.text.strip()):
        return "deny"
    if _BUT.search(text[:LIMIT]):
        return None  # "yes, but it leaves at 10pm", "对，不过是周四": a yes with a correction is no yes
    if _ACCEPT.match(first.text.strip()) and not _NOT_YES.match(first.text.strip()) and _only_yes(first.text):
        if asked or _TRUE.search(first.text):
            return "accept"
    if any(_TAKE_UP.search(c.core) for c in sentence) and not any(_NEGATED.search(c.core) for c in sentence):
        return "accept"  # not "please don't book that", "这个方案不行，别加到计划里"
    if vouches and not _NEGATED.search(first.text.strip()[vouches.end():]):
        return "accept"  # a yes that says it is so, then why: "yes that's what the OB said too", "没错就是周六"
    if asked and _echoes(first.core, offer):
        return "accept"
    return None


_PARTICLES = re.compile(r"[吧啊呀了嘛哈呗哦~～!！。]{1,8}$")


def _echoes(reply: str, offer: str) -> bool:
    """A Chinese yes that repeats the verb the question asked with ("要约吗？" → "约吧", "订不订？"
    → "订", "要不要买？" → "买呗"): one or two characters, and the question holds them as its verb."""
    verb = _PARTICLES.sub("", reply.strip())
    if not 1 <= len(verb) <= 2 or not all("\u4e00" <= ch <= "\u9fff" for ch in verb) or _NOT_YES.match(verb):
        return False
    if not _OFFER.search(offer[-LIMIT:]) and not re.search(r"要不要|要.{0,8}吗|[订约买去]不[订约买去]", offer[-LIMIT:]):
        return False  # "考试难吗？" "难": an answer to a question, not a yes to an offer
    return any(form in offer[-LIMIT:] for form in (f"{verb}吗", f"要不要{verb}", f"{verb}不{verb}", f"{verb}不{verb[-1]}"))


# A yes that vouches for what was said and goes on saying so ("yes that's what the OB said too",
# "yep, matches my ticket", "没错就是周六") — not a yes leading something new ("yes and also add milk",
# "yeah can you book it", "yeah no idea") nor "对了" (by the way).
_VOUCH = re.compile(r"^(?:yes|yep|yeah|yup|exactly|correct|absolutely|indeed)\b[\s,.!]{0,4}"
                    r"(?!(?:and|but|so|also|can|could|would|will|please|pls|let'?s|maybe|wait|hmm|um|no|not|nah|actually)\b)(?=\w)"
                    r"|^(?:没错|是的|对的|对对|就是)(?!了)", re.I)
_BUT = re.compile(r"\b(?:but|though|however|except)\b|不过|但是|但|可是|只是", re.I)
_NEGATED = re.compile(r"\b(?:\w{1,12}n['’]t|(?:do|did|does|ca|wo|have|has|is|was)nt|do\s{1,3}not|did\s{1,3}not|cannot|not|never|no)\b"
                      r"|别|不|没|甭", re.I)


def _only_yes(clause: str) -> bool:
    """The yes stands alone in its clause ("yes please", "嗯对"), not as a lead-in ("ok so can you …")."""
    rest = _ACCEPT_ALL.sub(" ", clause)
    return not _FILLER.sub(" ", rest).strip(" ,.!~。！，、")


_ACCEPT_ALL = re.compile(rf"(?:{_YES_EN})\b|(?:{_YES_ZH})", re.I)
_FILLER = re.compile(r"\b(?:please|pls|plz|thanks|thank\s{1,3}you|thx|haha|lol|oh|so|then|and|mate)\b|[呀啊吧哈啦呢嘛哦]", re.I)

def asks(text: str) -> bool:
    """Whether an assistant message asks or offers something ("Want it?", "要不要我…？")."""
    return any(c.act == "question" for c in read_message(text[-LIMIT:])) or bool(_OFFER.search(text[-LIMIT:]))


_OFFER = re.compile(r"\b(?:want\s{1,3}(?:it|me\s{1,3}to)|shall\s{1,3}i|should\s{1,3}i|would\s{1,3}you\s{1,3}like|do\s{1,3}you\s{1,3}want)\b"
                    r"|要不要|需要我|我帮你|好不好|可以吗", re.I)


# -- a choice among the assistant's options ----------------------------------------------------------
# An option joined to the one before it: "…at 09:58, or the 09:03 arriving 10:29", "…，或者住B".
_OR = re.compile(r"^(?:or|或者|或是|还是|要么)(?:\b|(?=[\u4e00-\u9fff]))", re.I)
# Which option a reply picks by its place: the first, the second, the last.
_ORDINALS = ((0, re.compile(r"\b(?:the\s{1,3})?(?:first|1st|former)\b|第一(?:个|种|家|班|趟)?|前者|前一个|头一个", re.I)),
             (1, re.compile(r"\b(?:the\s{1,3})?(?:second|2nd)\b|第二(?:个|种|家|班|趟)?", re.I)),
             (-1, re.compile(r"\b(?:the\s{1,3})?(?:latter|last\s{1,3}one)\b|后者|后一个|最后一个", re.I)))
_NUMBER = re.compile(r"\d[\d:.]{0,15}")


def options_of(offer: str) -> list[tuple[int, int]]:
    """The spans of the options an assistant message lays out, joined by "or" ("the 08:30 …, or the
    09:03 …", "住A，或者住B"); [] when it offers fewer than two.

        >>> offer = "Two options: the 08:30 from Paddington, or the 09:03 arriving 10:29. Want one?"
        >>> [offer[a:b] for a, b in options_of(offer)]
        ['the 08:30 from Paddington', 'or the 09:03 arriving 10:29']
    """
    clauses = read_message(offer[:2000])
    for index in range(1, len(clauses)):
        if _OR.match(clauses[index].core) and clauses[index].sentence == clauses[index - 1].sentence:
            sentence = [c for c in clauses if c.sentence == clauses[index].sentence]
            joined = [i for i, c in enumerate(sentence) if i and _OR.match(c.core)]
            # The first option runs from the sentence's start, or from after a heading ("Two options:");
            # each other one from its "or" to the next, over the clauses with no subject of their own
            # (a price after a comma is its option's; "我更推荐川菜馆" is the speaker's lean, not the option).
            begin = max((i + 1 for i in range(joined[0]) if offer[sentence[i].end:sentence[i].end + 1] in (":", "：")), default=0)
            spans = []
            for a, b in zip([begin, *joined], [*joined, len(sentence)]):
                end = a + 1
                while end < b and sentence[end].whose == "unknown":
                    end += 1
                spans.append((sentence[a].start, sentence[end - 1].end))
            return spans
    return []


def _words(text: str) -> set[str]:
    """Content words (stems, CJK bigrams) and numbers ("08:30"): what tells one option from another."""
    return set(analyze(text[:LIMIT])) | {w for w in _NUMBER.findall(text[:LIMIT])}


def chosen_option(reply: str, offer: str, accepted: bool) -> tuple[int, list[tuple[int, int]]] | None:
    """Which of ``offer``'s options the user's ``reply`` takes, and the spans of the others: one
    named by its place ("the first one", "第二个"), or by its own words ("the Alma one"); with a
    plain yes (``accepted``), the one the offer itself leaned to ("… I'd lean Alma. Book Alma?").
    None when the reply takes none, or more than one, or says no."""
    options = options_of(offer)
    clauses = read_message(reply[:LIMIT])
    if len(options) < 2 or not clauses or _NO.match(clauses[0].text.strip()) or _NEGATED.search(clauses[0].core):
        return None
    said = [_words(offer[a:b]) for a, b in options]
    place = next((index for index, pattern in _ORDINALS if pattern.search(clauses[0].core)), None)
    if place is not None:
        index = place % len(options)
    else:
        mine = _words(" ".join(c.core for c in clauses if c.sentence == clauses[0].sentence))
        named = [i for i, words in enumerate(said) if mine & (words - set().union(*(w for j, w in enumerate(said) if j != i)))]
        if len(named) != 1 and accepted:
            rest = _words(offer[options[-1][1]:2000])  # what the offer says after its options: its lean
            named = [i for i, words in enumerate(said) if rest & (words - set().union(*(w for j, w in enumerate(said) if j != i)))]
        if len(named) != 1:
            return None
        index = named[0]
    return index, [span for i, span in enumerate(options) if i != index]
