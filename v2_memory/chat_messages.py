"""Chat messages as the chat APIs write them, read into ``Message`` values.

Agents keep their conversation as OpenAI-style dicts (``{"role": "user", "content": "..."}``,
content possibly a list of parts) or as LangChain message objects (``HumanMessage``,
``AIMessage``, ... with ``.type`` and ``.content``). ``to_message`` reads either, duck-typed
(LangChain is never imported here), and maps the role the way the write policy understands it:

    user, human                  → "user"       (the user's own words)
    assistant, ai                → "assistant"  (model output: stored unverified until the user confirms)
    tool, function               → "tool"       (a tool's result: trusted like the user's words, as the
                                                 write policy trusts tools; store only tools you trust)
    system, developer            → skipped      (the agent's own instructions are nobody's memory,
                                                 and must never come back as a trusted entry)

A message with nothing to store (a system prompt, an assistant turn that only calls tools, a
tool's empty result, a user's image without text) reads as ``None``; an unknown role, a dict
without "role" or "content", a user message with empty or null content, or a value that is no
chat message is an error.

    >>> to_message({"role": "user", "content": [{"type": "text", "text": "I moved to Lyon"}]}, user_id="ann").content
    'I moved to Lyon'
    >>> to_message({"role": "system", "content": "You are helpful."}, user_id="ann") is None
    True
"""
from __future__ import annotations

from typing import Any, Mapping

from .messages import Message

__all__ = ["to_message", "ROLES"]

# chat role (OpenAI's or LangChain's ``type``) -> v2_memory role; None: not stored
ROLES: dict[str, str | None] = {
    "user": "user", "human": "user",
    "assistant": "assistant", "ai": "assistant",
    "tool": "tool", "function": "tool",
    "system": None, "developer": None,
}
_TEXT_PARTS = ("text", "input_text", "output_text")  # content-part types that carry text
# a streamed LangChain chunk's type -> the type of the message it is part of
_CHUNKS = {"AIMessageChunk": "ai", "HumanMessageChunk": "human", "SystemMessageChunk": "system",
           "ToolMessageChunk": "tool", "FunctionMessageChunk": "function", "ChatMessageChunk": "chat"}


def to_message(chat: Any, *, user_id: str, tenant_id: str | None = None, session_id: str | None = None,
               task_id: str | None = None) -> Message | None:
    """One chat message as a ``Message`` of this scope, or None when it holds nothing to store."""
    role, content = _role_and_content(chat)
    mapped = _mapped_role(role)
    text = _text(content)
    # A user's turn is what memory is for: never dropped in silence (an image alone has no text to keep).
    if mapped == "user" and not text.strip() and not (isinstance(content, (list, tuple)) and content):
        raise ValueError(f"a user message needs text, got {content!r:.40}")
    if mapped is None or not text.strip():
        return None
    return Message(mapped, text, user_id, session_id=session_id, task_id=task_id, tenant_id=tenant_id)


def _role_and_content(chat: Any) -> tuple[Any, Any]:
    if isinstance(chat, Mapping):
        for key in ("role", "content"):  # an assistant turn that only calls tools says "content": null
            if key not in chat:
                raise ValueError(f"a chat message dict needs a {key!r} key, got keys {sorted(map(str, chat))[:6]}")
        return chat["role"], chat["content"]
    kind = getattr(chat, "type", None)
    if isinstance(kind, str) and hasattr(chat, "content"):  # a LangChain message
        # subtle: a streamed chunk's type is its class name ("AIMessageChunk", "ToolMessageChunk");
        # a ChatMessage (or its chunk) carries its own role.
        kind = _CHUNKS.get(kind, kind)
        return (getattr(chat, "role", kind) if kind == "chat" else kind), chat.content
    raise TypeError(f"a chat message is a dict with 'role' and 'content' or a LangChain message, "
                    f"got {type(chat).__name__}")


def _mapped_role(role: Any) -> str | None:
    if not isinstance(role, str) or role.strip().lower() not in ROLES:
        raise ValueError(f"unknown chat role {role!r}; known: {', '.join(ROLES)}")
    return ROLES[role.strip().lower()]


def _text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list (images and tool
    calls carry none); None is no text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        texts = [part if isinstance(part, str) else part.get("text") if isinstance(part, Mapping)
                 and part.get("type") in _TEXT_PARTS else None for part in content]
        return "\n".join(t for t in texts if isinstance(t, str) and t)
    raise TypeError(f"a chat message's content is a string or a list of parts, got {type(content).__name__}")
