from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from app.models import Session
from app.runs.budget import Usage
from app.schemas import Schema, UsageTotals

Autonomy = Literal["auto", "review_repairs", "review"]


class SessionCreate(BaseModel):
    title: str | None = Field(None, max_length=200)
    autonomy: Autonomy = "auto"


class SessionUpdate(BaseModel):
    title: str | None = Field(None, min_length=1, max_length=200)
    autonomy: Autonomy | None = Field(
        None,
        description="auto: code runs as soon as it is written; review_repairs: only a repair "
        "(a retry after an error, a repair fan-out's winner) waits for POST "
        "/runs/{id}/approval; review: each code block waits for it",
    )


class Restored(BaseModel):
    """How a branch's variables were brought back: from the run's snapshot, or by replaying
    the recorded code of its past, with sentences on what was replayed or not restored."""

    from_: Literal["snapshot", "replay"] = Field(alias="from")
    notes: list[str] = []

    model_config = {"populate_by_name": True, "serialize_by_alias": True}


class FilePin(BaseModel):
    """A project file a branch reads at the version its past read, not the latest."""

    file_id: uuid.UUID
    name: str
    version: int = Field(description="The version the branch's runs read")
    latest_version: int = Field(description="The file's latest version")
    kept: bool = Field(
        True,
        description="false: that version is no longer kept (FILE_VERSIONS_KEPT); the branch "
        "reads the latest",
    )
    note: str = Field("", description="The same in a sentence, as the branch shows it")

    def model_post_init(self, _: Any) -> None:
        if not self.note:
            self.note = pin_note(self.name, self.version, self.latest_version, self.kept)


def pin_note(name: str, version: int, latest: int, kept: bool) -> str:
    if not kept:
        return (
            f"{name} version {version}, which this branch's past read, is no longer kept: "
            f"the branch reads version {latest}."
        )
    if version == latest:
        return f"Reads {name} as version {version} (the latest)."
    return f"Reads {name} as version {version} (latest is {latest})."


class SessionOut(Schema, UsageTotals):
    id: uuid.UUID
    project_id: uuid.UUID
    title: str
    autonomy: Autonomy
    recorded: bool = Field(
        False, description="Its history was loaded from a recording (the demo's): replayable"
    )
    parent_session_id: uuid.UUID | None = Field(
        None, description="A branch's parent session (null for a root)"
    )
    branched_after_run_id: uuid.UUID | None = Field(
        None, description="The parent's run this branch continues after (null for a root)"
    )
    restored: Restored | None = Field(
        None, description="How a branch's state was brought back, once its first run has it"
    )
    file_pins: list[FilePin] = Field(
        default_factory=list,
        description="A branch's files pinned to the versions its past read (given by GET "
        "/sessions/{id}, the branch's creation and POST /sessions/{id}/files/unpin; empty in "
        "lists)",
    )
    created_at: datetime
    updated_at: datetime

    @field_validator("restored", mode="before")
    @classmethod
    def _settled_only(cls, value: Any) -> Any:
        """A kept branch whose first run is still to come has no state to tell of yet."""
        return None if isinstance(value, dict) and value.get("unsettled") else value

    @classmethod
    def of(cls, session: Session, usage: Usage | None) -> SessionOut:
        return cls.model_validate(session).model_copy(update=vars(usage or Usage()))
