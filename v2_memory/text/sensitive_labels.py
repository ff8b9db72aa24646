"""Sensitive values recognised by their label: "passport number E12345678", "卡号是6214830123456789".

A number is sensitive because of what it is *called*, whatever its shape: an account number has no
checksum to test and a passport number no fixed length. So a label word for an identity, an account
or a phone (English or Chinese), then a short link, then a value-like token is a finding:

    id_number       SSN, social security / insurance number, passport, driver's licence, national ID,
                    tax ID, NHS / Medicare number; 身份证号, 护照号, 社保号, 驾驶证号, 证件号, 医保号, 税号
    account_number  account number / no. / #, acct, IBAN, routing number, sort code, card number,
                    debit / credit / bank card number, customer / member / policy number; 银行卡号, 卡号, 账号,
                    账户, 户号, 信用卡号, 储蓄卡, 借记卡, 工资卡
    phone           phone, cell, mobile, tel, landline, fax, WhatsApp; 手机号, 电话, 座机, 联系方式

The link is nothing, a space, or a short stretch of the same sentence ending in a copula or a
colon: "SSN for the form, it's 521-44-8793", "卡号你帮我存着：6214…" (or in 的 and a space: "工资卡是
招行的 6225 8812 …"). A stretch that ends in
anything else is not a link, so "phone order 20231105" holds no phone number.

The value is letters, digits and single separators that starts within three letters of a digit
("E12345678", "1100 1234 5678 9012 345", "(010) 6552-3388") and holds at least 5 digits (7–15 for a
phone), and is not a date: "passport expires 2031-05-01", "phone is 5 years old", "account
number ends in 4821" and "I forgot my password again" hold none.

``sensitive.py`` runs this last, so a value with a stronger shape (a Luhn-valid card, a mainland ID)
keeps its own kind. Module ``sensitive_shapes`` is the neighbour that works by shape alone.
"""
from __future__ import annotations

import re

__all__ = ["labelled_values", "LABEL_WORDS", "LABEL_CHARS"]

_EN_LABELS = {
    "id_number": (r"ssn|social security(?: number| no\.?| #)?|social insurance(?: number| no\.?)?|national insurance"
                  r"(?: number| no\.?)?|passport(?: number| no\.?| #)?|driver'?s licen[cs]e(?: number| no\.?| #)?|dl (?:number|no\.?|#)"
                  r"|licen[cs]e (?:number|no\.?)|national id(?: number| no\.?)?|id (?:number|no\.?|card number)"
                  r"|identity (?:card )?number|tax (?:id|number|file number)|nhs number|medicare(?: number| no\.?)?"),
    "account_number": (r"account(?: number| no\.?| #|#)|acct(?: number| no\.?)?|a/c(?: no\.?)?|iban|routing(?: number| no\.?)?"
                       r"|sort code|(?:(?:debit|credit|bank|salary) )?card (?:number|no\.?)"
                       r"|(?:customer|member|membership|policy) (?:number|no\.?)"),
    "phone": r"phone(?: number| no\.?| #)?|telephone|tel\.?|cell(?: phone| number)?|mobile(?: number| no\.?)?|landline|fax|whatsapp",
}
_ZH_LABELS = {
    "id_number": r"身份证(?:号码|号)?|护照(?:号码|号)?|社保(?:卡)?(?:号码|号)|社会保障(?:卡)?号码?|驾驶证号码?|驾照号码?|证件号码?"
                 r"|医保(?:卡)?号码?|纳税人识别号|税号",
    "account_number": r"银行卡(?:号码|号)?|卡号|银行账号|账号|帐号|账户|帐户|户号|(?:信用|储蓄|借记|工资)卡(?:号码|号)?",
    "phone": r"手机(?:号码|号)?|电话(?:号码)?|座机|联系电话|联系方式|固话|传真",
}
# Gates: a label cannot match without one of these (lower-case words; Chinese characters).
LABEL_WORDS = ("ssn", "social", "insurance", "passport", "licen", "dl ", "national", "identity", "tax ", "nhs", "medicare",
               "id ", "account", "acct", "a/c", "iban", "routing", "sort code", "card ", "customer", "member", "policy",
               "phone", "tel", "cell", "mobile", "landline", "fax", "whatsapp")
LABEL_CHARS = ("证", "护", "社", "税", "号", "账", "帐", "户", "卡", "手", "电", "座", "联", "固", "传")

# The link: nothing or spaces, or up to 30 characters of the same sentence ending in a copula or colon.
_LINK = (r"(?:[^\S\n]{0,3}|[^\d\n.!?;。！？；]{0,30}?(?:\bis|\bwas|\bare|'s|\bat|\bto|:|：|=|#|是|为|改成了?|换成了?|变成了?"
         r"|的(?=[^\S\n]))[^\S\n]{0,3})['\"]?")
# The value: a digit within three letters of its start, then letters or digits joined by single
# separators ("(415) 555-0172", "E12345678"); a space joins only digits, so "8793 btw" ends at 8793.
_VALUE = (r"(?P<v>(?<![A-Za-z0-9])\(?\+?[A-Za-z]{0,3}\d"
          r"(?:[A-Za-z0-9]|\)? {1,2}\d|[.\-/)] ?\d|[.\-/][A-Za-z0-9]){3,60})(?![A-Za-z0-9])")
# A label that modifies another noun is no label: "mobile revenue was 1500000", "routing table is
# 120000 routes", "账户余额是123456", "信用卡(的)额度是50000" name a revenue, a table, a balance, a limit.
_NOT_COMPOUND_EN = (r"(?![^\S\n]{1,3}(?!(?:is|was|are|were|number|no|of|for|at|to|on|in|here|there|now|again|below|above|"
                    r"please|pls|ends|starts|the|my|his|her|their|its|our|your)\b)[a-z]{3,30})")
_NOT_COMPOUND_ZH = r"(?!的?(?:余额|额度|金额|积分|数量|名称|类型|状态|费|套餐|流量|话费|信号|屏)|里|上的|中的)"
_PATTERNS = [
    (kind, re.compile(r"(?i:\b(?:" + _EN_LABELS[kind] + r"))(?![A-Za-z])" + _NOT_COMPOUND_EN + _LINK + _VALUE)) for kind in _EN_LABELS
] + [(kind, re.compile(r"(?:" + _ZH_LABELS[kind] + r")" + _NOT_COMPOUND_ZH + _LINK + _VALUE)) for kind in _ZH_LABELS]
_DATE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}|(?:19|20)\d{2}(?:0[1-9]|1[0-2])\d{2}")


def _value_ok(kind: str, value: str) -> bool:
    """Enough digits for its kind, and not a date."""
    digits = sum(c.isdigit() for c in value)
    enough = 7 <= digits <= 15 if kind == "phone" else digits >= 5
    return enough and _DATE.fullmatch(value.strip("()+")) is None


def labelled_values(view: str, gates: dict[str, bool]) -> list[tuple[str, int, int]]:
    """(kind, start, end) of each value that follows a label, for the kinds whose gate is open.

    >>> text = "her passport number is E12345678, cell (415) 555-0172; 账号 1100 1234 5678 9012 345"
    >>> [(kind, text[s:e]) for kind, s, e in labelled_values(text, {"labels": True})]
    [('id_number', 'E12345678'), ('phone', '(415) 555-0172'), ('account_number', '1100 1234 5678 9012 345')]
    """
    found = []
    if gates.get("labels"):
        for kind, pattern in _PATTERNS:
            for match in pattern.finditer(view):
                start, end = match.span("v")
                if _value_ok(kind, view[start:end]):
                    found.append((kind, start, end))
    return sorted(found, key=lambda item: item[1])
