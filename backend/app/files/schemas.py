from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.schemas import Schema


class FileOut(Schema):
    id: uuid.UUID
    project_id: uuid.UUID
    name: str
    size: int
    content_type: str
    sha256: str
    version: int = Field(
        description="1 for the first upload, one more each time the name is uploaded again"
    )
    created_at: datetime
    updated_at: datetime = Field(description="When the current version was uploaded")
    check: Literal["ok", "empty", "unreadable", "too_large", "not_tabular"] | None = Field(
        None,
        description="What reading the file right after upload found (null: not checked); "
        "`problem` says it in a sentence",
    )
    problem: str | None = None


class FileVersionOut(Schema):
    version: int
    size: int
    sha256: str
    created_at: datetime = Field(description="When this version was uploaded")
    current: bool = False


class PreviewColumn(BaseModel):
    name: str
    dtype: str


class FilePreview(BaseModel):
    columns: list[PreviewColumn]
    rows: list[list[Any]]
    row_count: int
