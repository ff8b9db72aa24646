"""The stdio transport of ``v2-memory mcp``: JSON-RPC 2.0, one message per line, both ways.

``mcp_server.McpServer`` speaks MCP, one message at a time, and knows no pipes. This module holds
what is only JSON-RPC — parsing a line (``parse_line``), writing one (``encode``), the error codes
and ``RpcError`` — and the stream: ``StdioChannel`` feeds the server stdin line by line and writes
its replies to stdout. It also carries the server's own questions:
in the handshake era, ``confirm_fact`` and ``verify`` send ``elicitation/create`` to the client while
their ``tools/call`` is in flight (``mcp_elicit.py``), and ``StdioChannel.ask`` reads on until the
answer comes, without deadlock::

    server ─elicitation/create id=v2-memory-ask-1─► client     while waiting, each line read is:
    server ◄─── other requests, notifications ───── client       answered at once (ping, recall...),
    server ◄─── {"id": "v2-memory-ask-1", result} ─ client       held (another confirmation: asked next),
                                                                 or the awaited answer; EOF is no answer.

A client that never answers holds the call until it closes stdin (no clock decides for the user).
"""
from __future__ import annotations

import json
from collections import deque
from typing import Any, BinaryIO

from .mcp_elicit import CONFIRMING, Cancelled, NoAnswer

__all__ = ["StdioChannel", "serve", "RpcError", "error_reply", "valid_id", "parse_line", "encode", "MAX_LINE_BYTES",
           "PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS", "INTERNAL_ERROR"]

MAX_LINE_BYTES = 4 * 1024 * 1024  # a longer line is refused without being held in memory
# JSON-RPC 2.0 error codes.
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603


# -- JSON-RPC 2.0, one message per line --------------------------------------------------------------
class RpcError(Exception):
    """A JSON-RPC error to answer: its code, message and optional data."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def error_reply(request_id: Any, error: RpcError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def valid_id(value: Any) -> bool:
    """MCP request ids are strings or integers (never null, never a boolean or a fraction)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")  # Python's json would accept NaN and Infinity


def parse_line(line: bytes | str) -> Any:
    """One line as a JSON value, or the parse error (-32700) it deserves."""
    try:
        return json.loads(line.decode("utf-8") if isinstance(line, bytes) else line, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:  # bad UTF-8, bad JSON, nesting too deep, NaN
        raise RpcError(PARSE_ERROR, f"parse error: {str(exc)[:200]}") from exc


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
        return encode(error_reply(request_id if valid_id(request_id) else None, error))


# -- the stream, both ways ---------------------------------------------------------------------------


class StdioChannel:
    """The stdio stream, both ways, for one server: the client's lines in, replies out, and the server's
    own questions (``ask``), answered while a ``tools/call`` waits for the user."""

    def __init__(self, server: Any, stdin: BinaryIO, stdout: BinaryIO) -> None:
        self.server, self.stdin, self.stdout = server, stdin, stdout
        self.held: deque[Any] = deque()  # messages that must wait: confirmations that came while the user was asked
        server.ask = self.ask

    def serve(self) -> None:
        """Answer message after message until stdin closes; a message held back comes before the next line."""
        while True:
            message = self.held.popleft() if self.held else self._read()
            if message is _EOF:
                return
            if message is not _NOTHING:
                self._reply(self.server.handle(message))

    def ask(self, request: dict[str, Any], in_flight: Any) -> dict[str, Any]:
        """Send the server's request; read until its response, answering what comes meanwhile. NoAnswer at
        EOF; Cancelled when the client cancels the call ``in_flight``."""
        self._write(encode(request))
        while True:
            message = self._read()
            if message is _EOF:
                raise NoAnswer("the client closed the connection before the user answered")
            if message is _NOTHING:
                continue
            if not isinstance(message, dict):
                self._reply(self.server.handle(message))
            elif "method" not in message and message.get("id") == request["id"]:
                return message
            elif message.get("method") == "notifications/cancelled" and _cancels(message, in_flight):
                raise Cancelled("the client cancelled the call before the user answered")
            elif message.get("method") == "notifications/cancelled":  # a held call, cancelled: never ask about it
                self.held = deque(m for m in self.held if not _cancels(message, m.get("id")))
            elif _needs_the_user(message):
                self.held.append(message)  # subtle: one question at a time; this one is asked next
            else:
                self._reply(self.server.handle(message))

    def _read(self) -> Any:
        """The next message, _EOF, or _NOTHING (a blank line; an over-long or unparsable one, answered here)."""
        line = self.stdin.readline(MAX_LINE_BYTES + 1)
        if not line:
            return _EOF
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            _skip_rest_of_line(self.stdin)
            self._reply(error_reply(None, RpcError(INVALID_REQUEST, f"message over {MAX_LINE_BYTES} bytes")))
            return _NOTHING
        if not line.strip():
            return _NOTHING  # a blank line (a stray CRLF) is no message
        try:
            return parse_line(line)
        except RpcError as exc:
            self._reply(error_reply(None, exc))
            return _NOTHING

    def _reply(self, reply: Any) -> None:
        if reply is not None:
            self._write(encode(reply))

    def _write(self, line: str) -> None:
        self.stdout.write(line.encode("utf-8") + b"\n")
        self.stdout.flush()


_EOF, _NOTHING = object(), object()


def _cancels(message: dict[str, Any], in_flight: Any) -> bool:
    params = message.get("params")
    return in_flight is not None and isinstance(params, dict) and params.get("requestId") == in_flight


def _needs_the_user(message: dict[str, Any]) -> bool:
    params = message.get("params")
    return ("id" in message and message.get("method") == "tools/call" and isinstance(params, dict)
            and params.get("name") in CONFIRMING)


def serve(server: Any, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Read messages line by line until stdin closes; write each reply as one line and flush."""
    StdioChannel(server, stdin, stdout).serve()


def _skip_rest_of_line(stdin: BinaryIO) -> None:
    """Read past the rest of an over-long line, one bounded chunk at a time."""
    while True:
        chunk = stdin.readline(MAX_LINE_BYTES)
        if not chunk or chunk.endswith(b"\n"):
            return
