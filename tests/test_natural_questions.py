"""Natural questions find the memories a person would call obviously relevant (BM25, threshold 0.2).

A question is mostly words no memory holds: question words (什么时候, 哪, 谁, 吗, "what time",
"how long"), particles (呢, 来着), and phrasing ("getting married" for a "wedding"). The BM25 scorer
must not be punished for them: it normalises against what the query can match, drops question
words with the function characters touching them, and never makes a bigram across a question
word. Each pair below is a question and the memory that answers it, stored among one user's other
memories (every pair's memory, plus everyday chatter); each must score >= 0.2 and come first.
The non-matches share only what a question shares with everything — question words, particles,
function words, a bigram across a question word — and must stay below 0.2.
"""
from __future__ import annotations

import pytest

from v2_memory import JsonVectorStore, MemoryManager, Message
from v2_memory.text.analyzer import analyze

THRESHOLD = 0.2

# (question, the memory that answers it): written for this test, in both languages.
PAIRS = [
    ("钢琴课是什么时候", "我女儿的钢琴课改到每周六下午三点了。"),
    ("周五跟谁吃饭来着", "周五晚上七点和老王在海底捞吃饭。"),
    ("我的护照放哪了", "护照放在书房左边第二个抽屉里。"),
    ("牙医预约是几点", "牙医预约在下周二上午十点。"),
    ("我儿子对什么过敏呢", "我儿子对花生过敏，千万别给他吃。"),
    ("公司年会在哪里举行", "公司年会定在浦东的香格里拉酒店。"),
    ("上次推荐的那本书叫什么来着", "朋友推荐我读《百年孤独》这本书。"),
    ("妈妈的生日是哪天", "妈妈的生日是十月十二号。"),
    ("怎么去机场最快", "去机场坐地铁二号线最快。"),
    ("车停在哪个停车场了", "车停在商场地下二层的停车场B区。"),
    ("体检报告出来了吗", "体检报告已经出来了，血脂有点高。"),
    ("房租每个月交多少", "房租每月四千五，每月五号交。"),
    ("where is my sister getting married", "My sister's wedding is in Lisbon on September 14."),
    ("what time is my flight to Berlin", "The flight to Berlin leaves at 6:40 on Friday morning."),
    ("when is the dentist appointment", "Dentist appointment moved to Thursday 3pm."),
    ("what is the name of our neighbour's dog", "Our neighbour's dog is called Biscuit."),
    ("how long is the drive to grandma's house", "The drive to grandma's house takes about two hours."),
    ("who is picking up the kids on Wednesday", "Tom picks up the kids from school every Wednesday."),
    ("which restaurant did we book for the anniversary", "We booked Nobu for our anniversary dinner."),
    ("what did the doctor say about my knee", "The doctor said my knee needs six weeks of physiotherapy."),
    ("how many pills should I take each day", "Take two of the blue pills a day, with food."),
    ("where did I park the car?", "I parked the car on level 3 of the airport garage."),
    ("when does the gym close on Sundays", "The gym closes at 8pm on Sundays."),
    ("how do I reset the router", "To reset the router, hold the button on the back for ten seconds."),
]

# Everyday chatter of the same user: vocabulary that is no answer to any question above.
CHATTER = [
    "明天要交季度报告。", "我的猫叫咪咪，三岁了。", "最近在读《三体》。", "今天下雨了，心情一般。",
    "I started learning Spanish last month.", "My car needs new tires before winter.",
    "Had a great time at the beach today!", "The kids loved the science museum.",
]

# (question, a memory that is no answer: it shares only question words, particles, function
# words or a bigram across a question word with it). Checked among the chatter.
NON_MATCHES = [
    ("钢琴课是什么时候", "这门课是什么时候都能选的。"),  # shares 课是什么时候: no topic
    ("周五跟谁吃饭来着", "你跟谁都合得来。"),  # 跟谁
    ("我的护照放哪了", "我的钥匙放哪了？"),  # 我的, 放哪了: another thing lost
    ("妈妈的生日是哪天", "你是哪天到的？"),  # 是哪天
    ("体检报告出来了吗", "你吃了吗？"),  # 了吗
    ("房租每个月交多少", "多少都行。"),  # 多少
    ("怎么去机场最快", "你怎么了？"),  # 怎么
    ("公司年会在哪里举行", "你在哪里呢？"),  # 在哪里
    ("what time is my flight to Berlin", "What time is it?"),  # what time
    ("when is the dentist appointment", "When is it ever enough?"),  # when is
    ("where is my sister getting married", "Where is it?"),  # where is
    ("how long is the drive to grandma's house", "How long has it been?"),  # how long
    ("who is picking up the kids on Wednesday", "Who is that?"),  # who is
    ("what did the doctor say about my knee", "What did you say?"),  # what did ... say: "say"
]


def _store(memories: list[str]) -> JsonVectorStore:
    store = JsonVectorStore(None, scorer="bm25")
    for text in memories:
        store.add("u", "user", text)
    return store


def _score_of(store: JsonVectorStore, question: str, memory: str) -> float:
    hits = store.search(question, "u", top_k=len(store.records("u")))
    return next(score for score, record in hits if record["content"] == memory)


@pytest.fixture(scope="module")
def history() -> JsonVectorStore:
    return _store([memory for _, memory in PAIRS] + CHATTER)


@pytest.mark.parametrize("question, memory", PAIRS)
def test_a_natural_question_finds_its_memory_first_and_above_the_threshold(history, question, memory):
    hits = history.search(question, "u", top_k=3, threshold=THRESHOLD)
    assert hits, f"nothing passes {THRESHOLD} for {question!r}"
    assert hits[0].record["content"] == memory, [(round(s, 3), r["content"]) for s, r in hits]


@pytest.mark.parametrize("question, memory", PAIRS)
def test_a_natural_question_finds_its_memory_alone_too(question, memory):
    """A user whose only memory answers the question: every other query word is one the user never wrote."""
    assert _score_of(_store([memory]), question, memory) >= THRESHOLD


@pytest.mark.parametrize("question, memory", NON_MATCHES)
def test_sharing_only_question_and_function_words_is_no_match(question, memory):
    assert _score_of(_store([memory] + CHATTER), question, memory) < THRESHOLD


def test_every_non_match_does_share_text_with_its_question():
    """The non-matches are near misses for a naive scorer: the article's cosine matches most of them."""
    store = JsonVectorStore(None)  # the article's scorer
    for question, memory in NON_MATCHES:
        store.add("u", "user", memory)
    shared = [store.score(q, i + 1, "u") > 0 for i, (q, _) in enumerate(NON_MATCHES)]
    assert sum(shared) >= len(NON_MATCHES) // 2


def test_no_bigram_straddles_a_question_word():
    """The class, not the examples: for every Chinese question word, a question "X<word>Y" gives no
    bigram holding a character of the word, nor one of the function characters touching it."""
    from v2_memory.text.analyzer import QUESTION_WORDS_ZH
    for word in QUESTION_WORDS_ZH:
        terms = analyze(f"钢琴课是{word}在上")
        assert terms[:2] == ["钢琴", "琴课"], (word, terms)
        assert not any(set(term) & set(word) for term in terms), (word, terms)
        assert not any("是" in term for term in terms), (word, terms)


def test_english_question_phrases_lose_their_asking_word():
    assert analyze("What time is the meeting?") == analyze("the meeting") == ["meet"]
    assert analyze("How long is the drive?") == ["drive"]
    assert analyze("It took a long time") == ["took", "long", "time"]  # not asking: kept


@pytest.mark.parametrize("question, memory", PAIRS[:3] + PAIRS[12:13])
def test_the_manager_admits_them_at_its_default_threshold(question, memory):
    """Through MemoryManager (governance on, threshold 0.2) with the BM25 scorer."""
    memory_manager = MemoryManager(store_path=None, scorer="bm25", window_size=1)
    for text in CHATTER[:4] + [memory] + CHATTER[4:]:
        memory_manager.add(Message("user", text))
    admitted = [a.record["content"] for a in memory_manager.explain(question) if a.admitted]
    assert memory in admitted


def test_the_readme_scorer_advice_holds_through_the_manager():
    """README, *Which scorer*: with scorer="bm25" a natural question's memory enters the context at
    the default threshold; with the article's scorer it does not."""
    from v2_memory import MemoryManager, Message

    memory_text = "我女儿的钢琴课改到每周六下午三点了。"
    contexts = {}
    for scorer in ("bm25", "article"):
        with MemoryManager(store_path=None, scorer=scorer, window_size=1) as memory:
            memory.add(Message("user", memory_text, "ann"))
            memory.add(Message("user", "今天天气不错", "ann"))  # the memory leaves the window
            contexts[scorer] = memory.build_context("钢琴课是什么时候", "ann")
    def retrieved(context: str) -> bool:  # a "memory(score×weight): ..." line, not the summary's echo
        return any(line.startswith("memory(") and line.endswith(memory_text) for line in context.splitlines())

    assert retrieved(contexts["bm25"]) and not retrieved(contexts["article"])
