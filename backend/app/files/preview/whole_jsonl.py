"""Each column of a JSON lines file decided over all its records, as whole_csv.py decides a
CSV's (whole_kinds.py runs it in the preview child process): the file is read a batch of
records at a time and only counts are kept, so memory stays bounded whatever its size.

A column stays as its head read it when every later cell reads so too. Otherwise it is
decided from all its cells: numbers (JSON numbers, or texts such as "€1,200.50") or dates
when WHOLE_SHARE of its filled cells read so, read cell by cell (a mixed column) with the
texts that do not read listed as read as missing; else text, with a sentence saying why.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from app.files.mixed_columns import MixedReading
from app.files.preview.json_tables import read_json_lines
from app.files.preview.paging import shown_cell
from app.files.preview.table import PREVIEW_ROWS, unreadable, user_type
from app.files.preview.whole_csv import WHOLE_SHARE
from app.files.preview.whole_sql import LISTED_MISSING
from app.files.preview.whole_table import read_as
from app.files.reading import date_of, number_of, unit_of

# Records read and counted at a time.
BATCH_RECORDS = 20_000
# Distinct texts that do not read kept per column (the rest only counted).
_KEPT_TEXTS = 1_000
_FRACTION = {decimal: re.compile(rf"{re.escape(decimal)}(\d+)\D*$") for decimal in (".", ",")}


@dataclass
class _Tally:
    """What a column's cells are, counted over the whole file."""

    filled: int = 0
    numbers: int = 0  # JSON numbers
    fractional: int = 0  # of them, not whole
    flags: int = 0  # JSON true/false
    texts: int = 0
    as_number: dict[str, int] = field(default_factory=lambda: {".": 0, ",": 0})
    as_date: dict[bool, int] = field(default_factory=lambda: {False: 0, True: 0})
    order: tuple[bool | None, str | None] = (None, None)
    unread: Counter[str] = field(default_factory=Counter)
    others: int = 0  # texts that do not read beyond those kept
    units: Counter[str] = field(default_factory=Counter)
    decimals: dict[str, Counter[int]] = field(
        default_factory=lambda: {".": Counter(), ",": Counter()}
    )

    def add(self, value: Any) -> None:
        if value is None or (isinstance(value, float) and value != value):
            return
        if isinstance(value, str) and not value.strip():
            return
        self.filled += 1
        if isinstance(value, bool):
            self.flags += 1
        elif isinstance(value, int | float):
            self.numbers += 1
            self.fractional += not float(value).is_integer()
        elif isinstance(value, str):
            self._text(value.strip())

    def _text(self, text: str) -> None:
        self.texts += 1
        read = False
        for decimal in (".", ","):
            if number_of(text, decimal) is not None:
                self.as_number[decimal] += 1
                fraction = _FRACTION[decimal].search(text)
                self.decimals[decimal][len(fraction[1]) if fraction else 0] += 1
                read = True
        if read:
            self.units[unit_of(text)] += 1
        dated = [date_of(text, day_first) is not None for day_first in (False, True)]
        for day_first in (False, True):
            self.as_date[day_first] += dated[day_first]
        if self.order[0] is None and dated[0] != dated[1]:
            self.order = (dated[1], text)  # the first text only one order reads
        if not read and not any(dated):
            if text in self.unread or len(self.unread) < _KEPT_TEXTS:
                self.unread[text] += 1
            else:
                self.others += 1


def decide_jsonl(path: Path, name: str, shown: dict[str, Any]) -> list[dict[str, Any]]:
    """The columns of a JSON lines file as all its records read them (the head's columns;
    keys that appear only later are left to the pages, which say so)."""
    columns: list[dict[str, Any]] = shown["columns"]
    tallies = [_Tally() for _ in columns]
    with path.open("rb") as file:
        while records := read_json_lines(file, name, BATCH_RECORDS):
            frame = pd.json_normalize(records)
            for column, tally in zip(columns, tallies, strict=True):
                if column["name"] in frame.columns:
                    for value in frame[column["name"]].tolist():
                        tally.add(value)
    return [_decided(column, tally) for column, tally in zip(columns, tallies, strict=True)]


def first_rows(path: Path, name: str, columns: list[dict[str, Any]]) -> list[list[Any]]:
    """The first rows of a JSON lines file as its columns' decision reads them."""
    with path.open("rb") as file:
        records = read_json_lines(file, name, PREVIEW_ROWS)
    table = read_as(pd.json_normalize(records), columns)
    width, dtypes = len(columns), [str(column.get("dtype", "")) for column in columns]
    rows = []
    for record in table.to_dict("records"):
        row = [shown_cell(record.get(f"c{at}"), dtypes[at]) for at in range(width)]
        for at in range(width):
            text = record.get(f"u{at}")
            if isinstance(text, str):
                row[at] = unreadable(text)
        rows.append(row)
    return rows


def _decided(column: dict[str, Any], tally: _Tally) -> dict[str, Any]:
    kind = user_type(column.get("dtype", ""))
    filled = tally.filled
    if not filled:
        return column
    enough = WHOLE_SHARE * filled
    unread = sum(tally.unread.values()) + tally.others
    if kind == "yes/no":
        return column if tally.flags == filled else _as_text(column, filled - tally.flags)
    if kind == "number" and tally.numbers == filled and not column.get("mixed"):
        return column | ({"dtype": "float64"} if tally.fractional else {})
    decimal = max((",", "."), key=lambda d: (tally.as_number[d], d == "."))
    numbers = tally.numbers + tally.as_number[decimal]
    day_first = tally.order[0] if tally.order[0] is not None else bool(column.get("day_first"))
    if tally.as_date[not day_first] > tally.as_date[day_first]:
        day_first = not day_first
    dates = tally.as_date[day_first]
    if kind == "date" and not column.get("mixed") and dates == filled:
        order_ok = tally.order[0] is None or tally.order[0] == _head_day_first(column)
        if order_ok:
            return column
    if numbers >= enough and numbers >= dates:
        spec: dict[str, Any] = {
            "name": column["name"],
            "dtype": "float64",
            "mixed": "number",
            "decimal_separator": decimal,
        }
        spec |= _units(tally, decimal)
        reading = MixedReading("number", decimal=decimal, units=spec.get("currencies") or [])
    elif dates >= enough:
        settled = tally.order[1] if tally.order[0] == day_first else None
        spec = {
            "name": column["name"],
            "dtype": "datetime64[ns]",
            "mixed": "date",
            "day_first": day_first,
            "settled_by": settled,
        }
        reading = MixedReading("date", day_first=day_first, settled_by=settled)
    else:
        if kind == "text":
            return column
        return _as_text(column, filled - max(numbers, dates))
    ranked = sorted(tally.unread.items(), key=lambda item: (-item[1], item[0]))
    listed = ranked[:LISTED_MISSING]
    others = unread - sum(count for _, count in listed)
    said = reading.describe(others)
    if listed:
        told = ", ".join(f'"{text}" ({count:,})' for text, count in listed)
        said += f"; read as missing: {told}"
        spec["missing_values"] = [{"value": text, "count": count} for text, count in listed]
    return spec | {"unreadable": others, "reading": said}


def _head_day_first(column: dict[str, Any]) -> bool:
    return str(column.get("date_format") or "").startswith("%d")


def _units(tally: _Tally, decimal: str) -> dict[str, Any]:
    """The currency (or currencies, the commonest first) and usual decimals of a column's
    amount texts."""
    ranked = [
        unit
        for unit, _ in sorted(tally.units.items(), key=lambda item: (-item[1], item[0]))
        if unit
    ]
    if not ranked:
        return {}
    counts = tally.decimals[decimal]
    decimals = max(counts, key=lambda digits: (counts[digits], -digits)) if counts else 0
    if ranked == ["%"]:
        return {"unit": "%", "decimals": decimals}
    found: dict[str, Any] = {"decimals": decimals}
    if len(ranked) == 1:
        found |= {"unit": ranked[0], "currency": ranked[0]}
    else:
        found["currencies"] = [unit for unit in ranked if unit != "%"]
    return found


def _as_text(column: dict[str, Any], cells: int) -> dict[str, Any]:
    words = {"number": "numbers", "date": "dates", "yes/no": "yes or no"}
    word = words.get(user_type(column.get("dtype", "")), "readable")
    verb = "is" if cells == 1 else "are"
    reading = f"text: {cells:,} cell{'s' if cells != 1 else ''} {verb} not {word}"
    return {"name": column["name"], "dtype": "str", "reading": reading}
