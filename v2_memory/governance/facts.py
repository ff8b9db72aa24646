"""Facts as (attribute, value, polarity): what a user's own statements say about them, several per message.

``segmenter.read_message`` says, for each clause, what kind of speech act it is and whose; only a
*statement* (or, for "don't recommend …", a *request*) that is the *user's own* can declare a fact.
Each such clause is read for one claim, so "我不喝牛奶，但喝豆浆" gives two facts of opposite polarity
and "My name is Sam and I use a Mac" gives a name and a device.

A rule is a family of verbs for one attribute, read after the subject and a few adverbs — never at
the start of the message. An **update** ("I switched from Android to an iPhone", "我已经不在腾讯了，
上个月去了字节", "我最近开始吃肉了") is a claim with ``update=True`` and, when named, the ``old``
value it replaces: governance supersedes the earlier statement of the same attribute.

    >>> [(c.key, c.value, c.polarity) for c in extract_claims("我不喝牛奶，但喝豆浆")]
    [('drink', '牛奶', -1), ('drink', '豆浆', 1)]
    >>> [(c.key, c.value) for c in extract_claims("My name is Sam and I use a Mac")]
    [('name', 'Sam'), ('device', 'Mac')]
    >>> [(c.key, c.value, c.old) for c in extract_claims("我最近开始吃肉了")]
    [('diet', '肉', 'vegetarian')]
    >>> extract_claims("我儿子对牛奶过敏"), extract_claims("如果我吃素的话")
    ([], [])
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..messages import MEAT, Declaration
from ..text.segmenter import READ_LIMIT, Clause, Meter, read_message

__all__ = ["Claim", "extract_claims", "claims_of_clause", "clean_value", "MEAT", "VEGETARIAN"]

# A vegetarian does not eat meat: "我吃素" and "我最近开始吃肉了" are one attribute, in conflict.
VEGETARIAN = re.compile(r"素|vegetarian|vegan", re.I)


@dataclass(frozen=True)
class Claim:
    """One fact a clause declares, where it was said, and whether it updates an earlier value."""

    key: str
    value: str
    polarity: int
    start: int = 0  # the clause's span in the message
    end: int = 0
    update: bool = False
    old: str | None = None  # the value it replaces, when the user names it ("from Android")

    @property
    def declaration(self) -> Declaration:
        return Declaration(self.key, self.value, self.polarity)


_ADV = r"(?:居然|竟然|突然|忽然|渐渐|慢慢|越来越|总算|反而|倒是|现在|已经|再也|也|都|真的|一直|从来|其实|平时|一般|最近|目前|如今|本来|向来|还|就|又|确实|特别|非常|比较|有点|完全|根本|基本上?|早就|终于|这几年|这段时间|上个月|去年|今年)"
_V = r"(?P<v>.{1,40})"
_ZH_OBJ = r"(?![了过着来去到])"
# A device named as the clause's topic, with no possessor: in the user's own message, their own
# (Chinese drops the subject: "手机换成iPhone了" is "my phone is now an iPhone").
_POSSESSION = r"(?:我的)?(?:手机|电脑|笔记本|平板)"
_WHEN = r"(?:上周|这周|上个月|昨天|前几天|刚刚|刚|就|已经|早就|都|也){0,3}"
# (pattern read after the subject, key, polarity, is-an-update); first match wins per clause.
_ZH_RULES: list[tuple[str, str, int, bool]] = [
    (rf"对{_V}(?:不|没有?)过敏", "allergy", +1, False),
    (rf"(?:不|没有?)对{_V}过敏", "allergy", +1, False),
    (rf"对{_V}过敏", "allergy", -1, False),
    (r"(?P<v>.{1,20}?)过敏", "allergy", -1, False),
    (rf"(?:不再|再也不|已经不|不)吃素", "diet:meat", +1, True),
    (rf"(?:开始|又开始|重新|又|恢复)吃(?P<v>肉|荤)", "diet:meat", +1, True),
    (rf"(?:开始|又开始|重新|又|恢复)吃{_V}", "diet", +1, True),
    (rf"(?:不吃|不能吃|从不吃|从来不吃|吃不了|忌口|不碰|戒了|不敢吃){_V}", "diet", -1, False),
    (r"(?P<v>吃素|是素食(?:主义)?者?|素食(?:主义)?者?)", "diet", +1, False),
    (rf"(?:不喝|不能喝|戒了|喝不了){_V}", "drink", -1, False),
    (rf"(?:开始|又开始|改|只)?喝{_ZH_OBJ}(?!一|杯|点){_V}", "drink", +1, False),
    (rf"(?:请|以后|今后)?(?:别|不要|不用|请勿|不必|甭)(?:再)?(?:给我)?推荐{_V}", "recommend", -1, False),
    (rf"(?:不喜欢|讨厌|不爱|受不了|反感|不感兴趣){_V}", "likes", -1, False),
    (rf"(?:喜欢|热爱|超爱|最爱|爱上了?|迷上了?|爱){_V}", "likes", +1, False),
    (rf"是(?P<v>[A-Za-z][\w .+-]{{0,20}}|[\u4e00-\u9fff]{{2,8}})用户", "platform", +1, False),
    (rf"(?:换成了?|换了|改用了?|换到了?)(?P<v>.{{1,30}})", "device", +1, True),
    (rf"{_POSSESSION}(?:也|已经|现在|终于)?(?:换成了?|换了|改用了?|换到了?)(?P<v>.{{1,30}})", "device", +1, True),
    (rf"(?:用的是|使用的是|在用的是|用|使用|在用){_ZH_OBJ}(?!餐|来|于|过){_V}", "device", +1, False),
    (r"的(?:手机|电脑|笔记本|平板|电脑系统)(?:是|用的是)(?P<v>.{1,30})", "device", +1, False),
    (r"的?(?:名字|姓名)(?:是|叫)(?P<v>\S{1,12})", "name", +1, False),
    (r"叫(?![个了辆一车])(?P<v>\S{1,10})", "name", +1, False),
    (rf"(?:已经)?不(?:住)?在(?P<v>[^\s]{{1,12}}?)(?:住|生活|工作|上班)?了", "place?", -1, True),
    # Retractions: a thing the user had is gone ("亚朵那个上周就退掉了", "豆豆送回老家了", "取消了健身卡").
    (rf"(?P<v>[^\s]{{1,12}}?)(?:那个|那家|那辆|那只|那台|那张)?{_WHEN}(?:退掉|退订|取消|卖掉|卖了|送人|送走|送回|转让|注销|停掉|不要)", "retract", -1, True),
    (rf"(?:退掉了?|退订了?|取消了|卖掉了|卖了|送走了|戒掉了|注销了|停掉了)(?P<v>[^\s]{{1,12}})", "retract", -1, True),
    (rf"(?:离开了?|从)(?P<v>[^\s]{{1,12}}?)离职了?", "employer", -1, True),
    (rf"(?:住在|住(?!的)|生活在|定居在?)(?P<v>[^\s]{{1,12}})", "location", +1, False),
    (rf"(?:搬到了?|搬去了?|搬家到|回到了?)(?P<v>[^\s]{{1,12}})", "location", +1, True),
    (rf"在(?P<v>[^\s]{{1,12}}?)(?:工作|上班|任职|实习)", "employer", +1, False),
    (rf"(?:入职了?|加入了?|跳槽到了?|跳槽去了?|去了)(?P<v>[^\s]{{1,12}})", "place?", +1, True),
]
# A place as a value: a street address or a capitalised name ("my new apartment is 41 Wexford Rd"),
# never a common noun ("my new place is tiny").
_PLACE = (r"\d{1,6}[A-Za-z]?\s{1,3}(?-i:[A-Z])[\w.'-]{0,30}(?:\s{1,3}(?-i:[A-Z])[\w.'-]{0,30}){0,4}"
          r"|(?-i:[A-Z])[\w.'-]{1,30}(?:\s{1,3}(?-i:[A-Z])[\w.'-]{1,30}){0,3}")
_EN_OBJ = r"(?:an?\s+|the\s+|some\s+)?"
_EN_V = r"(?P<v>[^\s].{0,40})"
_ORG = r"(?-i:[A-Z])[\w&.'-]{0,30}(?:\s{1,3}(?-i:[A-Z])[\w&.'-]{0,30}){0,3}"
_EN_RULES: list[tuple[str, str, int, bool]] = [
    (rf"(?:(?:'m|am)\s+)?not\s+allergic\s+to\s+{_EN_V}", "allergy", +1, False),
    (rf"(?:(?:'m|am)\s+)?(?:very\s+|severely\s+|super\s+|also\s+)?allergic\s+to\s+{_EN_V}", "allergy", -1, False),
    (rf"(?:have|'ve\s+got)\s+an?\s+(?P<v>[\w -]{{1,30}}?)\s+allergy", "allergy", -1, False),
    (r"(?:'m|am)\s+(?:no\s+longer|not)\s+(?:a\s+)?(?:vegetarian|vegan)", "diet:meat", +1, True),
    (r"(?:started|began|start|begin|went\s+back\s+to)\s+eating\s+(?:some\s+)?(?:meat|chicken|beef|pork|fish)\b", "diet:meat", +1, True),
    (rf"(?:started|began|start|begin|went\s+back\s+to)\s+eating\s+{_EN_V}", "diet", +1, True),
    (rf"eat\s+{_EN_V}\s+(?:again|now)", "diet", +1, True),
    (rf"(?:don'?t|do\s+not|never|can'?t|cannot|no\s+longer|stopped|quit|avoid)\s+(?:eat|eating)\s+{_EN_V}", "diet", -1, False),
    (rf"(?:'m|am)\s+(?:a\s+)?(?:strict\s+)?(?P<v>vegetarian|vegan)", "diet", +1, False),
    (rf"(?:don'?t|do\s+not|never|can'?t|no\s+longer|stopped|quit)\s+(?:drink|drinking)\s+{_EN_V}", "drink", -1, False),
    (rf"(?:please\s+)?(?:don'?t|do\s+not|never|stop)\s+(?:recommend|suggest)(?:ing)?\s+{_EN_V}?", "recommend", -1, False),
    (rf"(?:don'?t|do\s+not|no\s+longer|never)\s+(?:really\s+)?(?:like|enjoy|love)\s+{_EN_V}", "likes", -1, False),
    (rf"(?:hate|dislike|detest|can'?t\s+stand)\s+{_EN_V}", "likes", -1, False),
    (rf"(?:really\s+|absolutely\s+|also\s+)?(?:like|love|enjoy|adore)\s+{_EN_V}", "likes", +1, False),
    (rf"(?:'m|am)\s+(?:really\s+|a\s+big\s+|a\s+huge\s+)?(?:into|a\s+fan\s+of)\s+{_EN_V}", "likes", +1, False),
    (r"(?:'m|am)\s+an?\s+(?P<v>[\w .+-]{1,20}?)\s+user", "platform", +1, False),
    (rf"(?:switched|moved|changed|went)\s+from\s+(?:an?\s+|my\s+)?(?P<old>.{{1,30}}?)\s+to\s+{_EN_OBJ}{_EN_V}", "switch?", +1, True),
    (rf"(?:switched\s+to|changed\s+to|upgraded\s+to|now\s+use|use\s+{_EN_OBJ}(?P<w>.{{1,30}})\s+now)\s*{_EN_OBJ}(?P<v>.{{0,30}})", "device", +1, True),
    (rf"(?:use|'m\s+using|am\s+using|work\s+on)\s+{_EN_OBJ}{_EN_V}", "device", +1, False),
    (r"(?:my\s+)?(?:phone|laptop|computer|pc|tablet|machine)\s+is\s+(?:an?\s+)?(?P<v>.{1,30})", "device", +1, False),
    (r"(?:my\s+)?name\s+is\s+(?P<v>\S.{0,20})|call\s+me\s+(?P<w>\S.{0,20})|(?:my\s+)?name'?s\s+(?P<x>\S.{0,20})", "name", +1, False),
    (rf"(?:don'?t|do\s+not|no\s+longer)\s+live\s+in\s+{_EN_V}", "location", -1, True),
    (rf"(?:no\s+longer|don'?t|do\s+not)\s+work\s+(?:at|for)\s+{_EN_V}", "employer", -1, True),
    # A named employer starts with a capital even where the rules ignore case ("left my AirPods in
    # an Uber" leaves no employer; "quit Deloitte" does).
    (rf"(?:left|quit)\s+(?:my\s+job\s+at\s+)?(?P<v>(?-i:[A-Z])[\w&.-]{{0,30}})", "employer", -1, True),
    # Retractions: something the user had or did is over ("cancelled Planet Fitness", "I quit keto").
    (rf"(?:cancel+ed|quit|gave\s+up(?:\s+on)?|stopped|cut\s+out|sold|moved\s+out\s+of|got\s+rid\s+of|ditched|dropped\s+out\s+of)\s+"
     rf"(?!at\b|by\b|in\b|to\b|for\b|on\b|it\b|that\b)(?:my\s+|our\s+|the\s+)?(?P<v>[^\s,.;!?][^,.;!?]{{0,30}})", "retract", -1, True),
    (rf"(?:live|'m\s+living|am\s+living|'m\s+based|am\s+based|reside)\s+in\s+{_EN_V}", "location", +1, False),
    (rf"(?:moved|relocated)\s+to\s+{_EN_V}", "location", +1, True),
    # "my new apartment is 41 Wexford Rd": a new home named by its address or place.
    (r"(?:my\s+|our\s+)?new\s+(?:apartment|flat|house|home|place|address|condo)\s+is\s+(?:at\s+|on\s+|in\s+)?(?P<v>" + _PLACE + ")",
     "location", +1, True),
    (r"(?:'m|am)\s+(?:now\s+)?in\s+(?P<v>[A-Z][\w .-]{1,30}?)\s+now", "location", +1, True),
    (rf"(?:work|'m\s+working|am\s+working)\s+(?:at|for)\s+{_EN_V}", "employer", +1, False),
    # "I'm a junior analyst at Deloitte": a role at a named organisation (capitalised) is where one works.
    (r"(?:'m|am)\s{1,3}(?:an?\s{1,3})(?:[\w-]{1,20}\s{1,3}){1,4}?at\s{1,3}(?P<v>" + _ORG + ")",
     "employer", +1, False),
    # A named organisation (capitalised) is the value; else whatever follows, cleaned.
    (rf"(?:joined|started\s+at|started\s+working\s+at)\s+(?:(?P<v>{_ORG})(?![\w&.'-])|(?P<w>[^\s].{{0,40}}))", "employer", +1, True),
]
_EN_ADV = (r"(?:\s*(?:'ve|’ve|have|had|'d)(?=\s))?(?:\s*(?:really|also|just|actually|now|currently|mostly|usually|always|still|recently|basically|"
           r"definitely|honestly|totally|finally|officially|kind\s+of|sort\s+of|pretty\s+much)\b){0,4}\s*"
           r"(?:[a-z]{2,12}(?:\s+[a-z]{2,6})?\s+and\s+)?")  # "I finally caved and switched ...": the second verb carries the fact


# Where the user's household lives, said as "we" or "我们家" (the user lives there too).
_HOUSEHOLD = [
    # "我们家住在朝阳区安贞里", "我家在西湖区" (a place: 住, or a place's suffix — not "我家在装修", an action)
    (re.compile(r"^(?:我们|咱们|咱|我)?家(?:就|也|现在)?(?:住在?(?P<v>[^\s，,。！!？?、]{2,12})|在(?!用|做|装|忙|吃|看|学|找|考虑|搞|弄|开|玩|准备|等|打|写|听|聊|讨论)"
                r"(?P<w>[^\s，,。！!？?、]{1,10}(?:区|路|街|道|市|县|镇|乡|村|小区|号|楼|园|苑|里|庄|湾|城|岛|省|州|坊|巷|胡同))(?![\u4e00-\u9fff]))"), False),
    # "we live at 88 Birchwood Ct": a street address, not "we live in fear" or "we live in Airbnbs"
    (re.compile(r"^(?:(?:and|but|so)\s{1,3})?we(?:'re|\s{1,3}are)?\s{1,3}(?:(?:now|currently|still|just)\s{1,3})?"
                r"(?:live|living)\s{1,3}(?:at|on)\s{1,3}(?P<v>\d{1,6}[A-Za-z]?\s{1,3}(?-i:[A-Z])[\w.'-]{0,30}"
                r"(?:\s{1,3}(?-i:[A-Z])[\w.'-]{0,30}){0,4})", re.I), False),
]
# A new home mentioned, and a clause that is only a street address: "we closed on the new house!
# 1290 Sable Ridge Dr, moving in saturday".
_NEW_HOME = re.compile(r"\bnew\s{1,3}(?:house|home|place|apartment|flat|condo|address)\b|\bmov(?:ing|ed)\s{1,3}in\b|"
                       r"\bclosed\s{1,3}on\b|新房|新家|搬家", re.I)
_ADDRESS = re.compile(r"\d{1,6}[A-Za-z]?\s{1,3}(?:[A-Z][\w.'-]{0,30}\s{1,3}){1,4}(?:St|Street|Rd|Road|Dr|Drive|Ave|Avenue|Ct|Court|Ln|Lane|"
                      r"Blvd|Boulevard|Way|Pl|Place|Ter|Terrace|Cir|Circle|Pkwy|Hwy|Sq|Square)\.?")


@functools.lru_cache(maxsize=None)
def _rules(chinese: bool) -> list[tuple[re.Pattern[str], str, int, bool]]:
    """The compiled rules of one language, compiled on first use (importing the package stays fast)."""
    if chinese:
        return [(re.compile(rf"^{_ADV}{{0,4}}(?:{p})"), k, s, u) for p, k, s, u in _ZH_RULES]
    return [(re.compile(rf"^{_EN_ADV}(?:{p})", re.I), k, s, u) for p, k, s, u in _EN_RULES]
_UPDATE_CUE = re.compile(r"现在|已经|开始|不再|再也不|换|改|搬|最近|如今|\b(?:now|anymore|any\s+more|no\s+longer|these\s+days|"
                         r"switched|moved|changed|started|nowadays|since)\b", re.I)
_SUBJECT = re.compile(r"^(?:(?:但是?|不过|可是|而且|然后|所以|还|也)\s*|(?:and|but|though|also|so)\b\s*)*(?:我(?!们)|本人|i(?=['’])|i\b|we\b|我们)?\s*", re.I)
_MY = re.compile(r"^(?:my\s+|我的)")
_OWN_TOPIC = re.compile(_POSSESSION)
_WE = re.compile(r"^(?:(?:and|but|so)\s+)?(?:we\b|we'(?:ve|re|d)\b|我们|咱们)", re.I)

# -- values ---------------------------------------------------------------------------------------------
_PRONOUNS = {"你", "您", "他", "她", "它", "你们", "他们", "这个", "那个", "you", "him", "her", "it", "them", "this", "that",
             "it too", "that too", "so", "to", "one"}
_VALUE_TAIL = re.compile(r"(?:\s+(?:any\s?more|now|these\s+days|nowadays|at\s+all|again|too|as\s+well|lately|recently|"
                         r"every\s+day|completely|entirely|for\s+good|altogether|last\s+(?:year|month|week|summer|spring|fall|winter)|this\s+(?:year|month|week)|in\s+\d{4}|\w+\s+ago|a\s+lot|so\s+much|very\s+much|instead|for\s+work|at\s+work|at\s+home|though|"
                         r"for\s+now|right\s+now|since\s+.{1,20}|to\s+me)|[了的啦呢呀哦哈吧啊嘛]|了哈|手机了|\s*[.!~～。！]+)+$", re.I)
_VALUE_HEAD = re.compile(r"^(?:的是|是|了|着|一个|一台|一部|个|台|部|an?\s+|the\s+|some\s+|my\s+)+", re.I)
_OTHERS_THING = re.compile(r"(?:我|你|他|她)?(?:的)?(?:妈妈?|爸爸?|儿子|女儿|老婆|老公|朋友|同事|室友|同学|老板|哥|姐|弟|妹|孩子|家人)的|"
                           r"\b(?:my|his|her|their|your)\s+(?:\w+\s+)?(?:mom|dad|friend|colleague|coworker|boss|wife|husband|"
                           r"brother|sister|son|daughter|girlfriend|boyfriend|partner|roommate|kid)'?s\b|\b(?:his|her|their|your|someone'?s)\b",
                           re.I)


def clean_value(raw: str) -> str | None:
    """A fact value without time words, articles and particles; None if nothing concrete is left.

    >>> clean_value("的是一加手机"), clean_value("a Mac now"), clean_value("horror movies anymore")
    ('一加手机', 'Mac', 'horror movies')
    """
    value = raw.strip()
    for _ in range(3):  # "a Mac now." → "Mac": heads and tails can nest, a few rounds settle it
        value = _VALUE_TAIL.sub("", _VALUE_HEAD.sub("", value)).strip(" \t'\"“”‘’")
    if not value or len(value) > 30 or value.casefold() in _PRONOUNS:
        return None
    return value


def _subject_body(clause: Clause) -> str:
    """What follows the subject: "我最近开始吃肉了" → "最近开始吃肉了"; "I'm vegan" → "'m vegan"."""
    return _SUBJECT.sub("", clause.core, count=1).strip()


def claims_of_clause(clause: Clause, meter: Meter | None = None) -> list[Claim]:
    """The claim one clause makes about the user, if it is the user's own statement."""
    meter = meter or Meter()
    # A request is the user's by definition ("别推荐咖啡": the user asks the assistant).
    own = clause.whose == "user" or (clause.act == "request" and clause.whose == "unknown")
    own = own or (clause.whose == "unknown" and bool(_OWN_TOPIC.match(clause.core)))
    # A retraction only ends something the user's own history holds, so an unnamed subject or
    # "we" (the user is one of us) may make it; someone else's ("my brother sold his car") may not.
    ours = own or clause.whose == "unknown" or bool(_WE.match(clause.core))
    if not ours or clause.act not in ("statement", "request"):
        return []
    if clause.act == "statement" and (own or _WE.match(clause.core) or clause.core.startswith(("我们家", "咱家", "我家"))):
        for pattern, update in _HOUSEHOLD:
            found = meter.scan(pattern, clause.core, "match")
            value = clean_value(found.group("v") or found.groupdict().get("w") or "") if found else None
            if value is not None:
                return [Claim("location", value, +1, clause.start, clause.end, update or bool(meter.scan(_UPDATE_CUE, clause.core)))]
    body = _subject_body(clause)
    # subtle: a change said with no subject at all ("搬到回龙观了", "started at Stripe this week")
    # is the speaker's own: chat drops the "I", and a change of state has a subject.
    dropped = clause.whose == "unknown" and clause.act == "statement" and body == clause.core.strip()
    rules = _rules(bool(re.match(r"[\u4e00-\u9fff]", body)))
    for pattern, key, polarity, update in rules:
        if not own and key != "retract" and not dropped:
            continue
        match = meter.scan(pattern, body, "match")
        if match is None or (clause.act == "request" and key != "recommend"):
            continue
        claim = _claim(match, key, polarity, update or bool(meter.scan(_UPDATE_CUE, clause.core)), clause, body)
        return [claim] if claim is not None else []
    return []


def _claim(match: re.Match[str], key: str, polarity: int, update: bool, clause: Clause, body: str) -> Claim | None:
    groups = match.groupdict()
    if key == "diet:meat":  # eating meat again: an update of a vegetarian diet
        value = MEAT["zh"] if re.match(r"[\u4e00-\u9fff]", body) else MEAT["en"]
        return Claim("diet", value, polarity, clause.start, clause.end, True, "vegetarian")
    raw = groups.get("v") or groups.get("w") or groups.get("x") or ""
    if _OTHERS_THING.search(raw):
        return None  # "用我同事的电脑": someone else's thing says nothing about the user
    value = clean_value(raw)
    if value is None:
        return None
    old = clean_value(groups.get("old") or "") if groups.get("old") else None
    return Claim(key, value, polarity, clause.start, clause.end, update, old)


def extract_claims(text: str, meter: Meter | None = None) -> list[Claim]:
    """Every fact the user's own statements in ``text`` declare, in order (see the module docstring).

    Keys ending in "?" ("place?", "switch?") are updates whose attribute the history decides
    (``我已经不在腾讯了`` is about an employer if the user said they work there).
    """
    clauses = read_message(text, meter)  # without a meter: the reading every rule shares
    meter = meter or Meter()
    claims: list[Claim] = []
    for clause in clauses:
        claims.extend(claims_of_clause(clause, meter))
    homes = [c for c in clauses if meter.scan(_NEW_HOME, c.core)]
    # Only the user's own new home: not "my parents closed on a new house", "Sam's new place".
    if not any(c.key == "location" for c in claims) and homes and all(_own_home(c) for c in homes):
        for clause in clauses:  # "…the new house! 1290 Sable Ridge Dr, moving in saturday": the address is the new home
            address = meter.scan(_ADDRESS, clause.core, "fullmatch") if clause.whose in ("user", "unknown") else None
            if address is not None and clause.act == "statement":
                claims.append(Claim("location", address.group(0), +1, clause.start, clause.end, True))
                break
    return _pair_updates(claims)


def _own_home(clause: Clause) -> bool:
    return clause.whose != "other" or bool(_WE.match(clause.core))


def _pair_updates(claims: list[Claim]) -> list[Claim]:
    """"不在腾讯了，去了字节": a "no longer" and a "now" in one message are one update of one
    attribute — the new value names the old one, and an unsure attribute takes its partner's."""
    result = list(claims)
    for i, claim in enumerate(result):
        if claim.polarity > 0 and claim.update and claim.old is None:
            before = [c for c in result[:i] if c.polarity < 0 and c.update]
            if before:
                partner = before[-1]
                key = partner.key if claim.key.endswith("?") else claim.key
                result[i] = Claim(key, claim.value, claim.polarity, claim.start, claim.end, True, partner.value)
    return result
