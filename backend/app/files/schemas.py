from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from app.schemas import Schema


class FileOut(Schema):
    id: uuid.UUID
    project_id: uuid.UUID
    name: str
    size: int
    content_type: str
    sha256: str
    created_at: datetime
    updated_at: datetime


class PreviewColumn(BaseModel):
    name: str
    dtype: str


class FilePreview(BaseModel):
    columns: list[PreviewColumn]
    rows: list[list[Any]]
    row_count: int
