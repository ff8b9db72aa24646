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

The scope — store, user, tenant — comes from the command line and nowhere else.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
import traceback
from typing import Any, BinaryIO, Callable, TextIO

from ..manager import MemoryManager
from ..storage.urls import mask_url
from ..validation import require_scope
from .mcp_tools import TOOLS, MemoryTools

__all__ = ["McpServer", "RpcError", "serve", "PROTOCOL_VERSIONS", "MODERN_VERSIONS", "LATEST_PROTOCOL_VERSION",
           "LATEST_HANDSHAKE_VERSION", "FACTS_URI",
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
MAX_LINE_BYTES = 4 * 1024 * 1024  # a longer line is refused without being held in memory
SERVER_NAME, SERVER_VERSION = "v2-memory", "0.1.0"

# JSON-RPC 2.0 error codes, and MCP's for an unknown resource.
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
RESOURCE_NOT_FOUND, UNSUPPORTED_VERSION = -32002, -32022
SERVER_INFO = {"name": SERVER_NAME, "title": "v2_memory governed memory", "version": SERVER_VERSION}
CAPABILITIES = {"tools": {"listChanged": False}, "resources": {"subscribe": False, "listChanged": False}}
INSTRUCTIONS = ("Governed long-term memory for one user, fixed when this server started. Call recall before "
                "answering, remember for each message, verify or confirm_fact when the user confirms; rejected "
                "memories show why, never their text.")


class RpcError(Exception):
    """A JSON-RPC error to answer: its code, message and optional data."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def _error(request_id: Any, error: RpcError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def _valid_id(value: Any) -> bool:
    """MCP request ids are strings or integers (never null, never a boolean or a fraction)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")  # Python's json would accept NaN and Infinity


class McpServer:
    """The protocol: one parsed message in, at most one reply out (``handle``); no stdio here (diagnostics go to ``log``)."""

    def __init__(self, tools: MemoryTools, *, log: TextIO | None = None) -> None:
        self.tools = tools
        self.log = log if log is not None else sys.stderr
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
            text = line.decode("utf-8") if isinstance(line, bytes) else line
            message = json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:  # bad UTF-8, bad JSON, nesting too deep, NaN
            return encode(_error(None, RpcError(PARSE_ERROR, f"parse error: {str(exc)[:200]}")))
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
            return None  # a response; this server sends no requests, so nothing waits for it
        if not isinstance(method, str):
            return _error(request_id, RpcError(INVALID_REQUEST, "method must be a string"))
        if not has_id:
            self._notification(method, message.get("params"))
            return None
        if request_id is None:
            return _error(None, RpcError(INVALID_REQUEST, "id must be a string or an integer"))
        try:
            return {"jsonrpc": "2.0", "id": request_id, "result": self._call(method, message.get("params", {}))}
        except RpcError as exc:
            return _error(request_id, exc)

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
        result = {**handler(params), "resultType": "complete", "_meta": {SERVER_INFO_KEY: dict(SERVER_INFO)}}
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
        return self.tools.call(name, arguments).to_mcp()

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


def encode(message: Any) -> str:
    """One message as one line of JSON (json.dumps never writes a raw newline without ``indent``)."""
    try:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:  # a lone surrogate from the input (say, in an id): escape it instead
        return json.dumps(message, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError) as exc:  # NaN, or something JSON cannot hold: say so, do not crash
        request_id = message.get("id") if isinstance(message, dict) else None
        error = RpcError(INTERNAL_ERROR, f"internal error: unserializable result ({type(exc).__name__})")
        return encode(_error(request_id if _valid_id(request_id) else None, error))


def serve(server: McpServer, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Read messages line by line until stdin closes; write each reply as one line and flush."""
    while True:
        line = stdin.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            _skip_rest_of_line(stdin)
            reply: str | None = encode(_error(None, RpcError(INVALID_REQUEST, f"message over {MAX_LINE_BYTES} bytes")))
        elif not line.strip():
            continue  # a blank line (a stray CRLF) is no message
        else:
            reply = server.handle_line(line)
        if reply is not None:
            stdout.write(reply.encode("utf-8") + b"\n")
            stdout.flush()


def _skip_rest_of_line(stdin: BinaryIO) -> None:
    """Read past the rest of an over-long line, one bounded chunk at a time."""
    while True:
        chunk = stdin.readline(MAX_LINE_BYTES)
        if not chunk or chunk.endswith(b"\n"):
            return


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
        # Anything printed by mistake goes to stderr: stdout carries protocol messages only.
        with contextlib.redirect_stdout(sys.stderr):
            try:
                serve(McpServer(tools), sys.stdin.buffer, protocol_out)
            except KeyboardInterrupt:
                pass
    return 0
