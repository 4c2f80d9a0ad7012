"""The import graph of backend/app: no circle, nothing below the API imports it, and the
sandbox's inside room imports only itself and what both sides share.

Read from the source (module-level imports; those inside functions run later and are not
part of the graph a module needs to load), so a new module is held to the same rules.
"""

from __future__ import annotations

import ast
from pathlib import Path

from app.sandbox.isolation import INSIDE

APP = Path(__file__).resolve().parents[1] / "app"


def _module(path: Path) -> str:
    parts = list(path.relative_to(APP.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(path): path for path in APP.rglob("*.py")}


def _imports(name: str, path: Path, *, nested: bool = False) -> set[str]:
    """The app modules `name` imports (at module level; with `nested`, anywhere)."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nodes = ast.walk(tree) if nested else iter(tree.body)
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULES else base)
    return {module for module in found if module in MODULES and module != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _circles() -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(GRAPH[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return circles


def test_the_app_has_no_import_circle() -> None:
    assert _circles() == []


def test_nothing_below_the_api_imports_it() -> None:
    upward = sorted(
        f"{name} imports {target}"
        for name, targets in GRAPH.items()
        if not name.startswith(("app.api", "app.main"))
        for target in targets
        if target.startswith("app.api")
    )
    assert upward == []


def test_the_sandbox_inside_imports_only_its_room_and_what_both_sides_share() -> None:
    # What a worker is given of app/sandbox (INSIDE): its room, and the shared modules.
    allowed = {f"app.sandbox.{name.removesuffix('.py')}" for name in INSIDE}
    inside = [name for name in MODULES if name.startswith("app.sandbox.worker")]
    assert "app.sandbox.worker.main" in inside
    strays = sorted(
        f"{name} imports {target}"
        for name in [*inside, *(allowed - {"app.sandbox.worker"})]
        for target in _imports(name, MODULES[name], nested=True)
        if not any(target == room or target.startswith(f"{room}.") for room in allowed)
    )
    assert strays == []
