"""A run's events, each defined once: its name and the data it carries.

Every event a run sends is one of the payloads below, given to `EventRecorder.emit`. On the
wire (API.md, "The event stream") an event is one server-sent message: the `event:` line is
the payload's `event`, the `data:` line its other fields as JSON, with the run's `run_id`
and the event's `seq` added. A field with a default is left out of the data when it was
not given (`approval.received`'s `code` and `feedback`, `run.finished`'s
`tokens_estimated`).

The same classes are published in the OpenAPI document (`RunEvent`, a union told apart by
`event`), from which the browser app's event types are generated.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from app.infra.events import RunEvent
from app.knowledge.schemas import KnowledgeOut
from app.models import RunStatus
from app.runs.schemas import ArtifactOut, QueryOut

Verdict = Literal["approve", "revise"]
Decision = Literal["approve", "edit", "reject"]


def _add_envelope(schema: dict[str, Any]) -> None:
    """Every event's data also carries `run_id` and `seq`; `event` is the message's name."""
    properties = schema.setdefault("properties", {})
    properties["run_id"] = {"type": "string", "format": "uuid", "title": "Run Id"}
    properties["seq"] = {
        "type": "integer",
        "title": "Seq",
        "description": "1, 2, 3… per run; the message's `id:`",
    }
    schema["required"] = ["event", "run_id", "seq", *schema.get("required", [])]


class EventData(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_extra=lambda schema, _: _add_envelope(schema)
    )
    event: str
    attempt: int | None = Field(
        None,
        description="Which attempt sent it (a question asked with several attempts; left "
        "out otherwise)",
    )

    def data(self) -> dict[str, Any]:
        """The fields sent in the message's `data:` (beyond run_id and seq)."""
        return self.model_dump(mode="json", exclude={"event"}, exclude_unset=True)


class RunStarted(EventData):
    event: Literal["run.started"] = "run.started"
    session_id: uuid.UUID
    model: str
    query: str


class RunQueued(EventData):
    """No sandbox worker is free yet; the run's work begins when one is."""

    event: Literal["run.queued"] = "run.queued"
    position: int


class SandboxStarting(EventData):
    """The session's sandbox is being started (seconds)."""

    event: Literal["sandbox.starting"] = "sandbox.starting"
    restoring: bool = Field(description="Its saved variables are loaded back")


class StateRestored(EventData):
    """A branch's first run has its variables (before its first step): from the snapshot
    of where it branched, or by replaying its past; `notes` say what was not brought back."""

    event: Literal["state.restored"] = "state.restored"
    source: Literal["snapshot", "replay"] = Field(description="How they came back")
    notes: list[str] = Field(description="Sentences: what was replayed, failed or is missing")


class StateNotSaved(EventData):
    """The variables at this run's end were not kept: the project's saved states are over
    SNAPSHOT_PROJECT_MAX_MB with only each session's latest left (before `run.finished`)."""

    event: Literal["state.not_saved"] = "state.not_saved"
    reason: str = Field(description="A sentence naming the bound and the largest sessions")


class StepStarted(EventData):
    event: Literal["step.started"] = "step.started"
    step: int


class ModelDelta(EventData):
    """A piece of the model's output, as the provider streams it."""

    event: Literal["model.delta"] = "model.delta"
    step: int
    text: str


class PlanDelta(EventData):
    """A piece of the agent's plan, as the provider streams it."""

    event: Literal["plan.delta"] = "plan.delta"
    step: int
    text: str


class StepCode(EventData):
    event: Literal["step.code"] = "step.code"
    step: int
    code: str


class StepOutput(EventData):
    event: Literal["step.output"] = "step.output"
    step: int
    output: str = Field(description="What the code printed (its end, capped)")


class StepQueries(EventData):
    """The queries the step's code ran on the project's data sources (`sql()`), once it
    has run (a step that went on after the user's answer sends those of each part)."""

    event: Literal["step.queries"] = "step.queries"
    step: int
    queries: list[QueryOut]


class StepError(EventData):
    """The step failed; the agent sees the error and tries again."""

    event: Literal["step.error"] = "step.error"
    step: int
    error: str


class ArtifactEvent(EventData):
    event: Literal["artifact"] = "artifact"
    step: int
    artifact: ArtifactOut


class StepFinished(EventData):
    event: Literal["step.finished"] = "step.finished"
    step: int
    duration_ms: int
    tokens_in: int
    tokens_out: int


class Plan(EventData):
    """The agent's plan, written before step 1 and revised every planning interval."""

    event: Literal["plan"] = "plan"
    step: int
    text: str
    tokens_in: int
    tokens_out: int


class Verification(EventData):
    """What the check of a final answer said."""

    event: Literal["verification"] = "verification"
    step: int
    verdict: Verdict
    reason: str
    tokens_in: int
    tokens_out: int
    final: bool = Field(description="No revision is left: the answer stands whatever the verdict")


class InputRequested(EventData):
    """The code of `step` asked the user (ask_user); the run waits for POST /runs/{id}/input."""

    event: Literal["input.requested"] = "input.requested"
    step: int
    question: str


class InputReceived(EventData):
    event: Literal["input.received"] = "input.received"
    step: int
    question: str
    answer: str


class ApprovalRequested(EventData):
    """Review mode: the code of `step` waits for POST /runs/{id}/approval before it runs."""

    event: Literal["approval.requested"] = "approval.requested"
    step: int
    code: str


class ApprovalReceived(EventData):
    event: Literal["approval.received"] = "approval.received"
    step: int
    decision: Decision
    code: str | None = Field(None, description="With an edit: the code that runs")
    feedback: str | None = Field(None, description="With a reject, when the user gave some")


class Repair(EventData):
    """A step failed twice in a row: repair strategies ran at once, each in a worker of its
    own started from the run's variables; `chosen` (1-based, as `attempt`) is the one whose
    step `step` is (it ran again in the run's worker), null when none worked."""

    event: Literal["repair"] = "repair"
    step: int
    strategies: list[str] = Field(description="The strategies' labels, in their numbering")
    chosen: int | None = Field(description="The strategy that continued the run (1-based)")
    reasons: list[str] = Field(
        [], description="Per strategy: why it did not continue the run (empty for the chosen)"
    )


class Final(EventData):
    event: Literal["final"] = "final"
    answer: str


class RunFinished(EventData):
    """Always the run's last event."""

    event: Literal["run.finished"] = "run.finished"
    status: RunStatus
    error: str | None
    tokens_in: int
    tokens_out: int
    tokens_estimated: bool = Field(
        False, description="Some counts were estimated here: the model's server sent none"
    )
    cost_usd: float | None
    duration_ms: int | None


class KnowledgeProposed(EventData):
    """What the review pass of the session's previous run proposed (knowledge items waiting
    for a person's approval). The review pass runs after that run's `run.finished`, so this
    is delivered at the start of the next run's stream in the session, after `run.started`
    (docs/knowledge-review.md); the items are in GET /projects/{id}/knowledge?status=proposed
    at once."""

    event: Literal["knowledge.proposed"] = "knowledge.proposed"
    items: list[KnowledgeOut]


class AttemptStarted(EventData):
    """One of a question's attempts began (its own agent, in its own sandbox worker)."""

    event: Literal["attempt.started"] = "attempt.started"
    strategy: str = Field(description="A short label of how it was told to answer")
    model: str


class AttemptFinished(EventData):
    event: Literal["attempt.finished"] = "attempt.finished"
    status: str = Field(description="succeeded | failed | cancelled")
    answer: str | None


class VerdictGroupData(BaseModel):
    answer: str
    attempts: list[int]


class VerdictEvent(EventData):
    """What the attempts' vote found; sent before `final` (the chosen attempt's answer)."""

    event: Literal["verdict"] = "verdict"
    agreement: str = Field(description='"3/3": the largest group of agreeing attempts')
    outcome: Literal["agree", "majority", "judged", "undecided"]
    chosen: int | None
    groups: list[VerdictGroupData]
    reason: str


def run_finished(
    status: RunStatus,
    error: str | None,
    tokens_in: int,
    tokens_out: int,
    cost_usd: float | None,
    duration_ms: int | None,
    tokens_estimated: bool | None = None,
) -> RunFinished:
    """`tokens_estimated` is told by the replica that ran the run; a run ended by another
    (it died, or it waited) has none, and its `run.finished` leaves the field out."""
    told = {} if tokens_estimated is None else {"tokens_estimated": tokens_estimated}
    return RunFinished(
        status=status,
        error=error,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost_usd=cost_usd,
        duration_ms=duration_ms,
        **told,
    )


def record(run_id: uuid.UUID, seq: int, payload: EventData) -> RunEvent:
    """The event as it is logged, stored and sent: its name, and its data with run_id and seq."""
    return RunEvent(seq, payload.event, {"run_id": str(run_id), "seq": seq, **payload.data()})


RunEventPayload = Annotated[
    RunStarted
    | RunQueued
    | SandboxStarting
    | StateRestored
    | StateNotSaved
    | StepStarted
    | ModelDelta
    | PlanDelta
    | StepCode
    | StepOutput
    | StepQueries
    | StepError
    | ArtifactEvent
    | StepFinished
    | Plan
    | Verification
    | InputRequested
    | InputReceived
    | ApprovalRequested
    | ApprovalReceived
    | Repair
    | KnowledgeProposed
    | AttemptStarted
    | AttemptFinished
    | VerdictEvent
    | Final
    | RunFinished,
    Field(discriminator="event"),
]

# Every payload, in the order above (read off the union, so a new event is listed once).
PAYLOADS: tuple[type[EventData], ...] = get_args(get_args(RunEventPayload)[0])
