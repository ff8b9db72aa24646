"""Collection rules for the whole repository (``--doctest-modules`` imports every module).

An optional integration imports its extra at the top; without the extra installed its module is
not collected for doctests (its tests in ``tests/`` say what is missing, or fail under CI).
"""
from __future__ import annotations

import importlib.util



def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a half-removed package
        return False


collect_ignore = []
if not _installed("langgraph"):
    collect_ignore.append("v2_memory/integrations/langgraph.py")
