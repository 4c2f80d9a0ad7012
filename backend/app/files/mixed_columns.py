"""Columns that mix kinds, decided from all their cells: real numbers beside amount texts
(`22729.58` and `€22,729.58`) make a number column, real dates beside date texts in other
spellings (`2025-07-31` and `02/07/2025`) a date column.

Hand-kept workbooks and exported CSVs mix like this; the strict readings of detect.py
(every value spelled alike) leave such columns as text. A column is read as numbers or
dates when most of its cells read so (MOST); the others keep their text, marked as
unreadable, never silently missing. Day-first or month-first is settled by the first text
that can only be one (`13/02/2025`), else assumed and said so. The cells are read by
app.files.reading, which every other path (pages, sorts, the agent's code) reads them with.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from app.files.reading import (
    date_of,
    date_order_evidence,
    number_of,
    read_dates,
    read_numbers,
    unit_of,
)

# The share of a column's filled cells that must read as numbers (or as dates) for the
# column to be read so; the rest are unreadable cells, shown with their text.
MOST = 0.8


@dataclass
class MixedReading:
    """How a column that mixes kinds was read.

    Attributes:
        kind: "number" or "date".
        decimal: For numbers: the decimal separator of its texts.
        day_first: For dates: whether `02/07/2025` was read as the 2nd of July.
        settled_by: For dates: the text that settled the order; None when it was assumed.
        unreadable: The cells that could not be read, by row label: their text.
        units: For numbers: the currencies (`€`, `USD`, …) its amount texts carry, in the
            order first seen, or `["%"]` for percents.
        decimals: For numbers: the digits after the decimal separator most of its amount
            texts were written with.
    """

    kind: str
    decimal: str = "."
    day_first: bool = False
    settled_by: str | None = None
    unreadable: dict[Any, str] = field(default_factory=dict)
    units: list[str] = field(default_factory=list)
    decimals: int = 0

    def describe(self, counted: int | None = None) -> str:
        """The reading in a sentence, as the column's details say it."""
        if self.kind == "date":
            order = "day-first" if self.day_first else "month-first"
            said = (
                f"dates read {order} (from {self.settled_by})"
                if self.settled_by
                else f"dates read {order} (assumed: no date settles the order)"
            )
        else:
            said = "numbers and amounts read as numbers" + (
                " (decimal comma)" if self.decimal == "," else ""
            )
            if len(self.units) > 1:
                said += f"; amounts in {', '.join(self.units[:-1])} and {self.units[-1]}"
            elif self.units == ["%"]:
                said += "; percents read as fractions"
        count = len(self.unreadable) if counted is None else counted
        if count:
            said += f"; {count:,} cell{'s' if count != 1 else ''} could not be read"
        return said

    def spec(self) -> dict[str, Any]:
        """What the preview's column says of it (`reading`, `unreadable`, …)."""
        found: dict[str, Any] = {"mixed": self.kind, "unreadable": len(self.unreadable)}
        if self.kind == "date":
            found |= {"day_first": self.day_first, "settled_by": self.settled_by}
        else:
            found["decimal_separator"] = self.decimal
            if self.units:
                found["decimals"] = self.decimals
            if len(self.units) == 1:
                found["unit"] = self.units[0]
                if self.units != ["%"]:
                    found["currency"] = self.units[0]
            elif self.units:
                found["currencies"] = self.units
        return found | {"reading": self.describe()}


def _filled(column: pd.Series) -> pd.Series:
    def blank(value: object) -> bool:
        if value is None or (isinstance(value, float) and value != value) or value is pd.NaT:
            return True
        return isinstance(value, str) and not value.strip()

    return column[~column.map(blank)]


def read_mixed(
    frame: pd.DataFrame, found: dict[str, MixedReading], *, day_first: bool
) -> pd.DataFrame:
    """Reads the columns the strict readings left as text (or as mixed cells) as numbers or
    dates when MOST of their cells read so.

    Args:
        frame: The table; converted columns are replaced in it.
        found: Gets each converted column's reading.
        day_first: The order assumed when no text settles it.
    """
    for name, column in list(frame.items()):
        if column.dtype != object and not pd.api.types.is_string_dtype(column.dtype):
            continue
        values = _filled(column)
        if values.empty:
            continue
        reading = decide(values, day_first=day_first)
        if reading is None:
            continue
        if reading.kind == "date":
            frame[name] = read_dates(column, reading.day_first)
        else:
            frame[name] = read_numbers(column, reading.decimal)
        unread = frame[name].isna() & column.index.isin(values.index)
        reading.unreadable = {index: str(column[index]).strip() for index in column.index[unread]}
        found[str(name)] = reading
    return frame


def decide(values: pd.Series, *, day_first: bool) -> MixedReading | None:
    """The reading of a column's filled cells, if MOST of them read as numbers or dates."""
    texts = values[values.map(lambda v: isinstance(v, str))]
    if texts.empty:
        return None  # no text: pandas read the column as well as it can be
    # A column of text fails each reading within its first fifth or so: only a column that
    # may be dates looks through all its texts for the one that settles their order.
    if _most(values, lambda v: date_of(v, True) is not None or date_of(v, False) is not None):
        settled, example = date_order_evidence(texts)
        order = day_first if settled is None else settled
        if _most(values, lambda v: date_of(v, order) is not None):
            return MixedReading("date", day_first=order, settled_by=example)
    decimal = "."
    if not _most(values, lambda v: number_of(v, ".") is not None):
        if not _most(values, lambda v: number_of(v, ",") is not None):
            return None
        decimal = ","
    units = [unit_of(text) for text in texts]
    percents = sum(unit == "%" for unit in units)
    if percents not in (0, len(units)):
        return None  # `12%` beside `13` is not one column of numbers
    return MixedReading(
        "number",
        decimal=decimal,
        units=list(dict.fromkeys(unit for unit in units if unit)),
        decimals=_usual_decimals(texts, decimal),
    )


def _usual_decimals(texts: pd.Series, decimal: str) -> int:
    """The digits after the decimal separator most amount texts are written with."""
    counts: dict[int, int] = {}
    for text in texts:
        found = re.search(rf"{re.escape(decimal)}(\d+)\D*$", str(text))
        digits = len(found[1]) if found else 0
        counts[digits] = counts.get(digits, 0) + 1
    return max(counts, key=lambda digits: counts[digits]) if counts else 0


def _most(values: pd.Series, reads: Callable[[Any], bool]) -> bool:
    """Whether MOST of the values read, stopping as soon as too many do not."""
    allowed = len(values) - MOST * len(values)
    failed = 0
    for value in values:
        if not reads(value):
            failed += 1
            if failed > allowed:
                return False
    return True


def apply_reading(column: pd.Series, spec: dict[str, Any]) -> tuple[pd.Series, dict[Any, str]]:
    """A column read as a preview's column `spec` says (its `mixed` reading), with the text
    of each cell that could not be read, by row label."""
    if spec.get("mixed") == "date":
        read = read_dates(column, bool(spec.get("day_first")))
    else:
        read = read_numbers(column, str(spec.get("decimal_separator") or "."))
    filled = _filled(column)
    unread = read.isna() & column.index.isin(filled.index)
    return read, {index: str(column[index]).strip() for index in column.index[unread]}
