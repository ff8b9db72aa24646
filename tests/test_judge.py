"""The pluggable judge (issue 8): a scripted fake judge reads sentences; the rules validate it."""
from __future__ import annotations

import json

from v2_memory import GovernancePolicy, MemoryManager, Message
from v2_memory.governance.judge import PROMPT, read_message_facts


class ScriptedJudge:
    """A fake model: answers from a script and records the prompts it was shown."""

    def __init__(self, answer):
        self.answer, self.prompts = answer, []

    def __call__(self, prompt):
        self.prompts.append(prompt)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def manager(clock, judge):
    return MemoryManager(store_path=None, clock=clock, governance=GovernancePolicy(judge=judge))


def test_a_judge_reads_what_the_rules_miss_and_explain_says_who_decided(clock):
    answer = json.dumps({"speech_act": "statement", "subject": "user",
                         "facts": [{"attribute": "pet", "value": "柯基", "polarity": 1}], "correction": None})
    judge = ScriptedJudge(answer)
    with manager(clock, judge) as memory:
        result = memory.add(Message("user", "家里那只柯基是我的心头肉"))
        assert [(f["key"], f["value"]) for f in result.facts] == [("pet", "柯基")]
        assert "read_by:judge" in result.reasons
        assert judge.prompts == [PROMPT.format(text="家里那只柯基是我的心头肉")]
        assert memory.explain("柯基")[0].record["read_by"] == "judge"


def test_a_malformed_answer_falls_back_to_the_rules(clock):
    for bad in ("not json", json.dumps({"speech_act": "shout", "subject": "user"}), json.dumps([1, 2]),
                json.dumps({"speech_act": "statement", "subject": "user", "facts": [{"attribute": "diet", "value": "x", "polarity": 2}]}),
                RuntimeError("network down")):
        with manager(clock, ScriptedJudge(bad)) as memory:
            result = memory.add(Message("user", "我不吃香菜"))
            assert "read_by:rules" in result.reasons
            assert any(r.startswith(("judge_refused", "judge_failed")) for r in result.reasons)
            assert [(f["key"], f["value"], f["polarity"]) for f in result.facts] == [("diet", "香菜", -1)]


def test_a_judge_cannot_invent_values_or_read_model_output_or_raw_personal_data(clock):
    invented = json.dumps({"speech_act": "statement", "subject": "user",
                           "facts": [{"attribute": "device", "value": "Windows", "polarity": 1}]})
    assert read_message_facts("I use a Mac", ScriptedJudge(invented)).engine == "rules"
    judge = ScriptedJudge(json.dumps({"speech_act": "statement", "subject": "user", "facts": []}))
    with manager(clock, judge) as memory:
        reply = memory.add(Message("assistant", "You use Windows."))
        assert not reply.verified and judge.prompts == []  # model output never reaches the judge
        memory.add(Message("user", "我的手机号是13912345678"))
        assert "13912345678" not in judge.prompts[-1]  # it sees the redacted text only


def test_a_judge_saying_someone_else_spoke_declares_nothing(clock):
    answer = json.dumps({"speech_act": "report", "subject": "other",
                         "facts": [{"attribute": "diet", "value": "辣", "polarity": -1}]})
    with manager(clock, ScriptedJudge(answer)) as memory:
        result = memory.add(Message("user", "我妈总说我不吃辣"))
        assert result.facts == () and "read_by:judge" in result.reasons
