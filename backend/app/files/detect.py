"""Types that text files do not state: numbers written with decimal commas, and dates.

A CSV is text: pandas reads `12,5` and `31/01/2026` as strings. These helpers turn such
columns into float64 and datetime columns when every value in the sample reads as one,
and say what they found, so the preview and the profile show what a person sees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

# `1.234,56`, `-12,5`, `3`, `1.234.567`: a decimal comma and optional dots between thousands.
_COMMA_NUMBER = r"\s*[+-]?(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d+)?\s*"
_TIME = r"(?:[ T](?P<time>\d{1,2}:\d{2}(?P<seconds>:\d{2})?))?"
# Each family of date spellings, with the formats it may be read with (day-first ones first).
_ISO = re.compile(
    r"\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?"
)
_DATE_FAMILIES: list[tuple[re.Pattern[str], tuple[str, ...]]] = [
    (re.compile(r"\d{4}/\d{1,2}/\d{1,2}" + _TIME), ("%Y/%m/%d",)),
    (re.compile(r"\d{1,2}/\d{1,2}/\d{4}" + _TIME), ("%d/%m/%Y", "%m/%d/%Y")),
    (re.compile(r"\d{1,2}\.\d{1,2}\.\d{4}" + _TIME), ("%d.%m.%Y",)),
    (re.compile(r"\d{1,2}-\d{1,2}-\d{4}" + _TIME), ("%d-%m-%Y", "%m-%d-%Y")),
]


@dataclass
class Detected:
    """What was found in a table's text columns.

    Attributes:
        decimal: The decimal separator the numbers use ("." or ",").
        thousands: The thousands separator seen in numbers with a decimal comma, else None.
        date_formats: Per converted column, the format its dates were read with
            (a strptime format such as "%d/%m/%Y", or "ISO8601").
    """

    decimal: str = "."
    thousands: str | None = None
    date_formats: dict[str, str] = field(default_factory=dict)


def _text_values(column: pd.Series) -> pd.Series | None:
    """The column's non-missing values if it is a column of strings with at least one."""
    if column.dtype != object and not pd.api.types.is_string_dtype(column.dtype):
        return None
    values = column.dropna()
    if values.empty or not all(isinstance(value, str) for value in values):
        return None
    return values


def uses_decimal_comma(frame: pd.DataFrame, delimiter: str) -> bool:
    """Whether a table read with "." decimals has a text column of decimal-comma numbers.

    Only a file whose fields are not separated by commas can use them unquoted; in a
    comma-separated file, `"1,234"` could as well be a thousand.
    """
    if delimiter == ",":
        return False
    for _, column in frame.items():
        values = _text_values(column)
        if (
            values is not None
            and values.str.contains(r"\d,\d", regex=True).any()
            and values.str.fullmatch(_COMMA_NUMBER).all()
        ):
            return True
    return False


def convert_comma_numbers(frame: pd.DataFrame, detected: Detected) -> pd.DataFrame:
    """Turns text columns of decimal-comma numbers (`1.234,56`) into float64.

    For a table already read with `decimal=","`: pandas then parses `12,5` itself, but not
    numbers with thousands separators, which stay text.
    """
    converted = {}
    for name, column in frame.items():
        values = _text_values(column)
        if values is None or not values.str.fullmatch(_COMMA_NUMBER).all():
            continue
        if values.str.contains(".", regex=False).any():
            detected.thousands = "."
        plain = column.str.strip().str.replace(".", "", regex=False).str.replace(",", ".")
        converted[name] = pd.to_numeric(plain).astype("float64")
    for name, values in converted.items():
        frame[name] = values
    return frame


def convert_dates(frame: pd.DataFrame, detected: Detected, *, day_first: bool) -> pd.DataFrame:
    """Turns text columns whose every value is a date (or date and time) into datetimes.

    ISO dates (`2026-01-31`, with or without a time) and `31/01/2026`, `01/31/2026`,
    `31.01.2026`, `31-01-2026`, `2026/01/31`, each optionally followed by a time. A column
    is converted only when every value has the same spelling and reads as a real date.

    Args:
        frame: The table; converted columns are replaced in it.
        detected: Gets each converted column's format.
        day_first: Whether `01/02/2026` is the 1st of February (it is in files with decimal
            commas or semicolons); the other order is tried when this one does not fit.
    """
    for name, column in list(frame.items()):
        values = _text_values(column)
        if values is None:
            continue
        values = values.str.strip()
        found = _date_format(values, day_first=day_first)
        if found is None:
            continue
        fmt, parsed = found
        frame[name] = parsed.reindex(column.index)
        detected.date_formats[str(name)] = fmt
    return frame


def _date_format(values: pd.Series, *, day_first: bool) -> tuple[str, pd.Series] | None:
    first = values.iloc[0]
    if _ISO.fullmatch(first):
        if not values.str.fullmatch(_ISO).all():
            return None
        return _parsed(values, "ISO8601")
    for pattern, formats in _DATE_FAMILIES:
        shape = pattern.fullmatch(first)
        if shape is None:
            continue
        if not values.str.fullmatch(pattern).all():
            return None
        # One time spelling for the whole column: none, hours and minutes, or with seconds.
        times = values.str.extract(pattern)
        if times["time"].isna().all():
            suffix = ""
        elif times["seconds"].notna().all():
            suffix = " %H:%M:%S"
        elif times["time"].notna().all() and times["seconds"].isna().all():
            suffix = " %H:%M"
        else:
            return None
        if suffix and values.str.contains("T", regex=False).any():
            return None
        ordered = formats if day_first else formats[::-1]
        for fmt in ordered:
            if (result := _parsed(values, fmt + suffix)) is not None:
                return result
        return None
    return None


def _parsed(values: pd.Series, fmt: str) -> tuple[str, pd.Series] | None:
    try:
        parsed = pd.to_datetime(values, format=fmt, errors="coerce")
    except (ValueError, TypeError, OverflowError):
        return None
    if parsed.isna().any() or not pd.api.types.is_datetime64_any_dtype(parsed.dtype):
        return None
    return fmt, parsed
