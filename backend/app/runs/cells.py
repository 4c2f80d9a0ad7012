"""Cells: the user's own Python, or SQL on a project source, run as a run of kind `cell`.

A cell goes the way a question goes (the session's lock, the same line for sandbox slots,
the session's own worker with its variables and limits, the same events and rows) but no
model is called: its one step is the code as written. Review mode and budgets do not
apply; what it prints, shows and keeps joins the session's history like a step, and the
agent reads it there on the next question (app.runs.cell_code.history_turn).
"""

from __future__ import annotations

import asyncio
import uuid

from smolagents.memory import ActionStep, ToolCall
from smolagents.monitoring import Timing
from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.agent.memory import StoredError
from app.errors import BadRequest
from app.models import DataSource, Run, RunKind, Session
from app.runs import budget
from app.runs.cell_code import (
    HISTORY_OUTPUT_CHARS,
    BadCell,
    echo_last_expression,
    into_name,
    python_for_sql,
)
from app.runs.context import AgentContext
from app.runs.execution import RunExecution
from app.runs.failures import STOPPED, CellFailed
from app.runs.schemas import CellRequest
from app.runs.state import RunCancelled
from app.runs.translator import StepTranslator
from app.sandbox import StepResult

CELL_STEP = 1
POLL_SECONDS = 0.25  # how often a running cell looks whether it was stopped
ASKED_IN_CELL = "ask_user() asks the user for the agent: a cell cannot wait for an answer."


async def new_cell(
    db: AsyncSession, session: Session, body: CellRequest, user_id: uuid.UUID
) -> Run:
    """The row of a new cell's run (not yet added: admission records it), its SQL source
    resolved (`source`: a name or an id in the session's project) and, for SQL, the
    variable its result is kept in (`-- into: name`, else df_sql_<n>).

    Raises:
        BadRequest: No such source in the project (unknown_source), none given for SQL
            (source_required), or a bad `-- into:` (bad_cell).
    """
    cell: dict[str, object] = {"language": body.language}
    if body.language == "sql":
        if not body.source:
            raise BadRequest("An SQL cell needs a source: its name or id.", code="source_required")
        cell["source"] = await _source_name(db, session.project_id, body.source)
        try:
            named = into_name(body.code)
        except BadCell as exc:
            raise BadRequest(str(exc), code="bad_cell") from None
        cell["variable"] = named or f"df_sql_{await _sql_cells(db, session.id) + 1}"
    return Run(
        session_id=session.id,
        kind=RunKind.cell,
        user_id=user_id,
        query=body.code,
        model="",
        cell=cell,
        file_ids=[],
    )


async def _source_name(db: AsyncSession, project_id: uuid.UUID, given: str) -> str:
    try:
        by_id = DataSource.id == uuid.UUID(given)
    except ValueError:
        by_id = None
    named = DataSource.name == given
    found = await db.scalar(
        select(DataSource.name).where(
            DataSource.project_id == project_id, or_(named, by_id) if by_id is not None else named
        )
    )
    if found is None:
        raise BadRequest(f"This project has no source {given!r}.", code="unknown_source")
    return found


async def _sql_cells(db: AsyncSession, session_id: uuid.UUID) -> int:
    cells = await db.scalars(
        select(Run.cell).where(Run.session_id == session_id, Run.kind == RunKind.cell)
    )
    return sum(1 for cell in cells if cell and cell.get("language") == "sql")


class CellExecution(RunExecution):
    """A cell's run: RunExecution's line, lock and end, with the cell's code as its one
    step instead of the agent."""

    async def _announce_proposals(self) -> None:
        """Nothing: proposals of the knowledge review wait for the next question."""

    async def _drive(self, context: AgentContext) -> None:
        run = self.run
        cell = run.cell or {}
        code = (
            python_for_sql(run.query, str(cell["source"]), str(cell["variable"]))
            if cell.get("language") == "sql"
            else run.query
        )
        spending = budget.Spending(run.model, context.left, self.rt.settings.LLM_PRICES)
        translator = StepTranslator(
            self.rt.repository,
            self.rt.storage,
            spending,
            run,
            self.recorder,
            self.outcome,
            context.workspace,
        )
        await translator.handle(ToolCall(name="python_interpreter", arguments=code, id="cell"))
        # A Python cell shows its last expression's value, as a notebook does; the step
        # records the code as written.
        runs = code if cell.get("language") == "sql" else echo_last_expression(code)
        try:
            result = await self._run_code(context, runs, translator)
        except RunCancelled:
            await translator.handle(_step(code, STOPPED, 0))
            raise
        await translator.step_result(result)
        error = result.error or (ASKED_IN_CELL if result.question else None)
        await translator.handle(_step(code, error, result.duration_ms))
        output = result.logs[-HISTORY_OUTPUT_CHARS:]
        await self.rt.repository.set_cell(run.id, {**cell, "output": output})
        if error is not None:
            raise CellFailed(f"The cell's code failed: {error.strip().splitlines()[-1]}")

    async def _run_code(
        self, context: AgentContext, code: str, translator: StepTranslator
    ) -> StepResult:
        """Run the code in the session's worker, its printing sent as it comes; a stop
        kills the worker (as a step's is), and ends the run."""
        loop = asyncio.get_running_loop()
        printed: asyncio.Queue[str] = asyncio.Queue()

        def on_output(text: str) -> None:  # called in the worker's thread
            loop.call_soon_threadsafe(printed.put_nowait, text)

        running = asyncio.ensure_future(
            asyncio.to_thread(context.worker.run, code, (), on_output, context.answerer)
        )
        killed = False
        while not running.done():
            getter = asyncio.ensure_future(printed.get())
            done, _ = await asyncio.wait(
                {running, getter}, timeout=POLL_SECONDS, return_when=asyncio.FIRST_COMPLETED
            )
            if getter in done:
                await translator.printed(getter.result())
            else:
                getter.cancel()
            if not killed and self.live.stop.is_set():
                killed = True
                await asyncio.to_thread(context.worker.kill)
        while not printed.empty():
            await translator.printed(printed.get_nowait())
        if killed:
            await running  # (its result: the killed step's)
            raise RunCancelled
        return running.result()


def _step(code: str, error: str | None, duration_ms: int) -> ActionStep:
    """The cell's step as the translator records the agent's (no model: no tokens)."""
    return ActionStep(
        step_number=CELL_STEP,
        timing=Timing(start_time=0.0, end_time=duration_ms / 1000),
        code_action=code,
        error=StoredError(error) if error else None,
    )
