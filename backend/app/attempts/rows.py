"""An attempt's steps, artifacts, notes and events, kept apart on the question's one run.

Every attempt records through the run's translator as a single run does; these two
stand-ins mark what it records as the attempt's: its events carry `attempt` (one sequence
for the whole run: they share the run's recorder), its steps are numbered from
STEP_BASE * attempt (a run's step numbers are unique) until the chosen attempt's are
numbered 1, 2, 3… (app.attempts.choose), and the run's totals are every attempt's.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from app.attempts.numbering import stored_step
from app.infra.events import RunEvent
from app.models import Artifact, RunStep
from app.runs.events import EventData
from app.runs.recorder import EventRecorder
from app.runs.repository import RunRepository


class AttemptRecorder(EventRecorder):
    """The run's recorder, each event marked with the attempt that sent it."""

    def __init__(self, shared: EventRecorder, attempt: int, emitting: asyncio.Lock):
        """Args:
        emitting: Held while an event is numbered and sent: the attempts' events reach
            the live log in the order of their numbers (a Redis stream takes no older id).
        """
        self.shared = shared
        self.attempt = attempt
        self.run_id = shared.run_id
        self.emitting = emitting

    async def emit(self, payload: EventData) -> RunEvent:
        async with self.emitting:
            return await self.shared.emit(self._marked(payload))

    def prepare(self, payload: EventData) -> RunEvent:
        return self.shared.prepare(self._marked(payload))

    async def publish(self, event: RunEvent) -> None:
        await self.shared.publish(event)

    async def flush(self) -> None:
        await self.shared.flush()

    @property
    def pending(self) -> int:
        return self.shared.pending

    @property  # type: ignore[override]
    def live_log_error(self) -> Exception | None:  # type: ignore[override]
        return self.shared.live_log_error

    def _marked(self, payload: EventData) -> EventData:
        return payload.model_copy(update={"attempt": self.attempt})


class AttemptRows(RunRepository):
    """The run's repository, each step, artifact and note marked as the attempt's; the
    run's totals written with them are every attempt's (`totals()`)."""

    def __init__(self, shared: RunRepository, attempt: int, totals: Callable[[], dict[str, Any]]):
        super().__init__(shared.factory, shared.run_created)
        self.attempt = attempt
        self.totals = totals

    async def add_step(
        self, step: RunStep, totals: dict[str, Any], *, replacing: bool = False
    ) -> None:
        step.index = stored_step(self.attempt, step.index)
        step.attempt = self.attempt
        await super().add_step(step, self.totals(), replacing=replacing)

    async def add_artifact(self, row: Artifact) -> Artifact:
        row.step = stored_step(self.attempt, row.step)
        return await super().add_artifact(row)

    async def add_note(
        self,
        run_id: uuid.UUID,
        totals: dict[str, Any],
        plan: dict[str, Any] | None = None,
        verification: dict[str, Any] | None = None,
    ) -> None:
        marked = {"attempt": self.attempt}
        await super().add_note(
            run_id,
            self.totals(),
            plan={**plan, **marked} if plan is not None else None,
            verification={**verification, **marked} if verification is not None else None,
        )
