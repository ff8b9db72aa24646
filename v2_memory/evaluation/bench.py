"""Placeholder; replaced by the performance benchmark."""
import argparse

DESCRIPTION = "Benchmark JsonVectorStore against the article's brute-force scan."
EPILOG = "example: python -m v2_memory bench --sizes 1000,10000"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run_from_args(args: argparse.Namespace) -> int:
    raise NotImplementedError
