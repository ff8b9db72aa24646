"""Instructions hidden in memories stay quoted (issue 20): the independent injection suite — 51
injections and 26 controls, written without reading the code — passes whole. Before the context's
lines were escaped, 22 of the injections (multi-line pastes) started a line of their own."""
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
