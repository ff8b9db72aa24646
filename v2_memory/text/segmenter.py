"""Sentences, not strings: a message cut into clauses, each with its kind of speech act and its speaker.

Governance used to match whole messages against patterns anchored at their start, so a lead-in
("Hmm, looked at the ticket again — ...") hid a correction and a question without a question mark
became a fact. ``read_message`` reads the way a listener does, in three steps:

1. **cut**: sentences end at 。！？!?；; and line breaks (a "." only before a space or the end, so
   "2.7" and "6.30pm" stay whole); clauses end at commas (not inside a number: "12,000"), colons (not inside a time: "4:30"), dashes, and before a
   conjunction that opens a new clause (但/但是/不过/可是, but/though/whereas);
2. **speech act** of each clause: ``question`` (a question mark, or a question word: 吗/呢/什么/
   哪/来着/是不是..., did/is/what/didn't...), ``conditional`` (如果/要是/…的话/假如, if/unless/
   were I — the whole sentence is hypothetical, unless the condition is put to the listener,
   "…, in case you need it", or bound to its own consequence, "…, she'd hate it if anyone
   knew": then it supposes only itself), ``report`` (someone else's words: 我妈总说,
   听说, my friend says, according to, a motto, a quotation), ``request`` (请/帮我/别, please/can
   you/don't ...) or ``statement``;
3. **whose** clause it is: ``user`` (我/I/my + a thing), ``other`` (我儿子/my girlfriend/他/she/
   we ...), or inherited from the clause before in the same sentence ("我不喝牛奶，但喝豆浆": the
   second clause is still the user's); ``unknown`` when nothing says.

    >>> [(c.core, c.act, c.whose) for c in read_message("我不喝牛奶，但喝豆浆")]
    [('我不喝牛奶', 'statement', 'user'), ('但喝豆浆', 'statement', 'user')]
    >>> [(c.act, c.whose) for c in read_message("我妈总说我不吃辣")]
    [('report', 'other')]
    >>> [c.act for c in read_message("是不是周五来着")]
    ['question']

Every step is linear in the message, and reads at most its first ``READ_LIMIT`` (8,000) characters
(the store keeps all of it): one splitting pass, and each pattern runs on one clause of at
most ``MAX_CLAUSE`` characters (a longer run is cut, since no fact or cue is that long). A
``Meter`` passed in counts the characters each pattern saw, so tests can bound the work.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .memo import text_cache

__all__ = ["Clause", "Meter", "read_message", "strip_lead_in", "reported", "person_of", "ACTS", "MAX_CLAUSE", "READ_LIMIT"]

ACTS = ("statement", "question", "conditional", "report", "request")
MAX_CLAUSE = 240  # characters; a clause longer than this is cut into pieces of this size
READ_LIMIT = 8000  # characters of a message governance reads (the store keeps all of it): no fact hides past them

# Sentence ends; a "." only before whitespace or the end (so "2.7", "6.30pm", "e.g." inside words stay).
_SENTENCE_END = re.compile(r"[。！？!?；;\n]{1,16}|\.(?=\s|$)|…{1,16}")
# Clause ends inside a sentence; and conjunctions that open a new clause (kept with the clause they open).
# A comma between digits that groups thousands ("$2,150", "12,000 steps") ends no clause.
_CLAUSE_END = re.compile(r"[，、（）()“”\"「」][，,、（）()“”\"「」]{0,15}|(?<!\d),[，,、（）()“”\"「」]{0,15}"
                         r"|,(?!\d{3}(?!\d))[，,、（）()“”\"「」]{0,15}|(?<!\d)[：:]{1,8}|[：:]{1,8}(?!\d)|\s[—–-]{1,8}\s|[—–]{1,8}|(?<!\s)\s{1,64}(?=(?:but|though|although|whereas|while|and\s(?:i|my)\b)\b)"
                         r"|(?=但是|但|不过|可是|而且|然后|所以)", re.I)

# Lead-ins a listener skips: interjections, "remember that", "by the way", discourse markers.
_LEAD_IN = re.compile(
    r"^(?:\s|[,，。.!！~～:：]|(?:请|麻烦)?(?:你)?(?:记住|记一下|记着|注意)(?:一下)?|以后|今后|从现在起|对了|另外|顺便(?:说一下|提一下)?|其实|话说|"
    r"嗯+|哦+|噢+|啊+|呃+|唔+|哎+|诶+|嘿+|好吧|那个|不好意思|抱歉|对不起|sorry\b|"
    r"(?:please\s+)?(?:remember|note|keep\s+in\s+mind)(?:\s+that)?\b|from\s+now\s+on\b|fyi\b|btw\b|by\s+the\s+way\b|also\b|"
    r"oh\b|ah\b|um+\b|uh+\b|hmm+\b|well\b|so\b|ok(?:ay)?\b|hey\b|and\b|anyway\b|just\s+so\s+you\s+know\b){1,8}",
    re.I,
)
_ADVERBS_ZH = "现在|已经|再也|也|都|真的|一直|从来|其实|平时|一般|最近|目前|如今|本来|向来|还|就|又|确实|可能|好像|特别|非常|比较|有点"

# -- speech acts ----------------------------------------------------------------------------------
# A question word before 都 or 也 asks nothing: it means "any" ("我什么都吃", "哪儿都不想去",
# "谁也不认识", "怎么也睡不着"), a statement.
_ANY_ZH = r"(?![都也])"
_QUESTION_ZH = re.compile(r"[吗嘛呢么]\s*$|来着|是不是|是否|有没有|会不会|能不能|要不要|(?<!不)对不对|对吧|好不好|行不行|可不可以|"
                          rf"什么{_ANY_ZH}|啥{_ANY_ZH}|哪(?![儿里个种天家]?[都也])|几点|几号|几月|几天|多少{_ANY_ZH}|多久|"
                          rf"怎么{_ANY_ZH}|怎样|为什么|为何|谁{_ANY_ZH}|何时|何地|难道")
_QUESTION_EN = re.compile(
    r"^(?:do|does|did|is|are|was|were|am|can|could|will|would|should|shall|have|has|had|may|might|"
    r"didn'?t|don'?t\s+you|doesn'?t|isn'?t|aren'?t|wasn'?t|weren'?t|won'?t|wouldn'?t|shouldn'?t|can'?t|couldn'?t|haven'?t|hasn'?t|"
    r"what(?!\s+an?\b)|when|where|which|who|whom|whose|why|how)\b"  # "what a day" exclaims, it does not ask
    r"|\b(?:right|correct|isn'?t\s+it|didn'?t\s+i|wasn'?t\s+it|or\s+not|or\s+was\s+it)\s*$|\bi\s+wonder\b|\bnot\s+sure\s+(?:if|whether)\b"
    r"|\bwhether\b|\bremind\s+me\s+(?:what|when|where|which|who|if)\b",
    re.I,
)
_TAG = re.compile(r"(?:对吧|对不对|是吧|是不是|对吗|是吗|没错吧|吧|right|correct|isn'?t\s+it|didn'?t\s+i|don'?t\s+i|ok|okay|yes|no|eh|huh)", re.I)
# "if" after wonder, not sure, ask, check, see … means "whether": "I wonder if I'm gluten intolerant"
# asks, it supposes nothing.
_WHETHER_IF = r"(?<!wonder )(?<!sure )(?<!know )(?<!ask )(?<!asked )(?<!check )(?<!see )(?<!tell me )(?<!decide )"
_CONDITIONAL = re.compile(r"如果|要是|假如|假设|假使|万一|倘若|若是|的话|除非|一旦|"
                          rf"\b(?:{_WHETHER_IF}if|unless|suppose|supposing|imagine|in\s+case|assuming|hypothetical(?:ly)?|were\s+i|had\s+i|would\s+i|i'?d\s+(?:be|have|like|love))\b",
                          re.I)
_FOR_YOU = re.compile(r"(?:if|in\s+case|whenever|should)\s+(?:you|u)(?:'re|\s+are)?\s+(?:ever\s+)?(?:need|want\s+it|suggest|pick|book|plan)"
                      r"|(?:如果|要是|万一)?(?:你|您)(?:要是|如果)?(?:需要|用得上)", re.I)
# A condition with its own consequence before it, in one clause ("she'd kill me if it got out",
# "he gets cranky unless he naps"), or after it ("她知道的话会生气", "孩子要是发烧就吃这个"):
# that clause supposes; the clauses beside it do not depend on it.
_BOUND_CONDITION = re.compile(r"^(?:\S+\s+){2,}(?:if|unless)\s+\S"
                              r"|[\u4e00-\u9fff]{2,}的话[\u4e00-\u9fff]{2,}|(?:要是|如果|万一).{1,30}?[就才便]", re.I)
_REPORT = re.compile(
    # (Not the speaker's own discourse markers built on 说/讲: 说来奇怪, 说实话, 老实说, 说真的, 讲真.)
    r"(?<!老实)(?<!坦白)(?<!实话)(?<!话)(?:总|老|常|经常|一直|也|都|还)?(?:说|讲|告诉我|觉得|认为|以为|提到|表示|声称|嘱咐|叮嘱|要求我)"
    r"(?!错|过|来|实话|真的|白了|起来|回来|到底|真)|听说|据说|据他|据她|传言|座右铭|口头禅|名言|格言"
    r"|\b(?:says?|said|saying|told\s+me|tells\s+me|thinks?|(?<!second\s)thought|believes?|believed|claims?|claimed|insists?|insisted|"
    r"mentioned|according\s+to|motto|quote|quoted|slogan|catchphrase|keeps\s+telling|always\s+tells)\b",
    re.I,
)
# The user's own words, or the user telling the assistant ("跟你说个事", "告诉你", "let me tell you"):
# the reporting verb's speaker is the user and its listener the assistant, so what follows is the
# user's own statement, not someone else's words.
_SELF_REPORT = re.compile(r"^我(?:刚才|之前|早就|已经|不是)?(?:说|讲|告诉过你|提到)|^i\s+(?:already\s+|just\s+)?(?:said|told\s+you|mentioned)\b"
                          r"|^(?:我)?(?:先|再)?(?:跟|和|给|同|对|向)(?:你|您)(?:说|讲|汇报|报告|更新)|^(?:我)?(?:先|再)?告诉(?:你|您)"
                          r"|^(?:let\s+me|i\s+(?:have|need|want|should|must|gotta)\s+(?:to\s+)?)(?:tell|update|inform)\s+you\b"
                          r"|^(?:just\s+)?(?:to\s+)?let(?:ting)?\s+you\s+know\b", re.I)

# The user's own words named as a thing ("forget 我刚才说的那个数字", "delete what I said about
# Marco"): no one else's speech is reported.
_OWN_WORDS = re.compile(r"我(?:刚才|刚刚|之前|上次|前面|早先)?(?:说|讲|提到)(?:过)?的|\bwhat\s+i\s+(?:just\s+)?(?:said|told\s+you|mentioned)\b",
                        re.I)

# -- whose clause it is -----------------------------------------------------------------------------
# People a user talks about: kin, partners, friends, colleagues (a family of nouns, not a phrase list).
_PEOPLE_ZH = ("妈妈|妈|爸爸|爸|母亲|父亲|老妈|老爸|儿子|女儿|孩子|宝宝|娃|老婆|老公|妻子|丈夫|爱人|媳妇|男朋友|女朋友|男友|女友|对象|"
              "朋友|好友|闺蜜|哥们|兄弟|同事|老板|领导|上司|经理|室友|舍友|同学|老师|学生|哥哥|哥|姐姐|姐|弟弟|弟|妹妹|妹|"
              "爷爷|奶奶|外公|外婆|姥姥|姥爷|叔叔|阿姨|舅舅|家人|亲戚|邻居|客户|朋友们|家里人|表哥|表姐|堂哥|侄子|外甥|猫|狗")
_PEOPLE_EN = (r"mom|mother|mum|dad|father|parents?|son|daughter|kids?|children|child|baby|wife|husband|partner|spouse|"
              r"girlfriend|boyfriend|gf|bf|fianc[ée]e?|friends?|buddy|colleagues?|coworkers?|co-workers?|boss|manager|team|"
              r"roommates?|flatmates?|classmates?|teacher|students?|brother|sister|siblings?|grandma|grandmother|grandpa|"
              r"grandfather|uncle|aunt|cousin|family|neighbou?r|clients?|customers?|nephew|niece|cat|dog|doctor|"
              r"in-laws|(?:mother|father|sister|brother|son|daughter)s?-in-law")
# A time adverbial before a clear request does not change what is asked: "周末帮我推荐…",
# "今天先帮我挑…", "tomorrow can you remind me …" ask as much as the bare request. After a time
# word only the unmistakable markers count: "今天请假了", "周末不用上班", "晚上别人都睡了",
# "今天给我发了工资", "tomorrow never comes" state, they do not ask. ("给我妈买了花" is for
# someone; "请假", "请客", "别人", "不要紧" ask nothing wherever they stand.)
_WHEN_ZH = (r"(?:你)?(?:(?:每|这|下|本|下个)?(?:周|星期|礼拜)[一二三四五六日天末]?|(?:每|这|下)个?月(?:底|初)?|每天|每晚|每早|"
            r"今天|明天|后天|今晚|明晚|今早|明早|早上|晚上|中午|上午|下午|以后|今后|之后|回头|到时候?|有空(?:的时候)?|下次|平时|"
            r"待会儿?|等会儿?|一会儿?|现在|马上){1,2}(?:先|再|就|也|都)?")
_WHEN_EN = (r"(?:tomorrow|today|tonight|later(?:\s+today)?|this\s+(?:weekend|week|morning|afternoon|evening)|"
            r"next\s+(?:week|time|month)|every\s+(?:day|morning|evening|night|week)|from\s+now\s+on|going\s+forward|"
            r"in\s+the\s+future)[,\s]{1,3}")
# A bare imperative asks the assistant for a piece of work: "explain a Roth IRA", "summarize Hamlet",
# "讲个笑话", "来个20分钟的锻炼计划", "推荐几本书". Only verbs of asking for work, in their base
# form, and (Chinese) followed by what is asked for: "plan to visit Rome", "book club is on
# Thursday", "说个事" stay statements.
_IMPERATIVE_EN = (r"(?:explain|summari[sz]e|suggest|recommend|write|give\s+me|tell\s+me|translate|compare|describe|draft|"
                  r"generate|create|teach\s+me|calculate|convert|brainstorm|outline|rewrite|proofread|define)(?![\w-])(?!\s+(?:is|was|are|were)\b)")
_IMPERATIVE_ZH = (r"(?:讲|来|推荐|介绍|解释|翻译|写|总结|列|算|比较|讲讲|说说|聊聊|科普)"
                  r"(?:一?个|一下|一首|一篇|一份|一段|几[个本首部条篇道样种]?|点|些|首|篇|份|段|道)")
_REQUEST = re.compile(rf"^(?:请(?!假|客)|麻烦|帮我|帮忙|给我(?!(?:{_PEOPLE_ZH}))|提醒我|记得|别(?!人)|不要(?!紧)|不用|甭|让我们|咱们)"
                      rf"|^{_IMPERATIVE_ZH}|^{_IMPERATIVE_EN}"
                      rf"|^{_WHEN_ZH}(?:帮我|帮忙|麻烦|提醒我|请你|你别|别再|不要再|不用再|记得)"
                      r"|^(?:please|can\s+you|could\s+you|would\s+you|help\s+me|remind\s+me|tell\s+me|let'?s|don'?t|do\s+not|never|stop)\b"
                      rf"|^{_WHEN_EN}(?:please|can\s+you|could\s+you|would\s+you|help\s+me|remind\s+me|tell\s+me|don'?t|do\s+not)\b",
                      re.I)
_OTHER_ZH = re.compile(rf"^(?:我们|咱们|你|您|他|她|它|大家|别人|有人|人家|对方|某人)|^(?:我的?|你的?|他的?|她的?)?(?:{_PEOPLE_ZH})")
_USER_ZH = re.compile(rf"^(?:我(?!们)|本人|自己|叫我)")
_OTHER_EN = re.compile(rf"^(?:(?:my|our|your|his|her|their|a|the)\s+(?:best\s+|old\s+|new\s+|little\s+|older\s+|younger\s+)?(?:{_PEOPLE_EN})\b"
                       rf"|(?:we|you|he|she|they|it|everyone|someone|somebody|people|nobody)\b|[A-Z][a-z]+\s+(?:says?|said|likes?|loves?|uses?|eats?|thinks?|hates?|prefers?)\b"
                       # a named person's thing ("Sofia's car"), not a contraction ("It's", "Today's")
                       rf"|(?!(?:it|that|there|here|what|who|where|when|how|let|he|she|today|tomorrow|yesterday|tonight|everyone|nobody)'s)(?-i:[A-Z][a-z]{{1,20}})'s\s)",
                       re.I)
_CONNECTIVE = re.compile(rf"^(?:(?:{_ADVERBS_ZH}|但是?|不过|可是|而且|然后|所以)+|(?:but|though|and|so|also|now)\b)\s*", re.I)
# "ours"/"our room" is the user's own (the user is one of "us"); "we" acting stays someone else's.
_USER_EN = re.compile(r"^(?:call\s+me\b|i\b|i'm\b|i've\b|i'd\b|i'll\b|im\b|me\b|myself\b|my\b|mine\b|ours\b|our\b)", re.I)


@dataclass
class Meter:
    """Counts the characters every pattern was run over, so a test can prove the work is linear."""

    chars: int = 0
    calls: int = 0

    def scan(self, pattern: re.Pattern[str], text: str, how: str = "search") -> re.Match[str] | None:
        self.chars += len(text)
        self.calls += 1
        return getattr(pattern, how)(text)


@dataclass(frozen=True)
class Clause:
    """One clause of a message: its text and position, what kind of speech act it is, and whose."""

    text: str  # as written
    start: int  # offsets into the message: message[start:end] == text
    end: int
    sentence: int  # index of the sentence holding it
    core: str  # the text without lead-ins ("嗯，记住" / "btw"), what rules read
    act: str = "statement"
    whose: str = "unknown"  # user | other | unknown
    flags: frozenset[str] = field(default_factory=frozenset)  # e.g. "quoted"; "condition": it holds the if


def reported(core: str) -> str:
    """The words a report says someone said: what follows its reporting verb (the whole ``core``
    when it has none).

    >>> reported("老师说钢琴课调到周日了"), reported("the teacher said that piano moved to Sunday")
    ('钢琴课调到周日了', 'piano moved to Sunday')
    """
    match = _REPORT.search(core[:READ_LIMIT])
    return _THAT.sub("", core[match.end():]).strip() if match else core


_THAT = re.compile(r"^[\s,，:：]{0,4}(?:that\s)?", re.I)


def strip_lead_in(text: str, meter: Meter | None = None) -> str:
    """``text`` without the interjections and discourse markers a listener skips.

    >>> strip_lead_in("嗯，记住我不吃香菜"), strip_lead_in("Oh btw, I use a Mac")
    ('我不吃香菜', 'I use a Mac')
    """
    meter = meter or Meter()
    match = meter.scan(_LEAD_IN, text, "match")
    return text[match.end():].strip() if match else text.strip()


def _pieces(text: str, pattern: re.Pattern[str], offset: int, meter: Meter) -> list[tuple[int, int]]:
    """Spans of ``text`` between the separators ``pattern`` finds (non-empty, whitespace-trimmed)."""
    spans, last = [], 0
    meter.chars += len(text)
    meter.calls += 1
    for match in pattern.finditer(text):
        spans.append((last, match.start()))
        last = max(match.end(), last)
        if match.end() == match.start():
            last = match.start()
    spans.append((last, len(text)))
    result = []
    for start, end in spans:
        # Trim whitespace and cut runs longer than MAX_CLAUSE, so every later pattern sees a bounded text.
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        for cut in range(start, end, MAX_CLAUSE):
            result.append((offset + cut, offset + min(end, cut + MAX_CLAUSE)))
    return [(s, e) for s, e in result if e > s]


_PERSON = re.compile(rf"^(?:我的?|我家的?)(?:{_PEOPLE_ZH})|^(?:my|our)\s+(?:best\s+|old\s+|little\s+|older\s+|younger\s+)?(?:{_PEOPLE_EN})\b", re.I)


def person_of(core: str) -> str | None:
    """The person a clause is about when it opens with one of the user's people ("我儿子", "my
    daughter"), normalised so "我的儿子" and "我儿子" are one person; else None.

    >>> person_of("我的儿子升初三了"), person_of("My daughter is in grade 4"), person_of("我升职了")
    ('儿子', 'daughter', None)
    """
    match = _PERSON.match(_CONNECTIVE.sub("", core, count=1))
    if match is None:
        return None
    return re.sub(r"^(?:我的?|我家的?|my\s+|our\s+)(?:best\s+|old\s+|little\s+|older\s+|younger\s+)?", "", match.group(0), flags=re.I).casefold()


def _whose(core: str, inherited: str, meter: Meter) -> str:
    body = _CONNECTIVE.sub("", core, count=1)
    if meter.scan(_OTHER_ZH, body, "match") or meter.scan(_OTHER_EN, body, "match"):
        return "other"
    if meter.scan(_USER_ZH, body, "match") or meter.scan(_USER_EN, body, "match"):
        return "user"
    return inherited


def _act(core: str, whole: str, meter: Meter) -> str:
    """The clause's speech act; ``whole`` is the clause as written (it may end in "?")."""
    # "can you book a table" asks for something: a request before a question.
    if meter.scan(_REQUEST, core, "match"):
        return "request"
    if meter.scan(_QUESTION_ZH, core) or meter.scan(_QUESTION_EN, core):
        return "question"
    if meter.scan(_REPORT, _OWN_WORDS.sub(" ", core)) and not meter.scan(_SELF_REPORT, core):
        return "report"
    return "statement"


def _read_sentence(message: str, start: int, end: int, index: int, meter: Meter) -> list[Clause]:
    sentence = message[start:end]
    terminator = message[end:end + 1]
    spans = _pieces(sentence, _CLAUSE_END, start, meter)
    clauses: list[Clause] = []
    whose = "unknown"
    for s, e in spans:
        text = message[s:e]
        core = strip_lead_in(text, meter)
        if not core:
            continue
        whose = _whose(core, whose, meter)
        clauses.append(Clause(text, s, e, index, core, _act(core, text, meter), whose))
    return _sentence_wide(clauses, sentence, terminator, meter)


def _sentence_wide(clauses: list[Clause], sentence: str, terminator: str, meter: Meter) -> list[Clause]:
    """Acts that hold for the whole sentence: a hypothesis, someone's words, a question mark."""
    if not clauses:
        return clauses
    # subtle: "如果明天下雨，我就不去了" — the consequence is as hypothetical as the condition.
    supposes = [bool(meter.scan(_CONDITIONAL, c.core)) for c in clauses]
    # A condition put to the listener ("…, in case you need it", "…, if you're ever picking a
    # place", "你要是需要的话") or bound in its clause to its own consequence ("…, she'd kill me if
    # it got out") supposes only itself: what the speaker said beside it stays said.
    for_you = [holds and bool(meter.scan(_FOR_YOU, c.core, "match") or meter.scan(_BOUND_CONDITION, c.core))
               for c, holds in zip(clauses, supposes)]
    if any(supposes) and not all(supposes) and all(y for y, h in zip(for_you, supposes) if h):
        return [_with(c, "conditional", flags=c.flags | {"condition"}) if holds else c for c, holds in zip(clauses, supposes)]
    if any(supposes):  # the clause that holds the condition is marked: "condition"
        return [_with(c, "conditional", flags=c.flags | {"condition"} if holds else c.flags)
                for c, holds in zip(clauses, supposes)]
    # Reported speech covers what follows the reporting verb ("我妈总说，我不吃辣").
    for i, clause in enumerate(clauses):
        if clause.act == "report":
            clauses = clauses[:i] + [_with(c, "report", "other") for c in clauses[i:]]
            break
    if terminator in "?？" and terminator:
        # "我用Mac，你呢？": an earlier clause with its own first-person subject stays a statement.
        last = clauses[-1]
        # A tag ("…, right?", "…，对吧？") asks about the whole sentence; "你呢？" asks about someone else.
        tag = bool(meter.scan(_TAG, last.core, "fullmatch"))
        asked = [c for c in clauses[:-1] if tag or not (c.whose == "user" and last.act == "question" and c.act == "statement")]
        return [_with(c, "question") if c in asked else c for c in clauses[:-1]] + [_with(last, "question")]
    return clauses


def _with(clause: Clause, act: str, whose: str | None = None, flags: frozenset[str] | None = None) -> Clause:
    if clause.act == "report" and act != "conditional":
        return clause
    return Clause(clause.text, clause.start, clause.end, clause.sentence, clause.core, act,
                  whose or clause.whose, clause.flags if flags is None else flags)


def read_message(text: str, meter: Meter | None = None) -> list[Clause]:
    """The clauses of ``text``, in order, each with its speech act and speaker (see module docstring)."""
    if not isinstance(text, str):
        raise TypeError(f"read_message() expects str, got {type(text).__name__}")
    if meter is None:  # the write policy and the summarizer read one message several times
        return list(_read_message_once(text))
    return _read(text, meter)


@text_cache(maxsize=1024)
def _read_message_once(text: str) -> tuple[Clause, ...]:
    return tuple(_read(text, Meter()))


def _read(text: str, meter: Meter) -> list[Clause]:
    text = text[:READ_LIMIT]  # the offsets stay those of the whole message
    clauses: list[Clause] = []
    for index, (start, end) in enumerate(_sentence_spans(text, meter)):
        clauses.extend(_read_sentence(text, start, end, index, meter))
    return clauses


def _sentence_spans(text: str, meter: Meter) -> list[tuple[int, int]]:
    """Sentence spans, trimmed; not cut at MAX_CLAUSE (clauses are)."""
    meter.chars += len(text)
    meter.calls += 1
    spans, last = [], 0
    for match in _SENTENCE_END.finditer(text):
        spans.append((last, match.start()))
        last = match.end()
    spans.append((last, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]
