"""Sensitive data found at write time: detect it, then redact, refuse, or isolate.

Detectors, in the order they claim text (each validates, not just pattern-matches, where the data
has a checksum; a span claimed by one is not reused by the next):

    secret          a credential: something that authenticates or unlocks (see below)
    email           name@domain.tld
    iban            an IBAN, with or without spaces, that passes mod 97 (``sensitive_shapes.py``)
    cn_id           mainland resident ID: 17 digits + check digit (ISO 7064 MOD 11-2), spaces or dashes allowed
    mobile          mainland mobile number: 1[3-9] + 9 digits, with +86 / 0086, spaces, dashes or dots
    bank_card       13–19 digits that pass the Luhn check, spaces or dashes allowed ("4111 1111 1111 1111")
    phone           any other international number written with its "+" country code (8–15 digits),
                    then national formats: US, and trunk-0 numbers (UK, DE, CN …) (``sensitive_shapes.py``)
    id_number       a US social-security number 123-45-6789 (``sensitive_shapes.py``)
    id_number, account_number, phone
                    last, a value known only by its label: "passport no. X7723190", "卡号是…" (``sensitive_labels.py``)

Full-width characters (１３８００１３８０００, ＠, ：) are read as their ASCII twins first; the mapping is
one character to one character, so positions in the original text stay exact.

**What counts as a secret.** A value that authenticates or unlocks: passwords and passphrases,
PINs, CVV/CVC, one-time and verification codes, codes and combinations for doors, gates, locks,
alarms, safes, lockers and Wi-Fi; API keys, tokens and private keys. Two shapes are recognised:

* a key format, whole: PEM private-key blocks, JWTs (``eyJ….….…``), Stripe ``sk_live_``/``sk_test_``/
  ``rk_live_``, AWS access key ids (``AKIA…``), GitHub ``github_pat_``/``ghp_``…, Google ``AIza…``,
  OpenAI ``sk-…``, Slack ``xox…``, ``Bearer …``;
* where a secret sits in a URL (the password of ``scheme://user:pw@host``, a webhook's path, ``token=``),
  an ``Authorization:`` header or a connection string (``AccountKey=``), and registry tokens
  (``npm_``, ``pypi-``, ``glpat-`` …): only the secret part goes (``sensitive_shapes.py``);
* a cue and its value: only the value is redacted (``password: [secret]``), of any length.
  ``key: value`` / ``key=value`` always counts. In a sentence ("my password is sunshine", "the code for
  the door is 8812") the value is a secret unless it is a function word or a state ("my password
  is wrong / expired / the same"); PIN- and code-like cues need a digit. Chinese cues
  (密码, 支付密码, 验证码, 门禁码 …) take an ASCII value after 是/为/：/改成 … or directly
  ("支付密码666666"), so "密码忘了" and "密码是什么" are not secrets.

Not secrets: promo, error, zip and area codes; "code" about software; a cue with no value.

The raw value never leaves this module in a finding: a finding carries the kind, its position and
a masked form (``138****8000``), so logs and write results can say what was found safely.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from ..text.memo import text_cache
from .sensitive_labels import LABEL_CHARS, LABEL_WORDS, labelled_values
from .sensitive_shapes import ACCOUNT_SHAPES, CREDENTIAL_LITERALS, NUMBER_SHAPES, credential_spans

__all__ = ["SensitiveFinding", "find_sensitive", "redact", "SENSITIVE_POLICIES", "personal_data_kinds",
           "check_not_personal", "check_metadata"]

SENSITIVE_POLICIES = ("redact", "refuse", "isolate")

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"
# Full-width ASCII (U+FF01–FF5E) and the ideographic space, read as ASCII: one char for one char.
_HALF_WIDTH = {0xFF01 + i: 0x21 + i for i in range(94)} | {0x3000: 0x20}


def _digits(value: str) -> str:
    return "".join(char for char in value if char.isdigit() or char in "Xx")


def cn_id_valid(candidate: str) -> bool:
    """The 18th character of a mainland ID is a checksum of the first 17 (separators ignored).

    >>> cn_id_valid("11010519491231002X"), cn_id_valid("110105 19491231 002X")
    (True, True)
    >>> cn_id_valid("110105194912310021")
    False
    """
    candidate = _digits(candidate)
    if len(candidate) != 18 or not candidate[:17].isdigit():
        return False
    total = sum(int(digit) * weight for digit, weight in zip(candidate[:17], _ID_WEIGHTS))
    return _ID_CHECK[total % 11] == candidate[17].upper()


def luhn_valid(digits: str) -> bool:
    """Bank cards end in a Luhn check digit: double every second digit from the right.

    >>> luhn_valid("4111111111111111"), luhn_valid("4111-1111-1111-1112")
    (True, False)
    """
    digits = "".join(char for char in digits if char.isdigit())
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return len(digits) >= 13 and total % 10 == 0


@dataclass(frozen=True)
class SensitiveFinding:
    kind: str
    start: int
    end: int
    masked: str

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "masked": self.masked}


def _mask(kind: str, value: str) -> str:
    """Enough to recognise a value, never enough to use it; secrets show nothing of themselves."""
    if kind == "secret":
        return f"[{len(value)} characters]"
    if kind in ("id_number", "account_number", "iban"):  # the last four, as banks print them
        value = "".join(char for char in value if char.isalnum())
        return "*" * max(len(value) - 4, 3) + value[-4:]
    if kind != "email":
        value = "".join(char for char in value if char.isalnum())
    keep = 3 if len(value) > 8 else 1
    return value[:keep] + "*" * max(len(value) - 2 * keep, 3) + value[-keep:]


# -- credentials ------------------------------------------------------------------------------------
# Every quantifier is bounded, so each start position costs at most a constant: linear in the text.
_KEY_FORMATS = re.compile(
    r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----(?:[A-Za-z-]{1,40}: [^\n]{0,200}\n){0,4}[A-Za-z0-9+/=\s]{0,20000}"
    r"(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----)?"
    r"|\beyJ[A-Za-z0-9_-]{4,2000}\.[A-Za-z0-9_-]{4,8000}\.[A-Za-z0-9_-]{0,2000}"           # JWT
    r"|\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{8,200}|\bwhsec_[A-Za-z0-9]{16,200}"          # Stripe
    r"|\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[0-9A-Z]{16}\b"             # AWS key id
    # AWS secret access key: 40 base64 characters with a "/" or "+" in them (a word or a hash has neither)
    r"|(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]{0,39}[/+])(?=[A-Za-z0-9/+]{0,39}[0-9])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
    r"|\bgithub_pat_[A-Za-z0-9_]{20,255}|\bgh[pousr]_[A-Za-z0-9]{20,255}"                 # GitHub
    r"|\bAIza[0-9A-Za-z_-]{30,40}|\bsk-[A-Za-z0-9_-]{16,200}|\bxox[abprs]-[A-Za-z0-9-]{10,200}"
    r"|\bBearer\s{1,3}[A-Za-z0-9._~+/-]{16,500}={0,3}"
)
_KEY_CUE = (r"api[_ -]?key|access[_ -]?token|auth[_ -]?token|refresh[_ -]?token|secret[_ -]?key|client[_ -]?secret"
            r"|aws[_ ]?secret[_ ]?access[_ ]?key|private[_ ]?key|secret|token|password|passwd|passphrase|passcode|pwd|pw|pin")
_SECRET_CUE = (
    r"password|passwd|passphrase|passcode|pass code|pin(?: code| number)?|cvv2?|cvc|security code|verification code"
    r"|one[- ]time (?:code|password)|otp|2fa code|(?:api|access|auth|refresh|secret) (?:key|token)|token|secret"
    r"|(?:door|gate|lock|alarm|safe|garage|locker|building|entry|access|keypad|wi-?fi|router) (?:code|pin|password|combination)"
    r"(?: (?:for|to|of|at|in) (?:the |my |our )?[a-z'-]{1,20})?"  # "the alarm code for the studio is 4471#"
    r"|(?:code|combination|password|pin) (?:for|to|of) (?:the |my |our )?(?:front |back |main |garage |building )?"
    r"(?:door|gate|lock|alarm|safe|garage|locker|building|wi-?fi|house|apartment|flat|room|phone|laptop|account)"
)
# A cue may be English in a Chinese sentence ("secret 是 …", "token：…"): the Chinese copulas link too.
_CONNECTOR = (r"(?:\s{1,3}(?:is|was|are|=|:|now|still|currently|has been|set to|changed to|updated to|to|will be|becomes?)"
              r"|\s{0,3}(?:是|为|：|改成了?|换成了?)){0,3}")
_ZH_CUE = r"密码|口令|密钥|令牌|验证码|校验码|动态码|安全码|取件码|开门码|门禁码|(?i:pin)码"
_ZH_CONNECTOR = r"(?:\s{0,3}(?:是|为|:|=|改成了?|改为|换成了?|设成了?|设置为|设为|变成了?|现在是|还是|就是)){0,2}"
_CUED = [
    # key: value / key=value — always a secret, whatever the value looks like
    ("assigned", re.compile(r"(?i:\b(?:" + _KEY_CUE + r")\b)\s{0,3}[:=]\s{0,3}['\"]?(?P<v>[^\s'\"]{1,200})")),
    # "my PIN is now 4321", "the code for the door is 8812"
    # (the value is printable ASCII: "token 是 Zx81，别外传" ends at the Chinese comma)
    ("phrase", re.compile(r"(?i:\b(?:" + _SECRET_CUE + r")\b)(?P<c>" + _CONNECTOR + r")\s{1,3}['\"]?(?P<v>[!#-&(-~]{1,200})")),
    # 支付密码666666, 密码是 Abc#123, 验证码：123456
    ("zh", re.compile(r"(?:" + _ZH_CUE + r")" + _ZH_CONNECTOR + r"\s{0,3}['\"]?(?P<v>[!-~]{1,200})")),
    # a login written as a pair: "user jmoreno, pass Sunflower!88", "login: ann / pw: x7Kq", "账号 ann 密码…"
    # ("pass" and "pw" alone are too common a word to be a cue; after a user name they are one)
    ("pair", re.compile(r"(?i:\b(?:user(?:name)?|login|user\s{1,3}id)\b)[^\S\n]{0,3}[:=]?[^\S\n]{0,3}[^\s,;/|]{1,64}"
                        r"[^\S\n]{0,3}(?:[,;/|]|(?i:\band\b))[^\S\n]{0,3}(?i:\b(?:pass|pw|pwd)\b)[^\S\n]{0,3}[:=]?[^\S\n]{0,3}"
                        r"['\"]?(?P<v>[!-~]{1,200})")),
]
# A password by its shape alone: letters, digits and a symbol inside the word ("Kestrel#77",
# "Bluebird!2024", "tr0ub&dor"), 6 to 40 characters, no "@" (an e-mail) or "/" (a path); a "%"
# before two hex digits is a URL's escape ("search_path%3Dx"), not a symbol. Each
# lookahead reads at most the 40 characters a match may span: linear in the text.
_PW_CHAR = r"[A-Za-z0-9!#$%^&*_-]"
_PASSWORD_SHAPE = re.compile(rf"(?<![\w!#$%^&*@/.:-])(?=[A-Za-z0-9_-]{{0,39}}[A-Za-z])(?=[A-Za-z0-9!#$%^&*_-]{{0,39}}\d)"
                             rf"(?=[A-Za-z0-9_-]{{1,38}}(?:[!#$^&*]|%(?![0-9A-Fa-f]{{2}})){{1,8}}[A-Za-z0-9_-]){_PW_CHAR}{{6,40}}(?![\w@/]|[!#$%^&*.:-]\w)")
_TRAILING = ".,;:!?)]}>'\""
_NUMERIC_CUE = re.compile(r"(?i)pin|cvv|cvc|code|otp|combination")

# -- gates: a detector runs only where it could match ------------------------------------------------
# Each gate is a necessary condition of its pattern: a literal the pattern cannot match without,
# found by one search for all of them (a microsecond). Most messages hold no cue word, no "@" and
# no digit, so most detectors never run. A property test checks that gated and ungated scans agree.
_KEY_FORMAT_LITERALS = (
    "-----BEGIN", "eyJ", "_live_", "_test_", "whsec_", "github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "AIza", "sk-", "xox", "Bearer", "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA", "ABIA", "ACCA",
    "/", "+")  # an AWS secret access key holds a "/" or a "+"
# Every alternative of _KEY_CUE and of _SECRET_CUE holds one of these words.
_CUE_WORDS = ("key", "token", "secret", "pass", "pw", "pin", "cvv", "cvc", "code", "otp", "combination")
_KEY_FORMAT_GATE = re.compile("|".join(map(re.escape, _KEY_FORMAT_LITERALS)))
_CUE_WORD_GATE = re.compile("|".join(_CUE_WORDS))  # searched in the lower-cased text
_ZH_CUE_CHARS = ("码", "令", "钥")
_CREDENTIAL_GATE = re.compile("|".join(map(re.escape, CREDENTIAL_LITERALS)))  # searched in the lower-cased text
# likewise, each at a word's start as the labels are ("hotel" holds no label)
_LABEL_WORD_GATE = re.compile(r"\b(?:" + "|".join(map(re.escape, LABEL_WORDS)) + ")")
# SSNs and national phone formats all join digits with a separator: "555-0172", "(010) 6552", "020 7946".
_JOINED_DIGITS = re.compile(r"\d[ ./)-]{1,2}\d")
# The only non-ASCII characters a case-insensitive pattern matches to an ASCII letter (İ ı ſ K):
# with one of them in the text, the word gate cannot use ``lower()`` and stays open.
_ASCII_FOLDS = "\u0130\u0131\u017f\u212a"
_DIGIT = re.compile(r"\d")  # the patterns' own \d: any Unicode decimal digit
_FULL_WIDTH = re.compile("[\uff01-\uff5e\u3000]")


def _gates(view: str) -> dict[str, bool]:
    """Which detectors could match ``view`` (by name: "key_format", the cue shapes, the kinds)."""
    lower, folds = view.lower(), any(char in view for char in _ASCII_FOLDS)
    cue = folds or _CUE_WORD_GATE.search(lower) is not None
    digit = _DIGIT.search(view) is not None
    label = digit and (folds or any(char in view for char in LABEL_CHARS) or _LABEL_WORD_GATE.search(lower) is not None)
    return {
        "key_format": _KEY_FORMAT_GATE.search(view) is not None,
        "shapes": folds or _CREDENTIAL_GATE.search(lower) is not None,
        "assigned": cue and (":" in view or "=" in view), "phrase": cue, "pair": cue and ("user" in lower or "login" in lower),
        "zh": any(char in view for char in _ZH_CUE_CHARS),
        "email": "@" in view, "iban": digit, "cn_id": digit, "mobile": digit, "bank_card": digit, "phone": digit,
        "numbers": digit and _JOINED_DIGITS.search(view) is not None, "id_number": digit, "labels": label,
        "password_shape": digit and any(char in view for char in "!#$%^&*"),
    }


# What a sentence says *about* a password rather than *as* one: a function word or a state.
_NOT_A_VALUE = frozenset(
    "a an the my your our his her their this that it its not no too very so also still just same different "
    "wrong right correct incorrect invalid weak strong short long safe secure unsafe fine ok okay good bad new old "
    "easy hard simple complex reset set required needed missing there here what how where which why".split())


def _credential_shaped(value: str) -> bool:
    """A digit, a symbol, or mixed case: "hunter2", "Abc#123", "Sunshine"."""
    return (any(c.isdigit() for c in value) or any(not c.isalnum() for c in value)
            or (any(c.isupper() for c in value) and any(c.islower() for c in value)))


def _looks_like_credential(value: str) -> bool:
    """A word that is not a function word or a state: "hunter2", "Abc#123", "sunshine" — not
    "wrong", "expired", "the" (a lower-case word ending in -ed/-ing/-ly is a state too)."""
    word = value.lower()
    if not value.isascii():  # "my password is 你猜": words about it, in another script
        return False
    if _credential_shaped(value) or not value.islower():
        return True
    return word not in _NOT_A_VALUE and not word.endswith(("ed", "ing", "ly"))


def _cued_secrets(view: str, gates: dict[str, bool]) -> list[tuple[int, int]]:
    """Spans of the values that follow a credential cue (see the module docstring for the rules)."""
    spans = []
    for shape, pattern in _CUED:
        if not gates[shape]:
            continue
        for match in pattern.finditer(view):
            start, end = match.span("v")
            while end > start and view[end - 1] in _TRAILING:  # "my PIN is 4321." — the dot is prose
                end -= 1
            value = view[start:end]
            if not value or (shape == "phrase" and not _phrase_value_ok(match, value)) \
                    or (shape == "pair" and not _looks_like_credential(value)):
                continue
            spans.append((start, end))
    return spans


def _phrase_value_ok(match: re.Match[str], value: str) -> bool:
    """A PIN or code is numeric: a digit after "is"/"now"..., three digits straight after the cue
    ("PIN 4321", not "pin 3 photos"). A password is anything that looks like a credential."""
    cue = match.group(0)[: match.start("c") - match.start()]
    if re.search(r"(?i)secret|token|key", cue) and not match.group("c").strip():
        return False  # "guest secret walrus-42" is prose about secrecy; "secret 是 …" / "token is …" give one
    if _NUMERIC_CUE.search(cue) and not re.search(r"(?i)pass", cue):
        return any(c.isdigit() for c in value) if match.group("c") else value.isdigit() and len(value) >= 3
    # With no "is"/"now" between ("I forgot my password again"), only a credential-shaped value counts.
    return _looks_like_credential(value) if match.group("c") else _credential_shaped(value)


# -- personal data --------------------------------------------------------------------------------
_EDGE_L, _EDGE_R = r"(?<![0-9A-Za-z])", r"(?![0-9A-Za-z])"
_PATTERNS: list[tuple[str, re.Pattern[str], Callable[[str], bool]]] = [
    # Bounded parts keep a long paste linear: local part <= 64, each label <= 63 (as in the RFCs).
    ("email", re.compile(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}"),
     lambda value: True),
    ("cn_id", re.compile(_EDGE_L + r"\d(?:[ -]?\d){16}[ -]?[\dXx]" + _EDGE_R), cn_id_valid),
    # before cards: "+86 137…" holds 13 digits that may pass Luhn
    # 13800138000, 138 0013 8000, 138-0013-8000, 138.0013.8000, +86 138 0013 8000, (+86)13800138000
    ("mobile", re.compile(r"(?<![0-9A-Za-z.+])(?:(?:\+|00)86[ .-]?|\(\+?86\)[ .-]?)?1[3-9]\d(?:[ .-]?\d{4}){2}(?![0-9])"),
     lambda value: True),
    ("bank_card", re.compile(_EDGE_L + r"\d(?:[ -]?\d){12,18}" + _EDGE_R), luhn_valid),
    # +1 415 555 2671, +44 20 7946 0958, +49-30-1234567
    ("phone", re.compile(r"(?<![0-9A-Za-z+])\+[1-9]\d{0,2}(?:[ .-]?\(?\d{1,5}\)?){2,5}(?![0-9])"),
     lambda value: 8 <= sum(c.isdigit() for c in value) <= 15),
]
_PATTERNS[1:1] = ACCOUNT_SHAPES  # IBANs, right after e-mail: before a spaced IBAN's digits pass for a card


def find_sensitive(text: str) -> list[SensitiveFinding]:
    """Every sensitive value in ``text``, in order of position.

    >>> [f.kind for f in find_sensitive("call 13800138000 or mail a@b.cn")]
    ['mobile', 'email']
    >>> [f.kind for f in find_sensitive("card 4111 1111 1111 1111, my PIN is now 4321, 支付密码666666")]
    ['bank_card', 'secret', 'secret']
    >>> find_sensitive("the zip code is 100080; my password is wrong; 密码忘了")
    []
    """
    return list(_findings(text))


@text_cache(maxsize=1024)  # a write, its identifiers and its log line all ask about the same text
def _findings(text: str, gated: bool = True) -> tuple[SensitiveFinding, ...]:
    view = text.translate(_HALF_WIDTH) if _FULL_WIDTH.search(text) else text
    gates = _gates(view) if gated else dict.fromkeys(_gates(view), True)  # ungated: the reference scan
    claimed = bytearray(len(view))  # 1 where a finding already sits: overlap checks cost the span, not the findings
    findings: list[SensitiveFinding] = []

    def claim(kind: str, start: int, end: int) -> None:
        if end > start and not any(claimed[start:end]):
            claimed[start:end] = b"\x01" * (end - start)
            findings.append(SensitiveFinding(kind, start, end, _mask(kind, view[start:end])))

    if gates["key_format"]:
        for match in _KEY_FORMATS.finditer(view):
            claim("secret", *match.span())
    if gates["shapes"]:  # URL passwords, webhook paths, Authorization headers, service tokens
        for start, end in credential_spans(view):
            claim("secret", start, end)
    for start, end in _cued_secrets(view, gates):
        claim("secret", start, end)
    number_shapes = NUMBER_SHAPES if gates["numbers"] else []  # SSNs, national phones: one gate for the group
    for kind, pattern, valid in _PATTERNS + number_shapes:
        if gates[kind]:
            for match in pattern.finditer(view):
                if valid(match.group()):
                    claim(kind, *match.span())
    # last: a value known only by its label ("passport number E12345678") where no shape claimed it
    for kind, start, end in labelled_values(view, gates):
        claim(kind, start, end)
    if gates["password_shape"]:  # "it's now Kestrel#77": a password by its shape, whatever names it
        for match in _PASSWORD_SHAPE.finditer(view):
            claim("secret", *match.span())
    return tuple(sorted(findings, key=lambda finding: finding.start))


def redact(text: str, findings: list[SensitiveFinding]) -> str:
    """Replace each finding with ``[kind]``.

    >>> redact("mail a@b.cn now", find_sensitive("mail a@b.cn now"))
    'mail [email] now'
    """
    parts, last = [], 0
    for finding in sorted(findings, key=lambda f: f.start):  # one pass: linear in the text
        parts += [text[last: finding.start], f"[{finding.kind}]"]
        last = finding.end
    return "".join(parts) + text[last:]


# -- personal data where an id belongs ------------------------------------------------------------


def personal_data_kinds(value: Any) -> tuple[str, ...]:
    """The kinds of personal data anywhere in ``value`` (a string, or a JSON-like mapping / list
    walked to every key and string inside), without repeats; ``()`` when there is none.

    >>> personal_data_kinds("alice"), personal_data_kinds({"phone": "138 0013 8000"})
    ((), ('mobile',))
    """
    kinds: dict[str, None] = {}
    stack = [value]
    while stack:  # iterative: a deeply nested value cannot overflow the call stack
        item = stack.pop()
        if isinstance(item, str):
            kinds.update(dict.fromkeys(_kinds_in(item)))
        elif isinstance(item, dict) or hasattr(item, "items"):
            for key, inner in item.items():
                stack += [key, inner]
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
    return tuple(kinds)


@text_cache(maxsize=1024)  # every Message checks its ids; the same few ids come again and again
def _kinds_in(text: str) -> tuple[str, ...]:
    return tuple(f.kind for f in find_sensitive(text))


def check_not_personal(name: str, value: Any, hint: str = "use an opaque id, e.g. a hash of it") -> None:
    """Refuse personal data where an identifier or a label belongs (user id, session id, metadata).

    Such fields are written to the store, the ledger and every log line as they are, so they must
    be opaque. The error names the field and the kind of data, never the value.

    >>> check_not_personal("user_id", "13800138000")
    Traceback (most recent call last):
    ...
    ValueError: user_id holds personal data (mobile); use an opaque id, e.g. a hash of it
    """
    kinds = personal_data_kinds(value)
    if kinds:
        raise ValueError(f"{name} holds personal data ({', '.join(kinds)}); {hint}")


def check_metadata(metadata: Any) -> None:
    """Refuse personal data in a message's metadata, naming the key (or "a metadata key") only.

    >>> check_metadata({"phone": "138 0013 8000"})
    Traceback (most recent call last):
    ...
    ValueError: metadata['phone'] holds personal data (mobile); put it in the content, where it is redacted
    """
    hint = "put it in the content, where it is redacted"
    for key, value in metadata.items():
        if personal_data_kinds(key):
            check_not_personal("a metadata key", key, hint)
        check_not_personal(f"metadata[{key!r}]", value, hint)
