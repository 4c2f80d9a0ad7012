"""ask_user in the middle of a step: where the step goes on once the user answers.

The code of a step that calls `ask_user(...)` stops there and the run waits, holding no
worker. Once the user answers, the same step goes on, with ask_user returning the answer
(and the earlier answers, in order, to the calls that asked before), so the code after the
question runs with it and what it defines exists afterwards: from the top-level statement
that asked (the ones before it are not run again), or from the step's start when the
worker put the variables back as they were before it (a loop that asked: see
app/sandbox/worker/asking.py).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from app.sandbox import AskedAt, UserQuestion

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


@dataclass(frozen=True)
class Continuation:
    """The rest of a step that asked: its code from the asking statement, the answers that
    statement's ask_user calls return (in order), and what the step printed so far."""

    code: str
    answers: tuple[str, ...] = ()
    logs: str = ""

    def answered(self, answer: str) -> Continuation:
        """The step goes on with `answer` too; its output says where it came in."""
        before = self.logs if not self.logs or self.logs.endswith("\n") else self.logs + "\n"
        said = f"(ask_user returned the user's answer: {answer!r})\n"
        return Continuation(self.code, (*self.answers, answer), before + said)

    def to_json(self) -> dict[str, object]:
        return {"code": self.code, "answers": list(self.answers), "logs": self.logs}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Continuation:
        answers = data.get("answers")
        return cls(
            str(data.get("code") or ""),
            tuple(str(a) for a in answers) if isinstance(answers, list) else (),
            str(data.get("logs") or ""),
        )


@dataclass(frozen=True)
class AskedUser(UserQuestion):
    """The step's question, with where the step goes on once it is answered."""

    goes_on: Continuation = field(default_factory=lambda: Continuation(""))


def continuation(
    code: str, asked_at: AskedAt | None, answers: tuple[str, ...], logs: str
) -> Continuation:
    """Where a step goes on after its question.

    Args:
        code: The code that ran (a step's, or the rest of one that asked before).
        asked_at: Where it asked, as the worker says (checked here against the code); None
            when the worker could not tell: the whole code runs again with every answer.
        answers: The answers the code's ask_user calls were given, in order.
        logs: What the step printed so far.
    """
    if asked_at is None:
        return Continuation(code, answers, "")
    given = answers[: min(asked_at.given, len(answers))]
    if asked_at.from_start:  # the variables are as before the code: it all runs again
        return Continuation(code, given, "")
    try:
        body = ast.parse(code).body
    except SyntaxError:
        body = []
    if not 0 <= asked_at.statement < len(body):
        return Continuation(code, given, "")
    # The statement that asked runs again, with the answers its earlier calls were given,
    # after the functions, classes and imports defined before it (a new worker, restored
    # from the saved variables, would not have them: defining them again changes nothing).
    here = given[len(given) - min(asked_at.answered, len(given)) :]
    prelude = [
        ast.get_source_segment(code, statement) or ""
        for statement in body[: asked_at.statement]
        if isinstance(statement, DEFINITIONS)
    ]
    rest = _from_statement(code, body[asked_at.statement])
    return Continuation("\n".join([*prelude, rest]), here, logs)


def _from_statement(code: str, statement: ast.stmt) -> str:
    """`code` from where `statement` begins (its column is counted in UTF-8 bytes)."""
    lines = code.splitlines(keepends=True)
    before = "".join(lines[: statement.lineno - 1])
    line = lines[statement.lineno - 1] if statement.lineno - 1 < len(lines) else ""
    column = len(line.encode("utf-8")[: statement.col_offset].decode("utf-8", "replace"))
    return code[len(before) + column :]
