"""The ``v2-memory`` command (also ``python -m v2_memory``): a thin layer over the library.

Each subcommand parses its options, makes one library call, and prints the result. Errors are
one ``error: ...`` line on stderr and a non-zero exit code (``guard.py``).
"""
from __future__ import annotations

import argparse
from typing import Sequence

from .. import __version__
from .. import main as demo
from .commands import COMMANDS
from .memory_commands import MEMORY_COMMANDS
from ..evaluation import bench
from ..evaluation import eval_command as evaluation
from ..integrations import mcp_server
from .guard import PIPE_CLOSED, error_text, run_guarded

__all__ = ["main", "build_parser", "run_guarded", "error_text", "PIPE_CLOSED"]



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
