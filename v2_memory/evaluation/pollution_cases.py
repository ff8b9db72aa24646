"""The pollution benchmark's labelled scenarios, written for this project (Chinese, English, mixed).

Each kind of pollution has one template — a little history with a fixed shape — filled with
several sets of slot values, so every scenario is a coherent story of its own. This module holds
the kinds about *who and where* a memory may be read (noise, other users, erasure, wrong session
or task); ``pollution_cases_meaning.py`` holds the kinds about *what a memory means* (corrections,
negations, model output, look-alike identifiers). ``SCENARIOS`` is all of them, in kind order.

How to read a template: ``say`` writes a user message and returns its key, ``reply`` writes the
model's, ``do`` is an action, ``ask`` a labelled query (``should`` = what the context needs;
``related`` = harmless). Everything else a query must not see is derived from the script
(``pollution_script.labels``).

Queries share words with the memory they need, because the article's similarity is lexical and
this benchmark measures governance, not the embedding — except where that is the point: a terse
correction ("不是周三，是周四") names no subject, so only a governor that follows the correction
can bring it to a question about the dentist.
"""
from __future__ import annotations

from typing import Any

from .pollution_cases_meaning import MEANING_SCENARIOS
from .pollution_script import KINDS, Scenario, Script

__all__ = ["SCENARIOS"]


# -- noise: one topic that matters, amid chatter; and questions about things never said ----------
def _noise(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s, user = Script(name, "noise", lang), d["user"]
    facts, chats = [], []
    for index, ((fact, _), (chat, _)) in enumerate(zip(d["facts"], d["chatter"])):
        facts.append(s.say(user, fact))
        chats.append(s.say(user, chat))
        if index == 0:
            s.say(user, d["fillers"][0])
            s.reply(user, d["echo"])  # the model repeats the first fact: unverified
    s.say(d["peer"], d["peer_note"])  # another user, same topic
    s.say(user, d["fillers"][1])
    for index, (_, question) in enumerate(d["facts"]):
        s.ask(user, question, should=facts[index], related=tuple(f for f in facts if f != facts[index]))
    for index, (_, question) in enumerate(d["chatter"]):
        s.ask(user, question, should=chats[index])
    for question in d["unasked"]:
        s.ask(user, question)  # never talked about: nothing should enter
    return s.build()


_NOISE = [
    ("noise-zh-trip", "zh", {
        "user": "lin", "peer": "zhou", "fillers": ("好的", "嗯嗯"),
        "facts": [("下个月去成都出差，住在春熙路的全季酒店", "我去成都出差住哪个酒店"),
                  ("成都出差要见的客户是蓝海科技的周总", "成都出差要见哪个客户"),
                  ("出差的报销单月底前交给财务部小张", "出差报销单交给谁")],
        "chatter": [("今天北京下大雨，地铁特别挤", "今天北京下雨了吗"),
                    ("中午吃了一碗牛肉拉面，有点咸", "中午吃的牛肉拉面怎么样"),
                    ("周末想去看新上映的科幻电影", "周末想去看什么电影")],
        "unasked": ("帮我推荐一本讲时间管理的书", "绿萝多久浇一次水"),
        "echo": "好的，已记下：成都出差住春熙路的全季酒店。", "peer_note": "我下个月也去成都出差，住在太古里附近"}),
    ("noise-zh-guitar", "zh", {
        "user": "ming", "peer": "lin", "fillers": ("哈哈", "收到"),
        "facts": [("我在学吉他，每周六下午跟陈老师上课", "我的吉他课每周几上课"),
                  ("陈老师让我这个月练熟《童年》的前奏", "陈老师让我这个月练什么"),
                  ("新买的吉他琴弦是达达里奥的", "我的吉他琴弦是什么牌子")],
        "chatter": [("家里的猫最近总在半夜跑酷", "家里的猫最近怎么了"),
                    ("快递说明天上午送到公司前台", "快递明天什么时候送到"),
                    ("昨晚打游戏打到两点，好困", "昨晚打游戏打到几点")],
        "unasked": ("明天出门要带伞吗", "帮我写一段生日祝福"),
        "echo": "好的，记住了：每周六下午上吉他课。", "peer_note": "我也在学吉他，每周日上午上网课"}),
    ("noise-zh-wedding", "zh", {
        "user": "wang", "peer": "zhao", "fillers": ("好滴", "谢谢"),
        "facts": [("婚礼定在十月三号，在西湖边的草坪上办", "婚礼定在哪里办"),
                  ("婚宴一共请了二十桌客人", "婚宴请了多少桌客人"),
                  ("婚纱照约了下周六去拍", "婚纱照约在哪天拍")],
        "chatter": [("今天开会开了一下午，头都大了", "今天下午开会开了多久"),
                    ("楼下新开了一家奶茶店，排队的人好多", "楼下新开的奶茶店排队吗"),
                    ("最近在追一部古装剧，每天看两集", "最近在追什么剧")],
        "unasked": ("怎么学会游泳", "推荐几首适合跑步听的歌"),
        "echo": "好的，婚礼在西湖边的草坪上办，我记下了。", "peer_note": "我表姐的婚礼也在西湖边办"}),
    ("noise-en-kitchen", "en", {
        "user": "alice", "peer": "bob", "fillers": ("ok", "thanks"),
        "facts": [("The kitchen renovation starts on March 3 with the contractor Dave", "When does the kitchen renovation start"),
                  ("The new kitchen cabinets are light oak with brass handles", "What are the new kitchen cabinets made of"),
                  ("The renovation budget is twelve thousand dollars including appliances", "What is the renovation budget")],
        "chatter": [("The weather was awful today, rain all afternoon", "How was the weather today"),
                    ("I had ramen for lunch and it was too salty", "What did I have for lunch"),
                    ("Thinking about watching the new space movie this weekend", "Which movie am I watching this weekend")],
        "unasked": ("Recommend a good book about habits", "How often should succulents get water"),
        "echo": "Got it: the kitchen renovation starts on March 3 with Dave.",
        "peer_note": "Our kitchen renovation starts in April"}),
    ("noise-en-marathon", "en", {
        "user": "bob", "peer": "carol", "fillers": ("cool", "got it"),
        "facts": [("I signed up for the Berlin marathon in late September", "Which marathon did I sign up for"),
                  ("My coach wants three easy runs and one long run every week", "How many runs every week does my coach want"),
                  ("My running shoes are the blue Pegasus pair from last spring", "Which running shoes do I have")],
        "chatter": [("The printer at work jammed again this morning", "What happened to the printer at work"),
                    ("My sister is visiting next weekend with her kids", "Who is visiting next weekend"),
                    ("I finally fixed the squeaky door in the hallway", "Did I fix the squeaky door")],
        "unasked": ("Suggest a recipe for a quick dinner", "How do I renew a passport"),
        "echo": "Noted: you signed up for the Berlin marathon in September.",
        "peer_note": "I signed up for the Chicago marathon in October"}),
    ("noise-mixed-moving", "mixed", {
        "user": "dev", "peer": "lin", "fillers": ("ok", "好的"),
        "facts": [("下周六搬家，新公寓在静安区，moving company 是蚂蚁搬家", "搬家找的 moving company 是哪家"),
                  ("新公寓的 Wi-Fi 要找物业开通", "新公寓的 Wi-Fi 找谁开通"),
                  ("搬家前要把旧沙发挂到闲鱼上卖掉", "旧沙发搬家前怎么处理")],
        "chatter": [("Standup ran long again today, 开了四十分钟", "今天 standup 开了多久"),
                    ("午饭点了 poke bowl，还不错", "午饭点了什么"),
                    ("周末去佘山 hiking 了，腿好酸", "周末去哪里 hiking 了")],
        "unasked": ("推荐一个好听的 podcast", "How do I set up an SSH key for git"),
        "echo": "好的，下周六搬家，搬家公司是蚂蚁搬家。", "peer_note": "我下个月也要搬家，还没找搬家公司"}),
]


# -- other users and tenants: the same kind of fact, said by different people -------------------
def _other_users(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s = Script(name, "other_user", lang)
    people = d["people"]  # [(user, tenant, first statement, second statement)] x 3
    first = [s.say(user, a, tenant=tenant) for user, tenant, a, _ in people]
    second = [s.say(user, b, tenant=tenant) for user, tenant, _, b in people]
    s.reply(people[1][0], d["echo"], tenant=people[1][1])
    quiet_user, quiet_tenant = d["quiet"]
    s.say(quiet_user, d["quiet_note"], tenant=quiet_tenant)
    question_a, question_b = d["questions"]
    for (user, tenant, _, _), key in zip(people, first):
        s.ask(user, question_a, should=key, tenant=tenant)
    for (user, tenant, _, _), key in zip(people, second):
        s.ask(user, question_b, should=key, tenant=tenant)
    s.ask(quiet_user, question_a, tenant=quiet_tenant)  # never said it: only others could answer
    return s.build()


_OTHER_USERS = [
    ("other-zh-thesis", "zh", {
        "people": [("lin", None, "我的毕业论文题目是图神经网络推荐系统", "我的导师是周教授，每周三开组会"),
                   ("ming", None, "我的毕业论文题目是联邦学习中的隐私保护", "我的导师是吴教授，每周五开组会"),
                   ("wang", None, "我的毕业论文题目是丝绸之路上的茶叶贸易", "我的导师是郑教授，每周一开组会")],
        "echo": "好的，你的论文题目是联邦学习中的隐私保护。", "quiet": ("zhao", None), "quiet_note": "今天食堂的红烧肉不错",
        "questions": ("我的毕业论文题目是什么", "我的导师是哪位教授，组会是周几")}),
    ("other-zh-tenants", "zh", {
        "people": [("u1", "acme", "我负责的项目代号是青鸟，下周上线", "青鸟项目的测试环境由小刘维护"),
                   ("u1", "globex", "我负责的项目代号是白鲸，月底评审", "白鲸项目的测试环境由老陈维护"),
                   ("u10", "acme", "我负责的项目代号是金雕，还在立项", "金雕项目的测试环境还没搭好")],
        "echo": "明白，你负责白鲸项目，月底评审。", "quiet": ("u1", None), "quiet_note": "今天下午有点困",
        "questions": ("我负责的项目代号是什么", "项目的测试环境由谁维护")}),
    ("other-zh-family", "zh", {
        "people": [("mom", "family", "我的体检约在下周二上午，要空腹", "我每天早上吃一片降压药"),
                   ("dad", "family", "我的体检约在下周四下午，不用空腹", "我每天饭后吃两片胃药"),
                   ("kid", "family", "我的体检约在周六上午，学校统一安排", "我每天晚上吃一颗维生素")],
        "echo": "好的爸爸，体检在下周四下午。", "quiet": ("grandma", "family"), "quiet_note": "今天去公园跳了广场舞",
        "questions": ("我的体检约在什么时候", "我每天吃什么药")}),
    ("other-en-roommates", "en", {
        "people": [("alice", None, "My gym trainer is Sam and we train on Mondays", "My dentist is Dr. Lee on Pine Street"),
                   ("bob", None, "My gym trainer is Priya and we train on Thursdays", "My dentist is Dr. Park downtown"),
                   ("carol", None, "My gym trainer is Marco and we train on Saturdays", "My dentist is Dr. Gomez near the station")],
        "echo": "Sure Bob, Priya on Thursdays.", "quiet": ("dan", None), "quiet_note": "The hallway light is broken again",
        "questions": ("Who is my gym trainer and when do we train", "Who is my dentist")}),
    ("other-en-tenants", "en", {
        "people": [("admin", "acme", "Our on-call rotation starts with Maria this week", "Our release freeze begins on Friday"),
                   ("admin", "initech", "Our on-call rotation starts with Tom this week", "Our release freeze begins on Wednesday"),
                   ("ops", "acme", "Our on-call rotation starts with Ken next week", "Our release freeze was cancelled")],
        "echo": "Noted, Tom is on call this week.", "quiet": ("admin", "hooli"), "quiet_note": "Coffee machine on floor two is fixed",
        "questions": ("Who starts our on-call rotation", "When does our release freeze begin")}),
    ("other-mixed-lookalike-ids", "mixed", {
        "people": [("u1", None, "我最喜欢的午饭是公司楼下的 Thai place", "My parking spot is on level two, 靠近电梯"),
                   ("u10", None, "我最喜欢的午饭是 food court 里的麻辣烫", "My parking spot is on level three, 靠近出口"),
                   ("u100", None, "我最喜欢的午饭是自己带的 bento", "My parking spot is outside, 在东门")],
        "echo": "OK, 麻辣烫 in the food court.", "quiet": ("u2", None), "quiet_note": "Meeting notes are in the shared drive",
        "questions": ("我最喜欢的午饭是什么", "Where is my parking spot")}),
]


# -- erasure: a user erased (and back again), one memory forgotten, a fact forgotten -----------
def _erasure(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s = Script(name, "erased", lang)
    (keeper, keeper_tenant), (leaver, leaver_tenant) = d["keeper"], d["leaver"]
    kept = s.say(keeper, d["keep"], tenant=keeper_tenant)
    s.say(leaver, d["leave"][0], tenant=leaver_tenant)
    s.say(leaver, d["leave"][1], tenant=leaver_tenant)
    statement, fact_key, declares = d["leave_fact"]
    s.say(leaver, statement, tenant=leaver_tenant, declares=declares)
    s.do("confirm_fact", leaver, fact_key, tenant=leaver_tenant)
    s.reply(leaver, d["echo"], tenant=leaver_tenant)
    statement, keeper_key, keeper_declares = d["keep_fact"]
    keeper_fact = s.say(keeper, statement, tenant=keeper_tenant, declares=keeper_declares)
    s.do("confirm_fact", keeper, keeper_key, tenant=keeper_tenant)
    forgotten = s.say(keeper, d["forget"][0], tenant=keeper_tenant)
    request = s.say(keeper, d["forget"][1], tenant=keeper_tenant)  # "delete what I just said"
    s.do("forget", keeper, forgotten, tenant=keeper_tenant)
    s.do("erase_user", leaver, tenant=leaver_tenant)
    back = s.say(leaver, d["comeback"], tenant=leaver_tenant)  # the same id, starting afresh
    for question in d["leaver_questions"]:
        s.ask(leaver, question, tenant=leaver_tenant)  # nothing of before may answer
    s.ask(leaver, d["comeback_question"], should=back, tenant=leaver_tenant)
    s.ask(keeper, d["keep_question"], should=kept, tenant=keeper_tenant)
    s.ask(keeper, d["forget_question"], related=request, tenant=keeper_tenant)
    s.ask(keeper, d["keep_fact_question"], should=f"fact:{keeper_declares}|{keeper_fact}", tenant=keeper_tenant)
    return s.build()


_ERASURE = [
    ("erased-zh-account", "zh", {
        "keeper": ("lin", None), "leaver": ("ming", None),
        "keep": "我家住在海淀区五道口附近", "leave": ("我家住在朝阳区望京西园", "我下周要去医院复查膝盖的旧伤"),
        "leave_fact": ("记住我不吃香菜", "diet", "diet=NOT 香菜"), "echo": "好的，你家在望京西园，下周去医院复查。",
        "keep_fact": ("我对花生过敏", "allergy", "allergy=NOT 花生"),
        "forget": ("我的备用钥匙藏在门口的花盆底下", "刚才那条关于钥匙的删掉吧"),
        "comeback": "我刚搬到杭州，现在住在西湖区", "comeback_question": "我现在住在杭州哪个区",
        "leaver_questions": ("我家住在哪里", "我下周要去医院复查什么", "推荐一道不放香菜的菜"),
        "keep_question": "我家住在哪个区", "forget_question": "我的备用钥匙藏在哪里",
        "keep_fact_question": "推荐一道不含花生的菜"}),
    ("erased-zh-tenant", "zh", {
        "keeper": ("u1", "globex"), "leaver": ("u1", "acme"),
        "keep": "我的工位在五楼东区靠窗", "leave": ("我的工位在三楼西区靠门", "我的年度绩效面谈约在周四"),
        "leave_fact": ("我用安卓手机", "device", "device=安卓手机"), "echo": "收到，你的工位在三楼西区。",
        "keep_fact": ("我是素食者", "diet", "diet=素食者"),
        "forget": ("我的门禁卡补办申请编号写在笔记本最后一页", "把门禁卡那条删了"),
        "comeback": "我是新入职的，工位还没分配", "comeback_question": "我的工位分配了吗",
        "leaver_questions": ("我的工位在哪里", "绩效面谈约在哪天", "我用什么手机"),
        "keep_question": "我的工位在几楼", "forget_question": "门禁卡补办申请编号写在哪里",
        "keep_fact_question": "我吃素吗"}),
    ("erased-zh-clinic", "zh", {
        "keeper": ("wang", None), "leaver": ("zhao", None),
        "keep": "我每周三晚上去游泳馆游泳", "leave": ("我每周二晚上去心理咨询室做咨询", "我的咨询师姓许，很耐心"),
        "leave_fact": ("别推荐酒吧", "recommend", "recommend=NOT 酒吧"), "echo": "好的，每周二晚上的咨询我会提醒你。",
        "keep_fact": ("我喜欢爬山", "likes", "likes=爬山"),
        "forget": ("我欠表哥两千块钱还没还", "把欠钱那条删掉"),
        "comeback": "我想每周练两次瑜伽", "comeback_question": "我每周想练几次瑜伽",
        "leaver_questions": ("我每周二晚上去做什么", "我的咨询师姓什么", "周末推荐去哪个酒吧"),
        "keep_question": "我每周几去游泳", "forget_question": "我欠表哥多少钱",
        "keep_fact_question": "周末推荐去爬山吗"}),
    ("erased-en-account", "en", {
        "keeper": ("alice", None), "leaver": ("bob", None),
        "keep": "My apartment is on Maple Avenue near the library", "leave": ("My apartment is on Birch Road by the river", "I am seeing a lawyer about my divorce on Monday"),
        "leave_fact": ("I don't eat pork", "diet", "diet=NOT pork"), "echo": "Understood, the lawyer on Monday about the divorce.",
        "keep_fact": ("I'm allergic to shellfish", "allergy", "allergy=NOT shellfish"),
        "forget": ("The spare key is under the blue flower pot", "Please delete what I said about the spare key"),
        "comeback": "I just moved to Denver and live downtown", "comeback_question": "Where do I live now in Denver",
        "leaver_questions": ("Where is my apartment", "What am I seeing a lawyer about", "Suggest a dinner without pork"),
        "keep_question": "Which street is my apartment on", "forget_question": "Where is the spare key",
        "keep_fact_question": "Suggest a dinner without shellfish"}),
    ("erased-en-tenant", "en", {
        "keeper": ("sam", "initech"), "leaver": ("sam", "acme"),
        "keep": "My manager at the office is Joanna from the platform team", "leave": ("My manager at the office is Peter from the billing team", "I asked for a raise in the review meeting"),
        "leave_fact": ("I use a Windows laptop", "device", "device=Windows laptop"), "echo": "Got it, Peter from billing is your manager.",
        "keep_fact": ("I'm vegetarian", "diet", "diet=vegetarian"),
        "forget": ("The offsite hotel booking reference is in my inbox", "Forget the hotel booking note please"),
        "comeback": "I joined the support team this week", "comeback_question": "Which team did I join this week",
        "leaver_questions": ("Who is my manager at the office", "What did I ask for in the review meeting", "Which laptop do I use"),
        "keep_question": "Who is my manager", "forget_question": "Where is the offsite hotel booking reference",
        "keep_fact_question": "Am I vegetarian"}),
    ("erased-mixed-notes", "mixed", {
        "keeper": ("dev", None), "leaver": ("lin", None),
        "keep": "我的 side project 是一个记账 app", "leave": ("我的 side project 是帮前公司做外包", "I owe the tax office a late fee, 下周前要交"),
        "leave_fact": ("I can't eat peanuts", "diet", "diet=NOT peanuts"), "echo": "好的，外包项目和 late fee 我都记下了。",
        "keep_fact": ("别推荐日料", "recommend", "recommend=NOT 日料"),
        "forget": ("My old blog draft about layoffs is in the notes folder", "那条 blog draft 的删掉"),
        "comeback": "Starting fresh: 我在学 Rust", "comeback_question": "我在学什么语言",
        "leaver_questions": ("我的 side project 是什么", "Do I owe the tax office anything", "推荐一个 snack without peanuts"),
        "keep_question": "我的 side project 是什么 app", "forget_question": "Where is my old blog draft about layoffs",
        "keep_fact_question": "晚饭推荐日料吗"}),
]


# -- wrong session or task: an ended (or idle) session, two tasks side by side --------------------
def _scopes(name: str, lang: str, d: dict[str, Any]) -> Scenario:
    s, user = Script(name, "wrong_scope", lang), d["user"]
    task_a, task_b = d["tasks"]
    s.do("start_task", user, task_a)
    s.do("start_task", user, task_b)
    for text in d["old_session"]:
        s.say(user, text, session="s-old", domain="session")
    if d["ends"] == "end_session":
        s.do("end_session", user, "s-old")
    else:
        s.wait(45)  # the user walks away: the session idles past its 30-minute TTL
    durable = s.say(user, d["durable"])  # ordinary memory: any session may use it
    new = s.say(user, d["new_session"], session="s-new", domain="session")
    peer, note = d["peer"]
    s.say(peer, note, session="s-new", domain="session")  # another user, the same session id
    in_a = s.say(user, d["task_notes"][0], task=task_a, domain="task")
    in_b = s.say(user, d["task_notes"][1], task=task_b, domain="task")
    if d.get("progress"):
        s.do("set_task_progress", user, task_a, amount=d["progress"])
    q = d["questions"]
    s.ask(user, q["new"], should=new, session="s-new")
    s.ask(user, q["old"][0], session="s-new", related=new)
    s.ask(user, q["old"][1], session="s-new")
    s.ask(user, q["durable"], should=durable, session="s-new")
    s.ask(user, q["task_a"], should=in_a, task=task_a, session="s-new")
    s.ask(user, q["task_b"], should=in_b, task=task_b, session="s-new")
    s.ask(user, q["task_b_from_a"], task=task_a, session="s-new")
    s.ask(user, q["no_session"], related=durable)  # outside every session: no session memory
    return s.build()


_SCOPES = [
    ("scope-zh-slides", "zh", {
        "peer": ("zhou", "PPT大纲：我的封面页也做完了，下一步写目录"), "user": "lin", "tasks": ("thesis", "weekly"), "ends": "end_session",
        "old_session": ("PPT大纲：已完成封面页，下一步写目录", "PPT 第二页放市场规模的数据"),
        "durable": "我做PPT喜欢用深蓝色的模板", "new_session": "PPT大纲：这次做年终总结，下一步写今年的三个成果",
        "task_notes": ("论文第三章的实验部分还差消融实验", "周报：本周完成了接口联调"),
        "questions": {"new": "PPT大纲 下一步写什么", "old": ("PPT 第二页放什么数据", "PPT 目录写完了吗"),
                      "durable": "PPT 用什么颜色的模板", "task_a": "论文第三章的实验部分还差什么",
                      "task_b": "周报里本周完成了什么", "task_b_from_a": "本周完成了接口联调吗",
                      "no_session": "PPT大纲写到哪一步了"}}),
    ("scope-zh-support", "zh", {
        "peer": ("wang", "客服会话：用户问发票什么时候开"), "user": "ming", "tasks": ("refund", "invoice"), "ends": "idle",
        "old_session": ("客服会话：用户说订单一直没发货", "客服会话：已经帮用户催了仓库"),
        "durable": "我们店的发货时间是下单后四十八小时内", "new_session": "客服会话：新用户问能不能开发票",
        "task_notes": ("退款处理：退款单已提交财务审核", "发票处理：电子发票周五统一开具"),
        "questions": {"new": "客服会话 用户问了什么", "old": ("订单一直没发货怎么处理的", "帮用户催仓库了吗"),
                      "durable": "我们店下单后多久发货", "task_a": "退款单现在到哪一步了",
                      "task_b": "电子发票什么时候开具", "task_b_from_a": "电子发票周五开吗",
                      "no_session": "客服会话里用户问了什么"}}),
    ("scope-zh-progress", "zh", {
        "peer": ("zhao", "装修会话：我家卫生间的防水做好了"), "user": "wang", "tasks": ("kitchen", "garden"), "ends": "end_session", "progress": 0.5,
        "old_session": ("装修会话：地砖选了米白色的", "装修会话：橱柜下周一量尺寸"),
        "durable": "家里装修的总预算是二十万", "new_session": "装修会话：今天讨论卫生间的防水",
        "task_notes": ("厨房改造：燃气管道要请燃气公司来改", "花园改造：草坪下个月铺"),
        "questions": {"new": "装修会话 今天讨论什么", "old": ("地砖选了什么颜色", "橱柜什么时候量尺寸"),
                      "durable": "装修总预算是多少", "task_a": "厨房改造的燃气管道找谁改",
                      "task_b": "花园改造的草坪什么时候铺", "task_b_from_a": "草坪下个月铺吗",
                      "no_session": "装修会话讨论到哪了"}}),
    ("scope-en-trip", "en", {
        "peer": ("bob", "Trip chat: planning the Kyoto trip in spring"), "user": "alice", "tasks": ("blog", "taxes"), "ends": "end_session",
        "old_session": ("Trip chat: booked the hotel in Lisbon for three nights", "Trip chat: the Lisbon tram tour is on day two"),
        "durable": "I always prefer aisle seats on flights", "new_session": "Trip chat: now planning the Kyoto trip in autumn",
        "task_notes": ("Blog post draft: the intro about remote work is done", "Tax return: the mortgage statement is still missing"),
        "questions": {"new": "Trip chat: which trip are we planning now", "old": ("How many nights is the hotel in Lisbon", "When is the Lisbon tram tour"),
                      "durable": "Which seats do I prefer on flights", "task_a": "What is done in the blog post draft",
                      "task_b": "What is still missing for the tax return", "task_b_from_a": "Is the mortgage statement still missing",
                      "no_session": "Trip chat: which trip are we planning"}}),
    ("scope-en-idle", "en", {
        "peer": ("carol", "Debug chat: the login page is slow for me too"), "user": "bob", "tasks": ("migration", "hiring"), "ends": "idle",
        "old_session": ("Debug chat: the staging server runs out of memory at night", "Debug chat: we restarted the worker pool twice"),
        "durable": "Our team deploys on Tuesdays and Thursdays", "new_session": "Debug chat: today the login page is slow",
        "task_notes": ("Database migration: the orders table moves last", "Hiring: two candidates for the backend role this week"),
        "questions": {"new": "Debug chat: what is slow today", "old": ("Why does the staging server fail at night", "How many times did we restart the worker pool"),
                      "durable": "Which days does our team deploy", "task_a": "Which table moves last in the database migration",
                      "task_b": "How many candidates for the backend role", "task_b_from_a": "How many backend candidates this week",
                      "no_session": "Debug chat: what is slow"}}),
    ("scope-mixed-launch", "mixed", {
        "peer": ("lin", "Launch chat: demo 流程我来写"), "user": "dev", "tasks": ("launch", "onboarding"), "ends": "end_session",
        "old_session": ("Launch chat: landing page 的文案还要改", "Launch chat: 定价页先不上线"),
        "durable": "我们的 launch 一般放在周二上午", "new_session": "Launch chat: 这次讨论发布会的 demo 流程",
        "task_notes": ("Launch 任务：press release 已经给媒体了", "Onboarding 任务：新人的电脑周一到"),
        "questions": {"new": "Launch chat 这次讨论什么", "old": ("landing page 的文案改了吗", "定价页什么时候上线"),
                      "durable": "我们的 launch 一般放在周几", "task_a": "press release 给媒体了吗",
                      "task_b": "新人的电脑什么时候到", "task_b_from_a": "新人的电脑周一到吗",
                      "no_session": "Launch chat 讨论到哪了"}}),
]

SCOPE_SCENARIOS = (tuple(_noise(*case) for case in _NOISE) + tuple(_other_users(*case) for case in _OTHER_USERS)
                   + tuple(_erasure(*case) for case in _ERASURE) + tuple(_scopes(*case) for case in _SCOPES))
SCENARIOS: tuple[Scenario, ...] = tuple(sorted(SCOPE_SCENARIOS + MEANING_SCENARIOS, key=lambda s: list(KINDS).index(s.kind)))
