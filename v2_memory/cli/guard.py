"""How a command fails: one ``error: ...`` line on stderr and an exit code, never a traceback.

``run_guarded`` wraps a command's run (the ``v2-memory`` subcommands and ``python v2_memory/main.py``
alike): the library's errors print their message, a file system error says what is missing or
refused (a folder or a file, and which) instead of a raw ``[Errno N]``, and when the reader of a
pipe goes away (``... | head``) the command stops quietly. It imports nothing of the commands, so
the demo can use it without importing the command line.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Callable

from ..errors import V2MemoryError
from ..tables import escape

__all__ = ["run_guarded", "error_text", "PIPE_CLOSED"]

# A raw errno prefix, as str(OSError) writes it: "[Errno 2] No such file or directory: 'x'".
_ERRNO = re.compile(r"\[(?:Errno|WinError) -?\d{1,10}\] ")
# Exit status of a writer whose reader left, as a shell reports a process killed by SIGPIPE.
PIPE_CLOSED = 141


def run_guarded(run: Callable[[argparse.Namespace], int], args: argparse.Namespace, failure: int = 1) -> int:
    """``run(args)``, with the command line's error handling around it (shared with ``main.py``)."""
    try:
        status = run(args)
        sys.stdout.flush()  # a closed pipe must fail here, inside the guard, not at interpreter exit
        return status
    except BrokenPipeError:
        _silence_stdout()
        return PIPE_CLOSED
    except (V2MemoryError, OSError, ValueError, TypeError) as exc:
        print(f"error: {error_text(exc)}", file=sys.stderr)
        return failure


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so Python's own flush at exit does not report the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (a test's capture)
        pass


def error_text(exc: BaseException) -> str:
    """The one line an error prints: escaped, without errno codes, file system errors in words."""
    text = _describe_os_error(exc) if isinstance(exc, OSError) and exc.strerror else str(exc)
    return escape(_ERRNO.sub("", text))


def _describe_os_error(exc: OSError) -> str:
    """Say what the file system refused, and whether the path in question is a folder or a file."""
    if exc.filename is None:
        return exc.strerror
    path = Path(os.fsdecode(exc.filename))
    if isinstance(exc, FileNotFoundError):
        missing = _first_missing(path)
        return f"folder {missing} does not exist" if missing != path else f"file {path} does not exist"
    if isinstance(exc, NotADirectoryError):
        blocker = next((p for p in [path, *path.parents] if p.is_file()), path)
        return f"{blocker} is a file, not a folder"
    if isinstance(exc, IsADirectoryError):
        return f"{path} is a folder, not a file"
    if isinstance(exc, FileExistsError):
        return f"{_kind(path)} {path} already exists"
    return f"{_kind(path)} {path}: {exc.strerror[:1].lower()}{exc.strerror[1:]}"


def _first_missing(path: Path) -> Path:
    """The outermost missing part of ``path``: /a/b/c with only /a existing gives /a/b."""
    for candidate in reversed([path, *path.parents]):
        if not candidate.exists():
            return candidate
    return path


def _kind(path: Path) -> str:
    return "folder" if path.is_dir() else "file" if path.exists() else "path"


