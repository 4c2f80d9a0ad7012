"""A job's script, made from the code that produced a session's answers: the code of each
step that ran (app.sessions.export.replay decides what ran), in order, inside one function
`run(params) -> results`, with its inputs turned into parameters and its answers into
named results. The script runs with no model: in the sandbox (app.jobs.driver) or, exported,
as plain Python (app.jobs.export).

Parameters: every string in the code that names a project file (kind `file`, default that
name: at run time the file's latest version), every query on a source (`sql("...")`, kind
`query`, run live) and the values a user marks (kind `value`: each literal equal to the
default becomes the parameter). Results: each question's final answer (`answer_<n>`, kind
`value`), and the variables the code showed (`display(x)`: `table`; `x.show()`: `chart`).
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from app.sessions.export.gather import ExportStep
from app.sessions.export.replay import replay

_NOT_NAME = re.compile(r"[^0-9a-zA-Z_]+")
PARAM_KINDS = ("file", "query", "value")
RESULT_KINDS = ("value", "table", "chart")


@dataclass
class Piece:
    """One recorded run's code: its steps (a question's) or its one cell."""

    number: int  # the question's place in the job (answer_<number>)
    query: str
    steps: list[ExportStep]


@dataclass
class Built:
    code: str
    params: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)


class NothingRan(ValueError):
    """None of the chosen runs' code ran: there is nothing to make a job of."""


def param_name(text: str, taken: set[str]) -> str:
    base = _NOT_NAME.sub("_", text).strip("_").lower() or "param"
    if base[0].isdigit():
        base = f"p_{base}"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


class _Rewrite(ast.NodeTransformer):
    """Files and queries to parameters, final answers to results; what the code shows noted."""

    def __init__(self, files: set[str], params: list[dict[str, Any]], number: int):
        self.files = files
        self.params = params
        self.number = number
        self.shown: dict[str, str] = {}
        self.answered = False

    def _param(self, kind: str, default: str, source: str | None = None) -> ast.expr:
        for p in self.params:
            if p["kind"] == kind and p["default"] == default:
                return _lookup(p["name"])
        taken = {p["name"] for p in self.params}
        queries = sum(p["kind"] == "query" for p in self.params)
        label = default if kind == "file" else f"query_{queries + 1}"
        name = param_name(label, taken)
        param: dict[str, Any] = {"name": name, "kind": kind, "default": default}
        if kind == "query":
            param["source"] = source
        self.params.append(param)
        return _lookup(name)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "sql" and node.args:
            first = node.args[0]
            source = next(
                (
                    str(k.value.value)
                    for k in node.keywords
                    if k.arg == "source" and isinstance(k.value, ast.Constant)
                ),
                None,
            )
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                node.args[0] = self._param("query", first.value, source)
        if isinstance(func, ast.Name) and func.id == "display":
            for arg in node.args:
                if isinstance(arg, ast.Name):
                    self.shown.setdefault(arg.id, "table")
            # Inside run() the sandbox cannot name a table after its variable: the call does.
            titled = any(k.arg == "title" for k in node.keywords)
            if len(node.args) == 1 and isinstance(node.args[0], ast.Name) and not titled:
                node.keywords.append(ast.keyword("title", ast.Constant(node.args[0].id)))
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "show"
            and isinstance(func.value, ast.Name)
        ):
            self.shown[func.value.id] = "chart"
        self.generic_visit(node)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str) and node.value in self.files:
            return self._param("file", node.value)
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        call = node.value
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "final_answer"
            and call.args
        ):
            self.answered = True
            value = self.visit(call.args[0])
            target = ast.Subscript(
                value=ast.Name("results", ast.Load()),
                slice=ast.Constant(f"answer_{self.number}"),
                ctx=ast.Store(),
            )
            return ast.Assign(targets=[target], value=value, lineno=node.lineno)
        self.generic_visit(node)
        return node


def _lookup(name: str) -> ast.expr:
    return ast.Subscript(value=ast.Name("params", ast.Load()), slice=ast.Constant(name))


def build(pieces: list[Piece], files: set[str]) -> Built:
    """The script of the pieces' code.

    Args:
        pieces: The runs' code, in order.
        files: The names of the project's files (strings naming one become parameters).

    Raises:
        NothingRan: No step of any piece ran code.
    """
    params: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    body: list[str] = []
    for piece in pieces:
        chunks: list[str] = []
        rewrite = _Rewrite(files, params, piece.number)
        for step in piece.steps:
            ran = replay(step)
            if ran is None or not ran.ran.strip():
                continue
            try:
                tree = ast.parse(ran.ran)
            except SyntaxError:
                continue
            tree = ast.fix_missing_locations(rewrite.visit(tree))
            chunks.append(ast.unparse(tree))
        if not chunks:
            continue
        first_line = " ".join(piece.query.split())[:100]
        body.append(f"# {piece.number}. {first_line}")
        body.extend(chunks)
        if rewrite.answered:
            results.append({"name": f"answer_{piece.number}", "kind": "value"})
        for name, kind in rewrite.shown.items():
            if all(r["name"] != name for r in results):
                results.append({"name": name, "kind": kind})
    if not body:
        raise NothingRan("None of the chosen runs' code ran: there is nothing to make a job of.")
    for result in results:
        if not result["name"].startswith("answer_"):
            body.append(f"results[{result['name']!r}] = {result['name']}")
    return Built(render(params, "\n".join(body)), params, results)


def render(params: list[dict[str, Any]], body: str) -> str:
    """The script: PARAMS (the defaults) and run(params) -> results around `body`."""
    defaults = "\n".join(f"    {p['name']!r}: {p['default']!r}," for p in params)
    return (
        f"PARAMS = {{\n{defaults}\n}}\n\n\n"
        "def run(params):\n"
        "    results = {}\n"
        f"{textwrap.indent(body, '    ')}\n"
        "    return results\n"
    )


def body_of(code: str) -> str:
    """The body of run() in a script `render` made (without `results = {}` and the return)."""
    tree = ast.parse(code)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "run":
            inner = node.body[1:-1]
            return "\n".join(ast.unparse(n) for n in inner)
    raise ValueError("The job's code has no run(params).")


def with_params(code: str, params: list[dict[str, Any]], marked: list[dict[str, Any]]) -> str:
    """The script again with new defaults, and each literal equal to a newly marked value's
    default replaced by that parameter."""
    tree = ast.parse(body_of(code))
    for param in marked:
        tree = ast.fix_missing_locations(_Mark(param).visit(tree))
    return render(params, ast.unparse(tree))


class _Mark(ast.NodeTransformer):
    """Each literal equal to a marked value's default becomes the parameter."""

    def __init__(self, param: dict[str, Any]):
        self.param = param

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        default = self.param["default"]
        if node.value == default and type(node.value) is type(default):
            return _lookup(self.param["name"])
        return node


def step_of(index: int, code: str | None, error: str | None, output: str | None) -> ExportStep:
    return ExportStep(index=index, thought=None, code=code, output=output, error=error)


class _Rename(ast.NodeTransformer):
    def __init__(self, renames: dict[str, str]):
        self.renames = renames

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        key = node.slice
        if (
            isinstance(node.value, ast.Name)
            and node.value.id == "params"
            and isinstance(key, ast.Constant)
            and key.value in self.renames
        ):
            node.slice = ast.Constant(self.renames[key.value])
        return node


def renamed(code: str, renames: dict[str, str]) -> str:
    """The code with each `params[<old name>]` reading `params[<new name>]`."""
    if not renames or not code.strip():
        return code
    return ast.unparse(_Rename(renames).visit(ast.parse(code))) + "\n"
