"""The storage a project or a user fills, against their quota, as the API answers it."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from app.schemas import Schema


class StorageUsageOut(Schema):
    """Bytes kept in storage, by what keeps them, against the quota."""

    model_config = ConfigDict(
        from_attributes=True, json_schema_serialization_defaults_required=True
    )

    used_bytes: int = Field(description="All of the below")
    quota_bytes: int | None = Field(description="The quota; null: unlimited")
    files: int = Field(description="Files with at least one kept version counted here")
    versions: int = Field(description="Kept versions of those files (the current ones included)")
    files_bytes: int = Field(description="Bytes of every kept version")
    copies_bytes: int = Field(
        description="Bytes of the copies made of them for previews (typed Parquet copies)"
    )
    artifacts: int
    artifacts_bytes: int = Field(description="Charts, tables and files that runs made")
    snapshots: int
    snapshots_bytes: int = Field(description="Sessions' saved variables")
    projects: int = Field(description="Projects holding the files counted here")
    snapshots_refused: str | None = Field(
        None,
        description=(
            "A project's: why its last save of a question's variables was refused (its "
            "states over SNAPSHOT_PROJECT_MAX_MB with only each session's latest left), "
            "naming the largest sessions to delete; null once a save is kept again"
        ),
    )
