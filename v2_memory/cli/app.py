"""The ``v2-memory`` command (also ``python -m v2_memory``): a thin layer over the library.

Each subcommand parses its options, makes one library call, and prints the result. Errors are
one ``error: ...`` line on stderr and a non-zero exit code (``guard.py``).

The optional doors — the demo, the benchmark, the evaluation and the MCP server — are imported
only when their command is run (or its ``--help`` asked for): ``--help`` and the store commands
never load them. ``build_parser()`` with no argument opens every door (the tests and the docs
read every command's options).
"""
from __future__ import annotations

import argparse
import sys
from types import ModuleType
from typing import Iterable, Sequence

from .. import __version__
from .commands import COMMANDS
from .memory_commands import MEMORY_COMMANDS
from .guard import PIPE_CLOSED, error_text, run_guarded

__all__ = ["main", "build_parser", "run_guarded", "error_text", "PIPE_CLOSED", "DOORS"]

# command -> (its one-line summary, the exit code when it fails): the summary is the door module's
# DESCRIPTION, copied so the command list needs no import (tests/test_cli.py checks they agree).
DOORS: dict[str, tuple[str, int]] = {
    "demo": ("Reproduce the article's blind top-k vs threshold table and write trace.json for the page.", 2),
    "bench": ("Benchmark JsonVectorStore against the article's brute-force scan.", 1),
    "eval": ("Evaluate governance: the pollution benchmark, or LoCoMo retrieval recall.", 1),
    "mcp": ("Serve one user's governed memory to an MCP client (Model Context Protocol over stdio).", 1),
}


def _door(command: str) -> ModuleType:
    """The module behind a door, imported now: DESCRIPTION, EPILOG, add_arguments and (except
    ``eval``, whose subcommands set their own) run_from_args."""
    if command == "demo":
        from .. import main as module
    elif command == "bench":
        from ..evaluation import bench as module
    elif command == "eval":
        from ..evaluation import eval_command as module
    elif command == "mcp":
        from ..integrations import mcp_server as module
    else:
        raise ValueError(f"no door named {command!r}; expected one of {list(DOORS)}")
    return module


def build_parser(doors: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; ``doors``: the optional commands whose modules to import and whose
    options to add (default: all). A door left shut is listed with its summary and nothing else."""
    opened = set(DOORS if doors is None else doors)
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

    for name, (summary, failure) in DOORS.items():
        command = add(name, summary, "")
        command.set_defaults(failure=failure)
        if name in opened:
            module = _door(name)
            command.description, command.epilog = module.DESCRIPTION, module.EPILOG
            if hasattr(module, "run_from_args"):
                command.set_defaults(run=module.run_from_args)
            module.add_arguments(command)
    for name, (summary, example, add_arguments, run) in {**COMMANDS, **MEMORY_COMMANDS}.items():
        command = add(name, summary, f"example: {example}")
        add_arguments(command)
        command.set_defaults(run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; errors become one ``error: ...`` line on stderr and exit code 1 (2 for the demo)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    # Only the door being run is opened: the command is the first word that is not an option.
    named = next((word for word in argv if not word.startswith("-")), None)
    args = build_parser(doors=[named] if named in DOORS else []).parse_args(argv)
    return run_guarded(args.run, args, getattr(args, "failure", 1))
