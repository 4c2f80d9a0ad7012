"""How one evaluation task copes with a server that is busy, drops the stream or asks back
(a stand-in client: these are hard to provoke from a real server on cue)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.cli import eval_runner
from app.cli.client import ApiError, Event
from app.cli.eval_dabench import Task
from app.cli.eval_report import read_records
from app.cli.eval_runner import AUTO_ANSWER, Evaluation, Job

TASK = Task(id="t1", question="Mean?", answers=(("mean", "2.50"),), files=("a.csv",))
RUN = {
    "id": "r1",
    "status": "succeeded",
    "final_answer": "@mean[2.50]",
    "error": None,
    "steps": [{"index": 1, "error": "ZeroDivisionError"}, {"index": 2, "error": None}],
    "tokens_in": 120,
    "tokens_out": 30,
    "cost_usd": None,
    "started_at": "2026-01-01T10:00:00Z",
    "finished_at": "2026-01-01T10:00:07.5Z",
}


def events(*names: str, drop_after: int | None = None) -> Iterator[Event]:
    for seq, name in enumerate(names, start=1):
        if drop_after is not None and seq > drop_after:
            raise ApiError(0, "Lost the connection to the workbench")
        yield Event(name, seq, {"run_id": "r1", "seq": seq})


class FakeClient:
    """Answers `ask` from a list of outcomes: an ApiError to raise, or events."""

    def __init__(self, *outcomes: Any):
        self.outcomes = list(outcomes)
        self.calls: list[tuple[str, ...]] = []
        self.sessions = 0

    def create_session(self, project_id: str, title: str) -> dict[str, Any]:
        self.sessions += 1
        return {"id": f"s{self.sessions}"}

    def ask(self, session_id: str, query: str, **kwargs: Any) -> Iterator[Event]:
        self.calls.append(("ask", session_id))
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, ApiError):
            raise outcome
        return outcome  # type: ignore[no-any-return]

    def follow(self, run_id: str, after: int = 0) -> Iterator[Event]:
        self.calls.append(("follow", run_id, str(after)))
        return events("step.finished", "final", "run.finished")

    def run(self, run_id: str) -> dict[str, Any]:
        return RUN

    def answer(self, run_id: str, text: str) -> dict[str, Any]:
        self.calls.append(("answer", run_id, text))
        return RUN


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eval_runner, "FIRST_WAIT", 0.0)


def evaluation(client: FakeClient, tmp_path: Path, notes: list[str]) -> Evaluation:
    ev = Evaluation(client, tmp_path / "results.jsonl", keep=False, notice=notes.append)  # type: ignore[arg-type]
    ev.project_id, ev.file_ids = "p1", {"a.csv": "f1"}
    return ev


def test_a_busy_server_is_waited_for_and_the_run_recorded(tmp_path: Path) -> None:
    client = FakeClient(
        ApiError(503, "The database is not answering.", "service_unavailable"),
        ApiError(409, "This session is still answering.", "session_busy"),
        events("run.started", "step.started", "input.requested", "final", "run.finished"),
    )
    notes: list[str] = []

    record = evaluation(client, tmp_path, notes).run(Job("m", TASK, 1))

    assert record is not None
    assert [c[0] for c in client.calls] == ["ask", "ask", "ask", "answer"]
    assert client.calls[-1] == ("answer", "r1", AUTO_ANSWER)  # nobody else would
    assert len(notes) == 2 and "The database is not answering" in notes[0]
    assert (record.status, record.steps, record.step_errors) == ("succeeded", 2, 1)
    assert record.wall_seconds == 7.5 and record.cost_usd is None
    assert read_records(tmp_path / "results.jsonl") == ([record], 0)


def test_a_dropped_stream_is_followed_again_from_where_it_stopped(tmp_path: Path) -> None:
    client = FakeClient(events("run.started", "step.started", "step.code", drop_after=2))

    record = evaluation(client, tmp_path, []).run(Job("m", TASK, 1))

    assert record is not None and record.run_id == "r1"
    assert client.calls == [("ask", "s1"), ("follow", "r1", "2")]


def test_a_request_lost_before_the_run_started_asks_again_in_a_new_session(
    tmp_path: Path,
) -> None:
    client = FakeClient(
        ApiError(0, "Lost the connection to the workbench"),
        events("run.started", "final", "run.finished"),
    )

    record = evaluation(client, tmp_path, []).run(Job("m", TASK, 1))

    assert record is not None and record.session_id == "s2"
    assert client.calls == [("ask", "s1"), ("ask", "s2")]


def test_a_refusal_stops_the_task_without_recording_it(tmp_path: Path) -> None:
    client = FakeClient(ApiError(403, "This project has used its budget.", "budget_exceeded"))

    with pytest.raises(ApiError, match="budget"):
        evaluation(client, tmp_path, []).run(Job("m", TASK, 1))

    assert not (tmp_path / "results.jsonl").exists()
