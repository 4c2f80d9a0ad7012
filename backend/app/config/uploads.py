"""Upload settings: the largest file and request body, and the versions of a file kept."""

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
    MAX_JSON_BODY_BYTES: int = Field(
        1024**2,
        ge=1024,
        description="Largest body of any other request (JSON) in bytes (1 MiB); larger ones "
        "answer 413 `body_too_large`.",
        json_schema_extra=doc(Section.uploads),
    )
