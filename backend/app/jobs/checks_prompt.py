"""What the model is asked when it writes a job's data checks, and what is kept of its reply:
test functions only (app.jobs.driver calls them as pytest would), each of them parsed."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

# The request's system prompt starts with this: it tells it apart from the agent's.
CHECKS_MARKER = "[workbench:job-checks]"
MAX_TESTS = 8
CODE_CHARS = 20_000
RESULTS_CHARS = 4000
_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)

_env = Environment(
    loader=FileSystemLoader(Path(__file__).resolve().parents[1] / "agent" / "prompts"),
    undefined=StrictUndefined,
    autoescape=False,
)


def messages(
    code: str,
    params: list[dict[str, Any]],
    results: dict[str, Any],
    previous: str = "",
    failures: list[str] | None = None,
) -> list[dict[str, str]]:
    text = _env.get_template("job_checks.j2").render(
        marker=CHECKS_MARKER,
        code=code[:CODE_CHARS],
        params=json.dumps(params, default=str),
        results=json.dumps(results, default=str)[:RESULTS_CHARS],
        previous=previous,
        failures="\n".join(f"- {f}" for f in failures or []),
        max_tests=MAX_TESTS,
    )
    return [
        {"role": "system", "content": text},
        {"role": "user", "content": "Write the job's checks."},
    ]


def tests_of(reply: str) -> str:
    """The test functions of a reply (with its imports), or "" when it has none that parse.
    Anything else at the top level (code that would run on import) is left out."""
    found = _FENCE.search(reply)
    text = found.group(1) if found else reply
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ""
    kept: list[ast.stmt] = []
    tests = 0
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            kept.append(node)
        elif (
            isinstance(node, ast.FunctionDef)
            and node.name.startswith("test_")
            and 1 <= len(node.args.args) <= 2
            and not node.decorator_list
            and tests < MAX_TESTS
        ):
            kept.append(node)
            tests += 1
    if not tests:
        return ""
    return ast.unparse(ast.Module(body=kept, type_ignores=[])) + "\n"


def only(tests: str, names: set[str]) -> str:
    """The tests named (and the imports), the rest left out."""
    if not tests.strip():
        return ""
    tree = ast.parse(tests)
    kept = [n for n in tree.body if not isinstance(n, ast.FunctionDef) or n.name in names]
    if not any(isinstance(n, ast.FunctionDef) for n in kept):
        return ""
    return ast.unparse(ast.Module(body=kept, type_ignores=[])) + "\n"
