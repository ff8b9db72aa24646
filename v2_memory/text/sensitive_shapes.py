"""Sensitive values recognised by a well-known shape: where a secret sits in a URL, a header or a
connection string, service tokens, IBANs, US social-security numbers and national phone numbers.

``sensitive.py`` runs these beside its own detectors and owns the order and the findings; this
module only says *where* a value sits (spans) and whether a candidate passes its check. Its
neighbour ``sensitive_labels.py`` finds values by the label before them, whatever their shape.

Secrets (kind ``secret``), only the secret part is claimed, so the rest of the line stays useful:

* the password of any URL's userinfo: ``postgres://app:[secret]@db:5432/x``, ``redis://:[secret]@cache``;
* the secret part of a URL's path or query: a webhook's path after its ``hooks.`` host or its
  ``hook``/``webhooks`` segment (Slack, Discord, Feishu, Teams …), a Telegram ``bot<id>:<token>``
  segment, and the values of ``token=``, ``key=``, ``sig=``, ``access_token=``, ``password=`` …;
* ``Authorization:`` headers (``Bearer``, ``Basic``, ``Token`` … or a bare credential);
* connection-string keys: ``AccountKey=``, ``SharedAccessKey=``, ``SharedAccessSignature=``, ``_authToken=``;
* service tokens by prefix: npm ``npm_``, PyPI ``pypi-``, GitLab ``glpat-``, Docker ``dckr_pat_``,
  Hugging Face ``hf_``, Slack ``xapp-``, SendGrid ``SG.…``, Google OAuth ``ya29.``, Shopify ``shpat_``.

Personal data, each checked beyond its pattern:

    iban        2 letters, 2 check digits, 11–30 letters or digits, with or without spaces: mod-97 == 1
    id_number   a US social-security number 123-45-6789 (area not 000/666/9xx, group and serial not 0)
    phone       national formats: US (415) 555-0172, 415-555-0172, 415.555.0172 (area and exchange 2–9);
                a trunk-0 number with a separator after its area code, 9–12 digits: UK 020 7946 0958,
                07700 900123, DE 030 12345678, 089/1234567, CN (010) 6552-3388, 0755-8601-3388
"""
from __future__ import annotations

import re
from typing import Callable

__all__ = ["credential_spans", "ACCOUNT_SHAPES", "NUMBER_SHAPES", "CREDENTIAL_LITERALS", "iban_valid", "ssn_valid"]

# -- credentials ------------------------------------------------------------------------------------
# A URL: a scheme, "://", then printable ASCII up to a space, a quote or a non-ASCII character
# ("https://x/hook/abc，谢谢" ends at the Chinese comma). Every repeat is bounded: linear in the text.
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\x00-\x20<>\"'`\x7f-\U0010ffff]{1,2048}")
_URL_TRAILING = ".,;:!?)]}>"
_SECRET_PARAMS = frozenset(
    "token access_token id_token refresh_token auth auth_token authtoken key api_key apikey api-key sig signature "
    "secret client_secret password passwd pass pwd x-amz-signature x-amz-credential x-amz-security-token "
    "private_token webhook_secret".split())
_HOOK_SEGMENTS = frozenset("hook hooks webhook webhooks incomingwebhook".split())
_TELEGRAM_BOT = re.compile(r"bot\d{5,12}:[A-Za-z0-9_-]{20,80}")

_TOKENS = re.compile(
    r"\bnpm_[A-Za-z0-9]{30,40}\b|\bpypi-[A-Za-z0-9_-]{16,400}|\bgl(?:pat|dt|rt|ptt|cbt|soat|ft|imt)-[A-Za-z0-9_-]{20,80}"
    r"|\bdckr_pat_[A-Za-z0-9_-]{20,80}|\bhf_[A-Za-z0-9]{30,40}\b|\bxapp-[A-Za-z0-9-]{10,200}"
    r"|\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}|\bya29\.[A-Za-z0-9_-]{20,400}|\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"
)
# Authorization: Bearer x / Basic x / a bare credential; only the credential is claimed.
_AUTH_HEADER = re.compile(
    r"(?i)\b(?:proxy-)?authori[sz]ation['\"]?\s{0,3}[:=]\s{0,3}['\"]?"
    r"(?:(?:bearer|basic|token|digest|bot|apikey|api-key|sso-key|hmac|negotiate|ntlm)\s{1,3})?"
    r"(?P<v>[A-Za-z0-9._~+/=:,-]{4,4000})")
# Azure and npm connection strings: AccountKey=…;EndpointSuffix=… — the value ends at ";".
_CONNECTION_KEY = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey|SharedAccessSignature|_authToken|_auth|ClientSecret)"
    r"\s{0,2}=\s{0,2}(?P<v>[^;\s'\"]{1,2000})")
# Lower-case literals one of which every credential shape holds: searched in the lower-cased text.
CREDENTIAL_LITERALS = ("://", "authori", "npm_", "pypi-", "glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glsoat-",
                       "glft-", "glimt-", "dckr_pat_", "hf_", "xapp-", "sg.", "ya29.", "shp",
                       "accountkey", "sharedaccess", "_auth", "clientsecret")


def _url_spans(url: str, offset: int) -> list[tuple[int, int]]:
    """The secret parts of one URL, as spans of the text it starts at ``offset`` in."""
    spans = []
    scheme_end = url.index("://") + 3
    authority_end = next((i for i in range(scheme_end, len(url)) if url[i] in "/?#"), len(url))
    # 1. userinfo: scheme://user:PASSWORD@host — the password only
    at = url.rfind("@", scheme_end, authority_end)
    colon = url.find(":", scheme_end, at) if at > 0 else -1
    if colon >= 0 and at > colon + 1:
        spans.append((colon + 1, at))
    host = url[at + 1 if at > 0 else scheme_end: authority_end].lower()
    path_end = next((i for i in range(authority_end, len(url)) if url[i] in "?#"), len(url))
    # 2. the path: after a webhook host's first segment, or after a hook segment, the rest is the secret
    segments, start = [], authority_end + 1
    for part in url[authority_end + 1: path_end].split("/") if authority_end < path_end else []:
        segments.append((part, start))
        start += len(part) + 1
    for index, (part, begin) in enumerate(segments):
        hook_host = host.startswith("hooks.") and index == 0
        if (hook_host or part.lower() in _HOOK_SEGMENTS) and index + 1 < len(segments):
            secret_start = segments[index + 1][1]
            if _secret_like(url[secret_start:path_end]):
                spans.append((secret_start, path_end))
            break
        if _TELEGRAM_BOT.fullmatch(part):
            spans.append((begin + 3, begin + len(part)))
    # 3. the query and fragment: the value of token=, key=, sig= …
    start = path_end + 1
    for pair in url[path_end + 1:].replace("#", "&").split("&") if path_end < len(url) else []:
        name, equals, value = pair.partition("=")
        if equals and value and name.lower() in _SECRET_PARAMS:
            spans.append((start + len(name) + 1, start + len(pair)))
        start += len(pair) + 1
    return [(offset + s, offset + e) for s, e in spans]


def _secret_like(value: str) -> bool:
    """At least 8 letters or digits, one of them a digit: "T04AB12CD/B05XY9Z8W/pQ7r…", not "send"."""
    return sum(c.isalnum() for c in value) >= 8 and any(c.isdigit() for c in value)


def credential_spans(view: str) -> list[tuple[int, int]]:
    """Spans of the secrets this module recognises, in no particular order (they may overlap).

    >>> text = "db postgres://app:s3cret@db:5432/x, Authorization: Basic dXNlcjpwYXNz"
    >>> [text[s:e] for s, e in credential_spans(text)]
    ['s3cret', 'dXNlcjpwYXNz']
    """
    spans = []
    if "://" in view:
        for match in _URL.finditer(view):
            url = match.group().rstrip(_URL_TRAILING)
            spans += _url_spans(url, match.start())
    for pattern in (_AUTH_HEADER, _CONNECTION_KEY):
        spans += [match.span("v") for match in pattern.finditer(view)]
    spans += [match.span() for match in _TOKENS.finditer(view)]
    return [(start, _trim(view, start, end)) for start, end in spans]


def _trim(view: str, start: int, end: int) -> int:
    if end < len(view) and view[end] in "@&#":
        return end  # a URL password ends at its "@", a query value at "&": "S3cr3t!" is all secret
    while end > start and view[end - 1] in ".,;:!?)]}>'\"":  # "…pQ7r." — the dot is prose
        end -= 1
    return end


# -- personal data by shape -------------------------------------------------------------------------


def iban_valid(candidate: str) -> bool:
    """An IBAN's check digits make the whole number, letters as 10–35, leave 1 mod 97 (ISO 13616).

    >>> iban_valid("DE89370400440532013000"), iban_valid("GB82 WEST 1234 5698 7654 32"), iban_valid("DE89370400440532013001")
    (True, True, False)
    """
    value = candidate.replace(" ", "").upper()
    if not 15 <= len(value) <= 34 or not value.isalnum() or not value[2:4].isdigit():
        return False
    rearranged = value[4:] + value[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def ssn_valid(candidate: str) -> bool:
    """A US social-security number is never issued with area 000, 666 or 9xx, group 00 or serial 0000.

    >>> ssn_valid("521-44-8793"), ssn_valid("666-12-3456"), ssn_valid("123-00-4567")
    (True, False, False)
    """
    area, group, serial = candidate.split("-")
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _nanp_valid(candidate: str) -> bool:
    """North American numbers: area code and exchange both start with 2–9."""
    digits = "".join(c for c in candidate if c.isdigit())
    digits = digits[1:] if len(digits) == 11 else digits
    return len(digits) == 10 and digits[0] in "23456789" and digits[3] in "23456789"


def _trunk_valid(candidate: str) -> bool:
    """A national number dialled with its trunk 0 holds 9–12 digits (UK, DE, FR, CN landlines …)."""
    return 9 <= sum(c.isdigit() for c in candidate) <= 12


# (kind, pattern, check), run by sensitive.py: IBANs before bank cards (a spaced IBAN's digits may
# pass Luhn), the numbers after the mainland and "+" formats.
ACCOUNT_SHAPES: list[tuple[str, re.Pattern[str], Callable[[str], bool]]] = [
    ("iban", re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])"),
     iban_valid),
]
NUMBER_SHAPES: list[tuple[str, re.Pattern[str], Callable[[str], bool]]] = [
    ("id_number", re.compile(r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])"), ssn_valid),
    # (415) 555-0172, 415-555-0172, 415.555.0172, 1-415-555-0172
    # (never the tail of a longer run of digit groups: "3301 0219 8802 1234" is one number)
    ("phone", re.compile(r"(?<![\d+(.-])(?:(?:1[ .-])?\(\d{3}\) ?|(?<!\d[ .-])(?:1[ .-])?\d{3}[ .-])\d{3}[ .-]\d{4}(?![\d])"),
     _nanp_valid),
    # 020 7946 0958, 07700 900123, 030 12345678, 089/1234567, (010) 6552-3388, 0755-8601-3388
    ("phone", re.compile(r"(?<![\d+./-])(?:\(0\d{1,4}\) ?|(?<!\d[ .-])0\d{1,4}[ /.-])\d{2,4}(?:[ .-]?\d{2,4}){0,3}(?![\d])"),
     _trunk_valid),
]
