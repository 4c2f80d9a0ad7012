"""The smolagents adapter: a PythonExecutor whose code actions run in a SandboxWorker."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from smolagents.local_python_executor import CodeOutput, PythonExecutor
from smolagents.tools import Tool

from app.agent.asking import AskedUser, Continuation, continuation
from app.observability import tracing
from app.sandbox import (
    CodeForApproval,
    DataAnswerer,
    SandboxStepError,
    SandboxUnavailable,
    SandboxWorker,
    StepResult,
)


class SandboxLost(BaseException):
    """No worker can be had any more (the sandbox service went away).

    Not an Exception: smolagents would show one to the model and go on to the next step,
    which cannot run either. This ends the agent's run; the backend ends the run with
    `unavailable`, the cause.
    """

    def __init__(self, unavailable: SandboxUnavailable) -> None:
        super().__init__(str(unavailable))
        self.unavailable = unavailable


class SandboxExecutor(PythonExecutor):
    """smolagents executor that runs each code action in a SandboxWorker.

    Give it to `CodeAgent(executor=...)`. The backend owns the worker's lifetime.
    """

    def __init__(
        self,
        worker: SandboxWorker,
        on_result: Callable[[StepResult], None] | None = None,
        review: bool = False,
        on_output: Callable[[str], None] | None = None,
        answerer: DataAnswerer | None = None,
        review_if: Callable[[], bool] | None = None,
    ) -> None:
        """Wrap a worker.

        Args:
            worker: The session's worker.
            on_result: Called with every step's result (also failed ones) before the agent
                sees it; the backend records artifacts and output there.
            review: Code waits for the user's approval: instead of running it, a step ends
                with CodeForApproval (except code that only gives a literal final answer).
            on_output: Called with what a step prints while it runs (see SandboxWorker.run).
            answerer: Answers the code's queries of the project's data sources (`sql()`).
            review_if: Without `review`: whether this step's code waits for approval as in
                review (autonomy review_repairs: a step after a failed one).
        """
        self.worker = worker
        self.answerer = answerer
        self.on_result = on_result
        self.on_output = on_output
        self.review = review
        self.review_if = review_if
        # The next step is the rest of one that asked the user, who answered: it runs
        # this instead of the code the step was written with (see app.agent.asking).
        self.resume_next: Continuation | None = None
        self.approved_next = False  # the next code was approved: it runs without asking

    def send_tools(self, tools: dict[str, Tool]) -> None:
        """Accept the agent's tools: only final_answer, which the worker provides itself.

        Args:
            tools: The agent's tools by name.

        Raises:
            ValueError: A tool other than final_answer (tools cannot cross the pipe).
        """
        unsupported = sorted(set(tools) - {"final_answer"})
        if unsupported:
            raise ValueError(
                f"The sandbox cannot provide these tools to the code: {', '.join(unsupported)}"
            )

    def send_variables(self, variables: dict[str, Any]) -> None:
        """Forward JSON-serialisable variables to the code's namespace.

        Args:
            variables: Values by name.

        Raises:
            TypeError: A value is not JSON-serialisable.
        """
        self.worker.set_variables(variables)

    def __call__(self, code_action: str) -> CodeOutput:
        """Run one code action.

        Args:
            code_action: The code the model wrote.

        Returns:
            The output, logs and whether it was the final answer.

        Raises:
            SandboxStepError: The step failed; smolagents shows the message to the model.
            SandboxLost: No worker can be had any more; the agent's run ends.
        """
        going_on, self.resume_next = self.resume_next, None
        review = self.review or (self.review_if is not None and self.review_if())
        waits = going_on is None and review and not self.approved_next
        if waits and not _only_states(code_action):
            return CodeOutput(output=CodeForApproval(code_action), logs="", is_final_answer=True)
        self.approved_next = False
        code, answers, earlier = (
            (going_on.code, going_on.answers, going_on.logs) if going_on else (code_action, (), "")
        )
        tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "python_interpreter"}
        with tracing.span("execute_tool python_interpreter", tool) as span:
            try:
                result = self.worker.run(code, answers, self.on_output, self.answerer)
            except SandboxUnavailable as exc:
                raise SandboxLost(exc) from exc
            if span is not None:
                span.set_attributes(step_attributes(result))
            if self.on_result is not None:
                self.on_result(result)
        if result.error is not None:
            raise SandboxStepError(result)
        logs = earlier + result.logs
        if result.question is not None:  # the step stops there; the run waits for the user
            goes_on = continuation(code, result.asked_at, answers, logs)
            return CodeOutput(
                output=AskedUser(result.question, goes_on), logs=logs, is_final_answer=True
            )
        return CodeOutput(output=result.output, logs=logs, is_final_answer=result.is_final_answer)

    def cleanup(self) -> None:
        """Nothing to do: the backend closes the worker when the session goes idle."""


def step_attributes(result: StepResult) -> dict[str, Any]:
    """What a code step's span says of it: counts and flags, never what it printed (the
    worker says them all: none becomes a metric's label)."""
    return {
        "workbench.step.duration_ms": result.duration_ms,
        "workbench.step.failed": result.error is not None,
        "workbench.step.timed_out": result.timed_out,
        "workbench.step.crashed": result.crashed,
        "workbench.step.artifacts": len(result.artifacts),
        "workbench.step.queries": len(result.queries),
        "workbench.step.output_chars": len(result.logs),
    }


# What a step that only states earlier results may call.
_STATING = frozenset({"final_answer", "print"})


def _plain_value(node: ast.expr) -> bool:
    """A literal, a variable's name, or an f-string of those: showing it computes nothing
    new (an attribute, a subscript or a call could run anything, and is not plain)."""
    if isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.JoinedStr):
        return all(_plain_value(part) for part in node.values)
    if isinstance(node, ast.FormattedValue):
        spec = node.format_spec
        return _plain_value(node.value) and (spec is None or _plain_value(spec))
    return False


def _stating_call(statement: ast.stmt) -> bool:
    """`final_answer(x)` or `print(a, f"{b}", sep=" ")` of plain values only."""
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return False
    call = statement.value
    if not isinstance(call.func, ast.Name) or call.func.id not in _STATING:
        return False
    if call.func.id == "final_answer" and (call.keywords or len(call.args) != 1):
        return False
    keywords_plain = all(
        k.arg is not None and isinstance(k.value, ast.Constant) for k in call.keywords
    )
    return keywords_plain and all(_plain_value(arg) for arg in call.args)


def _only_states(code: str) -> bool:
    """The code only states what earlier steps computed: it calls nothing but final_answer
    (once, last) and print, on literals, variables' names and f-strings of them. Such a step
    runs without asking again in review mode; anything else waits for approval."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return False
    if not body or not all(_stating_call(statement) for statement in body):
        return False
    answers = [s for s in body if s.value.func.id == "final_answer"]  # type: ignore[attr-defined]
    return len(answers) == 1 and answers[0] is body[-1]
