"""`workbench eval`: run a task set through the public API and report, per model, how
often the answers were right and what they cost.

Each task runs in a fresh session of one project that holds the task set's tables, exactly
as a user's question would. Every finished run is appended to DIR/results.jsonl at once, so
an interrupted evaluation resumes where it stopped when run again with the same --report.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Annotated, Any, TypeVar

import click
import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from app.cli import config
from app.cli.client import ApiError, WorkbenchClient
from app.cli.eval_dabench import Match, Task, TaskFileError, load_tasks, prompt, score
from app.cli.eval_report import (
    RESULTS,
    RunRecord,
    append_record,
    build_report,
    read_records,
    summary_table,
    tasks_table,
    write_report,
)

T = TypeVar("T")

# What the agent hears if it asks the user something: nobody is there during an evaluation.
AUTO_ANSWER = (
    "Nobody can answer questions during this evaluation: take the most likely reading of the "
    "question, say which you chose, and go on."
)
# Answers that mean "not now" rather than "no": a busy session, a rate limit, a backing
# service that is down (the server asks for a few seconds with Retry-After), or a dropped
# connection. The task waits and tries again; after this many tries the evaluation stops.
RETRY_STATUSES = {0, 409, 429, 502, 503, 504}
RETRIES = 10
FIRST_WAIT, LONGEST_WAIT = 2.0, 30.0
FINISHED = {"succeeded", "failed", "cancelled"}


class EvalError(Exception):
    """The evaluation could not run (exit status 1)."""

    exit_code = 1


class BadInput(EvalError):
    """The task set, its tables or the options are wrong (exit status 2, as for usage)."""

    exit_code = 2


class Stopped(Exception):
    """The evaluation is stopping (interrupted, or another task failed for good)."""


@dataclass(frozen=True)
class Job:
    model: str
    task: Task
    repeat: int


@dataclass
class Evaluation:
    """Runs jobs against one project, records each finished run and tidies up after."""

    client: WorkbenchClient
    results: Path
    keep: bool
    # Says why a task waits (a busy or unavailable server), where the user sees it.
    notice: Callable[[str], None] = print
    stop: threading.Event = field(default_factory=threading.Event)
    file_ids: dict[str, str] = field(default_factory=dict)
    project_id: str | None = None
    _active: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- setting up and tidying up -------------------------------------------------------

    def prepare(self, name: str, files: dict[str, Path]) -> None:
        """A project holding each table once, under the name the tasks use."""
        project = self._retrying(lambda: self.client.create_project(name))
        self.project_id = str(project["id"])
        for file_name, path in files.items():
            stored = self._retrying(partial(self.client.upload, self.project_id, path, file_name))
            self.file_ids[file_name] = str(stored["id"])

    def cancel_active(self) -> None:
        with self._lock:
            active = list(self._active)
        for run_id in active:
            with contextlib.suppress(ApiError):
                self.client.cancel(run_id)

    def tidy(self) -> None:
        """Delete the project, and with it the sessions and runs (unless --keep)."""
        if self.project_id and not self.keep:
            with contextlib.suppress(ApiError):
                self.client.delete_project(self.project_id)

    # -- one job ---------------------------------------------------------------------------

    def run(self, job: Job) -> RunRecord | None:
        """Run one task in a fresh session and record it; None if stopped before the end."""
        if self.stop.is_set():
            return None
        record = self._ask(job)
        if record is not None:
            with self._lock:
                append_record(self.results, record)
        return record

    def _session(self, job: Job) -> str:
        """A fresh session. It stays until the project goes at the end: deleting it the
        moment its run ends would race the server still storing the run's last events."""
        assert self.project_id is not None
        title = f"eval {job.task.id} · {job.model} · run {job.repeat}"
        session = self._retrying(partial(self.client.create_session, self.project_id, title))
        return str(session["id"])

    def _ask(self, job: Job) -> RunRecord | None:
        session_id = self._session(job)
        files = [self.file_ids[name] for name in job.task.files]
        query = prompt(job.task)
        began = time.monotonic()
        run_id: str | None = None
        run: dict[str, Any] = {}
        seq, tries = 0, 0
        while True:
            try:
                if run_id is None:
                    events = self.client.ask(session_id, query, file_ids=files, model=job.model)
                else:
                    events = self.client.follow(run_id, after=seq)
                for event in events:
                    if run_id is None:
                        run_id = self._started(str(event.data["run_id"]), job)
                    seq = max(seq, event.seq)
                    self._attend(run_id, event.event)
                if run_id is None:
                    raise ApiError(0, "The server closed the stream before the run started.")
                run = self._retrying(partial(self.client.run, run_id))
                if run.get("status") not in FINISHED:
                    raise ApiError(503, "The stream ended before the run's end was recorded.")
                break
            except ApiError as exc:
                tries += 1
                if exc.status not in RETRY_STATUSES or tries >= RETRIES:
                    raise
                self._pause(tries, f"{job.task.id} on {job.model}: {exc}")
                if run_id is None and exc.status == 0:
                    # The lost request may have started a run there: ask in a new session.
                    session_id = self._session(job)
                # Else ask again (the run never started) or re-attach to the run's events.
        with self._lock:
            self._active.pop(str(run_id), None)
        if run["status"] == "cancelled" and self.stop.is_set():
            return None
        steps = run.get("steps") or []
        return RunRecord(
            model=job.model,
            task_id=job.task.id,
            repeat=job.repeat,
            status=run["status"],
            final_answer=run.get("final_answer"),
            error=run.get("error"),
            steps=len(steps),
            step_errors=sum(1 for step in steps if step.get("error")),
            tokens_in=int(run.get("tokens_in") or 0),
            tokens_out=int(run.get("tokens_out") or 0),
            cost_usd=run.get("cost_usd"),
            wall_seconds=_wall(run, time.monotonic() - began),
            run_id=run_id,
            session_id=session_id,
            finished_at=run.get("finished_at"),
        )

    def _started(self, run_id: str, job: Job) -> str:
        with self._lock:
            self._active[run_id] = job.task.id
        if self.stop.is_set():  # started while the evaluation was being stopped
            with contextlib.suppress(ApiError):
                self.client.cancel(run_id)
        return run_id

    def _attend(self, run_id: str, event: str) -> None:
        """Nobody watches an evaluation: answer the agent's questions, approve its code."""
        try:
            if event == "input.requested":
                self.client.answer(run_id, AUTO_ANSWER)
            elif event == "approval.requested":
                self.client.decide(run_id, "approve")
        except ApiError:
            pass  # already answered, or the run ended meanwhile

    def _retrying(self, action: Callable[[], T]) -> T:
        for tries in range(1, RETRIES + 1):
            try:
                return action()
            except ApiError as exc:
                if exc.status not in RETRY_STATUSES or tries == RETRIES:
                    raise
                self._pause(tries, str(exc))
        raise AssertionError("unreachable")

    def _pause(self, tries: int, why: str) -> None:
        """Wait before the next try, longer each time (the client does not expose the
        server's Retry-After; its 5 s fall within these waits)."""
        seconds = min(FIRST_WAIT * 2 ** (tries - 1), LONGEST_WAIT)
        self.notice(f"{why}; trying again in {seconds:.0f} s ({tries}/{RETRIES - 1})")
        if self.stop.wait(seconds):
            raise Stopped()


def _wall(run: dict[str, Any], measured: float) -> float:
    """Seconds from the run's start to its end by the server's clock, else as measured."""
    try:
        start = datetime.fromisoformat(run["started_at"])
        end = datetime.fromisoformat(run["finished_at"])
    except (KeyError, TypeError, ValueError):
        return round(measured, 3)
    return round(max(0.0, (end - start).total_seconds()), 3)


# -- the command -----------------------------------------------------------------------------


def _tables(tasks: list[Task], folder: Path) -> dict[str, Path]:
    files = {name: folder / name for task in tasks for name in task.files}
    missing = sorted(name for name, path in files.items() if not path.is_file())
    if missing:
        shown = ", ".join(missing[:10]) + (
            f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        )
        raise BadInput(
            f"Missing table files in {folder}: {shown}. "
            "Point --tables at the folder that holds them."
        )
    return files


def _models(client: WorkbenchClient, asked: list[str]) -> list[str]:
    try:
        offered = client.models()
    except ApiError as exc:
        raise EvalError(f"Cannot list the server's models: {exc}") from None
    ids = [str(m["id"]) for m in offered]
    if not asked:
        default = next((str(m["id"]) for m in offered if m.get("default")), ids[0] if ids else None)
        if default is None:
            raise EvalError(
                "The server offers no model: set LLM_MODEL (see the README, 'Connecting an LLM')."
            )
        return [default]
    unknown = [m for m in asked if m not in ids]
    if unknown:
        raise BadInput(
            f"Not offered by the server: {', '.join(unknown)}. "
            f"It offers: {', '.join(ids) or 'none'} (LLM_MODEL and LLM_MODELS in its settings)."
        )
    return list(dict.fromkeys(asked))


def eval_command(
    tasks: Annotated[
        Path,
        typer.Argument(help="Tasks, one JSON object a line (InfiAgent-DABench's format)."),
    ],
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", "-m", help="A model to evaluate; repeat for more (default: the server's)."
        ),
    ] = None,
    tables: Annotated[
        Path | None,
        typer.Option(help="The folder the tasks' file_name are in (default: the tasks' folder)."),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(help="Answers in a separate file: DABench's {id, common_answers} a line."),
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="Tasks run at once.")] = 1,
    repeat: Annotated[int, typer.Option(min=1, max=100, help="Runs of each task per model.")] = 1,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Only the first N tasks (a quick try).")
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option(
            help="Folder of results.jsonl and the reports; run again with the same one to "
            "resume (default: ./eval-<date>-<time>)."
        ),
    ] = None,
    match: Annotated[
        Match,
        typer.Option(
            help="rounded (default): a number counts when it rounds to the label at the "
            "label's decimals, text in any case; dabench: exact text or the same number, as "
            "DABench's own eval_closed_form.py scores (for results comparable with theirs)."
        ),
    ] = Match.rounded,
    keep: Annotated[
        bool, typer.Option(help="Keep the project and sessions to look at the runs.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON instead of tables.")
    ] = False,
) -> None:
    """Run TASKS through the workbench, each in a fresh session, and report per model:
    accuracy, first-try accuracy, mean steps, tokens, cost and wall time."""
    err = Console(stderr=True)
    try:
        _evaluate(
            err,
            tasks=tasks,
            asked=model or [],
            tables=tables,
            labels=labels,
            concurrency=concurrency,
            repeat=repeat,
            limit=limit,
            report=report,
            match=match,
            keep=keep,
            as_json=as_json,
        )
    except (EvalError, click.ClickException) as exc:
        err.print(f"[red]Error:[/] {escape(str(exc))}")
        raise typer.Exit(exc.exit_code) from None


def _evaluate(
    err: Console,
    *,
    tasks: Path,
    asked: list[str],
    tables: Path | None,
    labels: Path | None,
    concurrency: int,
    repeat: int,
    limit: int | None,
    report: Path | None,
    match: Match,
    keep: bool,
    as_json: bool,
) -> None:
    try:
        task_list = load_tasks(tasks, labels)
    except TaskFileError as exc:
        raise BadInput(str(exc)) from None
    if limit:
        task_list = task_list[:limit]
    files = _tables(task_list, tables or tasks.parent)
    folder = report or Path(f"eval-{datetime.now():%Y%m%d-%H%M%S}")
    folder.mkdir(parents=True, exist_ok=True)
    results = folder / RESULTS
    records, unreadable = read_records(results)
    if unreadable:
        err.print(f"[yellow]Skipped {unreadable} unreadable line(s) of {results}.[/]")

    client = config.connect()
    evaluation: Evaluation | None = None
    try:
        models = _models(client, asked)
        done = {r.key for r in records}
        jobs = [
            Job(m, task, r)
            for task in task_list
            for m in models
            for r in range(1, repeat + 1)
            if (m, task.id, r) not in done
        ]
        if len(jobs) < len(task_list) * len(models) * repeat:
            err.print(
                f"Resuming from {results}: "
                f"{len(task_list) * len(models) * repeat - len(jobs)} runs done, {len(jobs)} to go."
            )
        evaluation = Evaluation(client, results, keep, notice=lambda text: err.print(escape(text)))
        if jobs:
            needed = {name: files[name] for job in jobs for name in job.task.files}
            _run_jobs(evaluation, jobs, needed, tasks, concurrency, match, err)
        records, _ = read_records(results)
        meta = {
            "tasks_file": str(tasks),
            "labels_file": str(labels) if labels else None,
            "server": client.url,
            "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        built = build_report(
            task_list, records, models=models, repeat=repeat, match=match, meta=meta
        )
        as_json_path, as_md_path = write_report(folder, built)
        if as_json:
            typer.echo(json.dumps(built, indent=2, ensure_ascii=False))
        else:
            out = Console()
            out.print(tasks_table(built))
            out.print(summary_table(built))
    finally:
        if evaluation is not None:
            evaluation.tidy()
        client.close()
    err.print(f"Report: {as_md_path} and {as_json_path}; runs in {results}.")


def _run_jobs(
    evaluation: Evaluation,
    jobs: list[Job],
    files: dict[str, Path],
    tasks_file: Path,
    concurrency: int,
    match: Match,
    err: Console,
) -> None:
    """Run the jobs, K at a time, with a progress bar a model; stop at the first job that
    cannot run (or at Ctrl-C), cancelling the runs under way."""
    results = evaluation.results
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[right]} right"),
        TimeElapsedColumn(),
        console=err,
    )
    counts = Counter(job.model for job in jobs)
    bars = {m: progress.add_task(m, total=n, right=0) for m, n in counts.items()}
    right = dict.fromkeys(bars, 0)
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="eval")
    failure: tuple[Job, BaseException] | None = None
    try:
        evaluation.prepare(f"eval {tasks_file.name} {datetime.now():%Y-%m-%d %H:%M}", files)
        with progress:
            pending: dict[Future[RunRecord | None], Job] = {
                pool.submit(evaluation.run, job): job for job in jobs
            }
            while pending and failure is None:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    job = pending.pop(future)
                    error = future.exception()
                    if error is not None:
                        failure = failure or (job, error)
                        continue
                    record = future.result()
                    if record is not None:
                        if (
                            record.status == "succeeded"
                            and score(job.task, record.final_answer, match).correct
                        ):
                            right[job.model] += 1
                        progress.update(bars[job.model], advance=1, right=right[job.model])
    except KeyboardInterrupt:
        evaluation.stop.set()
        evaluation.cancel_active()
        err.print(
            f"[yellow]Interrupted. Finished runs are in {results}; "
            "run the same command to go on.[/]"
        )
        raise typer.Exit(130) from None
    except ApiError as exc:
        raise EvalError(f"Cannot set up the evaluation: {exc}") from None
    finally:
        evaluation.stop.set()
        if failure is not None:
            evaluation.cancel_active()
        pool.shutdown(wait=True, cancel_futures=True)
    if failure is not None:
        job, error = failure
        reason = "it was stopped" if isinstance(error, Stopped) else str(error)
        raise EvalError(
            f"Task {job.task.id} on {job.model} could not run: {reason}. "
            f"Finished runs are in {results}; fix the cause and run the same command to go on."
        )
