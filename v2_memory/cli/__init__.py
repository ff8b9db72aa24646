"""The ``v2-memory`` command: the argparse front (``app.py``) and the inspector's commands (``commands.py``)."""
from .app import build_parser, main

__all__ = ["main", "build_parser"]
