"""Types that text files do not state: numbers written with decimal commas, amounts,
percents and thousands commas, yes and no, dates; and the header row under title rows.

A CSV is text: pandas reads `12,5` and `31/01/2026` as strings. These helpers turn such
columns into float64 and datetime columns when every value in the sample reads as one,
and say what they found, so the preview and the profile show what a person sees.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from app.files.mixed_columns import MixedReading, read_mixed

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
        units: Per column of amounts, percents or numbers with thousands commas read from
            text, how they were written.
        yes_no: Per column of yes and no read from text, its spellings of yes and of no.
        mixed: Per column that mixes kinds (numbers and amount texts, dates and date
            texts), how it was read and which cells could not be (mixed_columns.py).
    """

    decimal: str = "."
    thousands: str | None = None
    date_formats: dict[str, str] = field(default_factory=dict)
    units: dict[str, UnitNumbers] = field(default_factory=dict)
    yes_no: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    mixed: dict[str, MixedReading] = field(default_factory=dict)


def convert_text(frame: pd.DataFrame, detected: Detected, *, day_first: bool) -> pd.DataFrame:
    """Reads the text columns that hold dates, amounts, percents or yes and no as such,
    then the columns that mix numbers and amounts, or dates and date texts."""
    frame = convert_dates(frame, detected, day_first=day_first)
    frame = convert_unit_numbers(frame, detected.units)
    frame = convert_yes_no(frame, detected.yes_no)
    return read_mixed(frame, detected.mixed, day_first=day_first)


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


# Numbers written with a currency symbol, a percent sign or thousands commas: `€1,058.58`,
# `-$1,200`, `12.5%`, `1,234`, `1 058.58 €` is not one (a space is no thousands separator here).
CURRENCY_SYMBOLS = "€$£¥₹"
_UNIT_NUMBER = re.compile(
    rf"\s*(?P<sign>[+-])?\s*(?P<before>[{CURRENCY_SYMBOLS}])?\s*(?P<sign2>[+-])?"
    r"(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    rf"\s*(?P<after>[{CURRENCY_SYMBOLS}%])?\s*"
)
# The same written the European way, a decimal comma and dots (or non-breaking spaces)
# between thousands: `1.058,58 €`, `-3,5 %`, `€ 12.000`, `1\u00a0058,58 €`. Tried when the
# first reading fails, so `1,200` stays twelve hundred.
_EUROPEAN_NUMBER = re.compile(
    rf"\s*(?P<sign>[+-])?\s*(?P<before>[{CURRENCY_SYMBOLS}])?\s*(?P<sign2>[+-])?"
    r"(?P<number>\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d{1,3}(?:[\u00a0\u202f]\d{3})+(?:,\d+)?"
    r"|\d+(?:,\d+)?|,\d+)"
    rf"\s*(?P<after>[{CURRENCY_SYMBOLS}%])?\s*"
)
# The words read as yes and no (compared case-blind, spaces trimmed).
YES_WORDS = ("y", "yes", "true")
NO_WORDS = ("n", "no", "false")


@dataclass
class UnitNumbers:
    """How a text column of numbers was written.

    Attributes:
        unit: The currency symbol (`€`, `$`, `£`, `¥`, `₹`) or `%` its values carry, or None
            when they only have thousands commas.
        percent: Whether the values are percents (read as fractions: `12.5%` is 0.125).
        decimal_comma: Whether they were written the European way (`1.058,58 €`).
        decimals: The digits after the decimal separator most of them were written with.
    """

    unit: str | None
    percent: bool
    decimal_comma: bool = False
    decimals: int = 0


def convert_unit_numbers(frame: pd.DataFrame, found: dict[str, UnitNumbers]) -> pd.DataFrame:
    """Turns text columns of amounts, percents and numbers with thousands commas into float64.

    A column is converted when every value is such a number, at least one carries the mark
    that kept pandas from reading it (a symbol, `%` or a thousands comma), the currency
    symbols agree, and either every value or none is a percent. Percents become fractions.
    Values written the European way (`1.058,58 €`) are read so when the usual reading fails.

    Args:
        frame: The table; converted columns are replaced in it.
        found: Gets how each converted column was written.
    """
    for name, column in list(frame.items()):
        values = _text_values(column)
        if values is None:
            continue
        read = _unit_numbers(values, _UNIT_NUMBER, ",") or _unit_numbers(
            values, _EUROPEAN_NUMBER, ".\u00a0\u202f"
        )
        if read is None:
            continue
        numbers, written = read
        frame[str(name)] = numbers.reindex(column.index)
        found[str(name)] = written
    return frame


def _unit_numbers(
    values: pd.Series, pattern: re.Pattern[str], grouping: str
) -> tuple[pd.Series, UnitNumbers] | None:
    """The values as numbers if all are written as `pattern` says (`grouping`: the
    characters between thousands), with how they were written; else None."""
    parts = values.str.extract(pattern.pattern + "$")
    if parts["number"].isna().any() or not values.str.fullmatch(pattern).all():
        return None
    if (parts["sign"].notna() & parts["sign2"].notna()).any():
        return None
    symbols = set(parts["before"].dropna()) | set(parts["after"].dropna())
    percent = "%" in symbols
    currencies = symbols - {"%"}
    if len(currencies) > 1 or (percent and currencies):
        return None
    if percent and parts["after"].ne("%").any():
        return None  # some values are percents, others not
    european = grouping != ","
    marks = f"[{re.escape(grouping)}]" + ("|," if european else "")
    if not symbols and not parts["number"].str.contains(marks).any():
        return None  # plain numbers that pandas left as text for another reason
    digits = parts["number"].str.replace(f"[{re.escape(grouping)}]", "", regex=True)
    if european:
        digits = digits.str.replace(",", ".", regex=False)
    sign = parts["sign"].fillna(parts["sign2"]).fillna("")
    numbers = pd.to_numeric(sign + digits).astype("float64") / (100 if percent else 1)
    unit = "%" if percent else next(iter(currencies), None)
    fractions = parts["number"].str.extract(r"[,.](\d+)$" if european else r"\.(\d+)$")[0]
    decimals = int(fractions.fillna("").str.len().mode().iloc[0]) if len(fractions) else 0
    return numbers, UnitNumbers(
        unit=unit, percent=percent, decimal_comma=european, decimals=decimals
    )


def convert_yes_no(
    frame: pd.DataFrame, found: dict[str, tuple[list[str], list[str]]]
) -> pd.DataFrame:
    """Turns text columns of yes and no (`Y`, `Yes`, `no`, `TRUE`...) into booleans.

    A column is converted when every value is one of those words (any case) and both a yes
    and a no occur; missing cells stay missing (the column is then `boolean`).

    Args:
        frame: The table; converted columns are replaced in it.
        found: Gets each converted column's spellings of yes and of no, as written.
    """
    for name, column in list(frame.items()):
        values = _text_values(column)
        if values is None:
            continue
        words = values.str.strip().str.casefold()
        yes, no = words.isin(YES_WORDS), words.isin(NO_WORDS)
        if not (yes | no).all() or not yes.any() or not no.any():
            continue
        converted = pd.Series(pd.NA, index=column.index, dtype="boolean")
        converted[values.index] = yes.to_numpy()
        frame[str(name)] = converted if column.isna().any() else converted.astype(bool)
        found[str(name)] = (sorted(set(values[yes])), sorted(set(values[no])))
    return frame


def is_blank(value: object) -> bool:
    """Whether a cell is empty: missing, or text of only spaces."""
    if value is None or (isinstance(value, float) and value != value):
        return True
    return isinstance(value, str) and not value.strip()


def _numeric_text(value: object) -> bool:
    if not isinstance(value, str):
        return True  # a number, a date: data, not a column name
    return bool(_UNIT_NUMBER.fullmatch(value)) or bool(_ISO.fullmatch(value.strip()))


def find_header_row(rows: Sequence[Sequence[object]], *, look: int = 20) -> int:
    """The row of column names under any title rows, by its position among `rows`.

    Title rows ("Sales report", "Generated on...") fill a cell or two; the header is the
    first row that fills most of the table's width and holds text. A table of one column,
    or one whose first wide row holds only numbers, has its header in row 0.

    Args:
        rows: The first rows of the sheet or file, as cells (missing or empty for blanks).
        look: How many rows may sit above the header.
    """
    filled = [[cell for cell in row if not is_blank(cell)] for row in rows]
    widths = [len(cells) for cells in filled if cells]
    if not widths:
        return 0
    width = max(widths, key=lambda w: (widths.count(w), w))  # the table's usual width
    if width < 2:
        return 0
    for index, cells in enumerate(filled[:look]):
        if len(cells) * 5 >= width * 3 and len(cells) >= 2:
            # Column names are text, though some may read as numbers (years: 2023, 2024).
            return index if any(not _numeric_text(cell) for cell in cells) else 0
    return 0
