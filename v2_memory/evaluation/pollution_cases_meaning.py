"""Pollution scenarios about what a memory *means*: corrected facts, negated preferences, the
model's own unverified output, and identifiers that look alike.

The companion of ``pollution_cases.py`` (who and where a memory may be read); same templates-and-
slots shape, same builder. Corrections come in the forms people use — restating ("更正：…",
"Correction: …"), naming the wrong value ("不是周三，是周四", "Sorry, it's Boulder, not Denver") or
neither ("刚才说错了，应该是 iPhone") — and sometimes after an unrelated message.
"""
from __future__ import annotations

from typing import Any

from .pollution_script import Scenario, Script

__all__ = ["MEANING_SCENARIOS"]


# -- stale: facts the user corrected -------------------------------------------------------------
def _corrections(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s, user = Script(name, "stale", lang), d["user"]
    (said, old_fact), (fixed, new_fact), key = d["device"]
    device = s.say(user, said, declares=old_fact)
    first = s.say(user, d["first"][0])
    s.reply(user, d["echo"])  # the model repeats the soon-corrected fact: unverified
    device_fix = s.say(user, fixed, corrects=device, declares=new_fact)
    s.do("confirm_fact", user, key)
    first_fix = s.say(user, d["first"][1], corrects=first)
    second = s.say(user, d["second"][0])
    between = s.say(user, d["between"])  # something else, before the correction comes
    second_fix = s.say(user, d["second"][1], corrects=second)
    control = s.say(user, d["control"])
    s.say(*d["peer"])  # another user, the same kind of fact
    q = d["questions"]
    for question in q["device"]:
        s.ask(user, question, should=f"fact:{new_fact}|{device_fix}")
    for question in q["first"]:
        s.ask(user, question, should=first_fix)
    s.ask(user, q["second"], should=second_fix)
    s.ask(user, q["between"], should=between)
    s.ask(user, q["control"], should=control)
    return s.build()


_CORRECTIONS = [
    ("stale-zh-dentist", "zh", {
        "peer": ("zhou", "我的牙医预约也在周三下午三点"), "user": "lin", "device": (("我用安卓手机", "device=安卓手机"), ("刚才说错了，应该是iPhone", "device=iPhone"), "device"),
        "first": ("牙医预约在周三下午三点", "不是周三，是周四"), "echo": "好的，牙医预约在周三下午三点。",
        "second": ("周会定在每周一上午十点", "更正：周会改到每周二上午十点"), "between": "今天的咖啡有点苦",
        "control": "我的车停在地下二层靠电梯",
        "questions": {"device": ("我用的是什么手机", "我的手机是安卓的吗"), "first": ("牙医预约是周几", "我哪天去看牙医"),
                      "second": "周会是每周几开", "between": "今天的咖啡怎么样", "control": "我的车停在哪一层"}}),
    ("stale-zh-leave", "zh", {
        "peer": ("lin", "我年假打算休五天，去云南"), "user": "ming", "device": (("我用华为笔记本", "device=华为笔记本"), ("不对，应该是联想笔记本", "device=联想笔记本"), "device"),
        "first": ("年假我打算休五天", "应该是休七天，不是休五天"), "echo": "明白，年假休五天。",
        "second": ("我的工位在三楼靠窗", "不是三楼，是四楼"), "between": "楼下食堂今天有饺子",
        "control": "我的直属领导是刘经理",
        "questions": {"device": ("我用什么笔记本", "我的笔记本是华为的吗"), "first": ("年假我打算休几天", "我年假休五天吗"),
                      "second": "我的工位在几楼", "between": "楼下食堂今天有什么", "control": "我的直属领导是谁"}}),
    ("stale-zh-piano", "zh", {
        "peer": ("zhao", "我女儿的钢琴课在周六上午"), "user": "wang", "device": (("我用小米手机", "device=小米手机"), ("我说错了，是OPPO手机", "device=OPPO手机"), "device"),
        "first": ("女儿的钢琴课在周六上午", "更正：女儿的钢琴课改到周日上午"), "echo": "记下了，女儿的钢琴课在周六上午。",
        "second": ("家里订的牛奶每天早上七点送", "更正：牛奶改成每天早上六点半送"), "between": "儿子说想养一只仓鼠",
        "control": "儿子的足球训练在周三放学后",
        "questions": {"device": ("我用的是什么牌子的手机", "我是用小米手机吗"), "first": ("女儿的钢琴课是哪天", "女儿周六上午有钢琴课吗"),
                      "second": "牛奶每天早上几点送", "between": "儿子说想养什么", "control": "儿子的足球训练是什么时候"}}),
    ("stale-en-offsite", "en", {
        "peer": ("bob", "Our team offsite is in Denver too"), "user": "alice", "device": (("I use an Android phone", "device=Android"), ("Actually, I meant an iPhone", "device=iPhone"), "device"),
        "first": ("The team offsite is in Denver", "Sorry, it's Boulder, not Denver"), "echo": "Great, the team offsite is in Denver.",
        "second": ("My flight to Tokyo leaves on Friday morning", "Correction: my flight to Tokyo leaves on Saturday morning"),
        "between": "Lunch with the design team was great", "control": "My badge photo is retaken on Monday",
        "questions": {"device": ("Which phone do I use", "Do I use an Android phone"), "first": ("Where is the team offsite", "Is the team offsite in Denver"),
                      "second": "When does my flight to Tokyo leave", "between": "How was lunch with the design team",
                      "control": "When is my badge photo retaken"}}),
    ("stale-en-demo", "en", {
        "peer": ("carol", "Our sprint demo is on Thursday at two"), "user": "bob", "device": (("I use a Dell laptop", "device=Dell laptop"), ("Correction: I use a ThinkPad laptop", "device=ThinkPad laptop"), "device"),
        "first": ("Our sprint demo is on Thursday at three", "Actually, I meant Friday at three, not Thursday at three"),
        "echo": "Sure, the sprint demo is on Thursday at three.",
        "second": ("The client call is with Sarah from finance", "No, it's Rachel from finance, not Sarah"),
        "between": "The printer on our floor is fixed", "control": "My desk is next to the kitchen",
        "questions": {"device": ("Which laptop do I use", "Is my laptop a Dell"), "first": ("When is our sprint demo", "Is the sprint demo on Thursday"),
                      "second": "Who is the client call with", "between": "Is the printer on our floor fixed",
                      "control": "Where is my desk"}}),
    ("stale-mixed-dinner", "mixed", {
        "peer": ("lin", "我们组的 team dinner 也在周五"), "user": "dev", "device": (("我用 Windows 笔记本", "device=Windows 笔记本"), ("刚才说错了，应该是 MacBook", "device=MacBook"), "device"),
        "first": ("Team dinner 定在周五的火锅店", "不是周五，是周四"), "echo": "OK, team dinner 周五火锅。",
        "second": ("Code freeze 从下周一开始", "更正：code freeze 从下周三开始"), "between": "今天的 standup 很短",
        "control": "我的 mentor 是 Priya",
        "questions": {"device": ("我用什么笔记本", "我的笔记本是 Windows 的吗"), "first": ("Team dinner 是哪天", "Team dinner 是周五吗"),
                      "second": "code freeze 从哪天开始", "between": "今天的 standup 怎么样", "control": "我的 mentor 是谁"}}),
]


# -- negation: preferences said "no" to, or revoked; and the model recommending them anyway ------
def _negations(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s, user = Script(name, "negation", lang), d["user"]
    (liked, liked_fact), (unliked, unliked_fact) = d["revoked"]
    s.say(user, liked, declares=liked_fact)  # later revoked: its positive form must not come back
    refusal, refusal_fact = d["refusal"]
    refused = s.say(user, refusal, declares=refusal_fact)
    s.do("confirm_fact", user, refusal_fact.split("=")[0])
    push_refused = s.reply(user, d["pushes"][0])  # the model recommends what the user refused
    likes, likes_fact = d["likes"]
    liked_now = s.say(user, likes, declares=likes_fact)
    revoked = s.say(user, unliked, declares=unliked_fact)
    s.do("confirm_fact", user, unliked_fact.split("=")[0])
    push_revoked = s.reply(user, d["pushes"][1])
    pending, pending_fact = d["unconfirmed"]
    unconfirmed = s.say(user, pending, declares=pending_fact)  # said, but not confirmed (yet)
    s.say(user, d["chatter"])
    s.say(*d["peer"])  # another user who likes exactly what this one refused
    q = d["questions"]
    for question in q["refusal"]:
        s.ask(user, question, should=f"fact:{refusal_fact}|{refused}", negation=push_refused)
    for question in q["revoked"]:
        s.ask(user, question, should=f"fact:{unliked_fact}|{revoked}", negation=push_revoked)
    s.ask(user, q["likes"], should=f"fact:{likes_fact}|{liked_now}")
    s.ask(user, q["unconfirmed"], should=f"fact:{pending_fact}|{unconfirmed}")
    return s.build()


_NEGATIONS = [
    ("negation-zh-coffee", "zh", {
        "peer": ("zhou", "我喜欢喝咖啡，每天一杯拿铁"), "user": "lin", "revoked": (("我喜欢吃辣", "likes=吃辣"), ("我不喜欢吃辣了", "likes=NOT 吃辣")),
        "refusal": ("别推荐咖啡", "recommend=NOT 咖啡"), "likes": ("我喜欢茶", "likes=茶"),
        "pushes": ("那我给你推荐一杯拿铁咖啡吧", "推荐你去吃重庆火锅，特别辣特别过瘾"),
        "unconfirmed": ("别给我推荐恐怖片", "recommend=NOT 恐怖片"), "chatter": "下午要开三个会",
        "questions": {"refusal": ("推荐一杯咖啡吧", "下午来杯咖啡提提神，推荐一款"),
                      "revoked": ("晚饭推荐一家吃辣的馆子", "我喜欢吃辣吗"), "likes": "我喜欢喝茶吗",
                      "unconfirmed": "周末推荐一部恐怖片"}}),
    ("negation-zh-diet", "zh", {
        "peer": ("lin", "我喜欢吃香菜，越多越好"), "user": "ming", "revoked": (("我喜欢吃海鲜", "likes=吃海鲜"), ("我不喜欢吃海鲜", "likes=NOT 吃海鲜")),
        "refusal": ("不要推荐香菜", "recommend=NOT 香菜"), "likes": ("我喜欢吃面食", "likes=吃面食"),
        "pushes": ("推荐你试试香菜牛肉，很下饭", "推荐你去吃海鲜自助，吃海鲜很划算"),
        "unconfirmed": ("不用推荐健身房", "recommend=NOT 健身房"), "chatter": "今天地铁人特别多",
        "questions": {"refusal": ("推荐一道香菜做的菜", "香菜牛肉推荐吗"),
                      "revoked": ("周末推荐去吃海鲜吗", "我喜欢吃海鲜吗"), "likes": "我喜欢吃面食吗",
                      "unconfirmed": "推荐一家附近的健身房"}}),
    ("negation-zh-travel", "zh", {
        "peer": ("zhao", "我喜欢邮轮旅行，去年坐了两次"), "user": "wang", "revoked": (("我喜欢坐红眼航班", "likes=坐红眼航班"), ("我不喜欢坐红眼航班", "likes=NOT 坐红眼航班")),
        "refusal": ("别推荐邮轮旅行", "recommend=NOT 邮轮旅行"), "likes": ("我喜欢住民宿", "likes=住民宿"),
        "pushes": ("推荐你试试地中海邮轮旅行，很适合全家", "推荐你坐红眼航班，省下一晚住宿"),
        "unconfirmed": ("别推荐跟团游", "recommend=NOT 跟团游"), "chatter": "女儿今天数学考了满分",
        "questions": {"refusal": ("暑假推荐什么邮轮旅行", "邮轮旅行推荐哪条航线"),
                      "revoked": ("去三亚推荐坐红眼航班吗", "我喜欢坐红眼航班吗"), "likes": "我喜欢住民宿吗",
                      "unconfirmed": "推荐一个跟团游的线路"}}),
    ("negation-en-coffee", "en", {
        "peer": ("bob", "I like coffee and horror movies"), "user": "alice", "revoked": (("I like horror movies", "likes=horror movies"), ("I don't like horror movies anymore", "likes=NOT horror movies")),
        "refusal": ("Please don't recommend coffee to me", "recommend=NOT coffee"), "likes": ("I like green tea", "likes=green tea"),
        "pushes": ("I recommend a flat white coffee to start your day", "You should watch the new horror movies this weekend"),
        "unconfirmed": ("Don't recommend cruises", "recommend=NOT cruises"), "chatter": "The elevator was broken again",
        "questions": {"refusal": ("Can you recommend a coffee for the morning", "Which coffee do you recommend"),
                      "revoked": ("Recommend some horror movies for tonight", "Do I like horror movies"),
                      "likes": "Do I like green tea", "unconfirmed": "Recommend cruises for the summer"}}),
    ("negation-en-spicy", "en", {
        "peer": ("carol", "I like fast food and spicy food"), "user": "bob", "revoked": (("I love spicy food", "likes=spicy food"), ("I don't like spicy food", "likes=NOT spicy food")),
        "refusal": ("Never recommend fast food", "recommend=NOT fast food"), "likes": ("I like Italian food", "likes=Italian food"),
        "pushes": ("I recommend the fast food place on the corner, it is quick", "Try the spicy food at the Sichuan place, very spicy"),
        "unconfirmed": ("Please don't recommend podcasts", "recommend=NOT podcasts"), "chatter": "My train was late this morning",
        "questions": {"refusal": ("Recommend a fast food place for lunch", "Is fast food a good lunch for me"),
                      "revoked": ("Recommend a spicy food place for dinner", "Do I like spicy food"),
                      "likes": "Do I like Italian food", "unconfirmed": "Recommend podcasts for my commute"}}),
    ("negation-mixed-snacks", "mixed", {
        "peer": ("lin", "我喜欢吃日料，also energy drinks"), "user": "dev", "revoked": (("I like energy drinks", "likes=energy drinks"), ("I don't like energy drinks", "likes=NOT energy drinks")),
        "refusal": ("别推荐日料", "recommend=NOT 日料"), "likes": ("我喜欢吃 dumplings", "likes=吃 dumplings"),
        "pushes": ("推荐你去那家日料店，omakase 很棒", "Grab some energy drinks for the deadline, I recommend them"),
        "unconfirmed": ("别推荐 crypto", "recommend=NOT crypto"), "chatter": "今天 CI 又挂了",
        "questions": {"refusal": ("晚饭推荐一家日料", "日料 omakase 推荐吗"),
                      "revoked": ("Recommend energy drinks for tonight", "Do I like energy drinks"),
                      "likes": "我喜欢吃 dumplings 吗", "unconfirmed": "推荐一个 crypto 项目"}}),
]


# -- unverified: the model's answers, wrong or echoing, next to what users and tools said -------
def _model_output(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s, user = Script(name, "unverified", lang), d["user"]
    asked = s.say(user, d["question"])
    s.reply(user, d["wrong"])  # a confident, wrong answer nobody confirmed
    truth = s.say(user, d["truth"])
    good = s.reply(user, d["good"])
    s.do("verify", user, good)  # the user confirmed this one
    tool = s.say(user, d["tool"], role="tool")
    for _ in range(2):
        s.reply(user, d["echo"])  # the agent describing itself, twice
    s.say(*d["peer"])  # another user on the same topic
    q, topic = d["questions"], (asked, truth, good, tool)  # one conversation, one topic
    for question in q["truth"]:
        s.ask(user, question, should=truth, related=tuple(k for k in topic if k != truth))
    s.ask(user, q["good"], should=good, related=tuple(k for k in topic if k != good))
    s.ask(user, q["tool"], should=tool, related=tuple(k for k in topic if k != tool))
    s.ask(user, q["echo"])  # about the agent itself: nothing said should answer it
    return s.build()


_MODEL_OUTPUT = [
    ("unverified-zh-relu", "zh", {
        "peer": ("zhou", "ReLU 和 Sigmoid 哪个激活函数更好？"), "user": "lin", "question": "ReLU 是什么？", "wrong": "ReLU 是循环神经元，用于记忆序列。",
        "truth": "ReLU 是激活函数，不是循环神经元，不能记忆序列", "good": "Sigmoid 函数的输出范围是 0 到 1。",
        "tool": "检索结果：Transformer 论文发表于 2017 年", "echo": "我会基于当前会话窗口和通过阈值筛选的历史记忆回答。",
        "questions": {"truth": ("ReLU 是什么激活函数", "ReLU 能记忆序列吗"), "good": "Sigmoid 函数的输出范围是多少",
                      "tool": "Transformer 论文哪年发表", "echo": "你会基于什么回答"}}),
    ("unverified-zh-meeting", "zh", {
        "peer": ("wang", "我们组的项目评审在下周三"), "user": "ming", "question": "项目评审是哪天？", "wrong": "项目评审需要每人准备纸质材料二十份。",
        "truth": "项目评审定在下周一上午，在大会议室", "good": "会议纪要：评审前要把接口文档发给王总。",
        "tool": "日历：项目评审 下周一 上午九点 大会议室", "echo": "我会根据你的日程帮你安排提醒。",
        "questions": {"truth": ("项目评审在哪天在哪里", "项目评审要准备纸质材料吗"), "good": "评审前要把接口文档发给谁",
                      "tool": "日历上项目评审几点开始", "echo": "你会怎么帮我安排提醒"}}),
    ("unverified-zh-recipe", "zh", {
        "peer": ("zhao", "我家红烧肉炖四十分钟"), "user": "wang", "question": "红烧肉怎么做？", "wrong": "红烧肉只要炖五分钟就可以出锅。",
        "truth": "我家红烧肉要小火炖一个小时，五分钟根本炖不烂", "good": "红烧肉先焯水，再炒糖色。",
        "tool": "菜谱库：红烧肉需要五花肉五百克", "echo": "我可以为你推荐更多家常菜谱。",
        "questions": {"truth": ("我家红烧肉要炖多久", "红烧肉炖五分钟能出锅吗"), "good": "红烧肉先焯水还是先炒糖色",
                      "tool": "红烧肉需要多少五花肉", "echo": "你还能推荐什么家常菜谱"}}),
    ("unverified-en-capital", "en", {
        "peer": ("bob", "I think the capital of Australia is Sydney"), "user": "alice", "question": "What is the capital of Australia?", "wrong": "The capital of Australia is Sydney.",
        "truth": "The capital of Australia is Canberra, I checked the atlas", "good": "Canberra became the capital of Australia in 1913.",
        "tool": "Weather API: Canberra 18 degrees and light rain", "echo": "I can help you plan your trip to Australia.",
        "questions": {"truth": ("What is the capital of Australia", "Is Sydney the capital of Australia"),
                      "good": "When did Canberra become the capital", "tool": "What is the weather in Canberra",
                      "echo": "Can you help me plan a trip"}}),
    ("unverified-en-bug", "en", {
        "peer": ("carol", "The checkout page crash happens on my phone too"), "user": "bob", "question": "Why does the checkout page crash?", "wrong": "The checkout page crash is caused by the payment provider being down.",
        "truth": "The checkout page crash is a null cart id in the session cookie", "good": "The fix for the cart id needs a migration of old sessions.",
        "tool": "Error tracker: checkout page crash seen 412 times today", "echo": "I will keep monitoring the error tracker for you.",
        "questions": {"truth": ("What causes the checkout page crash", "Is the payment provider causing the checkout crash"),
                      "good": "What does the fix for the cart id need", "tool": "How many times did the checkout page crash today",
                      "echo": "Will you keep monitoring the errors"}}),
    ("unverified-mixed-deploy", "mixed", {
        "peer": ("lin", "我们组上次 deploy 也 rollback 了"), "user": "dev", "question": "上次 deploy 为什么 rollback？", "wrong": "上次 deploy rollback 是因为 DNS 配置错了。",
        "truth": "上次 deploy rollback 是因为 database migration 超时", "good": "下次 deploy 前先在 staging 跑一遍 migration。",
        "tool": "CI log: deploy pipeline 耗时 18 分钟", "echo": "I'll summarize the deploy status for you every morning.",
        "questions": {"truth": ("上次 deploy 为什么 rollback", "rollback 是因为 DNS 吗"), "good": "下次 deploy 前要先做什么",
                      "tool": "deploy pipeline 耗时多久", "echo": "Will you summarize the deploy status"}}),
]


# -- identifiers: CS201 vs CS202, #4521 vs #4512, CA1831 vs CA1813 --------------------------------
def _identifiers(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s, user = Script(name, "identifier", lang), d["user"]
    notes = [s.say(user, note) for note, _ in d["items"]]
    s.reply(user, d["echo"])  # the model mixes two of them up
    s.say(d["peer"], d["peer_note"])  # another user with the same identifier
    for index, (_, questions) in enumerate(d["items"]):
        for question in questions:
            s.ask(user, question, should=notes[index], identifier=tuple(n for n in notes if n != notes[index]))
    s.ask(user, d["missing"], identifier=tuple(notes))  # an identifier nobody mentioned
    return s.build()


_IDENTIFIERS = [
    ("identifier-zh-courses", "zh", {
        "user": "lin", "peer": "ming", "peer_note": "CS201 的作业我已经交了",
        "items": [("CS201 第三次作业 周五截止", ("CS201 第三次作业截止时间", "CS 201 作业周几交")),
                  ("CS202 第三次作业 周三截止", ("CS202 第三次作业什么时候交",)),
                  ("CS210 期中考试在教学楼 B302", ("CS210 期中考试在哪个教室",))],
        "echo": "CS201 的作业好像是周三截止。", "missing": "CS203 有作业吗"}),
    ("identifier-zh-tickets", "zh", {
        "user": "ming", "peer": "wang", "peer_note": "工单 #4521 我这边也能复现",
        "items": [("工单 #4521：登录页白屏，已转给前端", ("工单 #4521 现在在谁手上", "#4521 是什么问题")),
                  ("工单 #4512：支付回调超时，等后端排查", ("工单 #4512 是什么问题",)),
                  ("工单 #5421：导出报表乱码，已修复", ("工单 #5421 修好了吗",))],
        "echo": "工单 #4512 是登录页白屏的问题。", "missing": "工单 #4251 是什么问题"}),
    ("identifier-zh-versions", "zh", {
        "user": "wang", "peer": "lin", "peer_note": "v2.3.1 在我们这边也有问题",
        "items": [("版本 v2.3.1 修复了导出中文乱码", ("v2.3.1 修复了什么", "v2.3.1 版本改了哪些")),
                  ("版本 v2.3.0 引入了导出中文乱码", ("v2.3.0 有什么问题",)),
                  ("版本 v2.4.0 计划下个月发布", ("v2.4.0 什么时候发布",))],
        "echo": "v2.3.0 已经修复了导出乱码。", "missing": "v2.2.9 修复了什么"}),
    ("identifier-en-flights", "en", {
        "user": "alice", "peer": "bob", "peer_note": "I am also on flight CA1831",
        "items": [("Flight CA1831 to Beijing departs at 8:05 from gate 12", ("When does flight CA1831 depart", "Which gate for CA1831")),
                  ("Flight CA1813 to Shanghai departs at 9:40 from gate 3", ("When does flight CA1813 depart",)),
                  ("Flight CA1381 was cancelled yesterday", ("What happened to flight CA1381",))],
        "echo": "Your flight CA1813 departs at 8:05.", "missing": "When does flight CA1318 depart"}),
    ("identifier-en-jira", "en", {
        "user": "bob", "peer": "carol", "peer_note": "JIRA-123 blocks my work too",
        "items": [("JIRA-123 is the login timeout bug, assigned to Mei", ("Who has JIRA-123", "What is JIRA-123 about")),
                  ("JIRA-132 is the CSV export bug, waiting for review", ("What is the status of JIRA-132",)),
                  ("JIRA-213 is the dark mode feature for next sprint", ("When is JIRA-213 planned",))],
        "echo": "JIRA-132 is assigned to Mei.", "missing": "What is JIRA-231 about"}),
    ("identifier-mixed-orders", "mixed", {
        "user": "dev", "peer": "lin", "peer_note": "订单 A1023 我也查了",
        "items": [("订单 A1023 已发货，tracking 在邮件里", ("订单 A1023 发货了吗", "A1023 的 tracking 在哪")),
                  ("订单 A1032 申请了退款，refund pending", ("订单 A1032 退款了吗",)),
                  ("订单 A1203 地址写错了，要联系客服改", ("订单 A1203 怎么了",))],
        "echo": "订单 A1032 已发货。", "missing": "订单 A1302 发货了吗"}),
]

MEANING_SCENARIOS = (tuple(_corrections(*case) for case in _CORRECTIONS) + tuple(_negations(*case) for case in _NEGATIONS)
                     + tuple(_model_output(*case) for case in _MODEL_OUTPUT) + tuple(_identifiers(*case) for case in _IDENTIFIERS))
