"""The ``v2-memory`` command (also ``python -m v2_memory``): a thin layer over the library.

Each subcommand parses its options, makes one library call, and prints the result. Errors are
one ``error: ...`` line on stderr and a non-zero exit code.
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .. import main as demo
from .commands import COMMANDS
from ..errors import V2MemoryError
from ..evaluation import bench
from ..evaluation import eval_command as evaluation

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="v2-memory",
        description="Governed memory for LLM agents: demo, benchmarks and tools.",
        epilog="example: python -m v2_memory demo --out /tmp/demo",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    demo_parser = commands.add_parser("demo", help=demo.DESCRIPTION, description=demo.DESCRIPTION, epilog=demo.EPILOG)
    demo.add_arguments(demo_parser)
    demo_parser.set_defaults(run=demo.run_from_args)
    bench_parser = commands.add_parser("bench", help=bench.DESCRIPTION, description=bench.DESCRIPTION, epilog=bench.EPILOG)
    bench.add_arguments(bench_parser)
    bench_parser.set_defaults(run=bench.run_from_args)
    eval_parser = commands.add_parser("eval", help=evaluation.DESCRIPTION, description=evaluation.DESCRIPTION,
                                      epilog=evaluation.EPILOG)
    evaluation.add_arguments(eval_parser)
    for name, (summary, example, add_arguments, run) in COMMANDS.items():
        command = commands.add_parser(name, help=summary, description=summary, epilog=f"example: {example}")
        add_arguments(command)
        command.set_defaults(run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; library errors become one ``error: ...`` line on stderr and exit code 1."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (V2MemoryError, OSError, ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
