"""`workbench eval`: run a task set through the public API and report, per model, how
often the answers were right and what they cost.

Each task runs in a fresh session of one project that holds the task set's tables and the
databases its tasks query (`--source`), exactly as a user's question would. Every finished
run is appended to DIR/results.jsonl at once, so an interrupted evaluation resumes where it
stopped when run again with the same --report.

This module is the command: its options, the tables, sources and models it checks, and the
jobs run K at a time with a progress bar a model. Running one job is eval_runner.py's.
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

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

from app.cli import config, eval_attempts
from app.cli.client import ApiError, WorkbenchClient
from app.cli.eval_dabench import Match, Task, TaskFileError, load_tasks, score
from app.cli.eval_report import (
    RESULTS,
    RunRecord,
    build_report,
    read_records,
    summary_table,
    tasks_table,
    write_report,
)
from app.cli.eval_runner import Evaluation, Job, SourceLogin, SourceUnusable, Stopped
from app.cli.output import TextConsole, print_json

# A source's name, as the server accepts it (what the agent passes as sql(…, source=name)).
SOURCE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


class EvalError(Exception):
    """The evaluation could not run (exit status 1)."""

    exit_code = 1


class BadInput(EvalError):
    """The task set, its tables or the options are wrong (exit status 2, as for usage)."""

    exit_code = 2


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


def password_variable(name: str) -> str:
    """The environment variable that holds the password of the source `name`."""
    return "WORKBENCH_SOURCE_PASSWORD_" + re.sub(r"\W", "_", name).upper()


def _sources(tasks: list[Task], given: list[str]) -> list[SourceLogin]:
    """The sources of --source NAME=URL, each with its password (from its environment
    variable, else asked for at a terminal); every source a task needs must be among them.
    A password in the URL is refused: the command line is visible to the machine's other
    users and kept in the shell's history."""
    urls: dict[str, str] = {}
    for item in given:
        name, _, url = (part.strip() for part in item.partition("="))
        if not SOURCE_NAME.fullmatch(name) or not url:
            raise BadInput(
                f"--source {item!r}: expected NAME=URL, e.g. shop=mysql://reader@db:3306/shop"
            )
        if name in urls:
            raise BadInput(f"--source {name} is given twice.")
        try:
            has_password = urlsplit(url).password is not None
        except ValueError as exc:
            raise BadInput(f"--source {name}: not a URL ({exc}).") from None
        if has_password:
            raise BadInput(
                f"--source {name}: leave the password out of the URL (the command line is "
                "visible to other users of this machine and kept in the shell's history); "
                f"set {password_variable(name)} or type it when asked."
            )
        urls[name] = url
    missing = sorted({s for task in tasks for s in task.sources} - set(urls))
    if missing:
        first = missing[0]
        raise BadInput(
            f"The tasks query the data source(s) {', '.join(missing)}: pass --source NAME=URL "
            f"for each, e.g. --source {first}=mysql://reader@db.example:3306/{first} with the "
            f"password in {password_variable(first)}."
        )
    return [SourceLogin(name, url, _password(name, url)) for name, url in urls.items()]


def _password(name: str, url: str) -> str | None:
    variable = password_variable(name)
    if variable in os.environ:
        return os.environ[variable]
    user = urlsplit(url).username
    if user is None or not sys.stdin.isatty():
        return None
    typed = typer.prompt(
        f"Password of {user} for the source {name} (empty for none; or set {variable})",
        default="",
        show_default=False,
        hide_input=True,
    )
    return str(typed) or None


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
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source",
            "-s",
            help="NAME=URL: a database the tasks query (their 'source'), added to the "
            "evaluation's project and checked before any task runs; repeat for more. The "
            "password comes from WORKBENCH_SOURCE_PASSWORD_<NAME>, or is asked for; never "
            "in the URL.",
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="Tasks run at once.")] = 1,
    attempts: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=5,
            help="Ask each task with N attempts that vote (default: the project's, one); "
            "the report adds the first attempt's accuracy, the voted accuracy, how often "
            "the attempts agreed and the accuracy when they agreed and when they split.",
        ),
    ] = None,
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
    accuracy, first-try accuracy, mean steps, tokens, cost and wall time (with --attempts,
    also the attempts' agreement and the voted against the first attempt's accuracy)."""
    err = TextConsole(stderr=True, markup=True)  # its own messages use markup
    try:
        _evaluate(
            err,
            tasks=tasks,
            asked=model or [],
            tables=tables,
            labels=labels,
            sources=source or [],
            concurrency=concurrency,
            attempts=attempts,
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
    sources: list[str],
    concurrency: int,
    attempts: int | None,
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
    logins = _sources(task_list, sources)
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
        evaluation = Evaluation(
            client,
            results,
            keep,
            notice=lambda text: err.print(escape(text)),
            attempts=attempts,
        )
        if jobs:
            needed = {name: files[name] for job in jobs for name in job.task.files}
            _run_jobs(evaluation, jobs, needed, logins, tasks, concurrency, match, err)
        records, _ = read_records(results)
        meta = {
            "tasks_file": str(tasks),
            "labels_file": str(labels) if labels else None,
            "sources": {login.name: login.url for login in logins},
            "server": client.url,
            "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        built = build_report(
            task_list, records, models=models, repeat=repeat, match=match, meta=meta
        )
        as_json_path, as_md_path = write_report(folder, built)
        if as_json:
            print_json(built)
        else:
            out = TextConsole()
            out.print(tasks_table(built))
            out.print(summary_table(built))
            attempts_table = eval_attempts.table(built)
            if attempts_table is not None:
                out.print(attempts_table)
    finally:
        if evaluation is not None:
            evaluation.tidy()
        client.close()
    err.print(f"Report: {as_md_path} and {as_json_path}; runs in {results}.")


def _run_jobs(
    evaluation: Evaluation,
    jobs: list[Job],
    files: dict[str, Path],
    sources: list[SourceLogin],
    tasks_file: Path,
    concurrency: int,
    match: Match,
    err: Console,
) -> None:
    """Set up the project, then run the jobs, K at a time, with a progress bar a model; stop
    at the first job that cannot run (or at Ctrl-C), cancelling the runs under way."""
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
        evaluation.prepare(
            f"eval {tasks_file.name} {datetime.now():%Y-%m-%d %H:%M}", files, sources
        )
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
    except SourceUnusable as exc:
        raise EvalError(f"{exc}. No task was run.") from None
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
