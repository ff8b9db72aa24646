"""Scorers: the cleaned tokenizer, BM25 by hand, and every index held to its brute-force reference.

"Exactly" means exactly here: the index adds each record's BM25 parts in the query's term order,
as the reference does, so scores are compared with ``==`` (bitwise), not approximately.
"""
from __future__ import annotations

import json
import math
import re
import unicodedata

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from v2_memory import JsonVectorStore
from v2_memory.text.analyzer import analyze, stem
from v2_memory.retrieval.scorers import ArticleScorer, Bm25Scorer, Scorer, indexed_text, rank, resolve_scorer

# -- the cleaned tokenizer ------------------------------------------------------------------------


def test_analyze_folds_case_and_punctuation_and_drops_stop_words():
    assert analyze("The CAT, the cat; the cat!") == ["cat", "cat", "cat"]
    assert analyze("Is it? It is.") == []  # nothing but stop words
    assert analyze("Ｃａｆé ＡＢＣ１２３") == ["café", "abc123"]  # NFKC: full-width letters and digits


def test_analyze_keeps_cjk_bigrams_and_splits_them_from_latin_words():
    assert analyze("记忆污染") == ["记忆", "忆污", "污染"]
    assert analyze("帮我check一下agent") == ["帮我", "check", "agent"]  # 一下 is a function bigram
    assert analyze("我") == ["我"]  # a lone character is its own term


def test_stem_meets_the_forms_of_a_word_and_leaves_short_words_alone():
    assert {stem(w) for w in ["paint", "paints", "painted", "painting", "paintings"]} == {"paint"}
    assert {stem(w) for w in ["love", "loved", "loving", "loves"]} == {"love"}
    assert {stem(w) for w in ["inspire", "inspired", "inspiring", "inspiration"]} == {"inspir"}  # derived forms too
    assert {stem(w) for w in ["help", "helped", "helpful", "helping"]} == {"help"}
    assert [stem(w) for w in ["bus", "glass", "thing", "need", "2023", "naïve"]] == ["bus", "glass", "thing", "need",
                                                                                       "2023", "naïve"]


# -- BM25 by hand ---------------------------------------------------------------------------------


def test_bm25_worked_example_by_hand():
    """The docstring's example. Records as terms: [lov, coffee], [coffee, coffee], [tea, time];
    N = 3, avgdl = 2, so K = k1 (1 - b + b * 2/2) = 1.2 for all. Query [coffee, time]:
    idf(coffee) = ln(1 + 1.5/2.5), idf(time) = ln(1 + 2.5/1.5), bound = 2.2 (idf(coffee) + idf(time)).
    """
    idf_coffee, idf_time = math.log(1 + 1.5 / 2.5), math.log(1 + 2.5 / 1.5)
    bound = 2.2 * (idf_coffee + idf_time)
    expected = [2.2 * idf_coffee * 1 / (1 + 1.2) / bound,  # "I love coffee": tf 1
                2.2 * idf_coffee * 2 / (2 + 1.2) / bound,  # "Coffee, coffee!": tf 2 saturates
                2.2 * idf_time * 1 / (1 + 1.2) / bound]  # "tea time": the rarer term weighs more
    scores = Bm25Scorer().score_texts("coffee time?", ["I love coffee", "Coffee, coffee!", "tea time"])
    assert scores == pytest.approx(expected, rel=1e-12)
    assert [round(s, 3) for s in scores] == [0.147, 0.202, 0.307]


def test_every_query_term_once_at_average_length_scores_one_over_k1_plus_one():
    """tf = 1 and dl = avgdl make each part weight / (1 + k1): the score is 1 / (k1 + 1) whatever
    the idf. That is the scale thresholds are read on: 0.4545 for k1 = 1.2, 0.4 for k1 = 1.5."""
    texts = ["red apple", "green pear", "blue plum"]
    assert Bm25Scorer().score_texts("red apple", texts)[0] == pytest.approx(1 / 2.2)
    assert Bm25Scorer(k1=1.5).score_texts("red apple", texts)[0] == pytest.approx(1 / 2.5)


def test_query_terms_the_user_never_wrote_change_no_score():
    """The bound counts what the query can match: "unicorn" is in none of this user's records, so
    no record could hold it, and asking with it changes nothing."""
    texts = ["red apple", "green pear"]
    assert Bm25Scorer().score_texts("red apple unicorn", texts) == Bm25Scorer().score_texts("red apple", texts)
    assert Bm25Scorer().score_texts("the of and", texts) == [0.0, 0.0]  # no terms left: nothing matches
    assert Bm25Scorer().score_texts("unicorn", texts) == [0.0, 0.0]  # nothing this user wrote: nothing matches


def test_query_terms_the_user_did_write_still_lower_records_without_them():
    texts = ["red apple", "green pear", "red wine"]
    alone, with_pear = (Bm25Scorer().score_texts(query, texts)[0] for query in ("red apple", "red apple pear"))
    assert with_pear < alone  # "pear" is in this user's vocabulary: a record could have held it


def test_scorers_are_chosen_by_name_or_instance():
    assert isinstance(resolve_scorer(None), ArticleScorer)
    assert resolve_scorer("bm25") == Bm25Scorer()
    custom = Bm25Scorer(k1=1.5, b=0.5)
    assert resolve_scorer(custom) is custom and isinstance(custom, Scorer)
    with pytest.raises(ValueError, match="unknown scorer"):
        resolve_scorer("tfidf")
    with pytest.raises(TypeError):
        resolve_scorer(42)  # type: ignore[arg-type]
    for bad in ({"k1": -1}, {"b": 1.5}, {"k1": math.inf}, {"b": float("nan")}):
        with pytest.raises(ValueError):
            Bm25Scorer(**bad)
    with pytest.raises(TypeError):
        Bm25Scorer(k1="1.2")  # type: ignore[arg-type]


# -- the store with a scorer ------------------------------------------------------------------------


@pytest.fixture(params=["memory", "file"])
def bm25_store(request, tmp_path):
    path = None if request.param == "memory" else tmp_path / "store.json"
    with JsonVectorStore(path, scorer="bm25") as store:
        yield store


def test_default_store_keeps_the_article_scorer():
    store = JsonVectorStore(None)
    assert isinstance(store.scorer, ArticleScorer)
    store.add("u", "user", "如何治理记忆污染")
    assert round(store.search("记忆污染 阈值 Agent", "u")[0].score, 3) == 0.354


def test_bm25_threshold_is_inclusive_and_blind_search_fills_with_zeros(bm25_store):
    for text in ["apple pie", "banana bread", "cherry jam", "apple tart"]:
        bm25_store.add("u", "user", text)
    hits = bm25_store.search("apple", "u", top_k=4)
    assert [r["content"] for _, r in hits] == ["apple pie", "apple tart", "banana bread", "cherry jam"]
    assert hits[0].score == hits[1].score > 0 and hits[2].score == hits[3].score == 0.0  # ties: insertion order
    exact = hits[0].score
    assert [r["content"] for _, r in bm25_store.search("apple", "u", top_k=4, threshold=exact)] == ["apple pie", "apple tart"]
    assert bm25_store.search("apple", "u", top_k=4, threshold=math.nextafter(exact, 1.0)) == []


def test_index_text_is_searched_but_the_hit_is_the_record_itself(tmp_path):
    path = tmp_path / "store.json"
    with JsonVectorStore(path, scorer="bm25") as store:
        added = store.add("ann", "user", "Yes, it was amazing!", index_text="Did you enjoy the Paris trip?", turn=3)
        store.add("ann", "user", "My cat is called Tom.")
        store.add("ann", "user", "No extra text here", index_text="  ")  # blank: the same as none
    assert added["index_text"] == "Did you enjoy the Paris trip?" and added["turn"] == 3
    with JsonVectorStore(path, scorer="bm25") as reopened:  # kept in the record: survives reopening
        score, record = reopened.search("trip to Paris", "ann", top_k=1)[0]
        assert record["content"] == "Yes, it was amazing!" and score > 0
        assert "index_text" not in reopened.records("ann")[2]
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"format": "v2_memory.json_store", "version": 1, "next_id": 1}  # no scorer in the file
    with pytest.raises(TypeError):
        JsonVectorStore(None).add("ann", "user", "x", index_text=5)  # type: ignore[arg-type]


def test_one_file_answers_for_each_scorer_and_reopens_the_same(tmp_path):
    path = tmp_path / "store.json"
    texts = ["I painted a sunrise by the lake", "Painting sunsets relaxes me", "We went camping", "the lake was cold"]
    with JsonVectorStore(path, scorer="bm25") as store:
        for text in texts:
            store.add("mel", "user", text)
        before = store.search("paintings of the lake", "mel", top_k=4)
    with JsonVectorStore(path, scorer=Bm25Scorer()) as again:
        assert again.search("paintings of the lake", "mel", top_k=4) == before
    with JsonVectorStore(path) as article:  # same records, read by the article's cosine
        assert article.search("paintings of the lake", "mel", top_k=4) == rank(ArticleScorer(), "paintings of the lake",
                                                                               article.records("mel"), 4)


def test_deleting_a_record_recounts_the_statistics(bm25_store):
    for text in ["rare word here", "common words", "common words again", "common ground"]:
        bm25_store.add("u", "user", text)
    bm25_store.search("common rare", "u")  # build the index, then change the partition under it
    bm25_store.delete(2)
    expected = rank(bm25_store.scorer, "common rare", bm25_store.records("u"), 3)
    assert bm25_store.search("common rare", "u") == expected


def test_tenants_keep_their_own_statistics():
    store = JsonVectorStore(None, scorer="bm25")
    store.add("u", "user", "coffee at noon", tenant_id="t1")
    for _ in range(5):
        store.add("u", "user", "coffee again", tenant_id="t2")
    alone = JsonVectorStore(None, scorer="bm25")
    alone.add("u", "user", "coffee at noon")
    assert store.search("coffee noon", "u", tenant_id="t1")[0].score == alone.search("coffee noon", "u")[0].score


# -- hypothesis: every fast path against its slow reference -----------------------------------------

_WORDS = ["Paint", "painted", "paintings", "coffee", "the", "is", "Lake", "lakes", "run", "running", "trip!",
          "Paris,", "it's", "2023", "记忆", "污染", "阈值", "咖啡", "我们", "项目", "会议", "agent", "Agent?", "，"]
_texts = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=8).map(" ".join)
_record = st.tuples(st.sampled_from(["alice", "bob", "carol"]), _texts, st.one_of(st.none(), _texts))
_corpus = st.lists(_record, min_size=1, max_size=25)
_threshold = st.one_of(st.none(), st.just(0.0), st.floats(min_value=0.0, max_value=1.0))
_scorer = st.sampled_from([ArticleScorer(), Bm25Scorer(), Bm25Scorer(k1=0.0, b=0.0), Bm25Scorer(k1=2.0, b=1.0)])
_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _fill(store: JsonVectorStore, corpus: list) -> None:
    for user, text, extra in corpus:
        store.add(user, "user", text, index_text=extra)


def _as_pairs(hits: list) -> list[tuple[float, int]]:
    return [(score, record["record_id"]) for score, record in hits]


@_SETTINGS
@given(scorer=_scorer, first=_corpus, later=_corpus, query=_texts, top_k=st.integers(1, 30), threshold=_threshold)
def test_index_returns_exactly_the_brute_force_ranking(scorer, first, later, query, top_k, threshold):
    """Bitwise-equal scores, same records, same order, for every user — both when the index is
    built from scratch and after it was kept up to date through more adds."""
    store = JsonVectorStore(None, scorer=scorer)
    for corpus in (first, later):
        _fill(store, corpus)
        for user in store.users():
            got = store.search(query, user, top_k=top_k, threshold=threshold)
            expected = rank(scorer, query, store.records(user), top_k, threshold)
            assert _as_pairs(got) == _as_pairs(expected)
            assert all(0.0 <= score <= 1.0 for score, _ in got)
            # One record's score, as an identifier match asks for it, is the score search gives it.
            assert all(store.score(query, record["record_id"], user) == score for score, record in got)


@_SETTINGS
@given(mine=st.lists(st.tuples(_texts, st.one_of(st.none(), _texts)), min_size=1, max_size=15),
       theirs=st.lists(st.tuples(_texts, st.one_of(st.none(), _texts)), min_size=1, max_size=15),
       query=_texts, interleave=st.booleans())
def test_another_users_records_never_change_a_users_scores(mine, theirs, query, interleave):
    """Per-user statistics: user A's BM25 scores are the same, bit for bit, whether or not user B
    wrote anything — before or among A's records."""
    alone, shared = JsonVectorStore(None, scorer="bm25"), JsonVectorStore(None, scorer="bm25")
    for text, extra in mine:
        alone.add("A", "user", text, index_text=extra)
    a_records, b_records = [("A", m) for m in mine], [("B", t) for t in theirs]
    if interleave:  # B, A, B, A, ...
        order = [item for i in range(max(len(mine), len(theirs))) for item in b_records[i:i + 1] + a_records[i:i + 1]]
    else:  # all of B first
        order = b_records + a_records
    for user, (text, extra) in order:
        shared.add(user, "user", text, index_text=extra)
    before = [(s, r["content"]) for s, r in alone.search(query, "A", top_k=len(mine))]
    after = [(s, r["content"]) for s, r in shared.search(query, "A", top_k=len(mine))]
    assert before == after


def test_score_of_one_record_needs_the_record_and_its_owner():
    store = JsonVectorStore(None, scorer="bm25")
    store.add("u", "user", "apple pie")
    store.add("u", "user", "banana")
    assert store.score("apple", 2, "u") == 0.0 and store.score("apple", 1, "u") > 0
    assert store.score("apple", 99, "u") is None
    assert store.score("apple", 1, "someone-else") is None  # never across the user boundary
    with pytest.raises(TypeError):
        store.score(None, 1, "u")  # type: ignore[arg-type]


def test_indexed_text_joins_content_and_index_text():
    assert indexed_text({"content": "Yes!"}) == "Yes!"
    assert indexed_text({"content": "Yes!", "index_text": "Paris trip"}) == "Yes!\nParis trip"
    assert indexed_text({"content": "Yes!", "index_text": ["not", "text"]}) == "Yes!"  # a hand-edited file


# -- the analyzer's loop reads each piece's kind from findall (no second match per piece) ----------
def _reference_terms(text: str) -> list[str]:
    """The analyzer's loop as first written: one regex match per piece to tell a CJK run."""
    from v2_memory.text import analyzer as A
    cjk = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    terms, asking, framing = [], frozenset(), frozenset()
    for piece in re.findall(rf"[{cjk}]+|[^\W_{cjk}]+", unicodedata.normalize("NFKC", text).casefold()):
        if re.match(rf"[{cjk}]", piece):
            terms.extend(A._cjk_terms(piece))
        elif piece not in A.STOP_WORDS and piece not in asking and piece not in framing:
            terms.append(A.stem(piece))
        asking = A._ASKING_PAIRS.get(piece, frozenset())
        framing = A.FRAME_VERBS if piece in A._WH_WORDS else framing
    return terms


_ANALYZER_WORDS = ["what", "time", "how", "long", "did", "the", "doctor", "say", "said", "about", "my", "knee",
                   "which", "one", "paintings", "painted", "钢琴课", "是什么时候", "我的", "猫", "吗", "ｶﾀｶﾅ", "ひらがな",
                   "Ａ１", "don't", "it's", "tell", "me", "when", "2024", "_x_", "Café", "naïve", "ß", "?", "，", " ", "\n"]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(_ANALYZER_WORDS), max_size=20).map(" ".join))
@example("what 钢琴课 time")  # a CJK run between an asking word and its noun: the noun counts
@example("what 猫 did the doctor say")
def test_analyze_equals_its_first_form(text):
    assert analyze(text) == _reference_terms(text)
