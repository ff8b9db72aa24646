"""Sensitive by label and by well-known shape (issue 19, class 5), never raw anywhere.

Each class gets worked examples in both languages: the text, the raw parts that must disappear and
the kind it is reported as. Hard negatives are what a label or a shape detector could be fooled by
(times, dates, prices, flight numbers, versions, rooms, years, "I forgot my password again").
Hypothesis pairs every label with every link and value form. The end-to-end tests write one message
of each class through a JSON store and a SQLite store, read it back through contexts, explain, the
ledger and the MCP tools, and scan every byte written for the raw values.
"""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings, strategies as st

from v2_memory import MemoryManager, Message
from v2_memory.text.sensitive import find_sensitive, redact
from v2_memory.text.sensitive_shapes import iban_valid

# (class, text, raw parts that must disappear, kinds found)
CLASSES = [
    # identity numbers by label, whatever their shape
    ("id_label", "the insurer wants my social security number, it is 287 65 4320", ["287 65 4320"], ["id_number"]),
    ("id_label", "passport no. X7723190, issued in Lyon", ["X7723190"], ["id_number"]),
    ("id_label", "护照号是 EA9138274，下周过期", ["EA9138274"], ["id_number"]),
    ("id_label", "社保卡号 5101 0619 7712 0088", ["5101 0619 7712 0088"], ["id_number"]),
    # US social-security numbers by shape
    ("ssn_shape", "form W-9 line 2: 412-73-9051", ["412-73-9051"], ["id_number"]),
    # account numbers by label
    ("account_label", "send the refund to account no. 40021938817 at my credit union", ["40021938817"],
     ["account_number"]),
    ("account_label", "收款账号：3302 0119 0900 1122 8", ["3302 0119 0900 1122 8"], ["account_number"]),
    ("account_label", "银行卡号是6230583000012349871，工行的", ["6230583000012349871"], ["account_number"]),
    # IBANs with their mod-97 check, with and without spaces
    ("iban", "rent goes to NL91ABNA0417164300 on the 1st", ["NL91ABNA0417164300"], ["iban"]),
    ("iban", "Überweisung an DE44 5001 0517 5407 3249 31 bitte", ["DE44 5001 0517 5407 3249 31"], ["iban"]),
    # connection strings with a password, any scheme
    ("url_password", "prod db is postgres://billing:Vt7q!mZ2@pg-main.internal:5432/ledger", ["Vt7q!mZ2"], ["secret"]),
    ("url_password", "缓存连 redis://:K8sRedisPw91@10.2.3.4:6379/0", ["K8sRedisPw91"], ["secret"]),
    ("url_password", "broker amqps://svc_orders:Hk29dLq0@mq.example.org/vhost", ["Hk29dLq0"], ["secret"]),
    ("url_password", "mysql://report:w3ek1yR3p@db-ro:3306/bi for the dashboards", ["w3ek1yR3p"], ["secret"]),
    # Authorization headers
    ("auth_header", 'curl -H "Authorization: Basic Ym9iOnBhc3N3b3JkMQ==" api.test', ["Ym9iOnBhc3N3b3JkMQ"],
     ["secret"]),
    ("auth_header", "header Authorization: Token 7c1e0b9a44d2f6e81b3a", ["7c1e0b9a44d2f6e81b3a"], ["secret"]),
    # webhook URLs and URLs whose query carries a secret
    ("webhook", "alerts post to https://hooks.slack.com/services/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",
     ["BZ9X8C7V6", "m4Nb5Vc6Xz7Lk8Jh9Gf0Ds1A"], ["secret"]),
    ("webhook", "discord: https://discord.com/api/webhooks/998877665544/Zx-Cv_Bn12Mq34We56", ["Zx-Cv_Bn12Mq34We56"],
     ["secret"]),
    ("webhook", "钉钉机器人 https://oapi.dingtalk.com/robot/send?access_token=a1b2c3d4e5f6a7b8，发告警用",
     ["a1b2c3d4e5f6a7b8"], ["secret"]),
    ("query_secret", "the export link https://cdn.example.net/f.csv?X-Amz-Signature=9a8b7c6d5e&expires=60",
     ["9a8b7c6d5e"], ["secret"]),
    # package-registry and service tokens
    ("registry_token", "publish with npm_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8", ["npm_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"],
     ["secret"]),
    ("registry_token", "twine uses pypi-AgENdGVzdC5weXBpLm9yZwIkNmY3ZC1hYmNk", ["AgENdGVzdC5weXBpLm9yZwIk"], ["secret"]),
    ("registry_token", "gitlab glpat-Ab12Cd34Ef56Gh78Ij90", ["Ab12Cd34Ef56Gh78Ij90"], ["secret"]),
    # cloud connection strings
    ("cloud_connection", "DefaultEndpointsProtocol=https;AccountName=logs;AccountKey=bm90IGEgcmVhbCBrZXkgYXQgYWxs==;"
     "EndpointSuffix=core.windows.net", ["bm90IGEgcmVhbCBrZXkgYXQgYWxs"], ["secret"]),
    ("cloud_connection", "Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=Q9w8E7r6T5y4+/=",
     ["Q9w8E7r6T5y4"], ["secret"]),
    # phone numbers in national formats, and after a phone label
    ("phone_national", "the landlord's number is (646) 555-0143, text first", ["555-0143"], ["phone"]),
    ("phone_national", "ring the plumber on 312.555.0188", ["312.555.0188"], ["phone"]),
    ("phone_national", "our Leeds office: 0113 496 0321", ["0113 496 0321"], ["phone"]),
    ("phone_national", "Praxis Dr. Weber 040 52 83 91 77", ["040 52 83 91 77"], ["phone"]),
    ("phone_national", "物业电话 (0571) 8765-4321，工作日能打通", ["8765-4321"], ["phone"]),
    ("phone_label", "his mobile is 2015550123", ["2015550123"], ["phone"]),
    # a login written as a pair, and a card named by its kind
    ("login_pair", "gym app login: user mkaur88, pass Tulip#2024", ["Tulip#2024"], ["secret"]),
    ("login_pair", "portal user: j.ortiz and pass 9fT!pq", ["9fT!pq"], ["secret"]),
    ("login_pair", "username rita_w; pwd bluebird77", ["bluebird77"], ["secret"]),
    ("card_label", "工资卡是建行的 6217 0001 2345 6789，别外传", ["6217 0001 2345 6789"], ["account_number"]),
    ("card_label", "my debit card number is 4000 1234 5678 9010", ["4000 1234 5678 9010"], ["account_number"]),
]

HARD_NEGATIVES = [
    "the alarm is at 7:45, the bus at 08:10", "we met on 2023-09-14 and again on 14/10/2023", "it was 1,420 yuan",
    "flight MU5101 boards at gate 12", "please order 250 boxes and 1200 labels", "she was born in 1991",
    "pip install requests==2.31.0 on Python 3.12", "room 302, second floor", "I forgot my password again",
    "my phone is 5 years old", "my passport expires 2031-05-01", "the account number ends in 4821",
    "a phone order 20231105 came today", "the account has 12,000 in it", "card number? I'll send it later",
    "手机坏了，修了3天", "身份证到期了，2025年要换", "电话里说了30分钟", "我的账号是 alice2024", "航班 CA1831 晚点 40 分钟",
    "房间 1208，早餐 7:30 开始", "https://github.com/acme/rocket/settings/hooks", "https://example.com/search?q=42&page=3",
    "coordinates 40.7128, -74.0060", "ISBN 978-3-16-148410-0", "build 2024.11.05 shipped", "postgres://db.internal:5432/app",
    "my SSN? not telling you", "score 98.5 97.2 96.0", "the zip code is 02139",
    "the user will pass midterms", "user bob, pass the salt", "I linked my bank card to 12306", "信用卡的额度是 50000", "储蓄卡的余额是 123456",
]


@pytest.mark.parametrize("cls, text, raws, kinds", CLASSES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CLASSES)])
def test_each_class_is_found_and_redacted(cls, text, raws, kinds):
    findings = find_sensitive(text)
    assert [f.kind for f in findings] == kinds, text
    kept = redact(text, findings)
    assert all(raw not in kept for raw in raws), kept
    assert all(raw not in f.masked for raw in raws for f in findings)


@pytest.mark.parametrize("text", HARD_NEGATIVES)
def test_hard_negatives_are_not_flagged(text):
    assert find_sensitive(text) == [], [(f.kind, text[f.start:f.end]) for f in find_sensitive(text)]


def test_only_the_secret_part_of_a_url_or_header_goes():
    text = "db postgres://app:s3cretPw@db:5432/orders?sslmode=require"
    assert redact(text, find_sensitive(text)) == "db postgres://app:[secret]@db:5432/orders?sslmode=require"
    text = "Authorization: Bearer abcdefghijklmnop1234"
    assert "Authorization" in redact(text, find_sensitive(text))


def test_iban_check_is_mod_97():
    """GB82 WEST 1234 5698 7654 32: move GB82 to the end, letters to numbers (G=16, B=11, W=32 …),
    and the 30-digit number leaves 1 mod 97; change one digit and it no longer does."""
    assert iban_valid("GB82 WEST 1234 5698 7654 32") and not iban_valid("GB82 WEST 1234 5698 7654 33")
    assert find_sensitive("pay GB82 WEST 1234 5698 7654 33 now") == []  # wrong check digits: no IBAN


# -- generated: any label, any link, any value form -------------------------------------------------

LABELS = [("passport number", "id_number"), ("SSN", "id_number"), ("Account No.", "account_number"),
          ("routing number", "account_number"), ("cell", "phone"), ("Phone", "phone"),
          ("身份证号", "id_number"), ("护照号码", "id_number"), ("卡号", "account_number"), ("账号", "account_number"),
          ("手机号", "phone"), ("座机", "phone")]
LINKS = [" ", ": ", " is ", " was ", "：", "是", "为", " for the form, it's ", "你帮我存着："]


@st.composite
def labelled_numbers(draw):
    digits = draw(st.text("0123456789", min_size=9, max_size=12))
    digits = draw(st.sampled_from("23456789")) + digits[1:]  # no leading 0/1: not a mainland or trunk number
    sep = draw(st.sampled_from(["", " ", "-"]))
    return sep.join(digits[i:i + 4] for i in range(0, len(digits), 4))


@settings(max_examples=300, deadline=None)
@given(label=st.sampled_from(LABELS), link=st.sampled_from(LINKS), value=labelled_numbers())
def test_any_number_after_a_label_is_redacted(label, link, value):
    word, _ = label
    text = f"{word}{link}{value}，记一下"
    kept = redact(text, find_sensitive(text))
    assert "".join(value.split("-")).replace(" ", "") not in "".join(kept.split("-")).replace(" ", "")
    assert value not in kept


# -- end to end: nowhere raw --------------------------------------------------------------------------


def _raws() -> list[str]:
    return [raw for _, _, raws, _ in CLASSES for raw in raws]


@pytest.mark.parametrize("store_name", ["memory_store.json", "memory.sqlite3"])
def test_no_class_reaches_disk_a_context_explain_the_ledger_or_a_log_raw(tmp_path, clock, store_name):
    """One message per example, window 2 (most overflow into the summary); each is then queried by
    its own text and by its class, explained and built into a context; the ledger is read back; then
    every file in the folder is scanned byte by byte."""
    seen = []
    with MemoryManager(window_size=2, store_path=tmp_path / store_name, clock=clock) as memory:
        for _, text, _, _ in CLASSES:
            written = memory.add(Message("user", text, user_id="u1", session_id="s1"))
            assert written.sensitive, text
            seen.append(repr(written))
            clock.advance(minutes=1)
        for cls, text, _, _ in CLASSES:
            for query in (text, cls.replace("_", " ")):
                seen.append(memory.build_context(query, user_id="u1"))
                seen.append(json.dumps(memory.explain(query, user_id="u1").to_dict()["admissions"], ensure_ascii=False))
        seen.append(repr(memory.ledger.states(range(1, len(CLASSES) + 1))))
        seen.append(memory.summary("u1"))
    blobs = [path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()]
    assert blobs  # JSON: store, ledger, logs; SQLite: one database holding them all
    for raw in _raws():
        for form in {raw, "".join(raw.split())}:
            assert not any(form.encode("utf-8") in blob for blob in blobs), form
            assert not any(form in text for text in seen), form


def test_no_class_reaches_an_mcp_answer_raw(tmp_path, clock):
    from v2_memory.integrations.mcp_server import McpServer
    from v2_memory.integrations.mcp_tools import MemoryTools
    from v2_memory.integrations.mcp_server import LATEST_HANDSHAKE_VERSION

    def call(server, method, params):
        return server.handle({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})

    answers = []
    with MemoryManager(store_path=tmp_path / "memory_store.json", clock=clock) as memory, \
            open(os.devnull, "w", encoding="utf-8") as log:
        server = McpServer(MemoryTools(memory, "alice"), log=log)
        call(server, "initialize", {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
                                    "clientInfo": {"name": "test", "version": "1"}})
        for cls, text, _, _ in CLASSES:
            answers.append(call(server, "tools/call", {"name": "remember", "arguments": {"text": text, "role": "user"}}))
            clock.advance(minutes=1)
        for cls, text, _, _ in CLASSES:  # asked about each memory, in words without the value (an answer echoes its query)
            for tool in ("recall", "explain"):
                query = redact(text, find_sensitive(text))
                answers.append(call(server, "tools/call", {"name": tool, "arguments": {"query": query}}))
    assert all("result" in answer and not answer["result"].get("isError") for answer in answers)
    dumped = json.dumps(answers, ensure_ascii=False)
    for raw in _raws():
        assert raw not in dumped and "".join(raw.split()) not in dumped, raw


def test_a_url_password_is_redacted_up_to_its_at_sign():
    from v2_memory.text.sensitive import find_sensitive, redact

    text = "postgres://admin:S3cr3t!@db/x"
    assert "!" not in redact(text, find_sensitive(text)) and "S3cr3t" not in redact(text, find_sensitive(text))


@pytest.mark.parametrize("text", ["Mobile revenue was 1500000 last quarter.", "The routing table is 120000 routes.",
                                  "账户余额是 123456 元", "信用卡额度是50000"])
def test_a_label_that_names_another_thing_is_no_label(text):
    from v2_memory.text.sensitive import find_sensitive

    assert find_sensitive(text) == []


@pytest.mark.parametrize("text, raw", [("the wifi is now Kestrel#77", "Kestrel#77"), ("new one: Bluebird!2024, ok?", "Bluebird!2024"),
                                       ("改成 tr0ub&dor 了", "tr0ub&dor")])
def test_a_password_is_known_by_its_shape(text, raw):
    """Letters, digits and a symbol inside one word: a password whatever names it."""
    assert raw not in redact(text, find_sensitive(text))


@pytest.mark.parametrize("text", ["postgresql://ann@/memory?options=-csearch_path%3Dv2test_ab12cd",
                                  "see https://example.org/a%20b?q=caf%C3%A9s2", "room B12, 3rd floor", "v2.3.1-rc4"])
def test_a_url_escape_or_a_version_is_no_password(text):
    """"%3D" is how a URL writes "=": no symbol of a password (the masked store URL stays readable)."""
    assert [f for f in find_sensitive(text) if f.kind == "secret"] == []
