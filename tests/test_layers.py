"""The house's layers (DESIGN §7): each module imports only modules of its own layer or lower, and
no two modules import each other, directly or round a longer loop. Imports inside functions count
(a lazy import is still a dependency); imports under ``if TYPE_CHECKING:`` do not (they never run).

A new module must be given its layer here: the test fails on a module it does not know.
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "v2_memory"

# The first part of a module's name below the package -> its layer, bottom up.
LAYERS = {
    "errors": 0, "files": 0, "tables": 0, "diagnostics": 0, "lru": 0,  # leaves
    "text": 1,                                                   # tokenizer, analysis, segmenter, sensitive data
    "messages": 2, "validation": 2, "display": 2, "chat_messages": 2, "context": 2,  # values, checks, reprs
    "retrieval": 3,
    "tracks": 4,
    "storage": 5,
    "governance": 6,
    "observe": 7,
    "manager": 8, "scoped": 8, "async_manager": 8, "lifecycle": 8, "describe": 8,
    "integrations": 9, "evaluation": 9, "demo": 9,
    "cli": 10, "main": 10, "__main__": 10, "": 10,               # "": the package's __init__
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _runtime_nodes(tree: ast.AST):
    """Every node except what sits under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            continue
        yield node
        yield from _runtime_nodes(node)


def _imports(modules: dict[str, Path]) -> set[tuple[str, str]]:
    edges = set()
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    edges.add((name, full if full in modules else target))
            elif isinstance(node, ast.Import):
                edges.update((name, alias.name) for alias in node.names)
    return {(a, b) for a, b in edges if b and b.startswith("v2_memory") and a != b}


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS[parts[1] if len(parts) > 1 else ""]


def test_every_module_has_a_layer():
    unknown = sorted(m for m in _modules() if (m.split(".") + [""])[1] not in LAYERS)
    assert unknown == [], f"give these modules a layer in tests/test_layers.py: {unknown}"


def test_no_module_imports_a_higher_layer():
    edges = _imports(_modules())
    upward = sorted((a, b) for a, b in edges if a != "v2_memory" and _layer(b) > _layer(a))
    assert upward == [], upward


def test_no_import_cycle():
    graph: dict[str, set[str]] = {}
    for a, b in _imports(_modules()):
        graph.setdefault(a, set()).add(b)
    # Depth-first search with colours: grey (on the path) reached again is a cycle.
    colour: dict[str, int] = {}
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        colour[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if colour.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in colour:
                visit(nxt, path + [nxt])
        colour[node] = 2

    for start in sorted(graph):
        if start not in colour:
            visit(start, [start])
    # the package's __init__ re-exports: every module "imports" the package when it imports a sibling
    assert [c for c in cycles if "v2_memory" not in c] == []
