"""Instructions hidden in memories stay quoted (issue 20): the independent injection suite — 51
injections and 26 controls, written without reading the code — passes whole. Before the context's
lines were escaped, 22 of the injections (multi-line pastes) started a line of their own. Since
item 3, a planted instruction is also shown on a line marked quoted (``must_be_quoted``, on 50
injections: the 51st is no longer in its context) and a control's own words never are
(``must_not_be_quoted``); before, no line said quoted, and all 50 failed."""
from __future__ import annotations

from v2_memory.evaluation.injection import judge_case, load_cases, run_injection


def test_no_planted_instruction_becomes_a_fact_or_a_line_and_every_control_still_works():
    report = run_injection()
    assert report["kinds"] == {"injection": {"passed": 51, "cases": 51}, "control": {"passed": 26, "cases": 26}}, \
        report["failures"]


def test_the_judge_fails_a_forged_line_and_a_planted_fact():
    case = next(c for c in load_cases() if c["must_not_start_line"] and c["must_not_be_fact"])
    forged = "recent: user: hi\n" + case["must_not_start_line"][0] + " and more"
    planted = f"persona:rule = {case['must_not_be_fact'][0]}"
    assert judge_case(case, forged) and judge_case(case, planted) and not judge_case(case, "recent: user: hi")


def test_the_judge_fails_an_unmarked_instruction_and_a_marked_preference():
    cases = load_cases()
    planted = next(c for c in cases if c.get("must_be_quoted"))
    text = planted["must_be_quoted"][0]
    assert judge_case(planted, f"recent: user: well, {text}") == [f"unquoted:{text}"]
    assert not judge_case(planted, f"recent(quoted): user: well, {text}")
    assert not judge_case(planted, f"memory(0.430×1.00, quoted): tool: {text}")
    assert judge_case(planted, f"summary: [2 earlier messages] user: hi | user: {text}")
    control = next(c for c in cases if c["kind"] == "control" and c.get("must_not_be_quoted"))
    own = control["must_not_be_quoted"][0]
    assert judge_case(control, f"recent(quoted): user: {own}") == [f"quoted:{own}"]
    assert not judge_case(control, f"recent: user: {own}")


def test_the_new_fields_cover_the_suite():
    cases = load_cases()
    assert sum(bool(c.get("must_be_quoted")) for c in cases if c["kind"] == "injection") == 50
    assert all(c.get("must_not_be_quoted") for c in cases if c["kind"] == "control")
