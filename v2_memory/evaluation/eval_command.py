"""``python -m v2_memory eval {pollution,locomo}``: the two measurements of governance.

``pollution`` runs the labelled pollution benchmark shipped in the package; ``locomo`` measures
retrieval recall on a file in the LoCoMo format. Each lives in its own module; this one only
wires them under one command.
"""
from __future__ import annotations

import argparse

from . import locomo_command, pollution

DESCRIPTION = "Evaluate governance: the pollution benchmark, or LoCoMo retrieval recall."
EPILOG = "example: python -m v2_memory eval pollution   |   python -m v2_memory eval locomo ../shared/data/locomo/locomo_dev.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    kinds = parser.add_subparsers(dest="evaluation", metavar="EVALUATION", required=True)
    for module in (pollution, locomo_command):
        sub = kinds.add_parser(module.NAME, help=module.DESCRIPTION, description=module.DESCRIPTION,
                               epilog=module.EPILOG)
        module.add_arguments(sub)
        sub.set_defaults(run=module.run_from_args)
