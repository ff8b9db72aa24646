"""Restatements: the same thing said again with a new time or date, and no cue word.

People update plans by saying them again: "landlord meeting: 16th now" after "landlord meeting is
on the 14th", "his flight lands at 9:20 now" after "my brother's flight lands at 7:05", "体检改到
周五上午" after "我下周三去体检". No error cue, no "I switched from": the evidence is the frame —
the same holder, the same thing, a value of the same kind (a time, a date, a day), and a different
value. The later statement supersedes the earlier clause (``resolve.py`` keeps the rest of it).

What counts as the same thing is strict, because a wrong supersession hides a true memory:

    the thing       the clause's content words (a value-only clause, "16th now", takes the thing
                    from the clause before it in its sentence); every one of them must be in the
                    earlier clause, except words that only say *that* it changed or happens
                    (now, moved, comes, lands, 改到, 推迟 ...): "meeting with Bob on Friday" is
                    another meeting than "meeting with Anna on Monday"
    the holder      the same person when both say whose it is ("my sister's flight" is not mine)
    identifiers     the same ones, if any ("ISO 9001's audit" is not "ISO 9002's")
    the value       a time, a date or a day in both, and a new one the old clause lacks
                    ("周五上午" after "周四上午": the morning stays, the day moved); or the same
                    time said to hold another thing now ("tuesday nights are pottery class now",
                    "下周末改去千岛湖了": ``slot``, found by the time's words); or the
                    number of a named thing ("we upgraded everything to node 22" after "our
                    services run node 18", "现在是iPhone 15" after "我用的是iPhone 12"): the
                    name is the thing, and the sentence must say it changed (``versions``)

A clause with a when but no thing, only a pronoun ("he'll be here at 4:30", "they could only do
8:45", "她改到三点了"), points back: at the latest of the user's few messages still in the recent
window, in the same session, holding a value of that kind. Questions, hypotheses and reports
restate nothing. A clause that names its thing must also say that something changed ("now",
"instead", "in the end", "改到", "以后"), or bring news of it from whoever runs it ("the garage
called, 5:30", "修车行打电话来，五点半好"): "周四下午三点开组会" after "周一上午九点开组会" may be
another meeting, so both stay; "also", "too", "也" add one more; a daily rule and one day's
exception are two things. Candidates come from the store's own search
for the thing's words (a write costs what those matches cost, not the user's whole history), the
latest first.

    >>> [(sorted(r.topic), sorted(r.kinds)) for r in restated_clauses("landlord meeting: 16th now, he had a conflict")]
    [(['landlord', 'meet'], ['date'])]
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from ..text.segmenter import READ_LIMIT, read_message, reported
from .conflicts import Target, terms_of
from .corrections import kind_pattern, kind_values, value_kinds
from .identifiers import extract_identifiers

__all__ = ["Restated", "restated_clauses", "restatement_target", "amounts", "versions", "points_back", "KINDS", "AMOUNT",
           "VERSION"]

KINDS = frozenset({"time", "date", "day"})  # values that say when: one per plan, so a new one replaces it
# Words that say that a thing changed or happens, not which thing it is.
# (Not "start", "end", "land", "leave": a start time and an end time are two attributes of one thing.)
_EVENT_WORDS = frozenset("""
now instead anymore still actually also again then ok okay ugh oh so just only do did could can will would
moved move push pushed reschedul change chang shift happen take place get got be here there text call said say
told confirm update earlier later today tonight tomorrow
以后 现在 改到 改成 挪到 推迟 提前 延后 改在 换到 变成 那边 这边
""".split())


@dataclass(frozen=True)
class Restated:
    """A clause of a new message that gives a thing a when: its words, kinds and values."""

    start: int
    end: int
    topic: frozenset[str]
    kinds: frozenset[str]
    values: frozenset[str]
    whose: str
    identifiers: frozenset[str] = frozenset()  # "ISO 9001" is another audit than "ISO 9002"
    pointer: bool = False  # no thing named, a pronoun instead: it points at the recent messages
    changed: bool = False  # its sentence says something changed ("now", "instead", "改到")
    every: bool = False  # it states a rule ("every day", "每周"), not one occasion
    unit_named: bool = False  # set to an amount whose unit names what it measures ("加到75微克", "bumped to 40mg")
    once: bool = False  # it names one occasion ("this week", "这次"): an exception, not the rule moved
    slot: bool = False  # the when is what it is about: "tuesday nights are pottery now", "下周末改去千岛湖了"


def restated_clauses(text: str) -> list[Restated]:
    """The clauses of ``text`` that could restate a thing's time or date (no history read)."""
    found: list[Restated] = []
    clauses = read_message(text)
    # Each sentence read once (a clause's sentence decides "changed" and "also"): linear in the text.
    parts: dict[int, list[str]] = {}
    for clause in clauses:
        parts.setdefault(clause.sentence, []).append(clause.core)
    sentences = {index: " ".join(cores) for index, cores in parts.items()}
    set_to = {index: _SET_TO.search(sentence) is not None for index, sentence in sentences.items()}
    changed_in = {index: _CHANGED.search(sentence) is not None for index, sentence in sentences.items()}
    identifiers: frozenset[str] | None = None
    for index, clause in enumerate(clauses):
        sentence, changed = sentences[clause.sentence], changed_in[clause.sentence]
        # News of a change told by whoever made it ("老师说钢琴课调到周日下午了", "the clinic said
        # it's moved to 4pm"): what is reported restates the thing, as the user's own words would.
        core, whose = clause.core, clause.whose
        news = clause.act == "report" and _CHANGED.search(reported(core)) is not None
        if news:
            core = reported(core)
            whose = "other" if _POSSESSOR.search(core) else "unknown"  # "her flight moved to 9" stays hers
        kinds = frozenset(value_kinds(core) & KINDS)
        # A dose or a weight set to a new amount ("医生让我加到75微克", "she bumped my dose to 40mg"):
        # the unit says what is measured, whoever set it and whatever else the sentence names
        # (not a wish, "我想减到60公斤": a goal, not the weight; nor someone else's, "my dad's dose").
        unit_set = frozenset(v for v in amounts(core) if v.split(":")[0] in NAMED_UNITS) \
            if set_to[clause.sentence] and not _WISH.search(core) and not _POSSESSOR.search(core) else frozenset()
        if unit_set:
            kinds = frozenset()  # "upped me to 100mg today": the amount is what changed, not the day
        # An amount (a price, a room, a dose) restates only where the sentence says it changed:
        # "周会以后在516开", "he changed his mind, it'll be $2,050", "他又改口了，说5000就行".
        named = versions(core) if not kinds and not unit_set and clause.act == "statement" and (
            changed or _UPGRADED.search(sentence)) and _own_change(clause.whose, sentence) else frozenset()
        if named:  # "we upgraded everything to node 22", "现在是iPhone 15": the name is the thing
            if not _ADDED.search(sentence):
                found.append(Restated(clause.start, clause.end, frozenset(name for name, _ in named), frozenset({VERSION}),
                                      frozenset(f"{name}:{number}" for name, number in named), whose, frozenset(),
                                      changed=True))
            continue
        values = frozenset(kind_values(core, kinds)) if kinds else unit_set or (amounts(core) if changed else frozenset())
        if not values or clause.act in ("question", "conditional") or (clause.act == "report" and kinds and not news):
            continue
        kinds = kinds or frozenset({AMOUNT})
        topic = _thing(core)
        if not topic and index and clauses[index - 1].sentence == clause.sentence:
            topic = _thing(clauses[index - 1].core)  # "landlord meeting: 16th now"
        if AMOUNT in kinds:
            # An amount with no thing points back only when someone changed their mind ("he changed
            # his mind, it'll be $2,050"): "he's 45 now" says nothing of the rent before it.
            pointer = not topic and _PRONOUN.search(sentence) is not None and _MIND_CHANGED.search(sentence) is not None
        else:
            # A pronoun points back ("he'll be here at 4:30"), and so does a change with its thing
            # left unsaid ("会挪到周五上午了", "pushed to 3pm now"): what changed is what was just said.
            pointer = not topic and (_PRONOUN.search(core) is not None or _CHANGED.search(core) is not None)
        unit_named = bool(unit_set)
        starting = _STARTING.search(core) is not None  # "明天开始standup改到10点半": a new rule, not one day
        if clause.act == "report" and not (pointer or unit_named or news):
            continue  # someone's words about a thing: only the one who changed it may restate it
        if _ADDED.search(sentence):
            continue  # "I also have yoga on Thursday": one more, not a new time for the old one
        if topic or pointer or unit_named:
            if identifiers is None:
                identifiers = frozenset(extract_identifiers(text[:2000]))
            found.append(Restated(clause.start, clause.end, topic, kinds, values, whose, identifiers, pointer,
                                  changed or unit_named, _EVERY.search(core) is not None or starting,
                                  unit_named, _ONCE.search(core) is not None and not starting,
                                  bool(kinds & KINDS) and changed and _fills_slot(core, kinds & KINDS)))
    return found


AMOUNT = "amount"  # a number with its unit, restated only with words that say it changed
# Units by class: an amount restates one of its own class only ("$2,050" money, "3楼" a floor, a
# bare "516" a bare number), so "my daughter is 7 now" restates no "$40" and no "3楼".
_UNITS = (("money", r"[kK]\b|万|千|块|元|美元|dollars?\b|bucks\b|euros?\b"), ("percent", r"%"),
          ("weight", r"kg\b|公斤|斤|lbs?\b|pounds?\b"), ("dose", r"mg\b|毫克|微克|mcg\b|克|g\b"),
          ("floor", r"楼|层|号"), ("age", r"岁|years?\s{1,3}old\b"))
_AMOUNT = re.compile(r"(?P<cur>[$€£¥])\s?(?P<n>\d[\d,]{0,15}(?:\.\d{1,6})?)(?:\s?[kK万千])?|(?P<m>\d[\d,]{0,15}(?:\.\d{1,6})?)"
                     r"\s?(?:" + "|".join(f"(?P<{name}>{unit})" for name, unit in _UNITS) + ")?", re.I)
_WHENS = ("time", "date", "day")  # kinds whose digits are no amount
NAMED_UNITS = frozenset({"dose", "weight"})  # units that say what they measure: a person has one of each at a time
# Verbs that set an amount to a new value: "加到75微克", "降到68公斤", "upped me to 100mg", "cut it back to 5mg".
_SET_TO = re.compile(r"(?:加|减|降|涨|增加|减少|调|提|升|改)(?:到|成|至)|"
                     r"\b(?:bumped|upped|raised|increased|lowered|reduced|dropped|cut|went|moved|switched|changed|put)"
                     r"(?:\s{1,3}(?:it|me|him|her|them|my\s{1,3}\w{1,20}|the\s{1,3}\w{1,20}))?(?:\s{1,3}(?:up|down|back))?\s{1,3}to\b|\bdown\s{1,3}to\b", re.I)
_WISH = re.compile(r"\b(?:want|wants|wanna|trying|try|goal|aim|aiming|hope|hoping|plan|planning|would\s{1,3}like|like\s{1,3}to|if)\b|"
                   r"想|要|打算|希望|目标|争取|计划|如果|要是", re.I)
_POSSESSOR = re.compile(r"\b(?:his|her|their)\b|\bmy\s{1,3}[a-z]{2,15}'s\b|(?:他|她|它)(?:们)?的|"
                        r"我(?:爸|妈|爸爸|妈妈|老公|老婆|儿子|女儿|孩子|爷爷|奶奶|外公|外婆|哥|姐|弟|妹|家狗|家猫)", re.I)
_NEAR = 3.0  # an amount set anew is within this factor of the one it replaces (75 for 50, not for 500)
_MIND_CHANGED = re.compile(r"\bchanged\s{1,3}(?:his|her|their|my|our)\s{1,3}minds?\b|改口|变卦|反悔", re.I)


def amounts(text: str) -> frozenset[str]:
    """The amounts ``text`` names as ``class:number``, written alike ("$2,150" and "$2150" are one);
    the digits of a time or a date are none ("4pm", "9月30号").

    >>> sorted(amounts("rent goes to $2,150 at 4pm on May 3, the deposit is 500"))
    ['bare:500', 'money:2150']
    """
    text = text[:2000]
    for kind in _WHENS:
        text = kind_pattern(kind).sub(lambda m: " " * len(m.group(0)), text)
    found = set()
    for m in _AMOUNT.finditer(text):
        number = (m.group("n") or m.group("m")).replace(",", "")
        unit = "money" if m.group("cur") else next((name for name, _ in _UNITS if m.group(name)), "bare")
        found.add(f"{unit}:{number}")
    return frozenset(found)


VERSION = "version"  # the number of a named thing: "node 18", "iPhone 12", "Windows 10", "小米14"
# Words a number follows that name no thing ("for 3 weeks", "only 2"), or a kind of number, not the
# thing it numbers ("the billing service is on version 5.1": "version" is every service's).
_VERSION_STOP = frozenset(
    "about after again all also and any are around at back before but by each every for from got had has have "
    "into just last less like more most much next not now only over per since than that the then these this "
    "those till top under until up very was were what when which with approx nearly almost "
    "version ver release build model number item step option level phase stage round part page chapter season "
    "episode volume vol tier grade size 版本 型号 版 号".split())
_VERSIONED = re.compile(r"(?<![A-Za-z0-9_.$€£¥#@/-])([A-Za-z][A-Za-z+#]{2,19}|[\u4e00-\u9fff]{1,8})\s?[vV]?(\d{1,4}(?:\.\d{1,3}){0,2})"
                        r"(?![\w.%:/-]|,\d|\s?(?:%|kg|g|mg|lbs?|km|mi|miles?|hours?|hrs?|minutes?|mins?|days?|weeks?|months?|"
                        r"years?|times?|people|pm|am)\b)", re.I)
_NOT_A_NAME_ZH = re.compile(r"[了的是在有到成为约共第个和与跟把被给对向从往还就都也又再才只多少几每这那花用要]")
# Saying a thing's number changed: the change words, and an upgrade or a switch.
_UPGRADED = re.compile(r"\b(?:upgraded|downgraded|updated|switched|migrated|bumped|went\s{1,3}to|moved\s{1,3}to)\b|"
                       r"升级|降级|换了|换回|改用|换用|更新到", re.I)


_OWN = re.compile(r"\b(?:i|i'm|i've|i'd|we|we're|we've|my|our|me|us)\b|我|咱", re.I)
_SWITCHED_ZH = re.compile(r"换了|换回|换成|改用|换用|升级|降级")


def _own_change(whose: str, sentence: str) -> bool:
    """Whether a sentence tells of the speaker's own thing changing: said by or of the user ("we
    upgraded the lab to Python 3.12"), or, as Chinese leaves the subject out, a switch with no one
    else named ("换了，现在是小爱音箱4"); not "the shop now sells the Kindle 11"."""
    if whose == "user" or _OWN.search(sentence):
        return True
    return not sentence.isascii() and _SWITCHED_ZH.search(sentence) is not None and whose != "other"


def versions(text: str) -> frozenset[tuple[str, str]]:
    """The named things ``text`` gives a number, as (name, number); not a time, a date or an amount
    with its unit ("node 18" is one, "for 3 weeks" and "140g" are not).

        >>> sorted(versions("we upgraded everything to node 22, and python 3.12"))
        [('node', '22'), ('python', '3.12')]
        >>> sorted(versions("现在是iPhone 15，之前花了200")), sorted(versions("lunch at 12 for 3 weeks"))
        ([('iphone', '15')], [])
    """
    text = text[:2000]
    for kind in _WHENS:
        text = kind_pattern(kind).sub(lambda m: " " * len(m.group(0)), text)
    found = set()
    for m in _VERSIONED.finditer(text):
        name = m.group(1).casefold()
        if not name.isascii():  # "换了个小米14": the name is what follows the last function character
            name = _NOT_A_NAME_ZH.split(name)[-1]
            if len(name) < 2 or name in _VERSION_STOP:
                continue
        elif name in _VERSION_STOP:
            continue
        found.add((name, m.group(2)))
    return frozenset(found)


def _classes(values: Iterable[str]) -> set[str]:
    return {value.split(":")[0] for value in values}


_PRONOUN = re.compile(r"\b(?:he|she|they|it|his|her|their|its)(?:'(?:ll|s|re|d))?\b|他们|她们|他|她|它|对方|那边|人家", re.I)
POINTER_REACH = 3  # the user's latest messages in the window a pronoun may point back to


def points_back(text: str) -> bool:
    """Whether ``text`` opens by naming someone or something with a pronoun, pointing back at what
    was said before it ("I'm planning his birthday party", "对了，她下周三到") — in its first clause:
    "my cousin took up pottery, she loves it" names its own.

        >>> points_back("I'm planning his birthday party"), points_back("my cousin took up pottery, she loves it")
        (True, False)
    """
    clauses = read_message(text[:READ_LIMIT])
    return bool(clauses) and _PRONOUN.search(clauses[0].text) is not None


_CHANGED = re.compile(r"\b(?:changed\s{1,3}(?:his|her|their|my|our)\s{1,3}minds?|now|instead|anymore|any\s{1,3}more|in\s{1,3}the\s{1,3}end|changed|moved|pushed|rescheduled|postponed|"
                      r"brought\s{1,3}forward|no\s{1,3}longer|after\s{1,3}all|"
                      # news of the plan from whoever runs it: "the clinic called, 3pm", "那边打电话来，四点半到"
                      r"called|texted|rang|emailed|messaged|confirmed)\b"
                      r"|现在|改到|改成|改在|改为|改去|有变|换到|换成|挪到|调到|调成|调整到|延到|延期|改期|推迟|延后|提前|以后|不再|改口|变卦|打电话来|来电话|打来电话|发消息来|发来消息|回电话|通知说", re.I)
# "also", "too", "another", "也", "还", "另外": one more of the kind, never a new value for the old one.
_ADDED = re.compile(r"\b(?:also|too|as\s{1,3}well|another|additionally|plus)\b|也|还有|另外|再加", re.I)
# One occasion named: "this week's lesson moved to Sunday" is an exception to the weekly rule.
_ONCE = re.compile(r"\b(?:this|next)\s{1,3}(?:week|time|one)\b|\b(?:today|tonight|tomorrow|just\s{1,3}once)\b|"
                   r"这周|本周|下周|这次|这回|下次|(?<!从)今天|明天|今晚|就这一次", re.I)
# "starting tomorrow", "明天开始", "from next week": what follows holds from then on, a rule moved,
# not one occasion.
_STARTING = re.compile(r"(?:从)?(?:明天|后天|今天|下周[一二三四五六日天]?|下个?(?:星期|礼拜|月)[一二三四五六日天]?|周[一二三四五六日天])(?:开始|起)|"
                       r"\b(?:starting|from|as\s{1,3}of|beginning)\s{1,3}(?:tomorrow|today|next\s{1,3}(?:week|month)|"
                       r"(?:this\s{1,3}|next\s{1,3})?(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b", re.I)
# "every day" against "on Fridays": a rule and its exception are two things.
# "from now on", "以后都": a new standing rule, like the daily one it replaces.
_EVERY = re.compile(r"\b(?:every|each|daily|weekly|weekdays|weekends|from\s{1,3}now\s{1,3}on|going\s{1,3}forward)\b|"
                    r"每天|每周|每个|天天|工作日|从今(?:天)?(?:以后|往后|起)|以后都|今后", re.I)


def _near(old: Iterable[str], new: Iterable[str]) -> bool:
    """Some old amount of a class the new one has, another number within ``_NEAR`` times it."""
    numbers: dict[str, list[float]] = {}
    for value in new:
        unit, number = value.split(":")
        numbers.setdefault(unit, []).append(float(number))
    for value in old:
        unit, number = value.split(":")
        was = float(number)
        if was > 0 and any(n != was and 1 / _NEAR <= n / was <= _NEAR for n in numbers.get(unit, ())):
            return True
    return False


# What follows a when that a clause opens with, when the clause says what that time now holds:
# "tuesday nights are pottery class now", "下周末改去千岛湖了" (not "on friday we now have a lunch").
_SLOT_FILLED = re.compile(r"\s{0,3}(?:nights?|mornings?|evenings?|afternoons?|晚上|上午|下午|早上)?\s{0,3}"
                          r"(?:is|are|will\s{1,3}be|'s|改(?:去|成|为|到)|换成|变成)", re.I)
_SLOT_LEAD = re.compile(r"(?:on\s{1,3}|every\s{1,3}|下|这|本|每)?$", re.I)


def _fills_slot(core: str, kinds: Iterable[str]) -> bool:
    """Whether ``core`` opens with its when and says what that time holds now."""
    first = min((m for kind in kinds for m in [kind_pattern(kind).search(core[:200])] if m is not None),
                key=lambda m: m.start(), default=None)
    return (first is not None and _SLOT_LEAD.fullmatch(core[:first.start()]) is not None
            and _SLOT_FILLED.match(core, first.end()) is not None)


def _thing(text: str) -> frozenset[str]:
    return frozenset(t for t in terms_of(_CHANGED.sub(" ", _STARTING.sub(" ", text))) if t not in _EVENT_WORDS)


def restatement_target(restated: Restated, candidates: Iterable[dict[str, Any]]) -> Target | None:
    """The latest clause among ``candidates`` (records, newest first) that ``restated`` gives a new
    value: the same thing, the same holder, a value of a shared kind, not all of them the old ones."""
    amount = AMOUNT in restated.kinds
    if VERSION in restated.kinds:
        return _version_target(restated, candidates)
    for record in candidates:
        for clause in read_message(record["content"]):
            # A pointer's amount may be someone's word ("my landlord says rent goes to $2,150", then
            # "he changed his mind, it'll be $2,050"): whose it is, the report does not say.
            reported = clause.act == "report" and amount and restated.pointer
            if clause.act in ("question", "conditional") or (clause.act == "report" and not reported):
                continue
            shared = (restated.kinds if _classes(amounts(clause.core)) & _classes(restated.values) else frozenset()) \
                if amount else restated.kinds & value_kinds(clause.core)
            if not shared:
                continue
            if restated.unit_named:
                if not _near(amounts(clause.core), restated.values) or _POSSESSOR.search(clause.core):
                    continue  # another dose: 500毫克 of calcium is not the 50微克 raised to 75
            elif restated.slot and not amount and restated.values <= kind_values(clause.core, shared) \
                    and not restated.topic <= terms_of(_CHANGED.sub(" ", clause.core)) and restated.whose in ("user", "unknown") \
                    and clause.whose in ("user", "unknown") and bool(_EVERY.search(clause.core)) == restated.every:
                return Target(record["record_id"], (clause.start, clause.end), "restated")  # the same time, now another thing
            elif not restated.topic <= terms_of(_CHANGED.sub(" ", clause.core)):
                continue
            elif not reported and "unknown" not in (restated.whose, clause.whose) and restated.whose != clause.whose:
                continue
            if frozenset(extract_identifiers(record["content"][:2000])) != restated.identifiers:
                continue  # another course, ticket or standard: another thing
            old = {v for v in amounts(clause.core) if v.split(":")[0] in _classes(restated.values)} if amount \
                else kind_values(clause.core, shared)
            every = bool(_EVERY.search(clause.core))
            moved = every and restated.changed and not restated.once  # "钢琴课调到周日了" after "每周六上午": the rule moved
            if every != restated.every and not restated.unit_named and not moved:  # a dose is daily
                continue  # a daily rule and one day's exception
            if not restated.changed and (amount or not restated.pointer):
                continue  # "周四下午三点开组会" after "周一上午九点开组会": another meeting, or a move? Unsaid: kept
            if old and not restated.values <= old:  # something new: "周五上午" after "周四上午" (the morning stays)
                return Target(record["record_id"], (clause.start, clause.end), "restated")
    return None


def _version_target(restated: Restated, candidates: Iterable[dict[str, Any]]) -> Target | None:
    """The latest statement among ``candidates`` naming one of ``restated``'s things with another
    number, by the same holder ("node 22" after "node 18"; "my wife's iPhone 15" is not mine)."""
    new = dict(value.split(":", 1) for value in restated.values)
    for record in candidates:
        for clause in read_message(record["content"]):
            if clause.act != "statement" or ("unknown" not in (restated.whose, clause.whose) and restated.whose != clause.whose):
                continue
            old = versions(clause.core)
            if any(name in new and number != new[name] and (name, new[name]) not in old for name, number in old):
                return Target(record["record_id"], (clause.start, clause.end), "restated")
    return None
