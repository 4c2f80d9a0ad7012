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
    dtype: str = Field(
        description="The pandas dtype the column was read as: int64, float64, bool, str, "
        "datetime64[us], …"
    )
    date_format: str | None = Field(
        None,
        description="For a text column read as dates: the format it was read with, a strptime "
        'format such as "%d/%m/%Y" or "ISO8601"',
    )


class TextFormat(BaseModel):
    """How a delimited text file was read."""

    delimiter: str = Field(description="The field separator: `,`, `;`, a tab or `|`")
    decimal: str = Field(description='The decimal separator of its numbers: "." or ","')
    thousands: str | None = Field(
        None, description="The thousands separator seen in numbers with a decimal comma"
    )
    encoding: str = Field(
        description="The text encoding, as a Python codec name (utf-8, utf-8-sig, utf-16, cp1252…)"
    )


class FilePreview(BaseModel):
    columns: list[PreviewColumn]
    rows: list[list[Any]]
    row_count: int
    sheets: list[str] | None = Field(
        None, description="A workbook's worksheets, in order (null for other kinds of file)"
    )
    sheet: str | None = Field(None, description="The worksheet shown (null for other kinds)")
    format: TextFormat | None = Field(
        None, description="How a CSV/TSV file was read (null for other kinds)"
    )


class TopValue(BaseModel):
    value: Any
    count: int


class ColumnProfile(BaseModel):
    name: str
    dtype: str
    kind: Literal["number", "datetime", "boolean", "text"]
    missing: int = Field(description="Empty cells among the rows profiled")
    distinct: int = Field(description="Distinct values (not counting empty cells)")
    min: Any = Field(None, description="Numbers and datetimes (ISO 8601)")
    max: Any = Field(None, description="Numbers and datetimes (ISO 8601)")
    mean: float | str | None = Field(None, description="Numbers and datetimes (ISO 8601)")
    top: list[TopValue] | None = Field(
        None, description="Text and booleans: the most frequent values (up to 5), most first"
    )


class FileProfile(BaseModel):
    sheet: str | None = Field(None, description="The worksheet profiled (null for other kinds)")
    row_count: int = Field(description="The data rows of the whole file (or sheet)")
    rows_profiled: int = Field(description="The first rows that were profiled")
    complete: bool = Field(description="Whether the rows profiled are all the rows")
    columns: list[ColumnProfile]
