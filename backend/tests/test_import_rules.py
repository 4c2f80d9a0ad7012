"""The import graph of backend/app: no circle, nothing below the API imports it, and the
sandbox's inside room imports only itself and what both sides share; and no module of
backend/app over MAX_LINES lines (one job a module).

Read from the source, so a new module is held to the same rules. Every import counts,
those inside functions too: an import put off until a function runs still makes its
module need the other, and one that closes a cycle is a circle. Only the imports under
`if TYPE_CHECKING:` are left out of the graph (they are read by type checkers, never run).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.sandbox.isolation import INSIDE

APP = Path(__file__).resolve().parents[1] / "app"


def _module(path: Path) -> str:
    parts = list(path.relative_to(APP.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(path): path for path in APP.rglob("*.py")}


def _run_imports(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of `tree` but those under `if TYPE_CHECKING:` (never run)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in _TYPE_CHECKING:
            yield from (n for branch in node.orelse for n in (branch, *_run_imports(branch)))
            continue
        yield node
        yield from _run_imports(node)


_TYPE_CHECKING = {"TYPE_CHECKING", "typing.TYPE_CHECKING"}


def _imports(name: str, path: Path, *, type_checking: bool = False) -> set[str]:
    """The app modules `name` imports, anywhere in it (with `type_checking`, those imported
    for type checkers only too)."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nodes = ast.walk(tree) if type_checking else _run_imports(tree)
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


# The most lines a module of backend/app may have.
MAX_LINES = 500


def test_no_module_of_the_app_is_over_500_lines() -> None:
    too_long = sorted(
        f"{path.relative_to(APP.parent)} has {lines} lines"
        for path in MODULES.values()
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    )
    assert too_long == [], f"over {MAX_LINES} lines, split by job: {too_long}"


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
        for target in _imports(name, MODULES[name], type_checking=True)
        if not any(target == room or target.startswith(f"{room}.") for room in allowed)
    )
    assert strays == []


def _http_errors(path: Path) -> list[str]:
    """Where a module speaks HTTP when it refuses: HTTPException, a status given with a
    raised error, or a kind of error declaring its own status."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Name | ast.Attribute):
            named = node.id if isinstance(node, ast.Name) else node.attr
            if named == "HTTPException":
                found.append(f"line {node.lineno}: HTTPException")
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            for keyword in node.exc.keywords:
                if keyword.arg in ("status", "status_code"):
                    found.append(f"line {node.lineno}: raises with {keyword.arg}=")
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                targets = item.targets if isinstance(item, ast.Assign) else []
                if any(isinstance(t, ast.Name) and t.id == "status" for t in targets):
                    found.append(f"line {item.lineno}: class {node.name} declares a status")
    return found


def test_nothing_below_the_api_raises_http_errors() -> None:
    """Below the API a refusal is a kind of AppError (app.errors) with a sentence and a
    code; the API gives each kind its status, in one table (app.api.errors.STATUS)."""
    spoken = sorted(
        f"{name} {where}"
        for name, path in MODULES.items()
        if not name.startswith(("app.api", "app.main"))
        for where in _http_errors(path)
    )
    assert spoken == []


def test_every_kind_of_refusal_has_its_status() -> None:
    import app.main  # noqa: F401  (every module with a kind of refusal is loaded)
    from app.api.errors import status_of
    from app.errors import AppError, NotFound, ServiceUnavailable
    from app.files.preview_process import PreviewsBusy
    from app.runs.errors import BudgetExceeded

    def kinds(base: type[AppError]) -> list[type[AppError]]:
        return [base, *(k for sub in base.__subclasses__() for k in kinds(sub))]

    assert len(kinds(AppError)) > 20
    with pytest.raises(TypeError, match=r"app\.api\.errors\.STATUS"):

        class Teapot(AppError):  # a status of its own is refused when the class is made
            status = 418

    assert status_of(NotFound("x")) == 404
    assert status_of(BudgetExceeded("x")) == 403
    assert status_of(PreviewsBusy("x")) == 503
    assert status_of(ServiceUnavailable("x")) == 503
