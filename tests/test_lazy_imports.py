"""The optional doors stay shut until used (STYLE §12): importing the library or the command line,
or asking for help, loads no benchmark, evaluation, demo, MCP server, LangGraph or PostgreSQL driver.

Each check runs in a fresh interpreter, so what another test imported cannot hide a leak.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Modules (and their submodules) that only the command using them may import (numpy: the first
# semantic search on the numpy path, tests/test_semantic_numpy.py).
DOORS = ("v2_memory.evaluation", "v2_memory.integrations.mcp_server", "v2_memory.integrations.langgraph",
         "v2_memory.demo", "v2_memory.main", "psycopg", "mcp", "langgraph", "langchain_core", "numpy")


def _loaded_after(code: str, watched: tuple[str, ...] = DOORS) -> list[str]:
    """The watched modules in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    probe = (f"{code}\nimport json, sys\nwatched = {watched!r}\n"
             "print(json.dumps(sorted(m for m in sys.modules if any(m == w or m.startswith(w + '.') for w in watched))))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _help(*argv: str) -> str:
    """Code that runs the command line's ``argv --help`` in-process (its exit is argparse's SystemExit)."""
    return (f"from v2_memory.cli import main\ntry:\n    main({[*argv, '--help']!r})\n"
            "except SystemExit:\n    pass")


@pytest.mark.parametrize("code", [
    "from v2_memory import MemoryManager",
    "import v2_memory.cli.app",
    _help(),                      # python -m v2_memory --help
    _help("users"),               # a store command
    _help("erase-user"),
], ids=["library", "cli-app", "help", "users-help", "erase-user-help"])
def test_the_library_and_the_command_line_open_no_door(code):
    assert _loaded_after(code) == []


@pytest.mark.parametrize("command, opened, allowed", [
    ("eval", "v2_memory.evaluation.eval_command", ("v2_memory.evaluation",)),
    ("bench", "v2_memory.evaluation.bench", ("v2_memory.evaluation",)),
    ("mcp", "v2_memory.integrations.mcp_server", ("v2_memory.integrations.mcp_server",)),
    ("demo", "v2_memory.main", ("v2_memory.main", "v2_memory.demo")),
])
def test_a_door_opens_for_its_own_command_only(command, opened, allowed):
    """``COMMAND --help`` loads that door's module, and no other door (the MCP server needs no evaluation)."""
    loaded = _loaded_after(_help(command))
    assert opened in loaded
    assert [m for m in loaded if not any(m == a or m.startswith(a + ".") for a in allowed)] == []


def test_the_library_does_not_import_the_postgres_backend():
    assert _loaded_after("from v2_memory import MemoryManager", ("v2_memory.storage.postgres",)) == []

