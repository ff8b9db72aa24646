"""Revocation: a user message that takes back something it said, read clause by clause.

People take things back the way they talk: "forget what I told you about the loan", "wipe that
last bit", "把我上一句抹掉", "那条关于房租的不要记了", and they withdraw a request they made: "stop
reminding me to water the plants", "不用再推荐咖啡馆了". A revocation is a clause of the user's own
message (``text.segmenter``) built from two parts:

    a verb of taking back   erase (forget/delete/wipe/scrub/remove/drop/take back/cancel,
                            忘掉/删掉/抹掉/去掉/撤回/作废/取消), keep-no-record (don't store/save/
                            remember/keep/note, 别记/不要存/不用记), or stop doing (stop V-ing,
                            no more, don't V anymore, 不用再/别再/不要再 V)
    what it points at       words naming the thing ("the loan", "房租", "water the plants"), or a
                            pointer to the user's previous statement ("that last bit", "上一句",
                            "what I just said")

Because a take-back can delete, how far it reaches depends on how clearly it says what it means
(``Resolver.revoke`` applies it): a pointer means the user's turn just before; words naming what
was *said* ("what I told you about the loan", ``said``) mean every statement holding the thing's
words — both are forgotten; a withdrawn request, or a plain thing ("forget the Kindle idea") among
the recent turns, is only superseded — and so is the user's own attribute, whenever this session said it
("forget my address", "学校名字你别存了": what is *kept of the user*, ``kept``). *delete*, *cancel*, 删掉, 取消 count only with words pointing
at what was said: "cancel my last order" is about the world. Words that name nothing take nothing
back; a bare "forget it" or "never mind" is conversation, not a revocation. A question or a
conditional revokes nothing ("should I forget about the loan?"), nor does someone else's request
("my boss said to cancel the trip").

    >>> detect_revocation("forget what I told you about the loan").about
    'loan'
    >>> detect_revocation("hmm wipe that last bit actually").pointer
    True
    >>> r = detect_revocation("不用再推荐咖啡馆了"); r.about, r.withdraws
    ('咖啡馆', True)
    >>> detect_revocation("don't store this: my PIN is 4471").withheld_from
    18
    >>> detect_revocation("I forgot my umbrella") is None
    True
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ..text.segmenter import Clause, read_message
from .categories import kinds_named, of_kind
from .conflicts import Target, content_chars, terms_of

__all__ = ["Revocation", "detect_revocation", "detect_revocations", "revocation_targets", "sentences_holding", "MAX_TARGETS"]

MAX_TARGETS = 20  # sentences one revocation may take back: "forget everything about X" is bounded too


@dataclass(frozen=True)
class Revocation:
    about: str  # the words naming what is taken back ("" when the message only points)
    pointer: bool  # "that last bit", "上一句": the user's previous statement
    withdraws: bool  # a withdrawn request ("stop reminding me to ..."): the request is what goes
    withheld_from: int | None = None  # "don't store this: …": what follows this offset is never stored
    said: bool = False  # the words name what was *said* ("what I told you about X"): it is forgotten
    kept: bool = False  # about what is kept of the user ("forget my address", "学校名字别存了"): reaches the session
    service: str = ""  # a withdrawn request named by its service ("the nudges", "吃药提醒"): the service's family
    attribute: str = ""  # an attribute of the user named ("where I live", "我的住址"): the fact key it takes back
    own: bool = False  # the pointer names the user's own words ("my last message", "我上一句"): past the assistant's question too
    of_name: bool = False  # "the name of my side project": a name the user gave, of kind "name" (``categories.py``)


# -- English -------------------------------------------------------------------------------------
_SOFT = (r"(?:(?:please|pls|plz|just|also|and|so|oh|ok(?:ay)?|hmm{0,6}|um{0,6}|ugh|actually|on\s{1,8}second\s{1,8}thoughts?|lol|haha|nvm|never\s{1,8}mind|yeah|wait|sorry|"
         r"oops|btw|anyway|hey|can\s{1,8}you|could\s{1,8}you|would\s{1,8}you|you\s{1,8}can|go\s{1,8}ahead\s{1,8}and|feel\s{1,8}free\s{1,8}to)[\s,]{1,8}){0,8}")
# "forget" always means memory; "delete", "wipe", "cancel" ... mean memory only with words that
# point at what was said ("delete what I said about X", "wipe that last bit"): "cancel the
# meeting" and "remove the bones" are about the world.
_FORGET_EN = r"forget|unlearn|disregard|take\s{1,8}back|strike\s{1,8}from\s{1,8}the\s{1,8}record"
_ERASE_EN = r"delete|erase|wipe|scrub|remove|drop|purge|clear|strike|ditch|scrap|get\s{1,8}rid\s{1,8}of|throw\s{1,8}out|cancel|nix|undo|bin"
_KEEP_EN = r"store|save|keep|remember|note|memori[sz]e|write\s{1,8}down|hold\s{1,8}on\s{1,8}to"
# A withdrawn request names what the assistant was asked to do: its verb and its object.
_SERVICE_EN = (r"remind|recommend|suggest|send|ask|tell|mention|bring|call|text|email|notify|ping|nag|nudge|alert|show|give|book|"
               r"order|schedule|track|check|add|include|use|offer|propose|plan|look|search|quiz|correct|translate|write|reply|answer")
_EN = re.compile(
    rf"^{_SOFT}(?:"
    rf"(?P<forget>{_FORGET_EN})\b"
    rf"|(?P<erase>{_ERASE_EN})\b"
    rf"|(?:stop|quit|no\s{{1,8}}need\s{{1,8}}to\s{{1,8}}keep|you\s{{1,8}}can\s{{1,8}}stop)\s{{1,8}}(?P<stop>(?:{_SERVICE_EN})\w{{0,12}}ing)\b"
    rf"|(?:i'?d\s{{1,8}}(?:rather|prefer)\s{{1,8}}(?:that\s{{1,8}})?you\s{{1,8}}|(?:i\s{{1,8}})?(?:want|need)\s{{1,8}}you\s{{1,8}}to\s{{1,8}})?"
    rf"(?:don'?t|didn'?t|do\s{{1,8}}not|did\s{{1,8}}not|not|no\s{{1,8}}need\s{{1,8}}to|you\s{{1,8}}don'?t\s{{1,8}}(?:need|have)\s{{1,8}}to|there'?s\s{{1,8}}no\s{{1,8}}need\s{{1,8}}to)\s{{1,8}}"
    rf"(?:ever\s{{1,8}})?(?P<keep>{_KEEP_EN})\b"
    rf"|don'?t\s{{1,8}}(?P<again>(?:{_SERVICE_EN})\w{{0,12}})\b(?=.{{0,240}}\b(?:anymore|any\s{{1,8}}more|again)\b)"
    rf"|no\s{{1,8}}more\s{{1,8}}(?!than\b)(?P<no_more>\w)"
    rf"|(?P<unsaid>(?:pretend|act\s{{1,8}}(?:like|as\s{{1,8}}if))\s{{1,8}}(?:i\s{{1,8}}never|you\s{{1,8}}never|i\s{{1,8}}didn'?t)\s{{1,8}}"
    rf"(?:said|say|told\s{{1,8}}you|tell\s{{1,8}}you|mentioned|mention|heard|hear|read))\b"
    r")\s{0,8}", re.I)
# Words that point at what the user said, not at the world.
_SPEECH_EN = re.compile(r"\b(?:what\s{1,8}i\s{1,8}(?:just\s{1,8})?(?:said|told\s{1,8}you|mentioned|wrote|shared|typed|sent)"
                        r"|(?:that|the\s{1,8}(?:thing|stuff|bit|part))\s{1,8}i\s{1,8}(?:just\s{1,8})?(?:said|told\s{1,8}you|mentioned)"
                        r"|i\s{1,8}(?:just\s{1,8})?(?:said|told\s{1,8}you|mentioned)|from\s{1,8}(?:your|the)\s{1,8}(?:memory|memories|notes)"
                        r"|(?:my|that)\s{1,8}last\s{1,8}(?:message|msg|text|bit|part|line|sentence)|that\s{1,8}(?:last\s{1,8})?bit)\b", re.I)
_POINTER_EN = re.compile(r"\b(?:that|this|the\s{1,8}last|my\s{1,8}last|the\s{1,8}previous|my\s{1,8}previous|what\s{1,8}i\s{1,8}just|"
                         r"last\s{1,8}(?:bit|part|thing|message|one|line|sentence)|just\s{1,8}said)\b", re.I)
_BARE_POINTER_EN = re.compile(r"^(?:all\s{1,8})?(?:that|this)(?:\s{1,8}(?:last|previous))?(?:\s{1,8}(?:bit|part|one|line|message))?(?:\s{1,8}(?:please|pls|plz|too|as\s{1,8}well))?\W{0,8}$", re.I)
# Words around the thing: "what I told you about", "everything regarding", "the part where".
_FRAME_EN = re.compile(r"\b(?:what|everything|anything|all|stuff|things?|bits?|parts?|details?|info(?:rmation)?|"
                       r"i|you|me|said|told|mentioned|wrote|shared|typed|sent|say|tell|about|regarding|concerning|re|on|of|where|"
                       r"that|this|it|those|these|the|a|an|my|last|previous|earlier|before|whole|just|actually|"
                       r"please|pls|plz|abt|bout|now|anymore|again|any|more|completely|entirely|from|your|memory|notes?|records?|for|"
                       r"idea|ideas|business|matter|topic|story|situation|keep|keeping|messages?|msgs?|texts?|lines?|sentences?|ones?|"
                       r"name\s{1,8}of|does|doing)\b", re.I)

_NAME_OF = re.compile(r"\bname\s{1,8}of\b", re.I)

# Requests named by the service they asked for ("drop the language-app nudges", "晚上那个吃药提醒取消吧"):
# each family is the noun a take-back uses and the words a request for that service uses.
_SERVICES = {
    "remind": (r"remind(?:er)?s?|提醒", r"\bremind|提醒"),
    "nudge": (r"nudges?|nags?|prods?", r"\bnudg|\bnag|\bprod"),
    "notify": (r"notifications?|alerts?|pings?|通知|推送", r"\bnotif|\balert|\bping|通知|推送"),
    "check-in": (r"check[\s-]{0,3}ins?", r"\bcheck(?:ing)?[\s-]{0,3}in"),
    "recommend": (r"recommendations?|recs|suggestions?|推荐", r"\brecommend|\brecs?\b|\bsuggest|推荐"),
    "wake": (r"wake[\s-]{0,3}up\s{1,8}calls?|wake[\s-]{0,3}ups?|叫醒|闹钟", r"\bwak(?:e|ing)\b|叫醒|叫我起"),
    "update": (r"updates?|digests?|summaries|tips|quizz(?:es)?|督促|打卡", r"\bupdat|\bdigest|\bsummar|\btips?\b|\bquiz|督促|打卡"),
}
_SERVICE_NOUN = {family: re.compile(rf"(?:\b|(?<=[\u4e00-\u9fff]))(?:{noun})(?:\b|(?=[\u4e00-\u9fff])|$)", re.I)
                 for family, (noun, _) in _SERVICES.items()}
_SERVICE_ASKED = {family: re.compile(asked, re.I) for family, (_, asked) in _SERVICES.items()}
# Verbs that turn a service off, read only with a service's noun ("turn off the stretch reminders").
_OFF_EN = re.compile(rf"^{_SOFT}(?:drop|cancel|stop|end|kill|nix|scrap|ditch|remove|delete|disable|pause|mute|silence|skip|"
                     r"turn\s{1,8}off|switch\s{1,8}off|shut\s{1,8}off|get\s{1,8}rid\s{1,8}of|enough\s{1,8}with|"
                     r"(?:you\s{1,8}can\s{1,8})?(?:lose|quit|forget(?:\s{1,8}about)?))\s{1,8}(?P<obj>\S.{0,200})$", re.I)
_OFF_ZH = re.compile(r"关掉|关了|关闭|停掉|停了|撤掉")


# The user's attributes named as what to forget: every statement of that fact goes ("forget where
# I live" takes "my new apartment is 41 Wexford Rd", not "my office is at 200 Clarendon St").
_ATTRIBUTES = {
    "location": re.compile(r"\bwhere\s{1,8}(?:i|we)\s{1,8}(?:live|am\s{1,8}living|are\s{1,8}living)\b|\b(?:my|our)\s{1,8}(?:home\s{1,8})?address\b|"
                           r"(?:我|我们)(?:家)?住(?:在)?哪|住址|家庭地址|家的地址|我家地址|我的地址", re.I),
    "employer": re.compile(r"\bwhere\s{1,8}i\s{1,8}work\b|\bwho\s{1,8}i\s{1,8}work\s{1,8}for\b|\bmy\s{1,8}(?:employer|workplace)\b|"
                           r"我在哪(?:儿|里)?(?:上班|工作)|工作单位|我的公司名", re.I),
}


def _attribute(text: str) -> str:
    """The fact key of the user's attribute ``text`` names, or ""."""
    return next((key for key, pattern in _ATTRIBUTES.items() if pattern.search(text)), "")


def _service(text: str) -> str:
    """The family of the service ``text`` names, or ""."""
    return next((family for family, noun in _SERVICE_NOUN.items() if noun.search(text)), "")


# -- Chinese -------------------------------------------------------------------------------------
# 忘掉/别记 always mean memory; 删掉/取消/去掉 ... only with words that point at what was said
# ("那条关于房租的删掉", "把我上一句抹掉"): "取消明天的会议" is about the world.
_FORGET_ZH = r"忘掉|忘了吧|忘记吧|忘了它|忘了这|撤回|收回|(?:就)?当(?:作|做|成)?(?:没|没有)(?:听(?:过|见|到)|看(?:过|见|到))"
_ERASE_ZH = r"删掉|删了|删除|删去|抹掉|抹去|抹了|去掉|清掉|清除|擦掉|作废|取消|划掉|丢掉"
_KEEP_ZH = r"(?:别|不要|不用|甭|无需|不必|没必要)(?:再)?(?:帮我|给我)?(?:记|存|保存|记录|记住|记下)(?!错|得|性|者|忆)"
_STOP_ZH = r"(?:别|不要|不用|甭|无需|不必)再(?:给我|帮我|跟我|为我)?(?P<again_verb>提醒|推荐|建议|发|问|提|说|催|叫|订|安排|用|加|给)"
# "那个外号别用了", "这个称呼不要再叫了": what the assistant was asked to use, no longer used.
_DISUSE_ZH = r"(?:别|不要|不用|甭)(?:再)?(?:这么|那么)?(?:用|叫)了"
_ZH = re.compile(rf"(?P<forget>{_FORGET_ZH})|(?P<erase>{_ERASE_ZH})|(?P<keep>{_KEEP_ZH})|(?P<stop>{_STOP_ZH})|(?P<unsaid>当我没说)"
                 rf"|(?P<disuse>{_DISUSE_ZH})")
_SPEECH_ZH = re.compile(r"我(?:刚才|刚刚|之前|前面|上次)?(?:说|讲|提|告诉你)的|上一句|上句|上一条|上条|刚才(?:那句|那条|说的|讲的)|刚刚(?:那句|说的)"
                        r"|^(?:昨天|前天|之前|前面|上次|上回|那天|前几天|早上|今天)(?:说|讲|提)(?:过)?的"
                        r"|那句|这句|那条消息|这条消息|那段话|这段话|你记(?:下)?的|你存的"
                        r"|(?:关于|有关)[^，,。！？!?]{1,20}?的?(?:那段|这段|那部分|这部分|那些话|这些话|那几句|内容)")
# "包的事儿", "借钱那件事": a matter talked about (with 删掉, 抹掉 ... it is the conversation that is meant).
_MATTER_ZH = re.compile(r"(?:那|这|的)(?:件|个)?事(?:儿|情)?")
_POINTER_ZH = re.compile(r"上一句|上句|上一条|上条|刚才(?:那句|那条|说的|讲的)?|刚刚(?:那句|说的)?|前面(?:那句|那条|说的)|这句|那句|这条|那条|这段|那段")
_FRAME_ZH = re.compile(r"(?:把|将)|(?:关于|有关)|[那这](?:件|桩)?(?=事)|(?:的)?(?:事(?:情|儿)?|内容|信息|记录|那些|这些|部分|东西)|(?:就)?(?:吧|了|啊|哈|呀|嘛|哦){1,6}$|"
                       r"上一句|上句|上一条|上条|那条|这条|那句|这句|这段|那段|那个|这个|刚才|刚刚|前面|之前|上次|说的|讲的|提的|告诉你的|"
                       r"你|我|帮我|给我|的$|都|全部|统统|一下|先|也")
_SELF_ZH = re.compile(r"(?<![帮给替让叫])(?:我|我们|他|她|他们)(?:已经|刚|刚才|又|也|都|还)?$")  # "我删了" reports the user's own act


def detect_revocation(text: str) -> Revocation | None:
    """The first clause of ``text`` that takes something back, or None."""
    found = detect_revocations(text)
    return found[0] if found else None


def detect_revocations(text: str) -> tuple[Revocation, ...]:
    """Every clause of ``text`` that takes something back, in order ("I'd rather you didn't keep
    the medical stuff. delete that please": the words first, then the pointer). A clause asking
    that what follows not be kept ends the reading: nothing after it is read."""
    clauses = read_message(text)
    found: list[Revocation] = []
    for index, clause in enumerate(clauses):
        if not _own_words(clause):
            continue
        ahead = _AHEAD.match(text, clause.end)
        if ahead and ahead.end() < len(text) and _keeps_nothing(clause.core):
            return (*found, Revocation("", False, False, ahead.end()))  # "don't store this: my PIN is 4471"
        reading = _english(clause, clauses[index + 1:]) if clause.core.isascii() else _chinese(clause)
        if reading is not None and reading.pointer and _OWN_POINTER.search(clause.core):
            reading = replace(reading, own=True)
        if reading is not None and reading not in found:
            found.append(reading)
    return tuple(found)


# A pointer at the user's own words, named as words: "my last message", "what I just said",
# "我上一句", "我刚才说的" (not a bare "my last one", which may be an order or a parcel).
_OWN_POINTER = re.compile(r"\bmy\s{1,8}(?:last|previous)\s{1,8}(?:message|msg|text|line|sentence|post|reply|bit)\b"
                          r"|\bwhat\s{1,8}i\s{1,8}just\s{1,8}(?:said|wrote|typed|sent)\b|\bi\s{1,8}just\s{1,8}(?:said|wrote|typed|sent)\b"
                          r"|我的?(?:上一句|上句|上一条|上条)|我(?:刚才|刚刚|前面)(?:说|讲|发)的?|我(?:刚才|刚刚|前面)(?:那句|那条|这句)", re.I)

# "don't store this:", "以下不要记：" — the words point ahead, at what follows a colon or a dash.
_AHEAD = re.compile(r"\s{0,8}[:：]\s{0,8}|\s{1,8}[—–-]{1,3}\s{0,8}")
_AHEAD_POINTER = re.compile(r"^(?:(?:this|the\s{1,8}following|what\s{1,8}follows|any\s{1,8}of\s{1,8}this|it|below)\b|以下|下面|接下来|这个|这些)?\s{0,8}$", re.I)


def _own_words(clause: Clause) -> bool:
    """A clause the user says to the assistant: not a question or a hypothesis, and not someone
    else's words ("my boss told me to drop it") — though "forget what I said" reports the user's
    own, and "you can delete …" speaks to the assistant."""
    if clause.act in ("question", "conditional"):
        return False
    if clause.whose == "other" and not (_TO_ASSISTANT.match(clause.core) or _SUGGESTED_ZH.search(clause.core)):
        return False  # "猫那个提醒取消吧" is said to the assistant: the 吧 asks it
    return clause.act != "report" or bool(_EN.match(clause.core)) or _OWN_REPORT.search(clause.core) is not None


_TO_ASSISTANT = re.compile(r"(?:you|your|你|您)", re.I)
_SUGGESTED_ZH = re.compile(r"(?:吧|呗)[。！!~～\s]{0,4}$")
# ... and, with the subject left out as Chinese does, at the clause's start: "昨天说的那个账号名你忘掉吧"
# ("老师说的…" is the teacher's).
_OWN_REPORT = re.compile(r"我(?:刚才|刚刚|之前|前面)?(?:说|讲|提)的|当我没(?:说|讲|提)|i\s{1,8}(?:just\s{1,8})?(?:said|told|mentioned)"
                         r"|^(?:刚才|刚刚|之前|前面|昨天|前天|上次|上回|那天|早上|今天|前几天)(?:说|讲|提)(?:过)?的"
                         r"|i\s{1,8}never\s{1,8}(?:said|told|mentioned)", re.I)


def _keeps_nothing(core: str) -> bool:
    """A clause asking that nothing be kept, pointing ahead ("don't save this", "以下别记")."""
    english = _EN.match(core) if core.isascii() else None
    if english is not None and english.group("keep"):
        return bool(_AHEAD_POINTER.match(core[english.end():]))
    chinese = None if core.isascii() else _ZH.search(core)
    return bool(chinese and chinese.group("keep") and _AHEAD_POINTER.match(_FRAME_ZH.sub("", core[: chinese.start()] + core[chinese.end():]).strip()))


def _english(clause: Clause, rest: list[Clause]) -> Revocation | None:
    match = _EN.match(clause.core)
    if match is None or (match.group("erase") and _SPEECH_EN.search(clause.core[match.end():]) is None):
        off = _OFF_EN.match(clause.core)
        family = _service(off.group("obj")) if off else ""
        if off and family:  # "drop the language-app nudges", "turn off the stretch reminders"
            return Revocation(_clean(_FRAME_EN.sub(" ", off.group("obj"))), False, True, service=family)
        if match is None:
            return None
    obj = clause.core[match.end():]
    if not obj and rest and rest[0].sentence == clause.sentence:  # "forget it, the thing about the loan"
        obj = rest[0].core
    if match.group("unsaid"):  # "pretend I never said that": the previous turn; "... that about the loan": those words
        about = _clean(_FRAME_EN.sub(" ", obj))
        return Revocation(about, False, False, said=True) if terms_of(about) else Revocation("", True, False)
    withdrawn = match.group("stop") or match.group("again")
    if withdrawn or match.group("no_more"):
        thing = _FRAME_EN.sub(" ", clause.core[match.start("no_more"):] if match.group("no_more") else obj)
        # The request's verb counts as evidence, but the thing must be named ("stop reminding me" alone names nothing).
        return Revocation(_clean(thing), False, True) if terms_of(thing) else None
    said = _SPEECH_EN.search(obj) is not None
    if match.group("erase") and not said and _CALL_OFF_EN.match(match.group("erase")) and _PLAN_EN.search(obj):
        about = _clean(_FRAME_EN.sub(" ", _PLAN_EN.sub(" ", obj)))
        if kinds_named(about):  # "cancel the whole dinner thing": the request that set it up is withdrawn
            return Revocation(about, False, True)
    if match.group("erase") and not said:
        # "delete that", "scrap that last part": the previous turn; "cancel the meeting": the world.
        return Revocation("", True, False) if _BARE_POINTER_EN.match(obj) else None
    about = _clean(_FRAME_EN.sub(" ", obj))
    attribute = "" if said else _attribute(obj)
    if attribute:  # "forget where I live", "don't keep my home address"
        return Revocation(about, False, False, kept=True, attribute=attribute)
    if terms_of(about):
        kept = bool(match.group("keep")) or _MINE_EN.match(obj) is not None
        return Revocation(about, False, False, said=said, kept=kept, of_name=_NAME_OF.search(obj) is not None)
    if _POINTER_EN.search(obj):
        return Revocation("", True, False)
    return None  # "forget it", "never mind": conversation, not a revocation


def _chinese(clause: Clause) -> Revocation | None:
    core = clause.core
    match = _ZH.search(core)
    off = match or _OFF_ZH.search(core)
    if off is None:
        return None
    before, after = core[: off.start()], core[off.end():]
    if _SELF_ZH.search(before):
        return None  # "我已经删了" says what the user did, it asks nothing of the assistant
    # "我刚才说的那个会议取消了" reports what happened; "帮我删了", "把上一句删掉" ask for it.
    done = (off.group(0).endswith("了") or after.startswith("了")) and _PLEASE_ZH.match(after) is None  # "删了吧" asks
    asked = not done or (_ASKS_ZH.search(before) is not None and _SELF_START_ZH.match(before) is None)
    family = _service(core) if match is None or match.group("erase") else ""
    # A service turned off "了" is a report ("昨天把闹钟关了", "公司把打卡取消了") unless the user asks
    # ("帮我把提醒关了", "你把推送关了吧").
    if family and (not done or _ASKS_SERVICE_ZH.search(before)) and not _REPORTED_ZH.search(before):
        thing = _FRAME_ZH.sub(" ", before + " " + after).strip("的，,。 ")
        return Revocation(re.sub(r"\s{1,8}", " ", thing), False, True, service=family)
    if match is None:
        return None
    if match.group("unsaid"):
        return Revocation("", True, False)
    if match.group("stop"):  # "不用再推荐咖啡馆了": the request is 推荐 + 咖啡馆
        thing = _FRAME_ZH.sub(" ", after).strip("，,。 ")
        if terms_of(thing):
            return Revocation(thing, False, True)
    if match.group("stop") or match.group("disuse"):  # "那个外号别(再)用了": the thing stands before the verb
        thing = _FRAME_ZH.sub(" ", before).strip("，,。 ")
        return Revocation(thing, False, True) if terms_of(thing) or content_chars(thing) else None
    said = _SPEECH_ZH.search(core) is not None
    if match.group("erase"):
        # "包的事儿抹掉吧", "借钱那件事删了吧": the matter talked about, among the recent turns.
        matter = _MATTER_ZH.search(before) is not None
        if not (said or matter) or not asked:
            return None
    # The thing stands before the verb ("把那条关于房租的删掉", "学校名字你别存了").
    about = _FRAME_ZH.sub(" ", before + " " + after).strip("的，,。 ")
    attribute = "" if said else _attribute(before + after)
    if attribute and match.group("erase") is None:  # "我的住址别记了", "忘掉我住哪儿"
        return Revocation(re.sub(r"\s{1,8}", " ", about), False, False, kept=True, attribute=attribute)
    if terms_of(about) or (not said and content_chars(about)):  # a matter may be one character: "包的事儿"
        kept = bool(match.group("keep")) or "我的" in before + after
        return Revocation(re.sub(r"\s{1,8}", " ", about), False, False, said=said, kept=kept)
    if _POINTER_ZH.search(core):
        return Revocation("", True, False)
    return None


# "cancel the dinner thing", "scrap the trip plans": a plan the user asked for, called off.
_CALL_OFF_EN = re.compile(r"cancel|scrap|nix|ditch|drop", re.I)
_PLAN_EN = re.compile(r"\b(?:thing|stuff|plans?|booking|reservation|request|idea)\b", re.I)
# "forget my address": the user's own attribute, whenever they said it (not "forget the hotel": a plan).
_MINE_EN = re.compile(r"^\s{0,8}(?:all\s{1,8}(?:of\s{1,8})?|everything\s{1,8}about\s{1,8})?my\b", re.I)
_ASKS_ZH = re.compile(r"帮我|给我|请|麻烦|把|将|你")
_ASKS_SERVICE_ZH = re.compile(r"帮我|给我|请|麻烦|你")
_REPORTED_ZH = re.compile(r"昨天|前天|刚才|已经|上周|上个月|之前|公司|他们|他|她|老板|小区|学校")
_PLEASE_ZH = re.compile(r"了?\s{0,8}(?:吧|呗|啊|哈|嘛)")
_SELF_START_ZH = re.compile(r"(?:我|我们)(?!的)")  # "我把提醒关掉了": what the user did


def _clean(text: str) -> str:
    return re.sub(r"\s{2,}", " ", text).strip(" ,.;:!")


def revocation_targets(revocation: Revocation, candidates: list[dict[str, Any]]) -> list[Target]:
    """The sentences ``revocation`` takes back among ``candidates`` (live user records, newest
    first; for a pointer, only the user's previous turn): every sentence holding the thing's
    words — for a withdrawn request, only sentences that ask for something."""
    if revocation.pointer:
        record = candidates[0] if candidates else None
        if record is None or detect_revocation(record["content"]) is not None:
            return []  # a take-back is no thing to take back
        return [Target(record["record_id"], (0, len(record["content"])), "pointer")]
    if revocation.service:
        return _service_targets(revocation, candidates)
    wanted = terms_of(revocation.about)
    how = "withdrawn" if revocation.withdraws else "named" if revocation.said else "kept" if revocation.kept else "recent"
    # All of a short description's words; two thirds of a longer one's ("water the plants on the balcony").
    needed = len(wanted) if len(wanted) <= 2 else -(-2 * len(wanted) // 3)
    targets = _matching(candidates, revocation.withdraws, how, lambda text: bool(wanted) and len(wanted & terms_of(text)) >= needed)
    chars = content_chars(revocation.about)
    if not targets and how == "recent" and chars:
        # Among the recent turns, a Chinese description whose words are not the sentence's ("借钱那事"
        # for "找老王借了五万", "包的事儿" for "刷了个包"): the one sentence sharing most of its
        # characters (half of them at least); two sharing as many say nothing of which is meant.
        targets = _best_sharing(candidates, chars, how)
    kinds = (kinds_named(revocation.about) or (("name",) if revocation.of_name else ())) if not targets else ()
    if kinds:
        # A thing named by its kind, in none of its words ("the gym thing" for "my PureGym
        # membership", "学校名字" for "实验二小", ``categories.py``): what was said or kept of the
        # user, every sentence of that kind; otherwise the one such sentence, if only one.
        found = _matching(candidates, revocation.withdraws, how, lambda text: of_kind(text, kinds))
        targets = found if revocation.said or revocation.kept or len(found) == 1 else []
    return targets


def _best_sharing(candidates: list[dict[str, Any]], chars: frozenset[str], how: str) -> list[Target]:
    scored = [(len(chars & set(record["content"][start:end])), Target(record["record_id"], (start, end), how))
              for record in candidates for start, end, _ in _sentences(record["content"])]
    best = max((score for score, _ in scored), default=0)
    winners = [target for score, target in scored if score == best]
    return winners if best >= -(-len(chars) // 2) and len(winners) == 1 else []


def _matching(candidates: list[dict[str, Any]], requests_only: bool, how: str, matches: Any) -> list[Target]:
    """The sentences of ``candidates`` that ``matches``, at most ``MAX_TARGETS``; with
    ``requests_only``, only sentences that ask for something ("no more sugar for me" withdraws a
    request, not "I take two sugars")."""
    targets: list[Target] = []
    for record in candidates:
        for start, end, asks in _sentences(record["content"]):
            if (asks or not requests_only) and matches(record["content"][start:end]):
                targets.append(Target(record["record_id"], (start, end), how))
        if len(targets) >= MAX_TARGETS:
            break
    return targets[:MAX_TARGETS]


def _service_targets(revocation: Revocation, candidates: list[dict[str, Any]]) -> list[Target]:
    """The requests for the service a take-back names ("drop the language-app nudges": the request
    to nudge): those sharing most of its other words (two thirds; for Chinese, half of its other
    characters); a take-back naming nothing but the service ("cancel the reminder") takes the only
    such request, if there is only one."""
    asked = _SERVICE_ASKED[revocation.service]
    rest = _SERVICE_NOUN[revocation.service].sub(" ", revocation.about)
    others, chars = terms_of(rest), content_chars(rest)
    requests = [(record["content"][start:end], Target(record["record_id"], (start, end), "withdrawn"))
                for record in candidates for start, end, asks in _sentences(record["content"])
                if asks and asked.search(record["content"][start:end])]
    if not others and not chars:
        return [target for _, target in requests] if len(requests) == 1 else []
    needed = len(others) if len(others) <= 2 else -(-2 * len(others) // 3)
    return [target for text, target in requests
            if (others and len(others & terms_of(text)) >= needed) or (chars and 2 * len(chars & set(text)) >= len(chars))][:MAX_TARGETS]


def sentences_holding(content: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The sentences of ``content`` that hold any of ``spans``: a revocation takes back whole
    sentences ("new address is 27 Larkspur Lane, Apt 3B": the apartment goes with the street)."""
    return [(start, end) for start, end, _ in _sentences(content) if any(start < b and a < end for a, b in spans)]


def _sentences(content: str) -> list[tuple[int, int, bool]]:
    """The sentences of ``content`` as spans, and whether each asks for something: a revocation
    takes back whole sentences."""
    spans: dict[int, list[Any]] = {}
    for clause in read_message(content):
        span = spans.setdefault(clause.sentence, [clause.start, clause.end, False])
        span[1] = clause.end
        # "can you remind me …?" asks too, and so does a bare imperative ("recommend me a sushi place")
        span[2] = (span[2] or clause.act in ("request", "question") or _IMPERATIVE.match(clause.core) is not None
                   or (_REQUEST_ZH.search(clause.core) is not None  # not "我妈总提醒我喝水"; "你就叫我小林吧" asks
                       and (clause.whose != "other" or clause.core.startswith(("你", "您")))))
    ends = [_TERMINATOR.match(content, end).end() for _, end, _ in spans.values()]  # with its full stop
    return [(start, end, asks) for (start, _, asks), end in zip(spans.values(), ends)] or [(0, len(content), False)]


_IMPERATIVE = re.compile(rf"^(?:please\s{{1,8}})?(?:{_SERVICE_EN})\w{{0,12}}\b", re.I)
_REQUEST_ZH = re.compile(r"(?:提醒|通知|叫醒|督促|催|帮|告诉|推荐给?|发给?|叫)我|给我(?:推荐|发|提醒|讲|找)")
_TERMINATOR = re.compile(r"[。！？!?；;.…\s]{0,8}")
