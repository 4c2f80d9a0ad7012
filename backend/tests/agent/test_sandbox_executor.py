"""SandboxExecutor: the smolagents executor interface on top of a worker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from smolagents.default_tools import FinalAnswerTool
from smolagents.local_python_executor import CodeOutput

from app.agent.executor import SandboxExecutor
from app.sandbox import SandboxStepError, SandboxWorker, StepResult


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxWorker]:
    with SandboxWorker(tmp_path_factory.mktemp("workspace")) as worker:
        yield worker


@pytest.fixture
def recorded(worker: SandboxWorker) -> tuple[SandboxExecutor, list[StepResult]]:
    results: list[StepResult] = []
    return SandboxExecutor(worker, on_result=results.append), results


def test_success_returns_code_output(recorded: tuple[SandboxExecutor, list[StepResult]]) -> None:
    executor, results = recorded
    executor.send_tools({"final_answer": FinalAnswerTool()})
    executor.send_variables({"base": 40})
    output = executor("print('adding')\nbase + 2")
    assert output == CodeOutput(output="42", logs="adding\n", is_final_answer=False)
    assert len(results) == 1 and results[0].output == "42"


def test_final_answer(recorded: tuple[SandboxExecutor, list[StepResult]]) -> None:
    executor, _ = recorded
    output = executor("final_answer('done')")
    assert output.is_final_answer
    assert output.output == "done"


def test_error_is_raised_after_on_result(
    recorded: tuple[SandboxExecutor, list[StepResult]],
) -> None:
    executor, results = recorded
    with pytest.raises(SandboxStepError) as raised:
        executor("print('so far')\nundefined_thing")
    message = str(raised.value)
    assert message.startswith(results[0].error or "")
    assert "NameError" in message
    assert "so far" in message
    assert raised.value.result is results[0]


def test_only_final_answer_tool_is_accepted(worker: SandboxWorker) -> None:
    executor = SandboxExecutor(worker)
    with pytest.raises(ValueError, match="web_search"):
        executor.send_tools({"final_answer": FinalAnswerTool(), "web_search": FinalAnswerTool()})


def test_variables_must_be_json(worker: SandboxWorker) -> None:
    with pytest.raises(TypeError):
        SandboxExecutor(worker).send_variables({"frame": object()})


def test_variables_survive_a_worker_restart(tmp_path: Path) -> None:
    with SandboxWorker(tmp_path) as worker:
        executor = SandboxExecutor(worker)
        executor.send_variables({"dataset": "sales.csv"})  # before the worker exists
        assert executor("dataset").output == "sales.csv"
        worker.kill()
        assert executor("dataset").output == "sales.csv"
        executor.cleanup()
        assert worker.alive  # the backend, not the agent, owns the worker


@pytest.mark.parametrize(
    ("code", "runs"),
    [
        ("final_answer('North sold most.')", True),
        ("final_answer(total)", True),
        ('final_answer(f"The total is {total:,.2f} over {n} orders.")', True),
        ("print(total)\nprint('orders:', n, sep=' ')\nfinal_answer(f'{total}')", True),
        # Anything that computes, reaches into an object or calls something else still asks.
        ("final_answer(total * 2)", False),
        ("final_answer(f'{total.real}')", False),
        ("final_answer(f'{sum([total])}')", False),
        ("final_answer(totals['north'])", False),
        ("print(total)", False),  # not a final step
        ("final_answer(total)\nprint(total)", False),
        ("x = total\nfinal_answer(x)", False),
        ("print(total, sep=str(total))\nfinal_answer(total)", False),
        ("final_answer(answer=total)", False),
        ("open('x', 'w')\nfinal_answer(total)", False),
    ],
)
def test_review_runs_without_asking_only_a_step_that_states_earlier_results(
    worker: SandboxWorker, code: str, runs: bool
) -> None:
    executor = SandboxExecutor(worker)
    executor("total = 4490.75\nn = 12\ntotals = {'north': 1.0}")  # an earlier, approved step
    reviewing = SandboxExecutor(worker, review=True)
    result = reviewing(code)
    waits = type(result.output).__name__ == "CodeForApproval"
    assert waits is not runs, result
