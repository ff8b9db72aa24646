"""Errors v2_memory raises on purpose.

Every error the library raises deliberately is a ``V2MemoryError`` (never the built-in
``MemoryError``, which means "out of RAM"). Subclasses carry the context a caller needs to act:
the file, the line, the user. Argument misuse stays a plain ``TypeError`` / ``ValueError``.
"""
from __future__ import annotations

from pathlib import Path


def install_hint(extra: str, packages: str) -> str:
    """How to install an optional piece: v2_memory is installed from its checkout (no index has it).

    >>> print(install_hint("postgres", "psycopg"))
    pip install -e ".[postgres]" in the v2_memory checkout (or pip install psycopg)
    """
    return f'pip install -e ".[{extra}]" in the v2_memory checkout (or pip install {packages})'


class V2MemoryError(Exception):
    """Base class for every error v2_memory raises on purpose."""


class StoreError(V2MemoryError):
    """Something is wrong with a store file; ``path`` names it."""

    def __init__(self, message: str, *, path: Path | str | None = None) -> None:
        # A server's URL (masked) stays a string: a Path would fold its "//".
        self.path = path if isinstance(path, str) and "://" in path else Path(path) if path is not None else None
        prefix = f"{self.path}: " if self.path is not None else ""
        super().__init__(prefix + message)


class StorePathError(StoreError, ValueError):
    """The store path cannot hold a store (for example, it is a directory)."""


class UnstorableTextError(StoreError, ValueError):
    """This backend cannot hold the text given (PostgreSQL: a NUL character); nothing was written."""


class StoreCorruptError(StoreError):
    """A store file cannot be read safely. It is left untouched on disk.

    ``line`` is the 1-based line number of the first bad record, when known.
    """

    def __init__(self, message: str, *, path: Path | str, line: int | None = None) -> None:
        self.line = line
        where = f"line {line}: " if line is not None else ""
        super().__init__(where + message, path=path)


class UnsupportedFormatError(StoreError):
    """The file was written in a format version this release does not know."""

    def __init__(self, message: str, *, path: Path | str, version: object = None) -> None:
        self.version = version
        super().__init__(message, path=path)


class StoreLockedError(StoreError):
    """Another process (or another store object) is writing this store file."""


class StoreInconsistentError(StoreError):
    """The store's files disagree (a state database missing beside a full store, or the reverse).

    Nothing was changed or recreated: the message says what is missing and how to repair it.
    """


class StoreClosedError(StoreError):
    """The memory was closed (by ``close()``, or because the same store was opened again)."""


class DefaultUserWarning(UserWarning):
    """A call used the implicit ``"default"`` user on a store that also holds named users.

    The article's API defaults ``user_id`` to ``"default"``, so one forgotten argument mixes
    people's memories. Pass the user (or use ``memory.for_user(user_id)``); to make the mistake
    impossible rather than loud, turn the warning into an error:
    ``warnings.simplefilter("error", DefaultUserWarning)``.
    """
