"""The ``v2-memory`` command (also ``python -m v2_memory``): a thin layer over the library.

Each subcommand parses its options, makes one library call, and prints the result. Errors are
one ``error: ...`` line on stderr and a non-zero exit code: the library's message, or for a file
system error, what is missing or refused (a folder or a file, and which) — never a raw
``[Errno N]``. When the reader of a pipe goes away (``... | head``), the command stops quietly.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Callable, Sequence

from .. import __version__
from .. import main as demo
from .commands import COMMANDS
from .memory_commands import MEMORY_COMMANDS
from ..errors import V2MemoryError
from ..evaluation import bench
from ..evaluation import eval_command as evaluation
from ..integrations import mcp_server
from ..tables import escape

__all__ = ["main", "build_parser", "run_guarded", "error_text"]

# A raw errno prefix, as str(OSError) writes it: "[Errno 2] No such file or directory: 'x'".
_ERRNO = re.compile(r"\[(?:Errno|WinError) -?\d{1,10}\] ")
# Exit status of a writer whose reader left, as a shell reports a process killed by SIGPIPE.
PIPE_CLOSED = 141


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="v2-memory",
        description="Governed memory for LLM agents: the demo, benchmarks and inspection tools.",
        epilog="example: python -m v2_memory demo --out /tmp/demo",
    )
    parser.add_argument("--version", action="version", version=f"v2-memory {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, summary: str, epilog: str) -> argparse.ArgumentParser:
        # One style for every command: a sentence that says what it does, the options, an example last.
        return commands.add_parser(name, help=summary, description=summary, epilog=epilog,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)

    demo_parser = add("demo", demo.DESCRIPTION, demo.EPILOG)
    demo.add_arguments(demo_parser)
    demo_parser.set_defaults(run=demo.run_from_args, failure=2)
    bench_parser = add("bench", bench.DESCRIPTION, bench.EPILOG)
    bench.add_arguments(bench_parser)
    bench_parser.set_defaults(run=bench.run_from_args)
    evaluation.add_arguments(add("eval", evaluation.DESCRIPTION, evaluation.EPILOG))
    mcp_server.add_arguments(add("mcp", mcp_server.DESCRIPTION, mcp_server.EPILOG))
    for name, (summary, example, add_arguments, run) in {**COMMANDS, **MEMORY_COMMANDS}.items():
        command = add(name, summary, f"example: {example}")
        add_arguments(command)
        command.set_defaults(run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; errors become one ``error: ...`` line on stderr and exit code 1 (2 for the demo)."""
    args = build_parser().parse_args(argv)
    return run_guarded(args.run, args, getattr(args, "failure", 1))


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


