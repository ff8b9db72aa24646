"""The pollution benchmark: its metrics on hand-computed cases, its labels, and its command.

The metrics are checked on contexts small enough to count by hand; the labels are checked for
consistency with the scripts (every label names something that exists, no query both needs and
forbids a memory, every scenario exercises its kind); the command runs in-process. The numbers the
benchmark reports about the library are not asserted here: it is a report, and it must stay free to
say that a target fails.
"""
from __future__ import annotations

import json
from collections import Counter

import pytest

from v2_memory.cli import main
from v2_memory.evaluation import pollution
from v2_memory.evaluation.pollution_cases import SCENARIOS
from v2_memory.evaluation.pollution_metrics import (
    Item,
    Labels,
    Tally,
    carries,
    score_query,
)
from v2_memory.evaluation.pollution_script import (
    KINDS,
    Action,
    Script,
    Write,
    fact_label,
    labels,
    truth_of,
)


# -- metrics, by hand ---------------------------------------------------------------------------
def test_worked_example_precision_recall_pollution_tokens():
    """Items w1 (needed), w2 (noise) and w3 (neither) for a query needing w1 and w4:
    precision = 1 relevant / 3 admitted; recall = 1 need met / 2; pollution = 1 must-not / 3.
    Tokens: "tea" 1 + "b c" 2 + "d e f" 3 = 6."""
    items = [Item("w1", "tea"), Item("w2", "b c"), Item("w3", "d e f")]
    score = score_query(items, Labels(needs=(("w1",), ("w4",)), must_not={"w2": "noise"}))
    assert (score.admitted, score.relevant, score.needs, score.met, score.polluting, score.tokens) == (3, 1, 2, 1, 1, 6)
    assert score.precision == pytest.approx(1 / 3)
    assert score.recall == pytest.approx(1 / 2)
    assert score.pollution_rate == pytest.approx(1 / 3)
    assert score.by_kind == {"noise": 1}


def test_a_need_is_met_by_any_of_its_alternatives_and_facts_match_on_polarity():
    """The need "fact:diet=NOT 香菜 | w2" is met by the fact line alone (one relevant item of two);
    a positive diet fact would not meet it."""
    need = (("fact:diet=NOT 香菜", "w2"),)
    met = score_query([Item("fact:diet=NOT 香菜", "persona:diet = NOT 香菜"), Item("w5", "x")], Labels(needs=need))
    assert (met.met, met.relevant, met.admitted) == (1, 1, 2)
    flipped = score_query([Item("fact:diet=香菜", "persona:diet = 香菜")], Labels(needs=need))
    assert flipped.met == 0


def test_fact_labels_match_key_polarity_and_contained_value():
    assert carries("fact:device=an iPhone", "fact:device=iPhone")
    assert carries("fact:likes=NOT horror movies anymore", "fact:likes=NOT horror movies")
    assert not carries("fact:likes=horror movies", "fact:likes=NOT horror movies")
    assert not carries("fact:device=iPhone", "fact:platform=iPhone")
    assert not carries("w1", "w10") and carries("w10", "w10")


def test_leaks_residue_superseded_and_flips_are_counted_from_the_labels():
    """Four must-not items, one of each kind that has its own column, plus w9: not labelled, but its
    text quotes an erased memory ("我家住在望京"), so it is residue too — 2 residue items in all.
    A query flips once however many negation items it shows."""
    items = [Item("w1", "user: bob's note"), Item("w2", "user: 我家住在望京"), Item("w3", "user: 周三"),
             Item("w4", "assistant: 推荐咖啡"), Item("w5", "assistant: 推荐拿铁咖啡"), Item("w9", "user: 她说我家住在望京")]
    must_not = {"w1": "other_user", "w2": "erased", "w3": "stale", "w4": "negation", "w5": "negation"}
    score = score_query(items, Labels(must_not=must_not, erased_texts=("我家住在望京",)))
    assert (score.leaks, score.residue, score.superseded, score.flips, score.polluting) == (1, 2, 1, 1, 5)


def test_totals_are_micro_averaged():
    """Query A admits 4 items, 1 relevant; query B admits 1, relevant. Micro precision is
    (1 + 1) / (4 + 1) = 0.4 — not the mean of 0.25 and 1.0 (0.625)."""
    a = score_query([Item(f"w{i}", "x") for i in range(1, 5)], Labels(needs=(("w1",),)))
    b = score_query([Item("w7", "x")], Labels(needs=(("w7",),)))
    total = a + b
    assert (total.queries, total.admitted, total.relevant) == (2, 5, 2)
    assert total.precision == pytest.approx(0.4)


def test_an_empty_context_has_no_precision_and_pollutes_nothing():
    score = score_query([], Labels(needs=(("w1",),)))
    assert score.precision is None and score.pollution_rate == 0.0 and score.recall == 0.0
    assert Tally().recall is None and Tally().tokens_per_query == 0.0


# -- labels derived from a script ---------------------------------------------------------------
def _tiny_script():
    s = Script("tiny", "stale", "zh")
    s.say("alice", "牙医预约在周三")                                    # w1, corrected by w3
    s.say("bob", "我的牙医预约在周三")                                   # w2, another user
    s.say("alice", "不是周三，是周四", corrects="w1")                    # w3
    s.reply("alice", "好的，周四去看牙医。")                             # w4, model output
    s.reply("alice", "周四要带医保卡。")                                 # w5, verified below
    s.do("verify", "alice", "w5")
    s.say("alice", "PPT 写到目录了", session="s1", domain="session")    # w6, session ended below
    s.do("end_session", "alice", "s1")
    s.say("alice", "我喜欢咖啡", declares="likes=咖啡")                  # w7, revoked by w8
    s.say("alice", "我不喜欢咖啡了", declares="likes=NOT 咖啡")          # w8
    s.say("alice", "今天下雨")                                           # w9, noise for the query
    s.ask("alice", "牙医预约是周几", should="w3", related="w5")
    return s.build()


def test_labels_follow_from_the_script():
    scenario = _tiny_script()
    found = labels(scenario, scenario.queries[0])
    assert dict(found.must_not) == {"w1": "stale", "w2": "other_user", "w4": "unverified", "w6": "wrong_scope",
                                    "w7": "negation", "w8": "noise", "w9": "noise", "fact:likes=咖啡": "negation"}
    assert found.needs == (("w3",),) and found.related == ("w5",)


def test_erasure_covers_earlier_writes_of_that_user_and_their_facts_only():
    s = Script("erase", "erased", "en")
    s.say("bob", "I don't eat pork", declares="diet=NOT pork")   # w1, erased
    s.say("bob", "I live on Birch Road")                          # w2, forgotten
    s.do("forget", "bob", "w2")
    s.do("erase_user", "bob")
    s.say("bob", "I just moved to Denver")                        # w3, after the erasure: kept
    s.ask("bob", "Where do I live", should="w3")
    scenario = s.build()
    found = labels(scenario, scenario.queries[0])
    assert dict(found.must_not) == {"w1": "erased", "w2": "erased", "fact:diet=NOT pork": "erased"}
    assert found.erased_texts == ("I don't eat pork", "I live on Birch Road")


def test_a_session_idle_for_its_ttl_is_over_and_a_fresh_one_is_not():
    s = Script("idle", "wrong_scope", "en")
    s.say("ann", "Trip chat: Lisbon hotel booked", session="s1", domain="session")   # w1
    s.wait(40)
    s.say("ann", "Trip chat: Kyoto in autumn", session="s2", domain="session")       # w2
    s.ask("ann", "Trip chat hotel", session="s1")
    s.ask("ann", "Trip chat Kyoto", session="s2", should="w2")
    scenario = s.build()
    assert labels(scenario, scenario.queries[0]).must_not == {"w1": "wrong_scope", "w2": "wrong_scope"}
    assert labels(scenario, scenario.queries[1]).must_not == {"w1": "wrong_scope"}


# -- the shipped benchmark: size, languages, and labels consistent with the scripts --------------
def test_the_benchmark_is_big_enough_and_bilingual():
    assert len(SCENARIOS) >= 40
    assert sum(len(scenario.queries) for scenario in SCENARIOS) >= 300
    per_kind = Counter(scenario.kind for scenario in SCENARIOS)
    assert set(per_kind) == set(KINDS) and min(per_kind.values()) >= 5
    languages = Counter(scenario.lang for scenario in SCENARIOS)
    assert languages["zh"] >= 10 and languages["en"] >= 10
    assert len({scenario.name for scenario in SCENARIOS}) == len(SCENARIOS)


def test_every_scenario_has_several_users():
    for scenario in SCENARIOS:
        assert len({write.owner for write in scenario.writes.values()}) >= 2, scenario.name


def _declared(scenario, owner):
    return {fact_label(w.declares) for w in scenario.writes.values() if w.declares and w.owner == owner}


def test_every_label_refers_to_a_write_or_a_fact_that_exists():
    for scenario in SCENARIOS:
        writes = scenario.writes
        for index, query in enumerate(scenario.queries):
            where = f"{scenario.name} #{index}"
            facts = _declared(scenario, query.owner)
            for label in [key for need in query.needs() for key in need] + list(query.related):
                assert label in writes or label in facts, (where, label)
            for key, kind in query.flagged:
                assert key in writes and writes[key].owner == query.owner and kind in KINDS, (where, key)


def test_no_query_both_needs_and_forbids_a_memory():
    for scenario in SCENARIOS:
        truth = truth_of(scenario)
        for index, query in enumerate(scenario.queries):
            found = labels(scenario, query, truth)
            for need in found.needs:
                assert any(label not in found.must_not for label in need), (scenario.name, index, need)
            assert not set(found.related) & set(found.must_not), (scenario.name, index)


def test_every_scenario_exercises_its_kind():
    """At least one query of the scenario's kind must keep out a memory of that kind."""
    for scenario in SCENARIOS:
        truth = truth_of(scenario)
        kinds = [set(labels(scenario, q, truth).must_not.values()) for q in scenario.queries if q.kind == scenario.kind]
        assert any(scenario.kind in found for found in kinds), scenario.name


def test_actions_and_corrections_refer_to_earlier_writes_of_the_same_user():
    for scenario in SCENARIOS:
        writes = scenario.writes
        for step in scenario.steps:
            if isinstance(step, Action) and step.call in ("forget", "verify"):
                target = writes[step.arg]
                assert target.owner == step.owner and target.minute < step.minute, (scenario.name, step)
            if isinstance(step, Action) and step.call == "confirm_fact":
                keys = {w.declares.split("=")[0] for w in writes.values()
                        if w.declares and w.owner == step.owner and w.minute < step.minute}
                assert step.arg in keys, (scenario.name, step)
            if isinstance(step, Write) and step.corrects:
                target = writes[step.corrects]
                assert target.owner == step.owner and target.minute < step.minute, (scenario.name, step.key)


def test_no_surviving_memory_quotes_an_erased_one():
    """So that finding an erased text in a context can only mean residue."""
    for scenario in SCENARIOS:
        erased = truth_of(scenario).erased
        for key in erased:
            text = scenario.writes[key].message.content
            assert not any(text in w.message.content for w in scenario.writes.values() if w.key not in erased), key


def test_replay_leaves_exactly_the_writes_the_script_did_not_erase():
    """Without governance every write is stored; at query time the store holds all but the erased
    ones (so the script's idea of erasure and the library's agree)."""
    for scenario in SCENARIOS:
        memory, keys = pollution.replay(scenario, governed=False)
        stored = {keys[record["record_id"]] for record in memory.store.all_records()}
        memory.close()
        assert stored == set(scenario.writes) - truth_of(scenario).erased, scenario.name


# -- the command --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def report():
    return pollution.run_benchmark()


@pytest.mark.slow  # runs both scenario sets
def test_the_command_prints_json_with_every_strategy_kind_and_target(capsys, report):
    assert main(["eval", "pollution", "--json", "--set", "first"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(report, ensure_ascii=False))  # deterministic: same as another run
    assert list(printed["strategies"]) == list(pollution.STRATEGIES)
    assert list(printed["by_kind"]) == list(KINDS)
    assert printed["settings"]["queries"] == sum(len(s.queries) for s in SCENARIOS)
    assert [t["name"] for t in printed["targets"]] == [t[0] for t in pollution.TARGETS]
    blind, governed = printed["strategies"]["blind top-8"], printed["strategies"]["full governance"]
    assert blind["admitted"] >= printed["strategies"]["blind top-3"]["admitted"]
    assert 0.0 <= governed["pollution_rate"] <= 1.0 and 0.0 <= governed["recall"] <= 1.0


@pytest.mark.slow  # runs both scenario sets
def test_the_table_shows_every_strategy_and_a_verdict_per_target(capsys, report):
    assert main(["eval", "pollution", "--set", "first"]) == 0
    text = capsys.readouterr().out
    assert all(strategy in text for strategy in pollution.STRATEGIES)
    assert text.count("PASS") + text.count("FAIL") >= len(pollution.TARGETS)
    strict = main(["eval", "pollution", "--strict", "--set", "first"])
    capsys.readouterr()
    assert strict == (1 if any(t["passed"] is False for t in report["targets"]) else 0)


def test_kind_filter_and_scenario_view(capsys):
    assert main(["eval", "pollution", "--kind", "negation", "--json"]) == 0
    only = json.loads(capsys.readouterr().out)
    assert list(only["by_kind"]) == ["negation"]
    assert only["settings"]["queries"] == sum(len(s.queries) for s in SCENARIOS if s.kind == "negation")
    assert main(["eval", "pollution", "--scenario", "negation-zh-coffee"]) == 0
    shown = capsys.readouterr().out
    assert "别推荐咖啡" in shown and "full governance" in shown
    assert main(["eval", "pollution", "--scenario", "no-such-scenario"]) == 2


def test_the_heldout_set_shows_its_tuning_half_and_only_the_sealed_halfs_totals(capsys):
    from v2_memory.cli import main

    assert main(["eval", "pollution", "--set", "heldout", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["tuning"]["scenarios"] == report["sealed"]["scenarios"] == 111
    assert "failures" in report["tuning"] and set(report["sealed"]) == {
        "scenarios", "passed", "pass_rate", "target", "worse_than_no_governance"}
