"""A run on the terminal: its events shown as they arrive, or printed as JSON lines.

`RunView` renders for people: the agent's thought, its code highlighted, what the code
printed, errors in red, artifacts with where to get them, the answer as Markdown, and a
spinner (on whichever of stdout or stderr is a terminal) while the model thinks.
`JsonView` prints each event as one line of JSON on stdout and nothing else there.
`show_run` renders a stored run the same way, from GET /runs/{id}.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.spinner import Spinner
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from app.cli.charts import write_chart_page
from app.cli.client import ApiError, Event, WorkbenchClient
from app.cli.output import cost, err, out, print_json_line, seconds, shorten, size, tokens

TABLE_PREVIEW_ROWS = 10
CODE_THEME = "monokai"


class View(Protocol):
    def show(self, event: Event) -> None: ...
    def notice(self, text: str) -> None: ...
    def paused(self) -> AbstractContextManager[None]: ...
    def close(self) -> None: ...


def thought_of(model_output: str) -> str:
    """The thought part of what the model wrote for a step (the text before its code)."""
    text = model_output.split("<code>", 1)[0].strip()
    return text.removeprefix("Thought:").strip()


def only_answers(code: str) -> bool:
    """Code that only hands over the final answer (the answer is shown on its own)."""
    text = code.strip()
    return text.startswith("final_answer(") and text.endswith(")") and "\n" not in text


def code_block(code: str, console: Console) -> RenderableType:
    """Python, highlighted: on a block of its own colour on a terminal, else as plain lines
    (no padding to the console's width in a file)."""
    syntax = Syntax(code.rstrip("\n"), "python", theme=CODE_THEME, word_wrap=True)
    if console.is_terminal:
        return syntax
    plain = syntax.highlight(code.rstrip("\n"))
    plain.rstrip()
    return plain


def printed_block(text: str, style: str = "") -> Text:
    """What code printed, behind a gutter so it reads apart from the code."""
    lines = text.rstrip("\n").splitlines() or [""]
    block = Text()
    for number, line in enumerate(lines):
        if number:
            block.append("\n")
        block.append("│ ", style="dim")
        block.append(line, style=style)
    return block


def query_line(query: dict[str, Any]) -> Text:
    """A query the step ran on a data source: its SQL on one line, what it came to."""
    line = Text("⛁ ", style="cyan")
    line.append(f"{query.get('source', '')}: ", style="bold")
    line.append(" ".join(str(query.get("sql", "")).split()))
    rows, ms = int(query.get("rows") or 0), int(query.get("duration_ms") or 0)
    if query.get("error"):
        line.append(f"  failed after {ms:,} ms: {query['error']}", style="red")
    else:
        line.append(f"  {rows:,} row{'s' if rows != 1 else ''} · {ms:,} ms", style="dim")
    return line


def step_rule(console: Console, step: int) -> None:
    console.rule(Text(f"Step {step}", style="bold"), align="left", style="dim")


def answer_block(console: Console, answer: str) -> None:
    """The answer: rendered Markdown on a terminal, its Markdown source in a file."""
    console.rule(Text("Answer", style="bold green"), align="left", style="green")
    if console.is_terminal:
        console.print(Markdown(answer))
    else:
        console.print(Text(answer), soft_wrap=True)


def artifact_line(artifact: dict[str, Any], saved: list[Path] | None) -> Text:
    line = Text("↳ ", style="dim")
    line.append(str(artifact["name"]), style="bold")
    line.append(f" ({artifact['kind']}, {size(artifact.get('size'))})", style="dim")
    if saved:
        line.append(f"  saved to {' and '.join(str(p) for p in saved)}")
    else:
        line.append(f"  workbench artifacts download {artifact['id']}", style="cyan")
    return line


def table_preview(content: Any) -> RenderableType | None:
    """The first rows of a table artifact's `{columns, rows, row_count}`."""
    if not isinstance(content, dict) or not isinstance(content.get("columns"), list):
        return None
    rows = content.get("rows") or []
    grid = Table(*(str(c) for c in content["columns"]), box=None, header_style="bold")
    for row in rows[:TABLE_PREVIEW_ROWS]:
        grid.add_row(*("" if v is None else str(v) for v in row))
    total = int(content.get("row_count") or len(rows))
    if total > TABLE_PREVIEW_ROWS:
        grid.caption = f"first {TABLE_PREVIEW_ROWS} of {total:,} rows"
        grid.caption_justify = "left"
    return grid


def summary(data: dict[str, Any], steps: int) -> Text:
    """`✓ succeeded · 4.2 s · 2 steps · 1,234 in, 56 out · $0.0012`"""
    status = str(data.get("status"))
    mark, style = {"succeeded": ("✓", "green"), "cancelled": ("■", "yellow")}.get(
        status, ("✗", "red")
    )
    parts = [f"{mark} {status}", seconds(data.get("duration_ms"))]
    if steps:
        parts.append(f"{steps} step{'s' if steps != 1 else ''}")
    parts += [tokens(data.get("tokens_in"), data.get("tokens_out")), cost(data.get("cost_usd"))]
    return Text(" · ".join(p for p in parts if p), style=style)


def verification_line(data: dict[str, Any]) -> Text:
    """What the check of an answer said (`verification`: verdict, reason, final)."""
    reason = str(data.get("reason") or "").strip()
    if data.get("verdict") == "approve":
        said = f": {reason}" if reason else " and approved (the check gave no reason)"
        return Text(f"✓ Answer checked{said}", style="dim")
    reason = reason or "no reason given"
    if data.get("final"):
        # No revision is left: the answer is handed over as it is.
        return Text(f"! The check still asks for more, but the answer stands: {reason}", "yellow")
    return Text(f"↻ The check asks for more: {reason}", style="yellow")


def repair_line(data: dict[str, Any]) -> Text:
    """What a repair fan-out did (`repair`: strategies, chosen 1-based or null)."""
    strategies = list(data.get("strategies") or [])
    counted = f"{len(strategies)} strateg{'y' if len(strategies) == 1 else 'ies'}"
    chosen = data.get("chosen")
    if chosen:
        label = strategies[int(chosen) - 1] if 0 < int(chosen) <= len(strategies) else ""
        return Text(f"⚕ Repair: {counted}, #{chosen} continued ({label})", style="cyan")
    return Text(f"⚕ Repair: {counted}, none worked", style="yellow")


def unique_path(folder: Path, name: str) -> Path:
    """`folder/name`, or `name-1`, `name-2`… when that exists (nothing is overwritten)."""
    target = folder / Path(name).name
    stem, suffix, number = target.stem, target.suffix, 1
    while target.exists():
        target = folder / f"{stem}-{number}{suffix}"
        number += 1
    return target


def save_artifact(client: WorkbenchClient, folder: Path, artifact: dict[str, Any]) -> list[Path]:
    """Download an artifact into `folder` under its own name (never over another file);
    a chart also as a standalone HTML page beside it (`charts.py`).

    Returns:
        The files written: the artifact, then its page if it has one.
    """
    folder.mkdir(parents=True, exist_ok=True)
    saved = client.download_artifact(artifact["id"], unique_path(folder, artifact["name"]))
    if artifact.get("kind") != "plotly":
        return [saved]
    page = write_chart_page(saved, unique_path(folder, saved.stem + ".html"), str(artifact["name"]))
    return [saved] if page is None else [saved, page]


class JsonView:
    """Each event as `{"event", "seq", "data"}` on one line of stdout.

    Args:
        client: For saving artifacts.
        save: A folder to download every artifact into (each path is told on stderr).
    """

    def __init__(self, client: WorkbenchClient, save: Path | None = None):
        self.client = client
        self.save = save

    def show(self, event: Event) -> None:
        print_json_line({"event": event.event, "seq": event.seq, "data": event.data})
        if event.event == "artifact" and self.save is not None:
            for saved in save_artifact(self.client, self.save, event.data["artifact"]):
                err.print(Text(f"saved {saved}", style="dim"))

    def notice(self, text: str) -> None:
        err.print(Text(text, style="dim"))

    @contextmanager
    def paused(self) -> Iterator[None]:
        yield

    def close(self) -> None:
        return None


class RunView:
    """Shows a run's events as they happen (see the module's docstring).

    Args:
        client: For table previews and for saving artifacts.
        save: A folder to download every artifact into, or None to print how to get it.
    """

    def __init__(self, client: WorkbenchClient, save: Path | None = None):
        self.client = client
        self.save = save
        self.thinking: dict[int, str] = {}
        self.shown_code: dict[int, str] = {}
        self.headed: set[int] = set()
        self.finished_steps: set[int] = set()
        self.verdict_seen = False  # a question asked with attempts: the run's answer is next
        self.spinner = Spinner("dots", text="Starting…", style="cyan")
        console = out if out.is_terminal else err if err.is_terminal else None
        self.live: Live | None = None
        if console is not None:
            self.live = Live(
                self.spinner,
                console=console,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
                refresh_per_second=12,
            )
            self.live.start()

    # -- the spinner -----------------------------------------------------------------------

    def status(self, text: str, detail: str = "") -> None:
        line = Text(text)
        if detail:
            line.append(" " + detail, style="dim")
        self.spinner.update(text=line)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No spinner while the user types (a prompt, an editor)."""
        live = self.live
        if live is not None and live.is_started:
            live.stop()
        try:
            yield
        finally:
            if live is not None and not live.is_started:
                live.start()

    def close(self) -> None:
        if self.live is not None and self.live.is_started:
            self.live.stop()

    def notice(self, text: str) -> None:
        err.print(Text(text, style="yellow"))

    # -- events ----------------------------------------------------------------------------

    def show(self, event: Event) -> None:
        data = event.data
        handler = getattr(self, "on_" + event.event.replace(".", "_"), None)
        if handler is not None:
            handler(data)

    def on_run_queued(self, data: dict[str, Any]) -> None:
        position = data.get("position")
        text = f"Queued (position {position}): waiting for a free sandbox…"
        if self.live is None:
            out.print(Text(text, style="dim"))
        self.status(text)

    def on_run_started(self, data: dict[str, Any]) -> None:
        out.print(
            Text(f"Run {data['run_id']} · {data.get('model', '')}", style="dim"), soft_wrap=True
        )
        self.status("Thinking…")

    def on_step_started(self, data: dict[str, Any]) -> None:
        self.status(f"Step {data['step']}: thinking…")

    def on_plan_delta(self, data: dict[str, Any]) -> None:
        self.status("Planning…")

    def on_model_delta(self, data: dict[str, Any]) -> None:
        step = int(data["step"])
        written = self.thinking.get(step, "") + str(data.get("text", ""))
        self.thinking[step] = written
        if "<code>" in written:
            self.status(f"Step {step}: writing code…")
        else:
            tail = thought_of(written).replace("\n", " ")[-70:]
            self.status(f"Step {step}: thinking…", tail)

    def _head(self, step: int) -> None:
        if step in self.headed:
            return
        self.headed.add(step)
        step_rule(out, step)
        thought = thought_of(self.thinking.get(step, ""))
        if thought:
            out.print(Text(thought, style="italic"))

    def on_step_code(self, data: dict[str, Any]) -> None:
        step, code = int(data["step"]), str(data["code"])
        self.status(f"Step {step}: running the code…")
        if self.shown_code.get(step) == code or only_answers(code):
            return
        self._head(step)
        self.shown_code[step] = code
        out.print(code_block(code, out))

    def on_step_output(self, data: dict[str, Any]) -> None:
        self._head(int(data["step"]))
        out.print(printed_block(str(data.get("output", ""))), soft_wrap=True)

    def on_step_queries(self, data: dict[str, Any]) -> None:
        self._head(int(data["step"]))
        for query in data.get("queries") or []:
            out.print(query_line(query), soft_wrap=True)

    def on_step_error(self, data: dict[str, Any]) -> None:
        self._head(int(data["step"]))
        out.print(printed_block(f"Error: {data.get('error', '')}", style="red"), soft_wrap=True)

    def on_step_finished(self, data: dict[str, Any]) -> None:
        self.finished_steps.add(int(data["step"]))
        self.status("Thinking…")

    def on_artifact(self, data: dict[str, Any]) -> None:
        artifact = data["artifact"]
        saved = save_artifact(self.client, self.save, artifact) if self.save else None
        out.print(artifact_line(artifact, saved), soft_wrap=True)
        if artifact.get("kind") == "table":
            try:
                preview = table_preview(self.client.artifact_content(artifact["id"]))
            except ApiError:
                preview = None
            if preview is not None:
                out.print(preview)

    def on_plan(self, data: dict[str, Any]) -> None:
        out.rule(Text("Plan", style="bold"), align="left", style="dim")
        out.print(Markdown(str(data.get("text", ""))))

    def on_verification(self, data: dict[str, Any]) -> None:
        out.print(verification_line(data))

    def on_repair(self, data: dict[str, Any]) -> None:
        out.print(repair_line(data))

    def on_input_requested(self, data: dict[str, Any]) -> None:
        self._head(int(data["step"]))
        line = Text("? ", style="bold yellow")
        line.append(f"The agent asks: {data.get('question', '')}", style="bold")
        out.print(line)
        self.status("Waiting for your answer…")

    def on_input_received(self, data: dict[str, Any]) -> None:
        out.print(Text(f"↳ answered: {data.get('answer', '')}", style="dim"))
        self.status("Thinking…")

    def on_approval_requested(self, data: dict[str, Any]) -> None:
        step, code = int(data["step"]), str(data["code"])
        self._head(step)
        if self.shown_code.get(step) != code:
            self.shown_code[step] = code
            out.print(code_block(code, out))
        out.print(Text(f"? Step {step} waits for your review before it runs.", style="yellow"))
        self.status("Waiting for your review…")

    def on_approval_received(self, data: dict[str, Any]) -> None:
        decision = data.get("decision")
        if decision == "reject":
            feedback = data.get("feedback")
            text = "↳ rejected" + (f": {feedback}" if feedback else "")
        else:
            text = "↳ approved" if decision == "approve" else "↳ edited: your code runs"
        out.print(Text(text, style="dim"))
        self.status("Thinking…")

    def on_attempt_started(self, data: dict[str, Any]) -> None:
        line = f"Attempt {data['attempt']}: {data.get('strategy')} · {data.get('model')}"
        out.print(Text(line, style="dim"))

    def on_attempt_finished(self, data: dict[str, Any]) -> None:
        answer = data.get("answer")
        said = f" — {shorten(str(answer), 120)}" if answer is not None else ""
        out.print(Text(f"Attempt {data['attempt']} {data.get('status')}{said}", style="dim"))

    def on_verdict(self, data: dict[str, Any]) -> None:
        self.verdict_seen = True
        marks = {"agree": "green", "majority": "yellow", "judged": "yellow"}
        line = Text(f"Verdict ({data.get('agreement')}, {data.get('outcome')}): ", style="bold")
        line.append(str(data.get("reason", "")), style=marks.get(str(data.get("outcome")), "red"))
        out.print(line)

    def on_final(self, data: dict[str, Any]) -> None:
        if "attempt" in data and not self.verdict_seen:
            return  # one attempt's answer (attempt.finished says it); the run's comes last
        answer_block(out, str(data.get("answer", "")))
        self.status("Finishing…")

    def on_run_finished(self, data: dict[str, Any]) -> None:
        self.close()
        out.print(summary(data, len(self.finished_steps)))


def show_run(run: dict[str, Any]) -> None:
    """A stored run (GET /runs/{id}): the question, each step, artifacts and the answer."""
    asker = (run.get("asked_by") or {}).get("email")
    by = f" · asked by {asker}" if asker else ""
    out.print(
        Text(f"Run {run['id']} · {run['status']} · {run['model']}{by}", style="dim"),
        soft_wrap=True,
    )
    out.print(Text("Q: ", style="bold") + Text(str(run["query"])))
    inputs = {i["step"]: i for i in run.get("inputs") or []}
    made: dict[int, list[dict[str, Any]]] = {}
    for artifact in run.get("artifacts") or []:
        made.setdefault(int(artifact["step"]), []).append(artifact)
    for step in run.get("steps") or []:
        index = int(step["index"])
        code = step.get("code") or ""
        if only_answers(code) and not step.get("error") and not step.get("output"):
            continue
        step_rule(out, index)
        if step.get("thought"):
            out.print(Text(str(step["thought"]), style="italic"))
        if code:
            out.print(code_block(code, out))
        if step.get("output"):
            out.print(printed_block(str(step["output"])), soft_wrap=True)
        if step.get("error"):
            out.print(printed_block(f"Error: {step['error']}", style="red"), soft_wrap=True)
        for artifact in made.get(index, []):
            out.print(artifact_line(artifact, None), soft_wrap=True)
        if index in inputs:
            asked = inputs[index]
            out.print(Text(f"? The agent asked: {asked['question']}", style="bold"))
            out.print(Text(f"↳ answered: {asked['answer']}", style="dim"))
    pending = run.get("pending")
    if pending:
        waits = pending.get("question") or f"approval of step {pending.get('step')}"
        out.print(Text(f"? Waits for: {waits}", style="yellow"))
    if run.get("final_answer"):
        answer_block(out, str(run["final_answer"]))
    if run.get("error"):
        out.print(Text(f"Error: {run['error']}", style="red"))
    duration = None
    if run.get("started_at") and run.get("finished_at"):
        started = datetime.fromisoformat(run["started_at"])
        ended = datetime.fromisoformat(run["finished_at"])
        duration = int((ended - started).total_seconds() * 1000)
    finished = {**run, "duration_ms": duration}
    out.print(summary(finished, len(run.get("steps") or [])))
