"""ask_user in the middle of a step: the step stops at the question and, once answered, goes
on with the answer, in a real worker (app/agent/asking.py, app/sandbox/worker/asking.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.agent.asking import AskedUser, Continuation, continuation
from app.agent.executor import SandboxExecutor
from app.sandbox import AskedAt, SandboxWorker


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxWorker]:
    with SandboxWorker(tmp_path_factory.mktemp("workspace")) as worker:
        yield worker


def ask(executor: SandboxExecutor, code: str) -> AskedUser:
    output = executor(code)
    assert isinstance(output.output, AskedUser), output
    return output.output


def answer(executor: SandboxExecutor, asked: AskedUser, text: str, code: str) -> object:
    """What a run does once the user answered: the same step again, going on."""
    executor.resume_next = asked.goes_on.answered(text)
    return executor(code)


def test_the_code_after_the_question_runs_with_the_answer(worker: SandboxWorker) -> None:
    executor = SandboxExecutor(worker)
    code = (
        "counted = [1]\n"
        "counted.append(2)\n"
        "choice = ask_user('Net or gross?')\n"
        "label = f'{choice}: {sum(counted)}'\n"
        "print(label)"
    )
    asked = ask(executor, code)
    assert asked.question == "Net or gross?"
    # The statements before the question are not run again (counted keeps two items).
    assert asked.goes_on.code.startswith("choice = ask_user(")
    output = answer(executor, asked, "gross", code)
    assert output.logs.endswith("gross: 3\n")  # type: ignore[attr-defined]
    assert "(ask_user returned the user's answer: 'gross')" in output.logs  # type: ignore[attr-defined]
    assert executor("label").output == "gross: 3"


def test_a_loop_that_asks_twice_does_not_repeat_its_earlier_rounds(worker: SandboxWorker) -> None:
    executor = SandboxExecutor(worker)
    executor("kept = ['before']")
    code = (
        "for region in ['North', 'South']:\n"
        "    kept.append(region)\n"
        "    kept.append(ask_user(f'Include {region}?'))\n"
        "print(kept)"
    )
    first = ask(executor, code)
    # The variables are as they were before the step: the loop's first round is undone.
    assert executor("list(kept)").output == "['before']"
    assert first.goes_on.code == code
    second = answer(executor, first, "yes", code)
    assert isinstance(second.output, AskedUser)  # type: ignore[attr-defined]
    assert second.output.question == "Include South?"  # type: ignore[attr-defined]
    done = answer(executor, second.output, "no", code)  # type: ignore[attr-defined]
    assert "['before', 'North', 'yes', 'South', 'no']" in done.logs  # type: ignore[attr-defined]


def test_a_question_inside_a_function_the_step_defined(worker: SandboxWorker) -> None:
    executor = SandboxExecutor(worker)
    code = (
        "import math\n"
        "def pick():\n"
        "    return ask_user('Which?')\n"
        "x = 1\n"
        "picked = pick()\n"
        "print(picked, math.pi > 3)"
    )
    asked = ask(executor, code)
    # It goes on from `picked = pick()`, with the definitions (not `x = 1`) before it.
    assert asked.goes_on.code == code.replace("x = 1\n", "")
    assert answer(executor, asked, "b", code).logs.endswith("b True\n")  # type: ignore[attr-defined]


def test_where_the_worker_says_it_asked_is_checked_against_the_code() -> None:
    code = "a = 1; b = ask_user('é?')\nprint(a, b)"
    # On the same line as the statement before it (columns are UTF-8 bytes).
    here = continuation(code, AskedAt(1, 0, False, 0), (), "x\n")
    assert here == Continuation("b = ask_user('é?')\nprint(a, b)", (), "x\n")
    # Answers given to earlier calls of the same statement come back to it, in order.
    loop = "for i in range(3):\n    ask_user(str(i))"
    assert continuation(loop, AskedAt(0, 2, False, 2), ("a", "b"), "").answers == ("a", "b")
    # A statement that does not exist, or more answers than were given: never beyond the code.
    lying = continuation(code, AskedAt(99, 5, False, 50), ("a",), "logs")
    assert lying == Continuation(code, ("a",), "")
    assert continuation(code, None, ("a", "b"), "logs") == Continuation(code, ("a", "b"), "")
