"""ask_user inside the worker: the question ends the step, and the step goes on after it.

The run waits for the user's answer holding no worker, so the step cannot be paused where
it asked: it is run again once the answer comes, with ask_user returning the answers given
so far, in order (the backend sends them). How much runs again depends on where it asked:

- a simple top-level statement (`choice = ask_user(...)`, `print(ask_user(...))`): the
  step goes on from that statement; the statements before it are not run again (what they
  did is in the variables).
- a compound one (a loop, an `if`, a `with`…): what ran of it before the question (earlier
  rounds of a loop) must not run twice, so the variables are copied before the step starts
  and put back when it asks; the whole step runs again from its start. A namespace too big
  to copy (see COPY_SHARE) is not copied, and that statement runs again from its start.

The backend works out the code to run from what `where` says (app/agent/asking.py).
"""

from __future__ import annotations

import ast
import copy
import sys
from types import FrameType
from typing import Any

import smolagents.local_python_executor as lpe

from app.sandbox.interface import QUESTION_CHARS
from app.sandbox.worker.snapshot import estimated_bytes

SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)
# The most of the worker's memory a copy of the variables may take.
COPY_SHARE = 0.25


class Question:
    """Raised (as smolagents' final answer) by ask_user: the step ends with the question."""

    def __init__(self, text: str, where: dict[str, Any]):
        self.text = text
        self.where = where


def _running_statement() -> int | None:
    """The index of the top-level statement of the step's code being run.

    smolagents' interpreter runs a step's statements one by one (`for node in
    expression.body` in evaluate_python_code's `_execute_code`): the frame of that loop
    says which. None if no such frame is found (another smolagents).
    """
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_execute_code" and code.co_filename == lpe.__file__:
            node, expression = frame.f_locals.get("node"), frame.f_locals.get("expression")
            body = getattr(expression, "body", None) or []
            return next((i for i, statement in enumerate(body) if statement is node), None)
        frame = frame.f_back
    return None


def _variables(state: dict[str, Any]) -> list[str]:
    return [name for name in state if not name.startswith("_")]


class Asking:
    """One step's ask_user: the answers it replays, and what it puts back when it asks."""

    def __init__(self, memory_mb: int):
        self.copy_limit = int(memory_mb * 1024 * 1024 * COPY_SHARE)
        self.answers: list[str] = []
        self.given = 0  # answers returned in this step
        self.statement: int | None = None  # the top-level statement the last call was in
        self.given_here = 0  # answers returned while in that statement
        self.saved: dict[str, Any] | None = None
        self.simple: list[bool] = []  # of each top-level statement of the step's code

    def begin(self, code: str, answers: list[str], state: dict[str, Any]) -> None:
        """A step starts: `answers` are what its ask_user calls return, in order."""
        self.answers, self.given, self.statement, self.given_here = list(answers), 0, None, 0
        try:
            body = ast.parse(code).body
        except SyntaxError:
            body = []
        self.simple = [isinstance(statement, SIMPLE) for statement in body]
        compound_asks = any(
            not simple and any(isinstance(n, ast.Name) and n.id == "ask_user" for n in ast.walk(s))
            for s, simple in zip(body, self.simple, strict=True)
        )
        self.saved = self._copy(state) if compound_asks else None

    def _copy(self, state: dict[str, Any]) -> dict[str, Any] | None:
        names = _variables(state)
        if sum(estimated_bytes(state[name]) for name in names) > self.copy_limit:
            return None
        saved = {}
        for name in names:
            try:
                saved[name] = copy.deepcopy(state[name])
            except Exception:  # a module, a generator…: kept as it is
                saved[name] = state[name]
        return saved

    def ask(self, question: Any = None) -> Any:
        """The ask_user the code calls."""
        text = str(question if question is not None else "").strip()
        if not text:
            raise ValueError("ask_user needs the question to ask, e.g. ask_user('Net or gross?')")
        statement = _running_statement()
        if statement != self.statement:
            self.statement, self.given_here = statement, 0
        if self.answers:
            self.given += 1
            self.given_here += 1
            return self.answers.pop(0)
        where = {"statement": statement, "answered": self.given_here, "from_start": False}
        raise lpe.FinalAnswerException(Question(text[:QUESTION_CHARS], where))

    def asked(self, question: Question, state: dict[str, Any]) -> list[Any] | None:
        """The step ended with `question`: put the variables back if they were copied.

        Returns:
            Where the step goes on, for the backend: [statement, answered there, from the
            start, answered in all]; None if the statement could not be told.
        """
        where = question.where
        statement = where["statement"]
        simple = statement is not None and statement < len(self.simple) and self.simple[statement]
        if self.saved is not None and not simple:
            for name in _variables(state):
                if name not in self.saved:
                    del state[name]
            state.update(self.saved)
            where["from_start"] = True
        if statement is None:
            return None
        return [statement, where["answered"], where["from_start"], self.given]
