"""Job schedule and alert settings: whether this replica fires schedules and sends alerts,
how often it looks, and how deliveries retry."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.config.sections import Section, doc


class JobScheduleSettings(BaseModel):
    """Section "Jobs": the schedule ticker and the delivery of alerts."""

    JOBS_SCHEDULER: bool = Field(
        True,
        description="Whether this process fires jobs' schedules and sends their alerts. Every "
        "replica may: the database lets exactly one of them fire each tick and send each "
        "delivery.",
        json_schema_extra=doc(Section.jobs),
    )
    JOBS_TICK_SECONDS: float = Field(
        1.0,
        gt=0,
        le=60,
        description="How often the scheduler looks for schedules and deliveries that are due "
        "(a tick fires at most about this late, plus the time to start the run).",
        json_schema_extra=doc(Section.jobs),
    )
    JOBS_LEASE_SECONDS: float = Field(
        60.0,
        ge=5,
        le=3600,
        description="How long a replica holds a due tick or delivery it took; if it dies "
        "holding one, another replica takes it up after this.",
        json_schema_extra=doc(Section.jobs),
    )
    JOBS_DELIVERY_MAX_ATTEMPTS: int = Field(
        5,
        ge=1,
        le=20,
        description="Attempts to send one alert delivery (email, webhook) before it counts as "
        "failed; a failed delivery never fails the job's run.",
        json_schema_extra=doc(Section.jobs),
    )
    JOBS_DELIVERY_BACKOFF_SECONDS: float = Field(
        30.0,
        ge=0,
        le=3600,
        description="Wait before the second attempt of a delivery; each later wait doubles.",
        json_schema_extra=doc(Section.jobs),
    )
    JOBS_WEBHOOK_TIMEOUT_SECONDS: float = Field(
        10.0,
        gt=0,
        le=120,
        description="How long a webhook's server may take to answer before the attempt fails. "
        "Webhook URLs obey SOURCES_ALLOWED_HOSTS, and never reach the workbench's own "
        "services or link-local and cloud-metadata addresses.",
        json_schema_extra=doc(Section.jobs),
    )
    JOBS_ALERT_CHART_MAX_BYTES: int = Field(
        2_000_000,
        ge=0,
        description="The largest chart image (PNG) an alert's email carries; a larger one is "
        "left out and the email says so.",
        json_schema_extra=doc(Section.jobs),
    )
