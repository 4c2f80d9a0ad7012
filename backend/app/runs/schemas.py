from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field, computed_field, model_validator

from app.schemas import PersonOut, Schema

ArtifactKind = Literal["plotly", "image", "table", "file"]
RunStatusName = Literal[
    "queued", "running", "waiting_input", "waiting_approval", "succeeded", "failed", "cancelled"
]


class ArtifactOut(Schema):
    id: uuid.UUID
    run_id: uuid.UUID
    session_id: uuid.UUID
    step: int
    kind: ArtifactKind
    name: str
    mime: str
    size: int
    created_at: datetime

    @computed_field  # type: ignore[prop-decorator]
    @property
    def url(self) -> str:
        return f"/api/v1/artifacts/{self.id}/content"


class QueryOut(BaseModel):
    """A query a step's code ran on one of the project's data sources (`sql()`)."""

    source: str = Field(description="The data source's name")
    sql: str = Field(description="The statement, as the code wrote it")
    rows: int = Field(description="Rows it returned (so far, when it failed part way)")
    duration_ms: int
    error: str | None = Field(
        None, description="Why it was refused or failed (the database's own message)"
    )


class StepOut(Schema):
    index: int
    thought: str | None
    code: str | None
    output: str | None
    error: str | None
    duration_ms: int | None
    tokens_in: int
    tokens_out: int
    queries: list[QueryOut] = Field(
        default_factory=list, description="The queries its code ran on data sources"
    )
    attempt: int | None = Field(
        None, description="The attempt that took it (a question asked with several)"
    )


class PlanOut(BaseModel):
    step: int = Field(description="The plan was written before this step")
    text: str
    tokens_in: int
    tokens_out: int


class VerificationOut(BaseModel):
    step: int = Field(description="The step whose final answer was checked")
    verdict: Literal["approve", "revise"]
    reason: str
    tokens_in: int
    tokens_out: int


class PendingOut(BaseModel):
    """What a waiting run waits for: an answer to `question`, or approval of `code`."""

    kind: Literal["input", "approval"]
    step: int
    question: str | None = None
    code: str | None = None


class InputOut(BaseModel):
    step: int = Field(description="The step whose code asked")
    question: str
    answer: str


class ApprovalDecision(BaseModel):
    decision: Literal["approve", "edit", "reject"]
    code: str | None = Field(
        None, max_length=100_000, description="edit: the code to run instead (required)"
    )
    feedback: str | None = Field(
        None, max_length=5_000, description="reject: what the agent should do differently"
    )

    @model_validator(mode="after")
    def _edit_has_code(self) -> ApprovalDecision:
        if self.decision == "edit" and not (self.code or "").strip():
            raise ValueError("An edit needs the code to run instead (code).")
        return self


class ApprovalOut(BaseModel):
    step: int
    decision: Literal["approve", "edit", "reject"]
    code: str | None = None
    feedback: str | None = None


class RunFileOut(BaseModel):
    file_id: uuid.UUID
    name: str
    version: int = Field(description="The file's version the run's workspace had")
    sha256: str
    read: bool = Field(
        False,
        description="The run's code read this file: the sandbox saw it opened in a step (by "
        "any library, under any name the code computed). Runs recorded before the sandbox "
        "watched, and steps it could not watch, count the files pinned to the question and "
        "those named in the steps' code",
    )


class RunKnowledgeOut(BaseModel):
    item_id: uuid.UUID
    title: str = Field(description="The item's title when the run was given it")
    label: str | None = Field(
        None, description="How the agent's prompt labelled it (K1, K2, …), which it cites"
    )
    used: bool = Field(
        False,
        description="The run relied on it: its final answer or code cited the label, or its "
        "code named the item's column or defined identifier (set when the run ends)",
    )


class CellOut(BaseModel):
    language: Literal["python", "sql"]
    source: str | None = Field(None, description="An SQL cell's source (its name)")
    variable: str | None = Field(
        None, description="Where an SQL cell's result is kept in the sandbox"
    )


class AttemptTable(BaseModel):
    rows: int
    width: int = Field(description="Its number of columns")
    columns: list[str] = Field(description="Its column names (the first 40)")


class AttemptOut(BaseModel):
    attempt: int = Field(description="1…N")
    strategy: str = Field(description="A short label of how it was told to answer")
    model: str
    status: str = Field(description="succeeded | failed | cancelled")
    answer: str | None
    error: str | None = Field(None, description="Why it did not answer, if it did not")
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    tables: dict[str, AttemptTable] = Field(
        {},
        description="The DataFrames its code assigned, by variable name, as its worker "
        "fingerprinted them for the vote (a table of the same name that differs keeps "
        "agreeing answers apart)",
    )


class RepairOut(BaseModel):
    """A parallel repair of a failing step, as its `repair` event told it."""

    step: int
    strategies: list[str]
    chosen: int | None = Field(description="The strategy that continued the run (1-based)")
    reasons: list[str] = Field([], description="Per strategy: why it did not continue the run")
    attempt: int | None = Field(None, description="The attempt it repaired, in one")


class VerdictGroup(BaseModel):
    answer: str
    attempts: list[int]


class VerdictOut(BaseModel):
    agreement: str = Field(description='"3/3": the largest group of agreeing attempts')
    outcome: Literal["agree", "majority", "judged", "undecided"]
    chosen: int | None = Field(description="The attempt whose answer and state were kept")
    groups: list[VerdictGroup]
    reason: str
    judgements: list[dict[str, Any]] | None = Field(
        None,
        description="When no group held a majority: each comparison the judge made "
        "({pair: [a, b], pick: attempt | null, reason})",
    )


class RunOut(Schema):
    id: uuid.UUID
    session_id: uuid.UUID
    status: RunStatusName
    kind: Literal["question", "cell"] = Field(
        "question", description="question: the agent answered; cell: the user's own code"
    )
    cell: CellOut | None = Field(None, description="A cell's language and source")
    query: str
    asked_by: PersonOut | None = Field(
        None,
        validation_alias=AliasChoices("asked_by", "asker"),
        description="Who asked (null: asked before projects had members, or the user is gone)",
    )
    model: str
    final_answer: str | None
    error: str | None
    steps: list[StepOut]
    plans: list[PlanOut]
    verifications: list[VerificationOut]
    inputs: list[InputOut]
    approvals: list[ApprovalOut]
    pending: PendingOut | None
    file_ids: list[uuid.UUID] = Field(
        default_factory=list, description="The files the question was pinned to (its file_ids)"
    )
    files: list[RunFileOut] = Field(
        default_factory=list,
        validation_alias=AliasChoices("files_read", "files"),
        description="The project's files as this run read them",
    )
    artifacts: list[ArtifactOut]
    knowledge: list[RunKnowledgeOut] = Field(
        default_factory=list,
        description="The project's knowledge items the agent was given, in prompt order",
    )
    attempts: list[AttemptOut] | None = Field(
        None, description="A question asked with several attempts: each of them"
    )
    verdict: VerdictOut | None = Field(
        None, description="A question asked with several attempts: what their vote found"
    )
    repairs: list[RepairOut] = Field(
        default_factory=list,
        description="Its parallel repairs of failing steps (its `repair` events), in order",
    )
    tokens_in: int
    tokens_out: int
    tokens_estimated: bool = Field(
        False,
        description="Some of the token counts were estimated with the model's tokenizer: "
        "the model's server did not report them",
    )
    cost_usd: float | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    inherited: bool = Field(
        False,
        description="Listed by a branch: a run of its past, which belongs to the session it "
        "branched from (session_id), read-only here",
    )


class QueryRequest(BaseModel):
    query: str = Field(
        min_length=1, max_length=20_000, description="The question, in plain language"
    )
    file_ids: list[uuid.UUID] = Field(
        default_factory=list, description="Files to point the agent at"
    )
    model: str | None = Field(None, description="One of GET /models; the default when omitted")
    attempts: int | None = Field(
        None,
        ge=1,
        le=5,
        description="Independent attempts that answer at once and vote on their results "
        "(1-5); the project's default_attempts when omitted",
    )


class CellRequest(BaseModel):
    language: Literal["python", "sql"]
    code: str = Field(min_length=1, max_length=100_000, description="The cell's code")
    source: str | None = Field(
        None, max_length=200, description="SQL: the project source's name or id"
    )


class InputAnswer(BaseModel):
    answer: str = Field(min_length=1, max_length=20_000)


class ModelOut(BaseModel):
    id: str
    label: str
    default: bool


class ModelList(BaseModel):
    items: list[ModelOut]


class SandboxStatusOut(BaseModel):
    """Whether questions can be answered now, and how analysis code is isolated."""

    isolation: Literal["required", "none"] = Field(description="SANDBOX_ISOLATION")
    mechanism: Literal["bubblewrap", "rlimits"] | None = Field(
        description="What contains the code; null when no sandbox can be created"
    )
    location: Literal["backend", "service"] = Field(
        description="Workers run as the backend's children or in the sandbox service"
    )
    available: bool = Field(description="Questions can be answered (else they answer 503)")
    isolated: bool = Field(description="Code runs isolated, not only under resource limits")
    detail: str
    fix: str | None = None
    seccomp: list[str] = Field(description="System calls the sandbox's filter refuses")
