"""Store URLs, read without a driver: which scheme names PostgreSQL, and the URL as it may be shown.

A connection string's password must never reach a message, a log or a traceback. Everything that
prints a URL prints ``mask_url(url)``; the PostgreSQL module scrubs every spelling of the password
(``url_secrets``) from the driver's errors. Kept apart from ``postgres.py`` so that choosing a
backend, masking a URL in an error or a repr imports no database code.

    >>> mask_url("postgresql://ann:s3cret@db.example/memory")
    'postgresql://ann:***@db.example/memory'
"""
from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from ..errors import StorePathError

__all__ = ["URL_SCHEMES", "mask_url", "check_userinfo", "url_secrets"]

URL_SCHEMES = ("postgresql://", "postgres://")
_SECRET_KEYS = {"password", "passfile", "sslpassword"}
_SECRET_PARAM = re.compile(r"(?i)([?&](?:password|passfile|sslpassword))=[^&#]*")


def mask_url(url: str) -> str:
    """The URL with its password (in the user part or a ``password=`` parameter) replaced by ``***``.

    The user part ends at the *last* "@": a password holding an unencoded "/" or "@" (which libpq
    would misread) is masked whole all the same.

        >>> mask_url("postgresql://ann:se/cr@t@db.example:5432/mem")
        'postgresql://ann:***@db.example:5432/mem'
    """
    scheme, sep, rest = url.partition("://")
    user, at, after = rest.rpartition("@")
    if at and ":" in user:  # userinfo with a password, however it is spelled
        rest = user.split(":", 1)[0] + ":***@" + after
    authority, slash, tail = rest.partition("/")
    # [^&#]* is one pass, no backtracking: linear in the URL.
    tail = _SECRET_PARAM.sub(lambda m: m.group(1) + "=***", tail)
    return scheme + sep + authority + slash + tail


def check_userinfo(url: str) -> None:
    """Refuse a password (or user) holding "/", "@", "?" or "#" unencoded: libpq would read part of
    it as the host and quote it in its errors. Said with the URL masked, before any connection."""
    user, at, _ = url.partition("://")[2].rpartition("@")
    if at and ":" in user and any(c in user for c in "/@?#"):
        raise StorePathError("the user or password in the URL holds '/', '@', '?' or '#' unencoded: write them "
                             "percent-encoded (%2F, %40, %3F, %23)", path=mask_url(url))


def url_secrets(url: str) -> list[str]:
    """Every spelling of the password the URL carries (raw and percent-decoded), to scrub from messages."""
    parts = urlsplit(url)
    found = [parts.password or ""] + [v for k, v in parse_qsl(parts.query) if k.lower() in _SECRET_KEYS]
    spellings = {s for value in found if value for s in (value, unquote(value), quote(value, safe=""))}
    return sorted(spellings, key=len, reverse=True)
