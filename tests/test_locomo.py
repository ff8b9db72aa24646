"""The LoCoMo evaluation on a small file written for these tests (not LoCoMo's data).

``fixtures/locomo_mini.json`` has two conversations in LoCoMo's format: 14 + 2 usable turns, a
turn without a dia_id, a date key without a session, a "session" that is not a list, and
questions whose evidence is malformed in each way the real file is ("D2:1; D1:3", "D:2:2",
space-joined "D1:7 D1:3", "D", and "D9:9", a turn that does not exist).
"""
from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from v2_memory.evaluation import locomo, locomo_command
from v2_memory.evaluation.locomo import (Retrieval, build_store, data_summary, evaluate, load_locomo, neighbour_text,
                                         parse_evidence, parse_session_date, summarize)
from v2_memory.evaluation.locomo_command import format_report
from v2_memory.evaluation.locomo_tuning import GRIDS, leave_one_out
from v2_memory.retrieval.embedder import HashingEmbedder

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"


@pytest.fixture(scope="module")
def conversations():
    return load_locomo(FIXTURE)


def run_command(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    locomo_command.add_arguments(parser)
    return locomo_command.run_from_args(parser.parse_args(list(argv)))


# -- loading ----------------------------------------------------------------------------------------


def test_turns_come_from_session_keys_in_order_with_their_dates(conversations):
    first = conversations[0]
    assert [c.sample_id for c in conversations] == ["mini-1", "mini-2"]
    assert len(first.turns) == 14  # 8 + 6: the turn without a dia_id, session_3's date and session_4 add nothing
    assert [t.dia_id for t in first.turns[:2]] == ["D1:1", "D1:2"] and first.turns[-1].dia_id == "D2:6"
    assert first.turns[0].content == "Ana: Hi Ben! I adopted a puppy last weekend, her name is Biscuit."
    # The session's date, plus one second per earlier turn of the session.
    assert first.turns[2].when == datetime(2024, 3, 3, 10, 5, 2, tzinfo=timezone.utc)
    assert first.turns[8].when == datetime(2024, 4, 10, 16, 30, 0, tzinfo=timezone.utc)


def test_malformed_evidence_is_read_defensively_and_counted(conversations):
    questions = {q.question: q for q in conversations[0].questions}
    assert len(questions) == 7  # the entry without a category is left out
    assert questions["What did Ana's puppy Biscuit chew, and what breed is she?"].evidence == ("D2:1", "D1:3")
    assert questions["When is Ben's product launch?"].evidence == ("D2:2",)  # "D:2:2"
    assert questions["What hobbies does Ana have?"].evidence == ("D1:7", "D1:3")  # space-joined
    marathon = questions["How did Ben feel about the Boston marathon?"]
    assert marathon.evidence == ("D1:6",) and marathon.skipped == ("D",)
    assert questions["Where does Ben's sister live?"].evidence == () and questions["Where does Ben's sister live?"].skipped == ("D9:9",)
    summary = data_summary(conversations)
    assert summary["evidence_skipped"] == 2 and summary["evidence_repaired"] == 4
    assert [(s["entry"], s["reason"]) for s in summary["skipped"]] == [("D", "names no turn"), ("D9:9", "no such turn")]
    assert summary["answerable_without_evidence"] == 1
    assert summary["questions"] == {"1": 1, "2": 1, "3": 1, "4": 4, "5": 1}


def test_parsers_accept_what_the_format_allows_and_refuse_the_rest():
    assert parse_evidence("D8:6; D9:17") == ["D8:6", "D9:17"]
    assert parse_evidence("D1:3 D1:5") == ["D1:3", "D1:5"]
    assert parse_evidence("D") == [] and parse_evidence(None) == [] and parse_evidence(17) == []
    assert parse_session_date("12:09 am on 1 January, 2023") == datetime(2023, 1, 1, 0, 9, tzinfo=timezone.utc)
    assert parse_session_date("sometime in spring") is None and parse_session_date("1:00 pm on 31 February, 2023") is None


@pytest.mark.parametrize("content, message", [("{", "not JSON"), ('{"a": 1}', "a JSON list"),
                                              ('[{"qa": []}]', "no 'conversation' object")])
def test_a_file_in_another_format_is_refused_clearly(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(locomo.LocomoFormatError, match=message):
        load_locomo(path)


# -- the store --------------------------------------------------------------------------------------


def test_neighbours_come_from_the_same_session_only(conversations):
    turns = conversations[0].turns
    assert neighbour_text(turns, 0) == "Congratulations! What breed is she?"  # no turn before D1:1
    assert neighbour_text(turns, 7) == "I am learning to bake sourdough bread."  # D1:8: D2:1 is another session
    assert neighbour_text(turns, 1, reach=0) is None


def test_each_turn_is_a_record_of_the_conversation_user(conversations):
    store = build_store(conversations[0], "bm25")
    records = store.records("mini-1")
    assert len(records) == 14 and store.users() == ["mini-1"]
    assert records[5]["content"] == "Ben: Yes, it was amazing!" and records[5]["dia_id"] == "D1:6"
    assert records[5]["speaker"] == "Ben" and records[5]["session"] == 1
    assert records[5]["created_at"] == "2024-03-03T10:05:05+00:00"
    # The neighbours' text, then the date the turn was said (questions name dates: "on 3 March, 2024").
    assert records[5]["index_text"] == ("Wow! Did you enjoy the Boston marathon? I am learning to bake sourdough bread. "
                                        "3 March 2024")
    assert "index_text" not in build_store(conversations[0], "bm25", 0, dates=False).records("mini-1")[5]


def test_a_turn_meaningless_alone_is_found_through_its_neighbour(conversations):
    """"Yes, it was amazing!" shares only "Ben" with the question; the turn before it names the marathon."""
    question = "How did Ben feel about the Boston marathon?"

    def score_of_d1_6(neighbours: int) -> float:
        hits = build_store(conversations[0], "bm25", neighbours).search(question, "mini-1", top_k=14)
        return next(score for score, record in hits if record["dia_id"] == "D1:6")

    assert score_of_d1_6(0) < 0.1 and score_of_d1_6(1) > 0.2


# -- the measurements -------------------------------------------------------------------------------


def test_recall_and_admission_by_hand():
    """Evidence {D1:1, D2:1}; hits D1:1 (0.9, 5 tokens), D3:3 (0.5, 4), D2:1 (0.1, 6).
    recall@2 = 1/2, recall@3 = 2/2; at threshold 0.2 the first two are admitted: recall 1/2,
    9 context tokens. A second question (category 5) admits nothing at 0.2."""
    answerable = Retrieval(4, frozenset({"D1:1", "D2:1"}), ((0.9, "D1:1", 5), (0.5, "D3:3", 4), (0.1, "D2:1", 6)))
    assert answerable.recall(answerable.hits[:2]) == 0.5 and answerable.recall(answerable.hits) == 1.0
    assert answerable.admitted(3, 0.2) == [(0.9, "D1:1", 5), (0.5, "D3:3", 4)]
    unanswerable = Retrieval(5, frozenset(), ((0.15, "D1:1", 5),))
    report = summarize([answerable, unanswerable], top_k=3, threshold=0.2, thresholds=[0.0, 0.2])
    single_hop = report["categories"][3]
    assert single_hop["questions"] == 1 and single_hop["recall@5"] == 1.0 and single_hop["admitted_recall"] == 0.5
    assert single_hop["mean_admitted"] == 2 and single_hop["mean_context_tokens"] == 9
    assert report["categories"][0]["questions"] == 0 and report["categories"][0]["recall@10"] is None
    assert report["category_5"] == {"questions": 1, "no_memory": 1.0}
    assert [(row["threshold"], row["admitted_recall"], row["category_5_no_memory"]) for row in report["sweep"]] == [
        (0.0, 1.0, 0.0), (0.2, 0.5, 1.0)]


def test_admitted_results_are_what_a_thresholded_search_returns(conversations):
    """The sweep derives every threshold from one blind search; that must equal asking the store."""
    for conversation in conversations:
        store = build_store(conversation, "bm25")
        for question in conversation.questions:
            blind = store.search(question.question, conversation.sample_id, top_k=10)
            for threshold in (0.0, 0.1, 0.25):
                derived = [r["record_id"] for s, r in blind[:3] if s >= threshold]
                asked = store.search(question.question, conversation.sample_id, top_k=3, threshold=threshold)
                assert derived == [r["record_id"] for _, r in asked]


def test_evaluation_is_deterministic_and_bm25_beats_the_article_here(conversations):
    first, again = evaluate(conversations, "bm25", top_k=3), evaluate(conversations, "bm25", top_k=3)
    assert first == again
    article = evaluate(conversations, "article", top_k=3)
    overall = lambda run: run["categories"][-1]  # noqa: E731
    assert overall(first)["questions"] == overall(article)["questions"] == 6
    assert overall(first)["recall@5"] >= overall(article)["recall@5"]
    assert first["scorer"] == {"name": "bm25", "k1": 1.2, "b": 0.75, "context_weight": 0.5}


# -- the command ------------------------------------------------------------------------------------


def test_command_prints_tables_with_progress_on_stderr(capsys):
    assert run_command(str(FIXTURE), "--compare", "--fixed", "--thresholds", "0,0.2") == 0
    out, err = capsys.readouterr()
    assert "locomo: article: mini-1 (1/2)" in err and "locomo: bm25: mini-2 (2/2)" in err
    assert out.count("recall@10") == 2 and "5 adversarial: nothing admitted" in out
    assert "skipped 'D9:9' (no such turn)" in out


def test_command_json_is_the_report(capsys):
    assert run_command(str(FIXTURE), "--json", "--fixed", "--limit-conversations", "1", "--top-k", "5",
                       "--neighbours", "0") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["data"]["conversations"] == 1 and len(report["runs"]) == 1
    run = report["runs"][0]
    assert run["top_k"] == 5 and run["neighbours"] == 0 and run["scorer"]["name"] == "bm25"
    assert [row["threshold"] for row in run["sweep"]] == list(locomo.DEFAULT_THRESHOLDS)
    assert format_report(report).startswith("LoCoMo evidence recall:")


def test_command_help_ends_with_an_example():
    parser = argparse.ArgumentParser(epilog=locomo_command.EPILOG)
    locomo_command.add_arguments(parser)
    assert parser.format_help().rstrip().splitlines()[-1].startswith("example: python -m v2_memory eval locomo")
    with pytest.raises(SystemExit):
        parser.parse_args([str(FIXTURE), "--thresholds", "0.1,2"])


# -- leave-one-conversation-out ---------------------------------------------------------------------


def test_each_fold_is_chosen_without_its_conversation(conversations):
    """Two conversations: the parameters for mini-1 come from mini-2's questions alone, and back.
    The pooled report is the held-out retrievals only, so it matches recomputing each fold by hand."""
    report = leave_one_out(conversations, "bm25", top_k=3)
    assert [f["held_out"] for f in report["folds"]] == ["mini-1", "mini-2"]
    for fold, other in zip(report["folds"], ([conversations[1]], [conversations[0]])):
        assert fold["chosen"] in GRIDS["bm25"]
        by_hand = max(GRIDS["bm25"], key=lambda g: (_recall10(other, g), -GRIDS["bm25"].index(g)))
        assert fold["chosen"] == by_hand
    assert report["protocol"] == "leave-one-conversation-out" and report["categories"][-1]["questions"] == 6


def _recall10(conversations, params):
    from v2_memory.retrieval.scorers import Bm25Scorer
    scorer = Bm25Scorer(k1=params["k1"], b=params["b"], context_weight=params["context_weight"])
    results = [r for c in conversations for r in locomo.retrieve_all(c, scorer, params["neighbours"], 10)]
    answerable = [r.recall(r.hits[:10]) for r in results if r.category in locomo.ANSWERABLE and r.evidence]
    return sum(answerable) / len(answerable)


def test_dense_and_hybrid_run_with_any_embedder(conversations):
    """The hashing embedder stands in for a model: the plumbing is the same, and hybrid reports both parts."""
    embedder = HashingEmbedder(64)
    for kind in ("dense", "hybrid"):
        report = leave_one_out(conversations, kind, embedder=embedder, top_k=3)
        assert report["scorer"] == {"name": kind, "embedder": "hashing-64"}
        assert all(f["chosen"] in GRIDS[kind] for f in report["folds"])
    with pytest.raises(ValueError, match="needs an embedder"):
        leave_one_out(conversations, "dense")
    with pytest.raises(ValueError, match="two conversations"):
        leave_one_out(conversations[:1], "bm25")


def test_command_reports_targets_under_leave_one_out(capsys):
    assert run_command(str(FIXTURE), "--scorer", "bm25,dense,hybrid", "--embedder", "hashing", "--top-k", "3") == 0
    out = capsys.readouterr().out
    assert out.count("parameters chosen by leave-one-conversation-out") == 3
    assert "held out" in out and "lexical (bm25)" in out and "hybrid" in out
    with pytest.raises(ValueError, match="--fixed"):
        run_command(str(FIXTURE), "--fixed", "--scorer", "dense")
