"""A Model Context Protocol server over stdio, standard library only: ``v2-memory mcp``.

    client ──one JSON-RPC message per line──► stdin   McpServer.handle ─► MemoryTools (mcp_tools.py)
    client ◄──one JSON-RPC message per line── stdout       (logs and diagnostics go to stderr)

It speaks every revision the official Python SDK speaks, in both of its eras; the client's first
request picks the era, once:

- the ``initialize`` handshake, 2024-11-05 to 2025-11-25: the server answers with the version the
  client asks for when it knows it, else with its newest (2025-11-25);
- 2026-07-28 (the SDK's ``LATEST_PROTOCOL_VERSION``): no handshake; every request carries its
  version in ``params._meta`` (``server/discover`` lists the versions), every result says
  ``resultType``, and an unknown version is refused with -32022 naming the supported ones.

Methods: ``initialize``, ``server/discover``, ``ping``, ``tools/list``, ``tools/call``,
``resources/list``, ``resources/read`` (the user's confirmed facts, ``memory://facts``),
``resources/templates/list``; notifications get no reply. The server never crashes on what it
reads: bad JSON is -32700, a message that is not a request -32600, an unknown method -32601, bad
parameters (or an unknown tool) -32602; a tool that refuses its arguments answers a result with
``isError`` (the spec's tool execution error), so the model can read why and try again.

The scope — store, user, tenant — comes from the command line and nowhere else. So does trust: the
model may write and read, but ``confirm_fact`` and ``verify`` ask the *user* first (MCP elicitation,
``mcp_elicit.py``: a server→client request in the handshake era, an ``input_required`` result in the
2026 era), unless the operator started the server with ``--trust-host-confirmation``.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
import traceback
from typing import Any, Callable, TextIO

from ..manager import MemoryManager
from ..storage.urls import mask_url
from ..validation import require_scope
from .mcp_elicit import (ANSWER_KEY, CONFIRMING, Cancelled, NoAnswer, Outcome, Questions, cannot_elicit,
                         elicitation_params, not_confirmed, read_answer, read_response)
from .mcp_stdio import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, MAX_LINE_BYTES, METHOD_NOT_FOUND, RpcError
from .mcp_stdio import encode, parse_line, serve
from .mcp_stdio import error_reply as _error
from .mcp_stdio import valid_id as _valid_id
from .mcp_tools import TOOLS, Consent, MemoryTools, ToolResult

__all__ = ["McpServer", "RpcError", "serve", "encode", "MAX_LINE_BYTES", "PROTOCOL_VERSIONS", "MODERN_VERSIONS",
           "LATEST_PROTOCOL_VERSION", "LATEST_HANDSHAKE_VERSION", "FACTS_URI",
           "DESCRIPTION", "EPILOG", "add_arguments", "run_from_args"]

# The handshake revisions, oldest to newest (the official SDK's HANDSHAKE_PROTOCOL_VERSIONS), and
# the per-request-envelope ones (its MODERN_PROTOCOL_VERSIONS).
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
LATEST_HANDSHAKE_VERSION, LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[-1], MODERN_VERSIONS[-1]
# The 2026-07-28 envelope: keys in a request's params._meta, and the server's stamp on a result.
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
CACHEABLE = frozenset({"server/discover", "tools/list", "resources/list", "resources/read", "resources/templates/list"})
BATCH_VERSION = "2025-03-26"  # the one revision with JSON-RPC batches (added then, removed in 2025-06-18)
FACTS_URI = "memory://facts"
SERVER_NAME, SERVER_VERSION = "v2-memory", "0.1.0"

# MCP's error codes for an unknown resource and an unsupported version (JSON-RPC's own are in mcp_stdio).
RESOURCE_NOT_FOUND, UNSUPPORTED_VERSION = -32002, -32022
SERVER_INFO = {"name": SERVER_NAME, "title": "v2_memory governed memory", "version": SERVER_VERSION}
CAPABILITIES = {"tools": {"listChanged": False}, "resources": {"subscribe": False, "listChanged": False}}
INSTRUCTIONS = ("Governed long-term memory for one user, fixed when this server started. Call recall before "
                "answering and remember for each message; rejected memories show why, never their text. You may "
                "write and read, but only the user confirms: confirm_fact and verify ask the user themself.")


class McpServer:
    """The protocol: one parsed message in, at most one reply out (``handle``); no stdio here (diagnostics go to ``log``)."""

    def __init__(self, tools: MemoryTools, *, log: TextIO | None = None, trust_host_confirmation: bool = False) -> None:
        self.tools = tools
        self.log = log if log is not None else sys.stderr
        self.trust_host_confirmation = trust_host_confirmation  # the operator's decision, never the model's
        # How a handshake-era question reaches the client: (request, in-flight id) -> its response (StdioChannel.ask).
        self.ask: Callable[[dict[str, Any], Any], dict[str, Any]] | None = None
        self.client_capabilities: Any = None  # as initialize declared them (the 2026 era sends them each time)
        self.questions = Questions()  # the 2026 era's open questions, by requestState
        self._asked = 0  # ids of this server's own requests
        self._in_flight: Any = None  # the id of the request being answered
        self.protocol_version: str | None = None  # set by initialize, or by each 2026-era request
        self.era: str | None = None  # "handshake" or "modern": the first request that names one decides
        self.client_initialized = False  # the client's notifications/initialized arrived
        self._methods: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "initialize": self._initialize, "ping": lambda params: {},
            "tools/list": self._tools_list, "tools/call": self._tools_call,
            "resources/list": self._resources_list, "resources/read": self._resources_read,
            "resources/templates/list": lambda params: self._page(params, "resourceTemplates", [])}
        self._modern_methods = {**self._methods, "server/discover": self._discover}
        del self._modern_methods["initialize"]

    # -- framing -----------------------------------------------------------------------------------
    def handle_line(self, line: bytes | str) -> str | None:
        """One line of the stdio stream in, the reply line (without its newline) or None out."""
        try:
            message = parse_line(line)
        except RpcError as exc:
            return encode(_error(None, exc))
        reply = self.handle(message)
        return None if reply is None else encode(reply)

    def handle(self, message: Any) -> dict[str, Any] | list[dict[str, Any]] | None:
        """A parsed message (or batch) in; the response, or None for notifications and responses."""
        if isinstance(message, list):
            return self._batch(message)
        try:
            return self._one(message)
        except Exception as exc:  # never let one message stop the server
            traceback.print_exc(file=self.log)
            request_id = message.get("id") if isinstance(message, dict) and _valid_id(message.get("id")) else None
            return _error(request_id, RpcError(INTERNAL_ERROR, f"internal error: {type(exc).__name__}"))

    def _batch(self, messages: list[Any]) -> dict[str, Any] | list[dict[str, Any]] | None:
        # subtle: only 2025-03-26 has batches; before initialize there is no version, so no batch.
        if self.protocol_version != BATCH_VERSION:
            version = self.protocol_version or "none negotiated yet"
            message = f"batches are not part of MCP {version}; send one message per line"
            return _error(None, RpcError(INVALID_REQUEST, message))
        if not messages:
            return _error(None, RpcError(INVALID_REQUEST, "an empty batch is not a request"))
        nested = _error(None, RpcError(INVALID_REQUEST, "a batch cannot hold a batch"))
        replies = [nested if isinstance(m, list) else self.handle(m) for m in messages]
        return [reply for reply in replies if reply is not None] or None  # type: ignore[misc]

    def _one(self, message: Any) -> dict[str, Any] | None:
        if not isinstance(message, dict):
            return _error(None, RpcError(INVALID_REQUEST, "a message must be a JSON object"))
        has_id = "id" in message
        request_id = message.get("id") if _valid_id(message.get("id")) else None
        if message.get("jsonrpc") != "2.0":
            return _error(request_id, RpcError(INVALID_REQUEST, 'jsonrpc must be "2.0"'))
        method = message.get("method")
        if method is None and has_id and ("result" in message or "error" in message):
            return None  # a response nobody waits for (StdioChannel.ask takes the one it awaits)
        if not isinstance(method, str):
            return _error(request_id, RpcError(INVALID_REQUEST, "method must be a string"))
        if not has_id:
            self._notification(method, message.get("params"))
            return None
        if request_id is None:
            return _error(None, RpcError(INVALID_REQUEST, "id must be a string or an integer"))
        outer, self._in_flight = self._in_flight, request_id  # outer: a call waiting for its user, if any
        try:
            return {"jsonrpc": "2.0", "id": request_id, "result": self._call(method, message.get("params", {}))}
        except RpcError as exc:
            return _error(request_id, exc)
        except Cancelled:  # the client cancelled it while its user was asked: the spec says answer nothing
            print(f"v2-memory mcp: request {str(request_id)[:40]} cancelled; nothing was confirmed", file=self.log)
            return None
        finally:
            self._in_flight = outer

    def _notification(self, method: str, params: Any) -> None:
        """Notifications are never answered, not even with an error."""
        if method == "notifications/initialized" and self.protocol_version is not None:
            self.client_initialized = True
        # notifications/cancelled: requests run one at a time, so by now there is nothing to cancel.

    def _call(self, method: str, params: Any) -> dict[str, Any]:
        enveloped = isinstance(params, dict) and isinstance(params.get("_meta"), dict) and VERSION_KEY in params["_meta"]
        if self.era is None and enveloped and method != "initialize":
            self.era = "modern"  # subtle: decided once; initialize never opens the 2026 era, envelope or not
            print("v2-memory mcp: the client speaks the 2026-07-28 envelope", file=self.log)
        if self.era == "modern":
            return self._modern_call(method, params)
        if enveloped and method != "initialize":
            raise RpcError(INVALID_REQUEST, "this connection speaks the initialize handshake; requests carrying "
                                            "the 2026-07-28 envelope are not accepted on it")
        handler = self._handler(self._methods, method, params)
        if self.protocol_version is None and method not in ("initialize", "ping"):
            raise RpcError(INVALID_REQUEST, "the session is not initialized: send initialize first")
        return handler(params)

    @staticmethod
    def _handler(methods: dict[str, Callable[[dict[str, Any]], dict[str, Any]]], method: str,
                 params: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
        handler = methods.get(method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"method not found: {method[:100]}")
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "params must be an object")
        return handler

    def _modern_call(self, method: str, params: Any) -> dict[str, Any]:
        """A 2026-07-28 request: its own envelope names its version; the result says it is complete."""
        if method == "initialize":
            requested = params.get("protocolVersion") if isinstance(params, dict) else None
            raise RpcError(UNSUPPORTED_VERSION, "this connection speaks 2026-07-28, which has no initialize handshake",
                           {"supported": list(MODERN_VERSIONS), "requested": str(requested)[:100]})
        handler = self._handler(self._modern_methods, method, params)
        self.protocol_version = _envelope_version(params)
        result = {"resultType": "complete", **handler(params), "_meta": {SERVER_INFO_KEY: dict(SERVER_INFO)}}
        if method in CACHEABLE:  # nothing here may be cached: memory changes with every turn
            result.update(ttlMs=0, cacheScope="private")
        return result

    # -- methods -----------------------------------------------------------------------------------
    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise RpcError(INVALID_PARAMS, "initialize needs protocolVersion (a string)")
        if self.protocol_version is not None:
            raise RpcError(INVALID_REQUEST, "already initialized")
        # Negotiation: the client's version when this server knows it, else this server's newest.
        self.protocol_version = requested if requested in PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
        self.era = "handshake"
        self.client_capabilities = params.get("capabilities")
        print(f"v2-memory mcp: client asked for {requested[:40]!r}, speaking {self.protocol_version}", file=self.log)
        return {"protocolVersion": self.protocol_version, "capabilities": CAPABILITIES, "serverInfo": SERVER_INFO,
                "instructions": INSTRUCTIONS}

    def _discover(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"supportedVersions": list(MODERN_VERSIONS), "capabilities": CAPABILITIES, "instructions": INSTRUCTIONS}

    def _page(self, params: dict[str, Any], key: str, items: list[dict[str, Any]]) -> dict[str, Any]:
        """Every list here fits one page: a cursor can only be one this server never gave out."""
        if "cursor" in params:
            raise RpcError(INVALID_PARAMS, "invalid cursor: this list has one page")
        return {key: items}

    def _tools_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._page(params, "tools", [tool.to_mcp() for tool in TOOLS])

    def _tools_call(self, params: dict[str, Any]) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments", {})
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "tools/call needs name (a string)")
        if self.tools.find(name) is None:
            raise RpcError(INVALID_PARAMS, f"unknown tool: {name[:100]}")
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "arguments must be an object")
        if name not in CONFIRMING or self.trust_host_confirmation:
            return self.tools.call(name, arguments).to_mcp()
        return self._confirm(name, arguments, params)

    # -- only the user confirms ---------------------------------------------------------------------
    def _confirm(self, name: str, arguments: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        """confirm_fact or verify: say what would be confirmed, ask the user, act only on their yes."""
        if self.era == "modern" and ("requestState" in params or "inputResponses" in params):
            return self._settle_answer(name, arguments, params)
        consent = self.tools.consent(name, arguments)
        if isinstance(consent, ToolResult):  # bad arguments, nothing pending, no such record: nobody to ask
            return consent.to_mcp()
        capabilities = params["_meta"].get(CAPABILITIES_KEY) if self.era == "modern" else self.client_capabilities
        why_not = cannot_elicit(capabilities, self.protocol_version)
        if why_not is None and self.era != "modern" and self.ask is None:
            why_not = "this server has no way back to the client to ask the user"
        if why_not is not None:
            return not_confirmed(consent, Outcome("cannot_ask", why_not)).to_mcp()
        question = elicitation_params(consent, self.protocol_version or LATEST_HANDSHAKE_VERSION)
        if self.era == "modern":  # the 2026 era: the question goes back as the result; the client calls again
            state = self.questions.ask(name, arguments, consent)
            return {"resultType": "input_required", "requestState": state,
                    "inputRequests": {ANSWER_KEY: {"method": "elicitation/create", "params": question}}}
        self._asked += 1
        request = {"jsonrpc": "2.0", "id": f"v2-memory-ask-{self._asked}", "method": "elicitation/create",
                   "params": question}
        try:
            outcome = read_response(self.ask(request, self._in_flight))  # type: ignore[misc]
        except Cancelled:
            raise
        except NoAnswer as exc:
            outcome = Outcome("no_answer", str(exc))
        return self._act(consent, outcome)

    def _settle_answer(self, name: str, arguments: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        """A 2026-era retry: the user's answer to a question this server put, once."""
        consent = self.questions.take(params.get("requestState"), name, arguments)
        if consent is None:
            raise RpcError(INVALID_PARAMS, "requestState does not answer a question this server asked for this call "
                                           "(each is good once, for the same tool and arguments); call the tool again")
        responses = params.get("inputResponses")
        answer = responses.get(ANSWER_KEY) if isinstance(responses, dict) else None
        return self._act(consent, read_answer(answer))

    def _act(self, consent: Consent, outcome: Outcome) -> dict[str, Any]:
        print(f"v2-memory mcp: {consent.tool} asked the user: {outcome.kind}", file=self.log)
        result = self.tools.carry_out(consent) if outcome.confirmed else not_confirmed(consent, outcome)
        return result.to_mcp()

    def _resources_list(self, params: dict[str, Any]) -> dict[str, Any]:
        facts = {"uri": FACTS_URI, "name": "facts", "title": "Confirmed facts", "mimeType": "application/json",
                 "description": "The user's confirmed persona facts (key, value, polarity), as contexts show them."}
        return self._page(params, "resources", [facts])

    def _resources_read(self, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, "resources/read needs uri (a string)")
        if uri != FACTS_URI:
            raise RpcError(RESOURCE_NOT_FOUND, "resource not found", {"uri": uri[:200]})
        text = json.dumps(self.tools.facts(), ensure_ascii=False)
        return {"contents": [{"uri": FACTS_URI, "mimeType": "application/json", "text": text}]}


def _envelope_version(params: dict[str, Any]) -> str:
    """The version a 2026-07-28 request names, or the error its envelope deserves."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or VERSION_KEY not in meta or CAPABILITIES_KEY not in meta:
        raise RpcError(INVALID_PARAMS, f"params._meta must carry {VERSION_KEY!r} and {CAPABILITIES_KEY!r}")
    version = meta[VERSION_KEY]
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, f"{VERSION_KEY} must be a string")
    if version not in MODERN_VERSIONS:
        raise RpcError(UNSUPPORTED_VERSION, f"unsupported protocol version {version[:40]!r}",
                       {"supported": list(MODERN_VERSIONS), "requested": version[:100]})
    return version


# -- the command ------------------------------------------------------------------------------------
DESCRIPTION = "Serve one user's governed memory to an MCP client (Model Context Protocol over stdio)."
EPILOG = "example: python -m v2_memory mcp --store memory.sqlite3 --user-id alice"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", required=True, metavar="PATH_OR_URL",
                        help="the store: a .json file, a .sqlite3 file, sqlite:///path or postgresql://... "
                             "(several servers may share SQLite or PostgreSQL)")
    parser.add_argument("--user-id", required=True, help="whose memory this server reads and writes (fixed)")
    parser.add_argument("--tenant-id", help="the user's tenant, if any (fixed)")
    parser.add_argument("--threshold", type=float, default=0.2, help="the relevance threshold (default: 0.2)")
    # bm25, as the README advises for an agent that talks with people (natural questions pass 0.2).
    parser.add_argument("--scorer", choices=("bm25", "article"), default="bm25",
                        help="how long-term memories are scored (default: bm25; article: the article's cosine)")
    parser.add_argument("--trust-host-confirmation", action="store_true",
                        help="a trust decision: confirm_fact and verify act at once, without asking the user through "
                             "MCP elicitation. Only for a host that itself asks the user before it lets such a call "
                             "through; without it, nothing is confirmed unless the user says yes to the server's "
                             "question")
    # stdout is the protocol stream: there is no table to print, so no --json either.
    parser.set_defaults(run=run_from_args, stdout_protocol=True)


def run_from_args(args: argparse.Namespace) -> int:
    """Open the store for the given scope and serve until the client closes stdin."""
    require_scope(args.user_id, args.tenant_id)  # a bad scope is refused before the store is opened or made
    protocol_out = sys.stdout.buffer
    with MemoryManager(threshold=args.threshold, store_path=args.store, scorer=args.scorer) as manager:
        tools = MemoryTools(manager, args.user_id, args.tenant_id)
        # The store URL may hold a password: the log line shows it masked.
        print(f"v2-memory mcp: serving {mask_url(str(args.store))} over stdio (the scope is fixed)", file=sys.stderr)
        if args.trust_host_confirmation:
            print("v2-memory mcp: --trust-host-confirmation: confirm_fact and verify act without asking the user; "
                  "the host must ask", file=sys.stderr)
        # Anything printed by mistake goes to stderr: stdout carries protocol messages only.
        with contextlib.redirect_stdout(sys.stderr):
            try:
                serve(McpServer(tools, trust_host_confirmation=args.trust_host_confirmation), sys.stdin.buffer,
                      protocol_out)
            except (KeyboardInterrupt, BrokenPipeError):  # the client went away: nothing left to answer
                pass
    return 0
