"""Upload settings: the largest file and request body, the versions of a file kept, and the
storage quotas of users and projects."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.config.sections import Section, doc


class UploadsSettings(BaseModel):
    """Section "Uploads": sizes of uploads and request bodies, versions kept."""

    MAX_UPLOAD_BYTES: int = Field(
        10 * 1024**3,
        ge=1,
        description="Largest file a user may upload, in bytes (10 GiB: a file bigger than the "
        "sandbox's memory is answered with DuckDB); larger ones answer 413 "
        "and leave nothing behind.",
        json_schema_extra=doc(Section.uploads),
    )
    FILE_VERSIONS_KEPT: int = Field(
        10,
        ge=1,
        le=1000,
        description="Uploading a file's name again keeps the earlier bytes as a previous "
        "version; this many versions of a file are kept (the current one included), the "
        "oldest deleted.",
        json_schema_extra=doc(Section.uploads),
    )
    USER_STORAGE_QUOTA_MB: int = Field(
        51200,
        ge=0,
        description="Storage each user may fill, in MiB (50 GiB; 0: unlimited): every kept "
        "version of the files they uploaded, the preview copies made of them, and the "
        "artifacts and snapshots of the questions they asked. An upload past it answers 413 "
        "`storage_quota_exceeded`; an administrator can give one user another quota "
        "(`PATCH /users/{id}` `storage_quota_mb`, `workbench admin storage-quota`).",
        json_schema_extra=doc(Section.uploads),
    )
    PROJECT_STORAGE_QUOTA_MB: int = Field(
        20480,
        ge=0,
        description="Storage each project may fill, in MiB (20 GiB; 0: unlimited): every "
        "kept version of its files, the preview copies made of them, its sessions' artifacts "
        "and snapshots, whoever made them. An upload past it answers 413 "
        "`storage_quota_exceeded`.",
        json_schema_extra=doc(Section.uploads),
    )
    MAX_JSON_BODY_BYTES: int = Field(
        1024**2,
        ge=1024,
        description="Largest body of any other request (JSON) in bytes (1 MiB); larger ones "
        "answer 413 `body_too_large`.",
        json_schema_extra=doc(Section.uploads),
    )
