"""The realistic-set runner: replay governed and ungoverned on files, check substrings, count 'worse'.

The scenarios here are the test's own, written for the runner; the evaluator's set is measured by
``python -m v2_memory eval pollution`` and never tuned to.
"""
from __future__ import annotations

import json

import pytest

from v2_memory.evaluation import realistic

SET = [
    {"id": "t-restart", "class": "own_words", "lang": "en", "note": "the user's words survive a restart",
     "steps": [{"say": "user", "user": "u", "text": "I use a Mac for work"}, {"do": "restart"}],
     "queries": [{"user": "u", "ask": "which Mac laptop do I use", "must_include": ["Mac"], "must_exclude": []}]},
    {"id": "t-correct", "class": "natural_correction", "lang": "zh", "note": "a correction in a later session",
     "steps": [{"say": "user", "user": "u", "text": "单位体检是下周四上午九点", "session": "s1"},
               {"do": "end_session", "user": "u", "session": "s1"}, {"do": "wait", "minutes": 600},
               {"say": "user", "user": "u", "text": "哦不对，我搞错了，体检是下周五上午九点", "session": "s2"}],
     "queries": [{"user": "u", "ask": "体检 哪天", "session": "s2", "must_include": ["下周五"], "must_exclude": ["下周四"]}]},
    {"id": "t-other", "class": "isolation", "lang": "en", "note": "another user's words never show",
     "steps": [{"say": "user", "user": "a", "text": "My locker code is blue"}, {"say": "user", "user": "b", "text": "hello there"}],
     "queries": [{"user": "b", "ask": "locker code", "must_include": [], "must_exclude": ["blue"]}]},
]


def test_the_runner_replays_both_ways_and_tallies_per_class_and_language():
    report = realistic.run_realistic(SET)
    assert (report["scenarios"], report["passed"], report["worse_than_no_governance"]) == (3, 3, 0)
    assert report["groups"]["natural_correction / zh"] == {"scenarios": 1, "passed": 1}
    assert "worse than no governance: 0" in realistic.format_realistic(report)


def test_ungoverned_memory_fails_where_governance_passes():
    """Without governance the stale 下周四 stays in the window: that query fails there, not here."""
    governed, plain = realistic.replay_scenario(SET[1], True), realistic.replay_scenario(SET[1], False)
    assert "下周四" not in governed[0] and "下周四" in plain[0]


def test_worse_than_no_governance_is_counted():
    """A check that the ungoverned context passes and the governed one fails is counted: here an
    unverified assistant claim, which governance keeps out on purpose, is required."""
    scenario = {"id": "t-worse", "class": "x", "lang": "en", "note": "",
                "steps": [{"say": "assistant", "user": "u", "text": "Your flight is at 9pm"}] +
                         [{"say": "user", "user": "u", "text": f"note {i}"} for i in range(6)],
                "queries": [{"user": "u", "ask": "flight 9pm", "must_include": ["9pm"], "must_exclude": []}]}
    report = realistic.run_realistic([scenario])
    assert report["worse_than_no_governance"] == 1 and realistic.target_failed(report)


def test_the_file_format_is_checked(tmp_path):
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"format": "something else", "version": 1, "scenarios": []}), encoding="utf-8")
    with pytest.raises(ValueError, match="not a v2_memory.realistic_scenarios file"):
        realistic.load_scenarios(path)
    path.write_text(json.dumps({"format": realistic.FORMAT, "version": 2, "scenarios": []}), encoding="utf-8")
    with pytest.raises(ValueError, match="unsupported version"):
        realistic.load_scenarios(path)
