"""The detectors' gates skip only what could not have matched.

``find_sensitive`` and ``extract_identifiers`` run a pattern only when the text holds something
that pattern cannot match without (a digit, an "@", a cue word, a backtick). A wrong gate would
silently miss a phone number or an order number, so each gate is checked two ways:

* **by structure** — the identifier rules' gates are single characters, and walking each
  pattern's parse tree proves that every string it matches holds such a character;
* **by behaviour** — on texts built from the very fragments the gates look for (cue words in any
  case, the characters a case-insensitive match folds to ASCII, full-width and Arabic-Indic
  digits), the gated scan equals the ungated one.
"""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from v2_memory.governance import identifiers
from v2_memory.text import sensitive
from v2_memory.governance.identifiers import extract_identifiers

try:  # Python 3.11+
    import re._constants as sre_constants
    import re._parser as sre_parse
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

C = sre_constants


def _char_in_set(items: list, wanted) -> bool:
    """Whether every character an ``IN`` set accepts satisfies ``wanted``."""
    for op, av in items:
        if op is C.LITERAL and wanted(chr(av)):
            continue
        if op is C.RANGE and all(wanted(chr(c)) for c in range(av[0], av[1] + 1)):
            continue
        if op is C.CATEGORY and av is C.CATEGORY_DIGIT and wanted("0") and wanted("٣"):
            continue
        return False
    return True


def must_hold(items, wanted) -> bool:
    """Whether every string the parsed pattern ``items`` matches holds a character ``wanted`` accepts."""
    return any(_element_must_hold(op, av, wanted) for op, av in items)


def _element_must_hold(op, av, wanted) -> bool:
    if op is C.LITERAL:
        return wanted(chr(av))
    if op is C.IN:
        return _char_in_set(av, wanted)
    if op is C.CATEGORY:
        return av is C.CATEGORY_DIGIT and wanted("0") and wanted("٣")
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
        low, _, body = av
        return low >= 1 and must_hold(body, wanted)
    if op is C.SUBPATTERN:
        return must_hold(av[-1], wanted)
    if op is getattr(C, "ATOMIC_GROUP", None):
        return must_hold(av, wanted)
    if op is C.BRANCH:
        return all(must_hold(branch, wanted) for branch in av[1])
    return False  # assertions, anchors, back-references: they match no character of their own


GATE_CHARS = {"digit": str.isdecimal, "backtick": lambda c: c == "`", "operator": lambda c: c in "=^∫∑√"}


def test_the_walker_itself_tells_required_from_optional():
    digit = GATE_CHARS["digit"]
    assert must_hold(sre_parse.parse(r"ab\d{2}"), digit)
    assert must_hold(sre_parse.parse(r"(?:x[0-9]|y\d)"), digit)
    assert not must_hold(sre_parse.parse(r"ab\d{0,2}"), digit)
    assert not must_hold(sre_parse.parse(r"(?:x[0-9]|y)"), digit)
    assert not must_hold(sre_parse.parse(r"[0-9a]"), digit)
    assert not must_hold(sre_parse.parse(r"(?=\d)a"), digit)


@pytest.mark.parametrize("index", range(len(identifiers._RULES)))
def test_each_identifier_rule_cannot_match_without_its_gate(index):
    pattern, _ = identifiers._RULES[index]
    needs = identifiers._RULE_NEEDS[index]
    # The formula rule's gate is its normal form's: only a run holding an operator is kept.
    proof = identifiers._OPERATOR if needs == "operator" else pattern
    assert must_hold(sre_parse.parse(proof.pattern, proof.flags), GATE_CHARS[needs]), (needs, pattern.pattern)
    assert len(identifiers._RULE_NEEDS) == len(identifiers._RULES)


def test_the_ascii_folds_are_every_character_a_case_insensitive_match_reads_as_a_letter():
    folds = [chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF and re.fullmatch(r"(?i)[a-z]", chr(c))]
    assert set(folds) == set(sensitive._ASCII_FOLDS)


# Texts made of what the gates look for: cue words, key formats, digits of three scripts, the folds.
_FRAGMENTS = [
    "password", "PassWord", "pa\u017fsword", "p\u0131n", "PIN", "pin", "code", "CODE", "door code", "otp", "cvv",
    "token", "Token", "secret", "api key", "api_key", "\u212aey", "pwd", "pw", "combination", "passcode",
    " is ", " is now ", " = ", ":", "：", "=", "是", "为", "改成", "密码", "支付密码", "验证码", "口令", "密钥", "令牌", "PIN码",
    "@", "＠", "a@b.cn", "example.com", "+86 ", "+44 ", "138", "0013", "8000", "4111", "1111", "１３８", "٣٤٥",
    "2", "7", "0", "X", "-", ".", " ", "  ", "\n", "`", "np.dot", "x^2", "f(x)=x", "∑", "#", "ticket", "order", "订单",
    "room", "房间", "flight", "CS", "ISO", "v", "version", "Python", "eyJ", "abc", "sk_live_", "sk-", "ghp_",
    "github_pat_", "AKIA", "AIza", "xoxb-", "Bearer ", "-----BEGIN RSA PRIVATE KEY-----", "/", "+", "ABCDEFGHIJ",
    "abcdefghij0123456789", "hunter2", "Abc#123", "sunshine", "wrong", "你好", "我", "的",
    # labels and shapes (sensitive_labels, sensitive_shapes), folds included
    "passport", "PASSPORT no. ", "\u017f\u017fn", "SSN", "account no. ", "phone", "Cell", "tel", "iban", "卡号", "身份证号",
    "手机", "座机", "账号", "://", "https://h.io/hooks/", "redis://", "a:b@", "Authorization: ", "AUTHORI\u017fATION:",
    "AccountKey=", "npm_", "pypi-", "glpat-", "(415) ", "555-0143", "0113 ", "DE89", "3704", "0440", "?token=", "&",
    "521-44-8793", "E1234567", "6214830123456789",
]
_CUES = ["my pa\u017fsword", "P\u0131N", "p\u0131n code", "api_\u212aey", "door code", "token", "Secret", "验证码", "PIN码", "pw"]
_LINKS = [" is ", " is now ", ": ", "=", "是", "：", " "]
_VALUES = ["hunter2", "4321", "Abc#123", "sunshine", "wrong", "123456", "zX81"]
# A cue, a link and a value (what the cue detectors read), between random fragments.
_statements = st.tuples(st.sampled_from(_CUES), st.sampled_from(_LINKS), st.sampled_from(_VALUES)).map("".join)
texts = st.lists(st.one_of(st.sampled_from(_FRAGMENTS), _statements), max_size=24).map("".join)


@pytest.mark.parametrize("text", ["my pa\u017fsword is hunter2", "the p\u0131n is 4321", "密码是 Abc123", "a@b.cn",
                                  "card 4111 1111 1111 1111", "aws wJalrXUtnFEMI+K7MDENG+bPxRfiCYEXAMPLEKEY end", "电话１３８００１３８０００", "ghp_" + "a" * 30,
                                  "pa\u017f\u017fport no. X7723190", "卡号是6214830123456789", "DE89370400440532013000",
                                  "redis://:pw1234@h", "Authori\u017fation: Basic Ym9iOnB3", "call (415) 555-0172",
                                  "https://hooks.slack.com/services/T1/B2/abc123def456"])
def test_a_gate_opens_for_each_shape_it_guards(text):
    assert sensitive.find_sensitive(text), text
    assert sensitive._findings.__wrapped__(text, True) == sensitive._findings.__wrapped__(text, False)


@settings(max_examples=600, deadline=None)
@given(texts)
def test_gated_sensitive_scan_equals_the_ungated_one(text):
    assert sensitive._findings.__wrapped__(text, True) == sensitive._findings.__wrapped__(text, False)


@settings(max_examples=600, deadline=None)
@given(texts)
def test_gated_identifier_scan_equals_the_ungated_one(text):
    gated = extract_identifiers(text)
    original = identifiers._present
    identifiers._present = lambda masked: set(GATE_CHARS)
    try:
        assert extract_identifiers(text) == gated
    finally:
        identifiers._present = original


def test_findings_are_cached_and_forgotten_with_the_other_text_caches():
    from v2_memory.text.memo import forget_texts
    sensitive.find_sensitive("call 13800138000")
    assert sensitive._findings.cache_info().currsize >= 1
    forget_texts()
    assert sensitive._findings.cache_info().currsize == 0
    # the public answer stays a fresh list: a caller may change it without changing the cache
    found = sensitive.find_sensitive("call 13800138000")
    found.clear()
    assert [f.kind for f in sensitive.find_sensitive("call 13800138000")] == ["mobile"]
