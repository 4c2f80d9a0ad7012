"""When jobs run by themselves, and what their alerts delivered: job_schedules (one row a
scheduled job, claimed by one replica per tick) and job_deliveries (one row an alert's
message to one channel, retried with backoff).

job_id and job_run_id are plain strings here: the jobs' own tables (app/models/jobs.py)
were built beside these, and their foreign keys are added where the two meet.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Enum, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, IdMixin, UTCDateTime, utcnow


class JobSchedule(Base):
    """A job's schedule and its next tick. A replica fires a tick once it holds the row's
    lease (lease_owner, lease_until), taken by compare-and-set; a lease past its time is
    free again, so a replica that died holding one delays the tick, never loses it."""

    __tablename__ = "job_schedules"

    job_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    cron: Mapped[str | None] = mapped_column(String(200), nullable=True)
    every_minutes: Mapped[int | None] = mapped_column(Integer, nullable=True)
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    next_run_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # The tick fired last (its scheduled time, not when it fired).
    last_tick_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (Index("ix_job_schedules_due", "paused", "next_run_at"),)


class DeliveryStatus(enum.StrEnum):
    queued = "queued"
    sent = "sent"
    failed = "failed"


class DeliveryChannel(enum.StrEnum):
    email = "email"
    webhook = "webhook"
    share = "share"


class JobDelivery(IdMixin, Base):
    """One alert message to one channel and target (an email address list, a webhook URL, a
    share link). `payload` is what the message says (never a secret); a webhook's signing
    secret is kept sealed apart (`secret_sealed`, as source passwords are) and is never
    shown."""

    __tablename__ = "job_deliveries"

    job_run_id: Mapped[str] = mapped_column(String(36), index=True)
    job_id: Mapped[str] = mapped_column(String(36), index=True)
    channel: Mapped[DeliveryChannel] = mapped_column(
        Enum(DeliveryChannel, native_enum=False, length=16)
    )
    target: Mapped[str] = mapped_column(Text)
    status: Mapped[DeliveryStatus] = mapped_column(
        Enum(DeliveryStatus, native_enum=False, length=16), default=DeliveryStatus.queued
    )
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    secret_sealed: Mapped[str | None] = mapped_column(Text, nullable=True)
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (Index("ix_job_deliveries_due", "status", "next_attempt_at"),)
