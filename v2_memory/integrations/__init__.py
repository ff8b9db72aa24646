"""Doors into the memory for the tools agents already run: optional integrations over ``MemoryManager``.

Each one is a thin adapter that keeps governance intact, and each is imported lazily (import its
module yourself), so ``import v2_memory`` never needs a third-party package:

- ``mcp_server`` — a Model Context Protocol server over stdio (standard library only), whose user
  and tenant are fixed when it starts; ``mcp_stdio`` — its JSON-RPC lines; ``mcp_tools`` — the
  memory tools it offers; ``mcp_elicit`` — the user's own yes that ``confirm_fact`` and ``verify`` ask for.
- ``langgraph`` — ``V2MemoryStore``, a LangGraph ``BaseStore`` whose namespaces are scopes and whose
  tenant is fixed when it is made (the ``langgraph`` extra).
"""
