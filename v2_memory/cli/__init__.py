"""The ``v2-memory`` command: the argparse front (``app.py``), the operator's commands
(``commands.py``, ``memory_commands.py``) and how a command fails (``guard.py``).

``app`` is imported when ``main`` or ``build_parser`` is first asked for, so a module that needs
only the guard (the demo's ``main.py``) does not import every command.
"""
from typing import Any

__all__ = ["main", "build_parser"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module 'v2_memory.cli' has no attribute {name!r}")
