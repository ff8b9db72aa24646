"""docs/reading-order.md walks the article's path file by file: every stop it names must exist."""
from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "reading-order.md"
STOP = re.compile(r"`(v2_memory/[\w/]+\.py):([\w.]+)`")


def _defined(path: Path, dotted: str) -> bool:
    """Whether ``dotted`` (a function, class, assignment or ``Class.method``) is defined in ``path``."""
    scope: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
    for part in dotted.split("."):
        found = next((node for node in scope if getattr(node, "name", None) == part or (
            isinstance(node, (ast.Assign, ast.AnnAssign)) and part in {
                t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(t, ast.Name)})), None)
        if found is None:
            return False
        scope = getattr(found, "body", [])
    return True


def test_every_stop_names_something_that_exists():
    stops = STOP.findall(DOC.read_text(encoding="utf-8"))
    assert len(stops) >= 25
    missing = [f"{path}:{name}" for path, name in stops if not (REPO / path).is_file() or not _defined(REPO / path, name)]
    assert missing == [], missing


def test_the_path_covers_the_articles_api():
    text = DOC.read_text(encoding="utf-8")
    for name in ("messages.py:Message", "tokenizer.py:tokenize", "tokenizer.py:cosine_similarity",
                 "JsonVectorStore.add", "JsonVectorStore.search", "JsonVectorStore.erase_user", "RecentWindow",
                 "ExtractiveSummarizer", "MemoryManager.add", "MemoryManager.retrieve", "MemoryManager.build_context",
                 "MemoryManager.erase_user"):
        assert name in text, name


def test_the_store_shows_the_articles_three_methods_first():
    tree = ast.parse((REPO / "v2_memory/storage/json_store.py").read_text(encoding="utf-8"))
    store = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "JsonVectorStore")
    methods = [n.name for n in store.body if isinstance(n, ast.FunctionDef) and n.name != "__init__"]
    assert methods[:3] == ["add", "search", "erase_user"]
