"""The jobs' request and response bodies (API.md, "Jobs, schedules and alerts")."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.jobs.alerts import Alert
from app.jobs.schedule import ScheduleIn


class JobCreate(BaseModel):
    session_id: uuid.UUID
    run_ids: list[uuid.UUID] | None = Field(
        None, description="The runs of the session to take (default: all that answered)."
    )
    name: str = Field(min_length=1, max_length=200)


class JobParam(BaseModel):
    name: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    kind: Literal["file", "query", "value"]
    default: str | int | float | bool | None = None
    source: str | None = Field(None, description="A query's source (kind `query`).")


class JobResult(BaseModel):
    name: str
    kind: str


class JobUpdate(BaseModel):
    name: str | None = Field(None, min_length=1, max_length=200)
    params: list[JobParam] | None = Field(
        None,
        description="The parameters: new defaults, renames, and new `value` parameters "
        "(each literal of the code equal to the default becomes the parameter).",
    )
    autonomy: Literal["auto", "review"] | None = None
    alerts: list[Alert] | None = Field(
        None,
        description="The alerts (all of them): a webhook's `secret` is written, never read "
        "back (`***`; give `***` or nothing to keep it).",
    )
    schedule: ScheduleIn | None = Field(
        None, description="When it runs by itself; null: on demand only (send null to remove)."
    )
    paused: bool | None = Field(None, description="Stop (true) or resume its schedule.")

    @field_validator("params")
    @classmethod
    def _unique(cls, params: list[JobParam] | None) -> list[JobParam] | None:
        if params is not None and len({p.name for p in params}) != len(params):
            raise ValueError("parameter names must be unique")
        return params


class JobChecks(BaseModel):
    status: str = Field(description="writing | ready | partial | failed")
    note: str | None = None


class JobRepairOut(BaseModel):
    """A repair the model proposed after a run of the job failed (API.md additions: job-repair)."""

    id: uuid.UUID
    status: str = Field(description="repairing | proposed | approved | rejected | applied | failed")
    reason: str = Field(description="The failure it answers (the check's sentence, the error).")
    diff: str = Field(description="Unified diff of the script (job.py) and tests (test_job.py).")
    checks: list[JobCheckOut] = Field(description="The proposed code's checks in the sandbox.")
    note: str | None = Field(None, description="The model's short explanation, or why it failed.")
    proposed_at: datetime | None = None
    decided_by_name: str | None = Field(None, description="Who approved or rejected it.")
    decided_at: datetime | None = None


class JobRepairItem(JobRepairOut):
    job_run_id: uuid.UUID = Field(description="The run that failed.")
    created_at: datetime
    applied_at: datetime | None = None


class JobRepairDecision(BaseModel):
    decision: Literal["approve", "reject"]


class JobRunBrief(BaseModel):
    id: uuid.UUID
    status: str
    finished_at: datetime | None


class JobOut(BaseModel):
    id: uuid.UUID
    project_id: uuid.UUID
    name: str
    params: list[JobParam]
    results: list[JobResult]
    schedule: ScheduleIn | None = None
    paused: bool = False
    autonomy: str
    alerts: list[Alert]
    next_run_at: datetime | None = None
    last_run: JobRunBrief | None = None
    pending_repair: JobRepairOut | None = Field(
        None, description="A repair waiting for an editor's approval (status `proposed`)."
    )
    checks: JobChecks
    source_session_id: uuid.UUID | None
    created_by: uuid.UUID | None
    created_at: datetime


class JobRunCreate(BaseModel):
    params: dict[str, Any] | None = None


class JobCheckOut(BaseModel):
    name: str
    passed: bool
    message: str


class JobDeliveryOut(BaseModel):
    channel: str
    status: str
    attempts: int
    target: str | None = Field(None, description="The addresses, the webhook's URL, or none.")
    last_error: str | None = None
    sent_at: datetime | None = None


class JobRunOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    job_id: uuid.UUID
    run_id: uuid.UUID | None
    trigger: str
    scheduled_for: datetime | None = Field(
        None, description="The schedule's tick it ran for (trigger `schedule`)."
    )
    status: str
    skipped_reason: str | None
    error: str | None
    params: dict[str, Any]
    results: dict[str, Any]
    change: dict[str, Any]
    checks: list[JobCheckOut]
    artifacts: list[dict[str, Any]] = Field(default_factory=list)
    deliveries: list[JobDeliveryOut] = Field(default_factory=list)
    repair: JobRepairOut | None = Field(None, description="The repair made after this run.")
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class JobCode(BaseModel):
    script: str
    tests: str


JobRepairOut.model_rebuild()
JobRepairItem.model_rebuild()
