"""Jobs settings: how many job runs, how their checks are written, how a run's lease lasts."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.config.sections import Section, doc


class JobsSettings(BaseModel):
    """Section "Jobs": job runs' bounds and their checks."""

    JOB_RUNS_PER_HOUR: int = Field(
        60,
        ge=1,
        le=100_000,
        description="Most job runs a project may start in an hour (all its jobs together); "
        "more answer 429 with Retry-After.",
        json_schema_extra=doc(Section.jobs),
    )
    JOB_RUNS_CONCURRENCY: int = Field(
        4,
        ge=1,
        le=256,
        description="Job runs one replica executes at once; more wait, queued.",
        json_schema_extra=doc(Section.jobs),
    )
    JOB_CHECK_ATTEMPTS: int = Field(
        3,
        ge=1,
        le=10,
        description="Times the model may write (then repair) a new job's data checks until "
        "they pass; after that the job keeps the checks that pass, and says so.",
        json_schema_extra=doc(Section.jobs),
    )
    JOB_REPAIR_ATTEMPTS: int = Field(
        3,
        ge=0,
        le=10,
        description="Times the model may propose new code for a job whose run failed (a "
        "check or its code) until its checks pass in the sandbox; `0`: jobs are never "
        "repaired.",
        json_schema_extra=doc(Section.jobs),
    )
    JOB_REPAIRS_CONCURRENCY: int = Field(
        2,
        ge=1,
        le=64,
        description="Job repairs one replica works on at once; more wait.",
        json_schema_extra=doc(Section.jobs),
    )
    JOB_RUN_LEASE_SECONDS: float = Field(
        60,
        ge=5,
        le=3600,
        description="A running job run's lease, renewed while its replica lives: one whose "
        "lease ran out (its replica died) is ended as failed.",
        json_schema_extra=doc(Section.jobs),
    )
