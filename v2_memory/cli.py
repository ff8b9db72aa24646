"""The ``v2-memory`` command (also ``python -m v2_memory``): a thin layer over the library.

Each subcommand parses its options, makes one library call, and prints the result. Errors are
one ``error: ...`` line on stderr and a non-zero exit code.
"""
from __future__ import annotations

import argparse
from typing import Sequence

from . import main as demo
from .evaluation import bench

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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)
