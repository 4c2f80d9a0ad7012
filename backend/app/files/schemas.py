from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from app.files.preview.table import user_type
from app.schemas import Schema

# The questions shown under each version of a file (FileVersionOut.read_by).
READERS_SHOWN = 20


class TableShape(BaseModel):
    """A tabular file's size as read when it was checked (its first sheet for a workbook)."""

    rows: int = Field(description="Data rows of the file (a workbook: of its first sheet)")
    columns: int = Field(description="Columns (a workbook: of its first sheet)")
    sheets: list[str] | None = Field(None, description="A workbook's worksheets, in order")


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
    table: TableShape | None = Field(
        None,
        description="Rows, columns and sheets as read when the file was checked (null: not "
        "tabular, or not read yet); kept with the file, so listing files reads none of them",
    )

    @model_validator(mode="before")
    @classmethod
    def _table_from_preview(cls, data: Any) -> Any:
        if isinstance(data, dict) or not hasattr(data, "preview"):
            return data
        found = {name: getattr(data, name) for name in cls.model_fields if hasattr(data, name)}
        stored = data.preview
        if isinstance(stored, dict) and isinstance(stored.get("row_count"), int):
            found["table"] = {
                "rows": stored["row_count"],
                "columns": len(stored.get("columns") or []),
                "sheets": stored.get("sheets"),
            }
        return found


class VersionReader(BaseModel):
    """A question whose code read a version of a file."""

    run_id: uuid.UUID
    session_id: uuid.UUID
    session_title: str = Field(description="The session's title (empty: untitled)")
    query: str = Field(description="The question")
    asked_at: datetime = Field(description="When the question was asked")


class FileVersionOut(Schema):
    version: int
    size: int
    sha256: str
    created_at: datetime = Field(description="When this version was uploaded")
    current: bool = False
    read_by: list[VersionReader] = Field(
        default_factory=list,
        description=f"The questions of the project whose code read this version, newest "
        f"first, at most {READERS_SHOWN} (see RunFileOut.read)",
    )
    read_by_total: int = Field(0, description="How many questions read this version in all")


UserType = Literal["number", "date", "text", "yes/no"]
_USER_TYPE_OF_KIND: dict[str, UserType] = {
    "number": "number", "datetime": "date", "boolean": "yes/no", "text": "text",
}  # fmt: skip


class MissingValue(BaseModel):
    """A text a column reads as missing, and how many of its cells hold it."""

    value: str
    count: int


class PreviewColumn(BaseModel):
    name: str
    dtype: str = Field(
        description="The pandas dtype the column was read as: int64, float64, bool, str, "
        "datetime64[us], …"
    )
    type: UserType = Field(
        "text",
        description="The column's type in a person's words: number, date, text or yes/no "
        "(`dtype` is the detail)",
    )
    date_format: str | None = Field(
        None,
        description="For a text column read as dates: the format it was read with, a strptime "
        'format such as "%d/%m/%Y" or "ISO8601"',
    )
    unit: str | None = Field(
        None,
        description="For a text column read as numbers: the currency symbol (€, $, £, ¥, ₹) or "
        "`%` its values carried (percents are read as fractions: 12.5% is 0.125); null when "
        "they only had thousands commas or were not text",
    )
    currency: str | None = Field(
        None,
        description="For a number column whose amounts share one currency: that currency as "
        "written (€, $, £, ¥, ₹, or a code such as EUR), to show every value with",
    )
    currencies: list[str] | None = Field(
        None,
        description="For a number column whose amounts are in several currencies: them, in "
        "the order first seen in its first rows, or the commonest first once decided over "
        "the whole file (no currency is shown with its values)",
    )
    decimals: int | None = Field(
        None,
        description="For a number column read from amount or percent texts: the digits after "
        "the decimal separator most of them were written with, to show every value with "
        "(`€1,371.30`; a percent column's as percents: `12.5%`)",
    )
    decimal: Literal[","] | None = Field(
        None,
        description='For a text column read as numbers written the European way ("1.058,58 '
        '€"): the decimal comma; null otherwise',
    )
    true_values: list[str] | None = Field(
        None, description="For a text column read as yes/no: its spellings of yes (Y, Yes, …)"
    )
    mixed: Literal["number", "date"] | None = Field(
        None,
        description="For a column whose cells mix kinds (real numbers and amount texts, real "
        "dates and date texts in several spellings): the kind it was read as, from all its "
        "cells; null for other columns",
    )
    reading: str | None = Field(
        None,
        description='For a mixed column: how it was read, in a sentence (e.g. "dates read '
        'day-first (from 13/02/2025); 3 cells could not be read"); for a column the whole '
        'file read otherwise than its first rows, why (e.g. "text: 3,214 cells after row '
        '10,000 are not numbers")',
    )
    unreadable: int | None = Field(
        None,
        description="For a mixed column: how many of its cells could not be read (shown as "
        '`{"unreadable": text}`)',
    )
    day_first: bool | None = Field(
        None, description="For a mixed date column: whether 02/07/2025 was read as 2 July"
    )
    settled_by: str | None = Field(
        None,
        description="For a mixed date column: the text that settled day-first or month-first "
        "(null: assumed)",
    )
    decimal_separator: str | None = Field(
        None, description="For a mixed number column: the decimal separator of its texts"
    )
    false_values: list[str] | None = Field(
        None, description="For a text column read as yes/no: its spellings of no"
    )
    missing_values: list[MissingValue] | None = Field(
        None,
        description="For a number or date column decided over the whole file: the texts read "
        'as missing in it ("n/a", and the few texts of a column that is text in its first '
        'rows but numbers or dates in nearly all of them, such as "TBD"), the most frequent '
        "first, with their counts (up to 20 of the latter; the sentence in `reading` counts "
        "the rest)",
    )

    @model_validator(mode="before")
    @classmethod
    def _type_from_dtype(cls, data: Any) -> Any:
        if isinstance(data, dict) and "type" not in data and "dtype" in data:
            return data | {"type": user_type(data["dtype"])}
        return data


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


class FilterCondition(BaseModel):
    """One condition of a preview's filter."""

    column: str
    op: Literal["eq", "ne", "contains", "gt", "ge", "lt", "le", "empty", "not_empty"]
    value: str | float | bool | None = None


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
    header_row: int | None = Field(
        None,
        description="The row the column names were read from, counted from 0 (blank lines of "
        "a CSV not counted): the one detected under any title rows, or the one asked for "
        "(null for kinds without one: Parquet, JSON)",
    )
    decided_rows: int | None = Field(
        None,
        description="The rows each column's type was decided over: the first rows of a big "
        "CSV or worksheet at first (`kinds_pending`), then all of them",
    )
    kinds_pending: bool = Field(
        False,
        description="Whether the columns' types were decided over the first rows only and "
        "the whole file is still being checked; once it is, every page, sort and filter "
        "reads the whole file's decision (a column may then change type: its `reading` "
        "says why)",
    )
    offset: int = Field(0, description="The first row shown, counted from 0 after sorting")
    limit: int = Field(50, description="The most rows asked for")
    sort: str | None = Field(None, description="The column all rows were sorted by, if any")
    order: Literal["asc", "desc"] = Field("asc", description="The direction of the sort")
    notice: str | None = Field(
        None,
        description="Something the reader should know of how the rows were read (e.g. no "
        "typed copy was made of a big CSV, for a storage quota)",
    )
    filter: list[FilterCondition] = Field(
        default_factory=list, description="The filter applied (`row_count` counts its rows)"
    )
    unfiltered_row_count: int | None = Field(
        None, description="The data rows of the whole file (or sheet), filter or not"
    )


class TopValue(BaseModel):
    value: Any
    count: int


class ColumnProfile(BaseModel):
    name: str
    dtype: str
    kind: Literal["number", "datetime", "boolean", "text"]
    type: UserType = Field(
        "text",
        description="The column's type in a person's words: number, date, text or yes/no "
        "(`kind` says the same in pandas' terms, `dtype` is the detail)",
    )
    missing: int = Field(
        description="Empty cells among the rows profiled (cells that hold a value that "
        "could not be read as the column's kind are counted in `unreadable`)"
    )
    unreadable: int = Field(
        0,
        description="Cells of a column that mixes kinds whose text could not be read as its "
        "kind (shown as their text, marked, in the preview), among the rows profiled",
    )
    distinct: int = Field(description="Distinct values (not counting empty cells)")
    min: Any = Field(None, description="Numbers and datetimes (ISO 8601)")
    max: Any = Field(None, description="Numbers and datetimes (ISO 8601)")
    mean: float | str | None = Field(None, description="Numbers and datetimes (ISO 8601)")
    top: list[TopValue] | None = Field(
        None, description="Text and booleans: the most frequent values (up to 5), most first"
    )
    unit: str | None = Field(
        None, description="For a number column: its preview column's `unit` (a currency or %)"
    )
    currency: str | None = Field(
        None,
        description="For a number column of amounts in one currency: it, to show min, "
        "mean and max with (as the preview shows its cells)",
    )
    currencies: list[str] | None = Field(
        None, description="For a number column of amounts in several currencies: them"
    )
    decimals: int | None = Field(
        None,
        description="For a number column of amounts or percents: the decimals its values are "
        "shown with; `mean` is given at them",
    )

    @model_validator(mode="before")
    @classmethod
    def _type_from_kind(cls, data: Any) -> Any:
        if isinstance(data, dict) and "type" not in data and data.get("kind") in _USER_TYPE_OF_KIND:
            return data | {"type": _USER_TYPE_OF_KIND[data["kind"]]}
        return data


class FileProfile(BaseModel):
    sheet: str | None = Field(None, description="The worksheet profiled (null for other kinds)")
    header_row: int | None = Field(
        None, description="The row the column names were read from (as in the preview)"
    )
    row_count: int = Field(description="The data rows of the whole file (or sheet)")
    rows_profiled: int = Field(description="The first rows that were profiled")
    complete: bool = Field(description="Whether the rows profiled are all the rows")
    sampled: str | None = Field(
        None,
        description='When only a sample was profiled, how much of the file: "100,000 of '
        '2,000,000 rows" (a CSV is profiled over all its rows as its preview reads them, '
        "from its typed copy when it has one; other kinds, or a CSV too costly to read "
        "whole in time, from their first rows); null when every row was profiled",
    )
    columns: list[ColumnProfile]
