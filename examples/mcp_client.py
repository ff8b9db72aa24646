"""Talk to ``v2-memory mcp`` with the official MCP SDK (pip install -e ".[test]" brings it).

The server runs as a subprocess over stdio with its scope fixed on the command line (``--user-id``):
the model can remember and recall, never name another user.

    python examples/mcp_client.py
"""
from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def run(store: Path) -> str:
    server = StdioServerParameters(command=sys.executable,
                                   args=["-m", "v2_memory", "mcp", "--store", str(store), "--user-id", "ann"])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = [tool.name for tool in (await session.list_tools()).tools]
        print("tools:", ", ".join(tools))
        stored = await session.call_tool("remember", {"text": "My passport expires in March 2027.", "role": "user",
                                                      "session_id": "s1"})
        print(stored.content[0].text.splitlines()[0])
        found = await session.call_tool("recall", {"query": "when does my passport expire", "session_id": "s1"})
        text = found.content[0].text
        print(text)
        return text


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run(Path(folder) / "memory.sqlite3"))
