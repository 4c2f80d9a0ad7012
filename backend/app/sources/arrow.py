"""Rows from a database driver as Arrow record batches, under one schema decided before the
first batch (from the database's column types, or for SQLite from the first rows' values),
so that every batch of a result agrees."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from app.sources.refusals import QueryFailed

Convert = Callable[[Any], Any]


def as_text(value: Any) -> str:
    """Any value as text: the fallback for types Arrow has no match for."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, dict | list):
        return json.dumps(value, default=str)
    return str(value)


@dataclass(frozen=True)
class Column:
    """One column of a result: its name, its Arrow type, and how a driver's value (not
    None) becomes one Arrow takes for that type (None: as it is)."""

    name: str
    type: pa.DataType
    convert: Convert | None = None


def text_column(name: str) -> Column:
    return Column(name, pa.string(), as_text)


def unique_names(names: Sequence[str]) -> list[str]:
    """Column names with repeats numbered (`count`, `count_2`): Parquet and DataFrames need
    them distinct, and `SELECT 1, 1` gives two of a kind."""
    seen: set[str] = set()
    result = []
    for raw in names:
        name, n = raw or "column", 1
        while name in seen:
            n += 1
            name = f"{raw or 'column'}_{n}"
        seen.add(name)
        result.append(name)
    return result


def schema_of(columns: Sequence[Column]) -> pa.Schema:
    return pa.schema([pa.field(c.name, c.type) for c in columns])


def to_batch(columns: Sequence[Column], rows: Sequence[Sequence[Any]]) -> pa.RecordBatch:
    """`rows` (tuples in the columns' order) as one record batch of the columns' schema.

    Raises:
        QueryFailed: a value does not fit its column's type (the message says to CAST it).
    """
    arrays = []
    for index, column in enumerate(columns):
        values = [row[index] for row in rows]
        convert = column.convert
        if convert is not None:
            values = [None if v is None else convert(v) for v in values]
        try:
            arrays.append(pa.array(values, type=column.type))
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            raise misfit(column.name, column.type, str(exc)) from None
    return pa.RecordBatch.from_arrays(arrays, schema=schema_of(columns))


def parse_text(text: pa.Array, arrow_type: pa.DataType) -> pa.Array:
    """A string array's values as an array of `arrow_type`, parsed by Arrow (timestamps
    with a zone: the text is in that zone).

    Raises:
        pyarrow.ArrowInvalid: a value is not one of that type.
    """
    if pa.types.is_timestamp(arrow_type) and arrow_type.tz is not None:
        local = pc.cast(text, pa.timestamp(arrow_type.unit))
        return pc.assume_timezone(local, arrow_type.tz)
    return pc.cast(text, arrow_type)


def misfit(name: str, arrow_type: pa.DataType, detail: str) -> QueryFailed:
    """The failure of a result whose column `name` holds a value that is not `arrow_type`."""
    return QueryFailed(
        f"The column {name!r} holds a value that does not fit its type ({arrow_type}): "
        f"{detail[:200]}. CAST it (e.g. to text) in the SQL."
    )


def infer_columns(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[Column]:
    """Columns typed by the values of the first rows, for databases whose results carry no
    types (SQLite): integers, reals, text or bytes, and text where they mix or are all NULL.
    Later rows that do not fit fail with a sentence saying to CAST."""
    columns = []
    for index, name in enumerate(names):
        kinds = {type(row[index]) for row in rows if row[index] is not None}
        if kinds == {int}:
            columns.append(Column(name, pa.int64()))
        elif kinds and kinds <= {int, float}:
            columns.append(Column(name, pa.float64(), float))
        elif kinds == {bytes}:
            columns.append(Column(name, pa.binary()))
        else:
            columns.append(text_column(name))
    return columns
