"""Sensitive data in the formats people type, and personal data where an id belongs.

Each worked example names the kind the detector must report and the text that may be kept; the
counterexamples are sentences *about* a password or a code that hold none. Hypothesis generates
cards (Luhn-valid), IDs (valid check digit), phone numbers and passwords in every separator and
width; the end-to-end test writes them all through a file-backed MemoryManager and scans every
byte of every file it wrote, and every context, for the raw values.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from v2_memory import MemoryManager, Message
from v2_memory.text.sensitive import find_sensitive, luhn_valid, redact

PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx3Vq8Zp0\nq9Zs1Jf0w+/aB==\n-----END RSA PRIVATE KEY-----")
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"

# (text, raw value that must disappear, kinds found, text kept)
EXAMPLES = [
    ("card 4111 1111 1111 1111 please", "4111 1111 1111 1111", ["bank_card"], "card [bank_card] please"),
    ("卡号 4111-1111-1111-1111", "4111-1111-1111-1111", ["bank_card"], "卡号 [bank_card]"),
    ("身份证 110105 19491231 002X", "110105 19491231 002X", ["cn_id"], "身份证 [cn_id]"),
    ("ID 110105-19491231-002X", "110105-19491231-002X", ["cn_id"], "ID [cn_id]"),
    ("password: abc1", "abc1", ["secret"], "password: [secret]"),
    ("pwd=hunter2 for the router", "hunter2", ["secret"], "pwd=[secret] for the router"),
    ("支付密码666666", "666666", ["secret"], "支付密码[secret]"),
    ("密码是 Abc#123，别告诉别人", "Abc#123", ["secret"], "密码是 [secret]，别告诉别人"),
    ("my PIN is now 4321.", "4321", ["secret"], "my PIN is now [secret]."),
    ("updated it, it's now Marigold$58 since the babysitter knew the old one", "Marigold$58", ["secret"],
     "updated it, it's now [secret] since the babysitter knew the old one"),
    ("the keypad code for the shed is 9031* btw", "9031*", ["secret"], "the keypad code for the shed is [secret] btw"),
    ("DL no. K882-4410-7731, expires in May", "K882-4410-7731", ["id_number"], "DL no. [id_number], expires in May"),
    ("the code for the door is 8812", "8812", ["secret"], "the code for the door is [secret]"),
    ("wifi password is sunshine", "sunshine", ["secret"], "wifi password is [secret]"),
    ("验证码：１２３４５６", "１２３４５６", ["secret"], "验证码：[secret]"),
    ("key sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", ["secret"], "key [secret]"),
    ("test rk_live_51H8aQ2eZvKYlo2C0abcdEFG", "rk_live_51H8aQ2eZvKYlo2C0abcdEFG", ["secret"], "test [secret]"),
    ("id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", ["secret"], "id [secret]"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     ["secret"], "aws_secret_access_key = [secret]"),
    ("token github_pat_11ABCDEFG0_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG0_abcdefghijklmnopqrstuvwxyz",
     ["secret"], "token [secret]"),
    ("use ghp_abcdefghijklmnopqrstuvwxyz0123 here", "ghp_abcdefghijklmnopqrstuvwxyz0123", ["secret"], "use [secret] here"),
    (f"Authorization {JWT}", JWT, ["secret"], "Authorization [secret]"),
    ("maps AIzaSyA1234567890abcdefghijklmnopqrstu", "AIzaSyA1234567890abcdefghijklmnopqrstu", ["secret"], "maps [secret]"),
    (f"my key:\n{PEM}\nthanks", "MIIEowIBAAKCAQEAx3Vq8Zp0", ["secret"], "my key:\n[secret]\nthanks"),
    ("电话 138.0013.8000", "138.0013.8000", ["mobile"], "电话 [mobile]"),
    ("电话１３８００１３８０００", "１３８００１３８０００", ["mobile"], "电话[mobile]"),
    ("call +86 138 0013 8000", "138 0013 8000", ["mobile"], "call [mobile]"),
    ("office +1 415 555 2671", "415 555 2671", ["phone"], "office [phone]"),
    ("邮箱 ｌｉ＠ｅｘａｍｐｌｅ．ｃｏｍ", "ｌｉ＠ｅｘａｍｐｌｅ．ｃｏｍ", ["email"], "邮箱 [email]"),
]

NOT_SENSITIVE = [
    "my password is wrong", "I forgot my password again", "password has been changed", "密码忘了", "密码是什么？",
    "the zip code is 100080", "error code 404", "promo code SAVE20", "pin 3 photos to the board", "3.5 kg of rice",
    "评分 4.5，明天 3.15 见", "order 20231105", "4111 1111 1111 1112",  # fails Luhn
    "#team2024 was great", "C# and F# in 2024", "v2.0-beta! is out",
    "the DL for the dataset is here",
    "110105194912310021",  # wrong check digit
]


@pytest.mark.parametrize("text, raw, kinds, kept", EXAMPLES)
def test_common_formats_are_found_and_redacted(text, raw, kinds, kept):
    findings = find_sensitive(text)
    assert [f.kind for f in findings] == kinds
    assert redact(text, findings) == kept
    assert raw not in kept and all(raw not in f.masked for f in findings)


@pytest.mark.parametrize("text", NOT_SENSITIVE)
def test_sentences_about_secrets_hold_none(text):
    assert find_sensitive(text) == []


# -- generated variants ---------------------------------------------------------------------------


def _with_luhn(body: str) -> str:
    """Append the check digit that makes ``body`` Luhn-valid."""
    return next(body + d for d in "0123456789" if luhn_valid(body + d))


def _grouped(digits: str, separator: str, size: int) -> str:
    return separator.join(digits[i:i + size] for i in range(0, len(digits), size))


FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
separators = st.sampled_from(["", " ", "-"])


@settings(max_examples=150, deadline=None)
@given(body=st.text("0123456789", min_size=15, max_size=15).map(lambda d: "4" + d[1:]), sep=separators,
       size=st.sampled_from([4, 5, 6]), full=st.booleans())
def test_any_luhn_valid_card_in_any_grouping_is_redacted(body, sep, size, full):
    card = _grouped(_with_luhn(body), sep, size)
    card = card.translate(FULL_WIDTH) if full else card
    text = f"我的卡号是 {card} 谢谢"
    assert [f.kind for f in find_sensitive(text)] == ["bank_card"]
    assert redact(text, find_sensitive(text)) == "我的卡号是 [bank_card] 谢谢"


@settings(max_examples=150, deadline=None)
@given(second=st.sampled_from("3456789"), rest=st.text("0123456789", min_size=9, max_size=9),
       sep=st.sampled_from(["", " ", "-", "."]), prefix=st.sampled_from(["", "+86 ", "+86-", "0086 ", "(+86)"]),
       full=st.booleans())
def test_any_mainland_mobile_in_any_format_is_redacted(second, rest, sep, prefix, full):
    number = f"1{second}{rest[0]}{sep}{rest[1:5]}{sep}{rest[5:]}"
    number = number.translate(FULL_WIDTH) if full else number
    text = f"call me at {prefix}{number} tonight"
    findings = find_sensitive(text)
    assert [f.kind for f in findings] == ["mobile"]
    assert redact(text, findings) == "call me at [mobile] tonight"


credential = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, blacklist_characters="'\""),
                     min_size=1, max_size=30).filter(lambda v: v[-1] not in ".,;:!?)]}>" and any(c.isdigit() for c in v))


@settings(max_examples=200, deadline=None)
@given(value=credential, template=st.sampled_from([
    "password: {}", "pwd={}", "my password is {}", "my PIN is now {}", "支付密码{}", "密码是 {}", "门禁码：{}",
    "the code for the gate is {}", "api_key = {}", "登录密码改成了{}",
]))
def test_a_credential_of_any_length_after_a_cue_never_stays(value, template):
    """Any printable value with a digit, 1–30 characters, after any cue: every character of it from
    its first letter or digit on is inside a secret finding (a leading "=" or ":" may read as the cue's)."""
    text = template.format(value) + " 记一下"
    start = len(template.split("{}")[0])
    first = start + next(i for i, c in enumerate(value) if c.isalnum())
    covered = {i for f in find_sensitive(text) if f.kind == "secret" for i in range(f.start, f.end)}
    assert set(range(first, start + len(value))) <= covered


# -- end to end: nowhere on disk, in no context -----------------------------------------------------


def _raw_values() -> list[str]:
    return [raw for _, raw, _, _ in EXAMPLES]


def test_raw_values_are_nowhere_on_disk_and_in_no_context(tmp_path, clock):
    """Every example is written (window of 2, so most overflow into the summary), queried by
    itself, explained and built into a context; then every file in the folder is scanned."""
    contexts = []
    with MemoryManager(window_size=2, store_path=tmp_path / "memory_store.json", clock=clock) as memory:
        for text, _, _, _ in EXAMPLES:
            result = memory.add(Message("user", text, user_id="u1", session_id="s1"))
            assert result.sensitive, text
            clock.advance(minutes=1)
        for text, _, _, _ in EXAMPLES:
            contexts.append(memory.build_context(text, user_id="u1"))
            explained = memory.explain(text, user_id="u1").to_dict()  # its "query" is the caller's own text
            contexts.append(repr([explained["route"], explained["admissions"], explained["facts"]]))
        contexts.append(memory.summary("u1"))
        contexts.append(repr(memory.health().to_dict()))
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert len(files) >= 4  # store, ledger, two logs
    blobs = [path.read_bytes() for path in files]
    for raw in _raw_values():
        compact = "".join(raw.split())
        for form in {raw, compact}:
            assert not any(form.encode("utf-8") in blob for blob in blobs), form
            assert not any(form in text for text in contexts), form


def test_isolate_keeps_the_raw_value_only_in_the_store_never_in_a_context(clock):
    from v2_memory.governance.governor import GovernancePolicy
    with MemoryManager(store_path=None, clock=clock, governance=GovernancePolicy(sensitive_policy="isolate")) as memory:
        memory.add(Message("user", "my PIN is now 4321"))
        assert "4321" not in memory.build_context("my PIN") and "[secret]" in memory.recent_messages()[0].content


# -- personal data as an id or a label: refused -------------------------------------------------------


@pytest.mark.parametrize("field, value", [
    ("user_id", "13800138000"), ("user_id", "li@example.com"), ("user_id", "138-0013-8000"),
    ("session_id", "4111 1111 1111 1111"), ("task_id", "11010519491231002X"), ("tenant_id", "+1 415 555 2671"),
])
def test_personal_data_as_an_id_is_refused_naming_the_field_not_the_value(field, value):
    with pytest.raises(ValueError) as caught:
        Message("user", "hello", **{field: value})
    assert field in str(caught.value) and value not in str(caught.value)


@pytest.mark.parametrize("metadata", [{"phone": "138 0013 8000"}, {"notes": ["ok", {"pw": "password: abc1"}]},
                                      {"li@example.com": "key"}])
def test_personal_data_in_metadata_is_refused(metadata):
    with pytest.raises(ValueError, match="metadata") as caught:
        Message("user", "hello", metadata=metadata)
    assert "138 0013" not in str(caught.value) and "abc1" not in str(caught.value) and "li@" not in str(caught.value)


def test_a_read_or_write_under_a_personal_id_changes_nothing(tmp_path, clock):
    with MemoryManager(store_path=tmp_path / "memory_store.json", clock=clock) as memory:
        with pytest.raises(ValueError, match="user_id"):
            memory.explain("anything", user_id="li@example.com")
        with pytest.raises(ValueError, match="user_id"):
            memory.add(Message("user", "hello", user_id="13800138000"))
        assert memory.users() == []
    assert not any(b"13800138000" in p.read_bytes() or b"li@example" in p.read_bytes()
                   for p in tmp_path.rglob("*") if p.is_file())


def test_ordinary_ids_are_welcome():
    for user_id in ["alice", "u-1024", "550e8400-e29b-41d4-a716-446655440000", "10001", "用户甲"]:
        assert Message("user", "hi", user_id=user_id, session_id="s-2024-11-05").user_id == user_id

