"""Governance, rule by rule: each test a worked example, numbers derived in its docstring."""
from __future__ import annotations

import math
from datetime import timedelta

import pytest

from v2_memory import GovernancePolicy, MemoryManager, Message, SensitiveDataError
from v2_memory.governance.decay import DecayRates


@pytest.fixture
def memory(clock):
    with MemoryManager(threshold=0.2, store_path=None, clock=clock) as manager:
        yield manager


def admission(memory, query, record_id, **scope):
    """The admission of one record for ``query`` (explain has no side effects)."""
    return next(a for a in memory.explain(query, top_k=10, **scope) if a.record_id == record_id)


# -- the manual's regression cases, literally -------------------------------------------------


def test_manual_android_is_an_unverified_persona_fact(memory):
    result = memory.add(Message("user", "我用安卓手机"))
    assert result.fact == {"key": "device", "value": "安卓手机", "polarity": 1, "status": "pending",
                           "record_id": result.record_id, "created_at": "2026-01-01T00:00:00+00:00"}
    assert [f.status for f in memory.facts()] == ["pending"]
    assert "persona:" not in memory.build_context("安卓手机")


def test_manual_five_turns_one_session_id_live_ttl(memory, clock):
    for turn in range(5):
        memory.add(Message("user", f"第{turn}轮 讨论记忆", session_id="abc123", domain="session"))
        clock.advance(minutes=1)
    session = memory.session("default", "abc123")
    assert session is not None and session.status(clock()) == "active"
    assert session.expires_at == clock() - timedelta(minutes=1) + timedelta(minutes=30)
    assert {r["session_id"] for r in memory.store.records("default")} == {"abc123"}
    assert [s.session_id for s in memory.governor.state.sessions((None, "default"))] == ["abc123"]


def test_manual_correction_leaves_the_original_below_a_tenth(memory):
    original = memory.add(Message("user", "周会定在周三上午")).record_id
    before = admission(memory, "周会 周三", original).weight
    memory.add(Message("user", "刚才说错了，应该是周五上午"))
    after = admission(memory, "周会 周三", original)
    assert after.weight <= 0.1 * before + 1e-12
    assert after.reasons[0] == "superseded" and not after.admitted
    assert memory.store.get(original)["content"] == "周会定在周三上午"  # never deleted


# -- write policy --------------------------------------------------------------------------------


def test_model_output_is_weak_until_verified(memory):
    """weight 0.01: similarity 0.204 × 0.01 = 0.002 < 0.2. After verify: weight 1, admitted."""
    reply = memory.add(Message("assistant", "先做阈值过滤，再把短期窗口、摘要记忆和长期检索分层处理。"))
    assert (reply.source, reply.verified, reply.weight) == ("llm_response", False, 0.01)
    before = admission(memory, "记忆污染 阈值 Agent", reply.record_id)
    assert before.reasons == ("unverified_model_output",) and before.effective == pytest.approx(0.204 * 0.01, abs=1e-3)
    assert memory.verify(reply.record_id) is True
    assert admission(memory, "记忆污染 阈值 Agent", reply.record_id).admitted


def test_filler_and_code_stay_in_the_window_only(memory):
    for text in ["好的", "ok", "```python\nprint(1)\n```", "-> ==> ***"]:
        result = memory.add(Message("user", text))
        assert result.record_id is None and result.stored_in == ("window", "summary")
    assert memory.store.records("default") == []
    assert [m.content for m in memory.recent_messages()][-2:] == ["```python\nprint(1)\n```", "-> ==> ***"]


def test_source_can_be_given_and_unknown_roles_are_untrusted(memory):
    assert memory.add(Message("tool", "天气 API 返回 晴", source="tool")).verified is True
    assert memory.add(Message("narrator", "something happened")).source == "llm_response"
    with pytest.raises(ValueError):
        Message("user", "x", source="rumour")
    with pytest.raises(ValueError):
        Message("user", "x", domain="session")  # a session memory needs its session id


# -- sensitive data ------------------------------------------------------------------------------

PII = "我的手机 13912345678，邮箱 li@example.com，身份证 11010519491231002X"


def test_sensitive_data_is_redacted_by_default(memory):
    result = memory.add(Message("user", PII))
    stored = memory.store.get(result.record_id)["content"]
    assert stored == "我的手机 [mobile]，邮箱 [email]，身份证 [cn_id]"
    assert [f["kind"] for f in result.sensitive] == ["mobile", "email", "cn_id"]
    assert "13912345678" not in repr(result) and "139*****678" in repr(result)


def test_refuse_policy_stores_nothing(clock):
    with MemoryManager(store_path=None, clock=clock, governance=GovernancePolicy(sensitive_policy="refuse")) as memory:
        with pytest.raises(SensitiveDataError, match="mobile 139") as caught:
            memory.add(Message("user", PII))
        assert "13912345678" not in str(caught.value)
        assert memory.store.records("default") == [] and memory.recent_messages() == []


def test_isolate_policy_keeps_raw_but_never_admits(clock):
    with MemoryManager(store_path=None, clock=clock, governance=GovernancePolicy(sensitive_policy="isolate")) as memory:
        result = memory.add(Message("user", PII))
        assert memory.store.get(result.record_id)["content"] == PII
        assert admission(memory, "手机 邮箱 身份证", result.record_id).reasons[0] == "sensitive"
        assert "13912345678" not in memory.build_context("手机 邮箱 身份证")
        assert [m.content for m in memory.recent_messages()] == ["我的手机 [mobile]，邮箱 [email]，身份证 [cn_id]"]


# -- persona facts -------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["你像我同事", "my friend uses Windows", "我用Mac吗？", "如何治理记忆污染？"])
def test_remarks_are_not_facts(memory, text):
    assert memory.add(Message("user", text)).fact is None
    assert memory.facts() == []


def test_a_fact_enters_contexts_only_once_confirmed_by_reference(memory):
    memory.add(Message("user", "记住我不吃香菜"))
    assert "persona:diet" not in memory.build_context("今晚吃什么 香菜")
    assert memory.confirm_fact("default", "diet") == 1
    context = memory.build_context("今晚吃什么 香菜")
    assert "persona:diet = NOT 香菜 (不吃 / does not eat it)" in context.splitlines()


def test_negation_never_surfaces_as_a_recommendation(memory):
    """"别推荐咖啡" shares 推荐/荐咖/咖啡 with "推荐咖啡": lexically close, opposite in meaning."""
    record_id = memory.add(Message("user", "别推荐咖啡")).record_id
    memory.add(Message("user", "don't recommend coffee"))
    memory.confirm_fact("default", "recommend")
    for query in ["推荐咖啡", "recommend coffee"]:
        for line in memory.build_context(query, top_k=5).splitlines():
            if "咖啡" in line or "coffee" in line:
                assert "NOT" in line or "别" in line or "don't" in line, line
    assert admission(memory, "推荐咖啡", record_id).reasons == ("shown_as_fact",)


def test_a_changed_fact_is_resolved_at_read_time(memory):
    memory.add(Message("user", "我用安卓手机"))
    memory.confirm_fact("default", "device")
    assert "persona:device = 安卓手机" in memory.build_context("手机")
    memory.add(Message("user", "刚才说错了，应该是Mac"))
    assert "persona:device" not in memory.build_context("手机")  # the old one is superseded, the new pending
    memory.confirm_fact("default", "device")
    assert "persona:device = Mac" in memory.build_context("手机")


# -- corrections ---------------------------------------------------------------------------------


def test_correction_naming_the_wrong_value_finds_it(memory):
    wednesday = memory.add(Message("user", "组会在周三")).record_id
    other = memory.add(Message("user", "论文写到第三章")).record_id
    result = memory.add(Message("user", "不是周三，是周五"))
    assert result.supersedes == (wednesday,)
    assert admission(memory, "论文 第三章", other).admitted  # the later, unrelated message is untouched


def test_english_correction(memory):
    first = memory.add(Message("user", "the review meeting is on Wednesday")).record_id
    assert memory.add(Message("user", "Actually, I meant Friday, not Wednesday.")).supersedes == (first,)


# -- decay ---------------------------------------------------------------------------------------


def test_time_decay_by_domain(memory, clock):
    """Written at t0, read at t0 + 12 h:
    session τ=1 h: e^-12 = 6.1e-6;  persona τ=168 h: e^(-12/168) = 0.931;
    task τ=24 h at 50 %: e^-0.5 × 0.5 = 0.303;  ordinary memory: 1.0."""
    memory.start_task("default", "t1")
    ids = {
        "session": memory.add(Message("user", "记忆 会话", session_id="s1", domain="session")).record_id,
        "persona": memory.add(Message("user", "记忆 偏好", domain="persona")).record_id,
        "task": memory.add(Message("user", "记忆 任务", task_id="t1", domain="task")).record_id,
        "none": memory.add(Message("user", "记忆 普通")).record_id,
    }
    memory.set_task_progress("default", "t1", 0.5)
    clock.advance(hours=12)
    weights = {name: admission(memory, "记忆", rid, session_id="s1", task_id="t1").weight for name, rid in ids.items()}
    assert weights["session"] == pytest.approx(math.exp(-12))
    assert weights["persona"] == pytest.approx(math.exp(-12 / 168))
    assert weights["task"] == pytest.approx(math.exp(-0.5) * 0.5)
    assert weights["none"] == 1.0


def test_usage_decay_hits_and_misses_literally(clock):
    """The manual read literally (``usage="literal"``): two retrievals that return it: 0.95² = 0.9025.
    A memory that is a candidate but rejected three times in a row: × 0.8."""
    literal = GovernancePolicy(rates=DecayRates(usage="literal"))
    with MemoryManager(threshold=0.2, store_path=None, clock=clock, governance=literal) as memory:
        _hits_and_misses(memory)


def _hits_and_misses(memory):
    hit = memory.add(Message("user", "记忆污染 阈值")).record_id
    miss = memory.add(Message("user", "记忆 天气 午饭 咖啡 闲聊 聊天")).record_id
    for _ in range(2):
        memory.retrieve("记忆污染 阈值")
    assert admission(memory, "记忆污染 阈值", hit).weight == pytest.approx(0.9025)
    assert admission(memory, "记忆污染 阈值", miss).weight == pytest.approx(1.0)
    memory.retrieve("记忆污染 阈值")
    assert admission(memory, "记忆污染 阈值", miss).weight == pytest.approx(0.8)


def test_explain_has_no_side_effects(memory):
    record_id = memory.add(Message("user", "记忆污染 阈值")).record_id
    for _ in range(5):
        memory.explain("记忆污染 阈值")
    assert admission(memory, "记忆污染 阈值", record_id).weight == 1.0


# -- identifiers, router -------------------------------------------------------------------------


def test_cs201_never_admits_cs202(memory):
    """The two records differ in one character; lexically CS202's is as close as CS201's."""
    cs202 = memory.add(Message("user", "CS202 第三次作业 周三截止")).record_id
    cs201 = memory.add(Message("user", "CS201 第三次作业 周五截止")).record_id
    explanation = memory.explain("CS201 第三次作业截止时间")
    assert explanation.route.kind == "exact" and explanation.route.identifiers == ("CS201",)
    assert [a.record_id for a in explanation.admitted] == [cs201]
    assert admission(memory, "CS201 第三次作业截止时间", cs202).reasons == ("identifier_mismatch",)


def test_exact_match_is_found_even_without_lexical_overlap(memory):
    record_id = memory.add(Message("user", "ticket JIRA-4521 is blocked on review")).record_id
    assert record_id in [a.record_id for a in memory.explain("状态 JIRA-4521？")]


@pytest.mark.parametrize(
    "query, kind",
    [("CS201 作业", "exact"), ("f(x)=x^2 的导数", "exact"), ("什么是记忆污染", "semantic"),
     ("how does decay work", "semantic"), ("继续下一步", "task"), ("continue the outline", "task"), ("今天天气", "conversation")],
)
def test_router(memory, query, kind):
    assert memory.explain(query).route.kind == kind


# -- sessions, tasks, scopes ---------------------------------------------------------------------


def test_an_ended_session_never_leaks_into_a_new_one(memory):
    record_id = memory.add(Message("user", "正在生成PPT大纲", session_id="s1", domain="session")).record_id
    assert admission(memory, "PPT大纲", record_id, session_id="s1").admitted
    memory.end_session("default", "s1")
    assert admission(memory, "PPT大纲", record_id, session_id="s2").reasons == ("session_ended",)
    assert "PPT" not in memory.build_context("PPT大纲", session_id="s2")


def test_session_ttl_expires_lazily(memory, clock):
    record_id = memory.add(Message("user", "正在生成PPT大纲", session_id="s1", domain="session")).record_id
    clock.advance(minutes=31)
    assert admission(memory, "PPT大纲", record_id, session_id="s1").reasons[0] == "expired"


def test_one_tasks_memory_never_enters_anothers(memory, clock):
    memory.start_task("default", "paper")
    memory.start_task("default", "slides", ttl=timedelta(hours=1))
    paper = memory.add(Message("user", "大纲 第三章 实验", task_id="paper", domain="task")).record_id
    slides = memory.add(Message("user", "大纲 封面 配色", task_id="slides", domain="task")).record_id
    assert [a.record_id for a in memory.explain("大纲", task_id="paper").admitted] == [paper]
    assert admission(memory, "大纲", slides, task_id="paper").reasons == ("other_task",)
    clock.advance(hours=2)
    assert admission(memory, "大纲", slides, task_id="slides").reasons[0] == "expired"
    memory.finish_task("default", "paper")
    assert admission(memory, "大纲", paper, task_id="paper").reasons == ("decayed",)  # weight × (1 − 1)


def test_tenants_and_exact_ids(memory):
    memory.add(Message("user", "记忆污染 secret", "u1", tenant_id="acme"))
    memory.add(Message("user", "记忆污染 other", "u10"))
    assert memory.explain("记忆污染", "u1").admissions == ()
    assert [a.record["content"] for a in memory.explain("记忆污染", "u1", tenant_id="acme")] == ["记忆污染 secret"]
    with pytest.raises(ValueError):
        memory.explain("记忆污染", "")
    with pytest.raises(TypeError):
        memory.build_context("记忆污染", None)


# -- duplicates and diversity --------------------------------------------------------------------


def test_identical_replies_collapse_into_one_with_a_count(memory):
    ids = [memory.add(Message("assistant", "我会基于当前会话窗口和通过阈值筛选的历史记忆回答。")).record_id for _ in range(3)]
    for record_id in ids:
        memory.verify(record_id)
    explanation = memory.explain("阈值 记忆", top_k=5)
    assert [(a.record_id, a.duplicates) for a in explanation.admitted] == [(ids[0], 2)]
    assert [a.duplicate_of for a in explanation.rejected] == [ids[0], ids[0]]


def test_mmr_trades_relevance_for_diversity(clock):
    with MemoryManager(store_path=None, clock=clock, threshold=0.1,
                       governance=GovernancePolicy(mmr_lambda=0.5, dedup=False)) as memory:  # near-rewordings on purpose
        memory.add(Message("user", "记忆污染 阈值 过滤"))
        memory.add(Message("user", "记忆污染 阈值 过滤 方法"))
        memory.add(Message("user", "记忆污染 用户 隔离"))
        order = [a.record["content"] for a in memory.explain("记忆污染 阈值", top_k=3).admitted]
    assert order == ["记忆污染 阈值 过滤", "记忆污染 用户 隔离", "记忆污染 阈值 过滤 方法"]


def test_article_mode_trusts_everything(clock):
    with MemoryManager(store_path=None, clock=clock, threshold=0.2, governance=False) as memory:
        memory.add(Message("assistant", "先做阈值过滤，再把短期窗口、摘要记忆和长期检索分层处理。"))
        assert [round(s, 3) for s, _ in memory.retrieve("记忆污染 阈值 Agent")] == [0.204]


def test_summaries_forget_corrected_facts_and_ended_sessions(clock):
    with MemoryManager(window_size=1, store_path=None, clock=clock) as memory:
        memory.add(Message("user", "顺便记一下周报"))
        memory.add(Message("user", "我用安卓手机"))
        memory.add(Message("user", "好的"))
        assert "安卓" in memory.summary()
        memory.add(Message("user", "刚才说错了，应该是Mac"))
        assert "安卓" not in memory.summary() and "周报" in memory.summary()
        memory.add(Message("user", "正在生成PPT大纲", session_id="s1", domain="session"))
        memory.add(Message("user", "好的"))
        assert "PPT" in memory.summary(session_id="s1") and "PPT" not in memory.summary()  # only that session sees it
        memory.end_session("default", "s1")
        assert "PPT" not in memory.summary(session_id="s1") and "周报" in memory.summary(session_id="s1")


def test_scenes_show_each_pollution_stopped():
    from v2_memory.demo.scenes import run_scenes

    def reasons(side, fragment):
        return [a["reasons"] for a in side["admissions"] if fragment in a["content"]]

    scenes = {scene["key"]: scene for scene in run_scenes()}
    assert reasons(scenes["correction"]["without_governance"], "安卓") == [[]]
    assert reasons(scenes["correction"]["with_governance"], "安卓")[0][0] == "superseded"
    assert scenes["correction"]["with_governance"]["memory_lines"] == ["persona:device = Mac"]
    assert reasons(scenes["negation"]["with_governance"], "咖啡") == [["shown_as_fact"]]
    assert scenes["negation"]["with_governance"]["memory_lines"][0].startswith("persona:recommend = NOT 咖啡")
    assert reasons(scenes["identifier"]["without_governance"], "CS202") == [[]]
    assert reasons(scenes["identifier"]["with_governance"], "CS202") == [["identifier_mismatch"]]
    assert "session_ended" in reasons(scenes["ended_session"]["with_governance"], "PPT")[0]
    assert reasons(scenes["echo"]["with_governance"], "循环")[0][0] == "unverified_model_output"


def test_continue_queries_lead_with_task_state(memory):
    memory.start_task("default", "paper")
    memory.set_task_progress("default", "paper", 0.5)
    memory.add(Message("user", "论文大纲 第三章 实验", task_id="paper", domain="task"))
    assert memory.build_context("继续下一步", task_id="paper").splitlines()[0] == "task:paper = active, 50% done"
    assert not memory.build_context("论文大纲", task_id="paper").startswith("task:")  # not a continuation


def test_usage_counts_only_what_a_context_showed(memory):
    """A memory already in the recent window is not "returned" by build_context; a candidate
    rejected for another session says nothing about use."""
    shown = memory.add(Message("user", "记忆污染 阈值")).record_id
    other = memory.add(Message("user", "记忆污染 阈值 会话", session_id="s1", domain="session")).record_id
    for _ in range(3):
        memory.build_context("记忆污染 阈值", session_id="s2")
    assert admission(memory, "记忆污染 阈值", shown).weight == 1.0  # in the window all along
    assert admission(memory, "记忆污染 阈值", other, session_id="s1").weight == 1.0  # rejected as other_session


def test_a_terse_correction_is_recalled_through_the_memory_it_corrected(memory):
    """"不是周三，是周四" shares nothing with "牙医预约 周几", but the memory it corrected does:
    the correction is judged on that memory's similarity, and says so in ``recalled_via``."""
    wednesday = memory.add(Message("user", "牙医预约在周三下午三点")).record_id
    thursday = memory.add(Message("user", "不是周三，是周四")).record_id
    explanation = memory.explain("牙医预约是周几")
    assert [a.record_id for a in explanation.admitted] == [thursday]
    assert explanation.admitted[0].recalled_via == wednesday
    assert next(a for a in explanation if a.record_id == wednesday).reasons[0] == "superseded"


def test_a_correction_naming_no_value_targets_the_same_topic(memory):
    """With words in common, the correction finds its topic; with none ("应该是Mac"), "刚才" means
    the previous message — never the latest persona fact a few messages back."""
    device = memory.add(Message("user", "我用安卓手机")).record_id
    meeting = memory.add(Message("user", "周会定在每周一上午十点")).record_id
    assert memory.add(Message("user", "更正：周会改到每周二上午十点")).supersedes == (meeting,)
    assert [f.value for f in memory.facts(status="pending")] == ["安卓手机"]  # the device fact is untouched
    flight = memory.add(Message("user", "My flight is on Tuesday")).record_id
    assert memory.add(Message("user", "Actually, I meant Friday")).supersedes == (flight,)
    assert [f.value for f in memory.facts()] == ["安卓手机"]  # no fact "platform = Friday"
    memory.add(Message("user", "我用安卓手机"))
    assert memory.add(Message("user", "刚才说错了，应该是Mac")).supersedes[0] != device


def test_saying_the_opposite_supersedes_the_earlier_declaration(memory):
    likes = memory.add(Message("user", "我喜欢吃海鲜")).record_id
    memory.confirm_fact("default", "likes")
    result = memory.add(Message("user", "我现在不喜欢吃海鲜了"))
    assert result.supersedes == (likes,) and result.fact["polarity"] == -1
    assert all(a.record_id != likes for a in memory.explain("海鲜").admitted)


def test_only_stop_words_in_common_is_not_relevance(memory):
    """"the" and "is" make a 0.2-ish cosine between unrelated English sentences."""
    record = memory.add(Message("user", "the movie is on the list")).record_id
    assert admission(memory, "what is the weather", record).reasons == ("only_stop_words",)


def test_an_exact_identifier_is_relevant_without_word_overlap(memory):
    """The exact match is the evidence: relevance 1.0, so use and time wear it down like any memory
    instead of pushing it under the threshold at the first retrieval."""
    record = memory.add(Message("user", "JIRA-4521: login page times out on mobile")).record_id
    found = admission(memory, "谁在跟 JIRA-4521", record)
    assert found.admitted and found.exact and found.relevance == 1.0 and found.effective == 1.0
    for _ in range(3):
        memory.retrieve("谁在跟 JIRA-4521")
    assert admission(memory, "谁在跟 JIRA-4521", record).admitted


def test_a_pending_statement_enters_as_the_users_own_words(memory):
    """Issue 8, class 11: the user's words are evidence. While its persona line waits for
    confirmation, a first-person statement (negative or positive) may enter as what the user said;
    the ``persona:`` line does not, until confirmed — and then the statement gives way to it."""
    negative = memory.add(Message("user", "别给我推荐恐怖片")).record_id
    positive = memory.add(Message("user", "我用安卓手机")).record_id
    assert admission(memory, "推荐恐怖片", negative).admitted
    assert admission(memory, "安卓手机", positive).admitted
    assert "persona:recommend" not in memory.build_context("推荐恐怖片")  # the fact line waits for confirmation
    memory.confirm_fact("default", "device")
    assert admission(memory, "安卓手机", positive).reasons == ("shown_as_fact",)


def test_a_recalled_correction_is_not_held_to_word_overlap_and_chains_are_followed(memory):
    """"我哪天去看牙医" shares 牙医 with the first memory only; two corrections later, the last one
    answers — recalled through the chain, and not rejected for sharing no word with the query."""
    memory.add(Message("user", "牙医预约在周三下午三点"))
    memory.add(Message("user", "不是周三，是周四"))
    last = memory.add(Message("user", "不对，应该是周五")).record_id
    admitted = memory.explain("牙医预约在哪天").admitted
    assert [a.record_id for a in admitted] == [last]


def test_restating_a_declaration_leaves_one_live_statement(memory):
    first = memory.add(Message("user", "我用安卓手机")).record_id
    memory.add(Message("user", "我用安卓手机"))
    assert admission(memory, "安卓手机", first).reasons[0] == "superseded"


def test_a_correction_stays_within_its_task(memory):
    memory.start_task("default", "trip")
    memory.start_task("default", "dentist")
    flight = memory.add(Message("user", "航班是周三晚上", task_id="trip", domain="task")).record_id
    result = memory.add(Message("user", "不是周三，是周四", task_id="dentist", domain="task"))
    assert flight not in result.supersedes


def test_a_store_written_without_governance_still_matches_identifiers(tmp_path, clock):
    path = tmp_path / "m.json"
    with MemoryManager(store_path=path, clock=clock, governance=False) as article:
        record = article.add(Message("user", "CS201 deadline friday")).record_id
    with MemoryManager(store_path=path, clock=clock) as governed:
        assert admission(governed, "CS201 deadline", record).admitted


def test_function_bigrams_alone_are_not_relevance(memory):
    cat = memory.add(Message("user", "我的猫")).record_id
    assert admission(memory, "我的快递", cat).reasons == ("only_stop_words",)
