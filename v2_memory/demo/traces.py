"""Writing the demo's evidence: ``trace.json`` for people and tools, ``trace.js`` for the page.

A page opened from disk (``file://``) may not ``fetch`` a sibling file, but it may load a sibling
script. So next to ``trace.json`` we write ``trace.js``, which sets ``window.V2_MEMORY_TRACE`` to
the same object; ``visualization.html`` reads that, or a ``trace.json`` the reader drops on it.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..files import atomic_write_text

__all__ = ["TRACE_JSON", "TRACE_JS", "trace_to_json", "trace_to_js", "write_trace"]

TRACE_JSON = "trace.json"
TRACE_JS = "trace.js"


def trace_to_json(trace: dict[str, Any]) -> str:
    return json.dumps(trace, ensure_ascii=False, indent=2) + "\n"


def trace_to_js(trace: dict[str, Any]) -> str:
    """The trace as a script. JSON is valid JavaScript; U+2028/2029 are escaped for older engines."""
    body = json.dumps(trace, ensure_ascii=False).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"window.V2_MEMORY_TRACE = {body};\n"


def write_trace(trace: dict[str, Any], out_dir: Path | str) -> tuple[Path, Path]:
    """Atomically write ``trace.json`` and ``trace.js`` into ``out_dir``; return both paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, js_path = out_dir / TRACE_JSON, out_dir / TRACE_JS
    atomic_write_text(json_path, trace_to_json(trace))
    atomic_write_text(js_path, trace_to_js(trace))
    return json_path, js_path
