"""Kinds of things: what a take-back names by its kind, and the sentences that are of that kind.

People take back a thing by what kind of thing it is, not by the words they first said: "forget
the gym thing" for "nag me about cancelling my PureGym membership", "学校名字你别存了" for "儿子在
实验二小上三年级", "那个外号别用了" for "以后你就叫我胖虎吧". Each kind here is two patterns:

    named       how a take-back names the kind          "gym", "学校", "nickname", "外号"
    instance    what a sentence of that kind says       "PureGym", "二小", "call me", "叫我"

and the words a search for the kind's sentences adds (a sentence holding none of the take-back's
words is found by these). The kinds are everyday personal matters; a take-back that names none
of them is matched by its own words only (``revocation.py``).

    >>> kinds_named("the gym thing")
    ('fitness',)
    >>> of_kind("can you keep nagging me about my PureGym membership?", ("fitness",))
    True
    >>> of_kind("I need to renew my passport", ("fitness",))
    False
"""
from __future__ import annotations

import re

__all__ = ["KINDS", "kinds_named", "of_kind", "search_words"]

# kind: (named in a take-back, said in a sentence of the kind, words a search adds)
_TABLE = {
    "school": (r"\bschools?\b|学校|校名",
               r"\b(?:school|academy|elementary|kindergarten|preschool|college|university)\b|学校|小学|中学|初中|高中|幼儿园|"
               r"大学|学院|附小|附中|[一二三四五六七八九十](?:小|中)(?![时孩朋姐哥妹弟区])",
               "school academy elementary 学校 小学 中学 幼儿园"),
    "fitness": (r"\bgym\b|\bfitness\b|\bworkouts?\b|健身",
                r"gym|fitness|workout|personal\s{1,3}trainer|健身|私教",
                "gym fitness workout membership 健身 私教"),
    "dining": (r"\b(?:dinner|lunch|brunch|restaurant|reservation|table)\b|聚餐|饭局|餐厅|订位|订座|晚饭|午饭",
               r"\btable\s{1,3}for\b|\b(?:book|reserve|get)\b.{0,40}?\btable\b|\b(?:restaurant|reservation|dinner|lunch|brunch)\b|餐厅|饭店|订(?:个)?(?:位|座|桌)|聚餐|饭局|晚饭|午饭",
               "table restaurant reservation dinner lunch 餐厅 订位 聚餐 晚饭"),
    "nickname": (r"\bnick\s{0,3}names?\b|外号|绰号|昵称|小名",
                 r"\bcall\s{1,3}me\b|\bnick\s{0,3}names?\b|叫我|外号|绰号|昵称|小名",
                 "call nickname 叫我 外号 昵称"),
    "travel": (r"\b(?:trip|travel|vacation|holiday|flights?|itinerary)\b|旅行|旅游|出差|行程|机票",
               r"\b(?:trip|travel(?:ling|ing)?|vacation|holiday|flights?|itinerary|hotel)\b|\bfly(?:ing)?\s{1,3}to\b|旅行|旅游|出差|行程|机票|航班|酒店",
               "trip travel vacation flight hotel 旅行 旅游 出差 机票 酒店"),
    "health": (r"\b(?:health|medical|diagnosis|condition|medications?|meds|therapy|therapist|doctor)\b|病情|看病|吃药|治疗|诊断|身体",
               r"\b(?:doctor|dr|diagnos\w*|therap\w*|medication|meds|pills?|prescri\w*|clinic|hospital|surgery|symptoms?)\b|"
               r"医生|医院|诊断|吃药|治疗|手术|复查|症|病",
               "doctor diagnosis therapy medication clinic 医生 医院 诊断 吃药 治疗"),
    "relationship": (r"\b(?:relationship|dating|divorce|break\s{0,3}up|boyfriend|girlfriend|marriage|ex)\b|感情|恋爱|分手|离婚|前任|对象",
                     r"\b(?:divorc\w*|split\s{1,3}(?:up|with|from)|separated|broke\s{1,3}up|break\s{0,3}up|dating|boyfriend|girlfriend|ex)\b|分手|离婚|前任|"
                     r"前夫|前妻|男朋友|女朋友|对象",
                     "divorce dating boyfriend girlfriend ex 分手 离婚 前任 对象"),
    "debt": (r"\b(?:loan|debt|borrow(?:ed|ing)?|owe)\b|借钱|欠钱|欠款|贷款|借款",
             r"\b(?:loan|debt|borrow\w*|owe\w*|lent|lend\w*)\b|借|欠|贷款|还款",
             "loan debt borrowed owe lent 借 欠 贷款 还款"),
    "grades": (r"\b(?:grades?|scores?|marks|exam\s{1,3}results?|test\s{1,3}results?|report\s{1,3}card)\b|成绩|分数|考试|考得",
               r"\b(?:grades?|scored?|marks|exam|test|gpa|report\s{1,3}card)\b|\b[A-F][+-]?\s{1,3}in\b|\d{1,3}\s{0,2}分|成绩|考了|考试|分数|及格|排名",
               "grade score exam test 成绩 考试 分数 考了"),
    # the name the user gave something: "a side thing called lanternfish", "开了个号，叫“阿梨不吃梨”"
    "name": (r"\b(?:names?|handle|username)\b|名字|名称|账号名|用户名|网名|店名",
             r"\b(?:called|named)\s{1,3}[\w“\"']|\bname\s{1,3}is\b|(?:号|名字|名|店|账号)(?:就)?叫|叫[“\"「『]|名叫|取名",
             "called named name 叫 名字 账号"),
    "pet": (r"\b(?:pets?|dogs?|cats?|puppy|kitten)\b|宠物|狗|猫",
            r"\b(?:pets?|dogs?|cats?|pupp(?:y|ies)|kittens?|vet)\b|宠物|狗|猫",
            "pet dog cat puppy vet 宠物 狗 猫"),
}
KINDS = tuple(_TABLE)
_NAMED = {kind: re.compile(named, re.I) for kind, (named, _, _) in _TABLE.items()}
_INSTANCE = {kind: re.compile(instance, re.I) for kind, (_, instance, _) in _TABLE.items()}
_LIMIT = 2000  # characters of a sentence or a take-back read: the patterns stay linear and bounded


def kinds_named(about: str) -> tuple[str, ...]:
    """The kinds of thing ``about`` (a take-back's words for what it takes back) names."""
    return tuple(kind for kind, pattern in _NAMED.items() if pattern.search(about[:_LIMIT]))


def of_kind(sentence: str, kinds: tuple[str, ...]) -> bool:
    """Whether ``sentence`` says something of any of ``kinds``."""
    return any(_INSTANCE[kind].search(sentence[:_LIMIT]) for kind in kinds)


def search_words(kinds: tuple[str, ...]) -> str:
    """Words that find the sentences of ``kinds`` in a lexical search."""
    return " ".join(_TABLE[kind][2] for kind in kinds)
