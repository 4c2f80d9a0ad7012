"""Inside the worker: a DataFrame, Series or Styler as the table a reader sees.

A result table should read as finished: dates as dates (`2023-04-01`, a time only where a
value has one), no 0…n row numbers the reader did not ask for, but an index that is data
(a named one, dates, several levels) kept as leading columns. pandas is only touched through
`sys.modules`: this module is imported before pandas is.
"""

from __future__ import annotations

import datetime as dt
import sys
from typing import Any


def _is_plain_row_number(index: Any) -> bool:
    """Whether an index only numbers the rows: unnamed whole numbers (a default RangeIndex,
    or what filtering, sorting or head/tail left of one). Such an index says nothing."""
    pandas = sys.modules["pandas"]
    if isinstance(index, pandas.MultiIndex) or index.name is not None:
        return False
    if isinstance(index, pandas.RangeIndex):
        return True
    return bool(pandas.api.types.is_integer_dtype(index.dtype))


def table_frame(obj: Any) -> Any:
    """A DataFrame with plain text column labels for a DataFrame, Series or Styler.

    An index that only numbers the rows is dropped; any other (named, dates, a MultiIndex,
    labels such as describe()'s) becomes the leading column(s).
    """
    styles = sys.modules.get("pandas.io.formats.style")
    if styles is not None and isinstance(obj, styles.Styler):
        obj = obj.data
    frame = obj.to_frame(name="value" if obj.name is None else obj.name) if obj.ndim == 1 else obj
    if _is_plain_row_number(frame.index):
        frame = frame.reset_index(drop=True)
    else:
        frame = frame.reset_index(allow_duplicates=True)
    frame = frame.copy(deep=False)
    frame.columns = [
        " / ".join(str(part) for part in column) if isinstance(column, tuple) else str(column)
        for column in frame.columns
    ]
    return frame


def _moment_text(value: Any, with_time: bool) -> str:
    """A date or timestamp as `2023-04-01`, or `2023-04-01 13:05` (seconds, fractions and
    the zone only when there are some)."""
    if not with_time:
        return str(value.strftime("%Y-%m-%d"))
    text = value.strftime("%Y-%m-%d %H:%M")
    if value.second or value.microsecond:
        text += value.strftime(":%S")
        if value.microsecond:
            text += f".{value.microsecond:06d}".rstrip("0")
    if getattr(value, "tzinfo", None) is not None:
        text += f" {value.tzname() or value.strftime('%z')}"
    return str(text)


def _has_time(value: Any) -> bool:
    if not isinstance(value, dt.datetime):
        return False
    return bool(value.hour or value.minute or value.second or value.microsecond or value.tzinfo)


def _moments_as_text(column: Any) -> Any:
    """A column of dates/timestamps (datetime64 or Python dates in an object column) as
    text, one format for the whole column: dates only when no value has a time of day.
    Any other column is returned as it is."""
    pandas = sys.modules["pandas"]
    kinds = pandas.api.types
    if kinds.is_datetime64_any_dtype(column.dtype):
        values = [v.to_pydatetime() for v in column.dropna()]
    elif column.dtype == object:
        values = [v for v in column.dropna()]
        if not values or not all(isinstance(v, dt.date) for v in values):
            return column
    else:
        return column
    with_time = any(_has_time(v) for v in values)
    return (
        column.map(
            lambda v: None if v is None or v is pandas.NaT else _moment_text(v, with_time),
            na_action="ignore",
        )
        .astype(object)
        .where(column.notna(), None)
    )


def shown_frame(frame: Any) -> Any:
    """A table_frame() with its date and timestamp columns as the text a reader sees."""
    shown = frame.copy(deep=False)
    for position in range(shown.shape[1]):
        column = shown.iloc[:, position]
        converted = _moments_as_text(column)
        if converted is not column:
            shown.isetitem(position, converted)
    return shown
