"""The example scripts run as a user runs them: ``python examples/<name>.py`` from the checkout.

The MCP client needs the SDK (the test extra) and the LangChain loop needs langchain-core (the
``langgraph`` extra): without them those two skip, saying so, unless CI's V2_MEMORY_REQUIRE_MCP /
V2_MEMORY_REQUIRE_LANGGRAPH make the skip a failure.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _run(name: str, tmp_path: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, str(REPO / "examples" / name)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == []  # the examples write only into their own temporary folders
    return done.stdout


def _needs(module: str, extra: str, required_by: str) -> None:
    if importlib.util.find_spec(module.split(".")[0]) is None:
        reason = f"{module} is not installed (pip install -e '.[{extra}]')"
        if os.environ.get(required_by) == "1":
            pytest.fail(f"{reason} and {required_by}=1")
        pytest.skip(reason)


def test_the_openai_style_agent_loop_answers_from_memory(tmp_path):
    out = _run("openai_agent.py", tmp_path)
    assert "assistant: How about a lentil curry? No peanuts in it." in out  # the allergy reached the prompt


def test_the_mcp_client_remembers_and_recalls_through_the_official_sdk(tmp_path):
    _needs("mcp", "test", "V2_MEMORY_REQUIRE_MCP")
    out = _run("mcp_client.py", tmp_path)
    assert "tools: remember, recall" in out and "recent: user: My passport expires in March 2027." in out


def test_the_langchain_loop_stores_langchain_messages(tmp_path):
    _needs("langchain_core", "langgraph", "V2_MEMORY_REQUIRE_LANGGRAPH")
    out = _run("langchain_agent.py", tmp_path)
    assert "recent: user: I moved to Lyon last month." in out and "assistant: You live in Lyon." in out
