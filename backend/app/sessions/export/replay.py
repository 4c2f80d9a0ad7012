"""Which of a step's code a rerun of the notebook runs, so that it ends where the workbench
ended: every statement of a step that succeeded; of a step that failed, the top-level
statements that ran before the one that raised (what they defined, later steps use); of a
step that gave its final answer, the statements up to that answer (smolagents ends a step
there). What did not run stays in the cell as comments, with the error.

The sandbox's executor (smolagents' LocalPythonExecutor) runs a step's top-level statements
one by one and names the one that raised: "Code execution failed at line '<its source>'
due to: <error>". A step that failed any other way (its code did not parse, it ran out of
time or memory, the user rejected it) ran nothing a rerun can repeat.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from app.sessions.export.gather import ExportStep

FAILED_AT = "Code execution failed at line '"
# What follows the error in a step's stored error text.
LOGS = "\n\nExecution logs (printed before the error):"
# The error kept in the cell, at most.
ERROR_LINES = 15
ERROR_CHARS = 1500


@dataclass(frozen=True)
class Replay:
    """The code of a step's cell: what runs, and what did not run in the workbench."""

    ran: str
    not_ran: str = ""
    why: str = ""  # why the rest did not run: "with an error" or "at its final answer"
    error: str = ""

    @property
    def source(self) -> str:
        if not self.not_ran.strip():
            return self.ran
        note = [f"# In the workbench this step stopped here {self.why}; the rest did not run:"]
        note += [f"# {line}".rstrip() for line in self.not_ran.strip("\n").splitlines()]
        if self.error:
            note.append("# The error:")
            note += [f"#   {line}".rstrip() for line in self.error.splitlines()]
        return self.ran.rstrip() + "\n" + "\n".join(note)


def replay(step: ExportStep) -> Replay | None:
    """The cell of a step, or None when none of its code ran (it is shown as text)."""
    code = step.code or ""
    if not code.strip() or step.rejected:
        return None
    if step.failed:
        return _failed(code, step.error or "")
    return _answered(code)


def _failed(code: str, error: str) -> Replay | None:
    if not error.startswith(FAILED_AT):
        return None
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    for node in body:
        segment = ast.get_source_segment(code, node)
        if segment is not None and error.startswith(f"{FAILED_AT}{segment}' due to: "):
            ran, rest = _split(code, node)
            if not ran.strip():
                return None
            reason = error[len(f"{FAILED_AT}{segment}' due to: ") :].split(LOGS, 1)[0]
            lines = reason.strip()[:ERROR_CHARS].splitlines()
            if len(lines) > ERROR_LINES:
                lines = [*lines[: ERROR_LINES - 2], "…", lines[-1]]
            return Replay(ran, rest, "with an error", "\n".join(lines))
    return None


def _answered(code: str) -> Replay:
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return Replay(code)
    for position, node in enumerate(body[:-1]):
        if _calls_final_answer(node):
            ran, rest = _split(code, body[position + 1])
            return Replay(ran, rest, "at its final answer")
    return Replay(code)


def _calls_final_answer(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "final_answer"
    )


def _split(code: str, node: ast.stmt) -> tuple[str, str]:
    """The code before `node` starts, and from there on (decorators included)."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    column = node.col_offset if first == node.lineno else 0
    lines = code.splitlines(keepends=True)
    line = lines[first - 1]
    # col_offset counts UTF-8 bytes.
    head = line.encode()[:column].decode(errors="ignore")
    offset = sum(len(earlier) for earlier in lines[: first - 1]) + len(head)
    return code[:offset], code[offset:]
