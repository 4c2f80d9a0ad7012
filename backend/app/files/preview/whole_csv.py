"""Each column of a CSV decided over all its cells (whole_kinds.py runs it in the preview
child process): the counts of whole_sql.py, a few passes of DuckDB over the file (most
only when needed), the file never held.

- A number, date or yes/no column of the head some of whose later cells do not read so
  becomes a mixed column (those cells kept as text, marked) while WHOLE_SHARE of its cells
  still read, else text, with a sentence saying why (then looked at as a text column); a
  date column takes the other day/month order when that order reads more of its cells.
- A text column of the head becomes numbers or dates when WHOLE_SHARE of its filled cells
  read so (its first rows may be "n/a", "—" or "TBD", the rest numbers): the texts that do
  not read are then read as missing and listed (`missing_values`, with counts).
- Every number or date column lists the texts pandas reads as missing it holds ("n/a").
- A column of amounts takes its currency (or `currencies`, when they differ) and its usual
  decimals from all its cells.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from app.files.mixed_columns import MixedReading
from app.files.preview import whole_sql
from app.files.preview.csv_sql import typed_sql
from app.files.preview.table import user_type

# The share of a text column's filled cells that must read as numbers (or dates) for the
# whole file to read the column so; the others are read as missing, and listed.
WHOLE_SHARE = 0.99
_WORDS = {"number": "numbers", "date": "dates", "yes/no": "yes or no"}
# The strict date formats whose day and month can be read the other way round.
_SWAPPABLE = re.compile(r"%([dm])([/.-])%([dm])\2%Y(.*)")


def decide_csv(readable: Path, source: str, shown: dict[str, Any]) -> list[dict[str, Any]]:
    """The columns of a CSV as all its cells read them (see the module's docstring).

    Args:
        readable: The one file DuckDB may read (the CSV, or its UTF-8 copy).
        source: The SQL of its text fields (csv_sql.csv_source).
        shown: The preview of its head.
    """
    columns: list[dict[str, Any]] = shown["columns"]
    text_format: dict[str, Any] = shown.get("format") or {}
    head_rows = int(shown.get("decided_rows") or 0)
    width = len(columns)

    def run(parts: list[str]) -> tuple[Any, ...]:
        return whole_sql.select_one(readable, source, width, parts)

    checked = {
        at: (typed_sql(f"c{at}", column, text_format), _other_order(column, at, text_format))
        for at, column in enumerate(columns)
        if user_type(column.get("dtype", "")) != "text"
    }
    texts = [at for at in range(width) if at not in checked]
    row = run(
        _checked_parts(checked)
        + [part for at in texts for part in whole_sql.gate_parts(at)]
        + [whole_sql.marker_part(at) for at in checked]
    )
    counts = {at: whole_sql.checked_counts(row[5 * n : 5 * n + 5]) for n, at in enumerate(checked)}
    rest = row[5 * len(checked) :]
    # A text column is looked at further only when nearly all its cells may be numbers or
    # dates by their first character.
    hopeful = [
        at
        for n, at in enumerate(texts)
        if rest[2 * n] and rest[2 * n + 1] >= WHOLE_SHARE * rest[2 * n]
    ]
    markers: dict[int, Any] = dict(zip(checked, rest[2 * len(texts) :], strict=True))

    final = [dict(column) for column in columns]
    # A strict column with cells it cannot read is counted again read as a mixed one,
    # which reads amounts and dates in more spellings.
    again: dict[int, dict[str, Any]] = {}
    for at, found in counts.items():
        column = final[at]
        if found["other_unread"] is not None and found["other_unread"] < found["unread"]:
            column = final[at] = _flipped(column, found["example"])
            found["unread"] = found["other_unread"]
        if not found["unread"] or column.get("mixed"):
            final[at] = _judged(column, found, head_rows)
        elif user_type(column.get("dtype", "")) in ("number", "date"):
            again[at] = _as_mixed(column, text_format)
        else:
            final[at] = _as_text(column, found, head_rows)
    if again:
        row = run(
            _checked_parts(
                {at: (typed_sql(f"c{at}", spec, text_format), None) for at, spec in again.items()}
            )
        )
        for n, (at, spec) in enumerate(again.items()):
            final[at] = _judged(spec, whole_sql.checked_counts(row[5 * n : 5 * n + 5]), head_rows)
    # A column the head read as numbers or dates that the whole file does not (its first
    # rows all missing, say) is looked at as a text column.
    demoted = [at for at in checked if user_type(final[at].get("dtype", "")) == "text"]
    looks: dict[int, tuple[Any, ...]] = {}
    if hopeful or demoted:
        row = run(
            [part for at in hopeful + demoted for part in whole_sql.text_parts(at)]
            + [whole_sql.marker_part(at) for at in hopeful]
        )
        looks = {at: row[5 * n : 5 * n + 5] for n, at in enumerate(hopeful + demoted)}
        hopeful_markers = row[5 * len(looks) :]
        markers |= dict(zip(hopeful, hopeful_markers, strict=True))
    promoted = _promoted(final, looks, text_format, run)
    missing: dict[int, tuple[list[dict[str, Any]], int]] = {}
    for at in promoted:
        expr = typed_sql(f"c{at}", final[at], text_format)
        listed, total = whole_sql.unread_texts(readable, source, width, at, expr)
        missing[at] = (listed, total - sum(entry["count"] for entry in listed))
    for at, column in enumerate(final):
        if markers.get(at) and user_type(column.get("dtype", "")) in ("number", "date"):
            entries = [{"value": str(k), "count": int(v)} for k, v in markers[at].items()]
            listed, others = missing.get(at, ([], 0))
            missing[at] = (listed + entries, others)
    for at, (listed, others) in missing.items():
        final[at] = _with_missing(final[at], listed, others, promoted=at in promoted)
    _amounts(final, text_format, run)
    return final


def _checked_parts(checked: Mapping[int, tuple[str, str | None]]) -> list[str]:
    return [
        part
        for at, (expr, other) in checked.items()
        for part in whole_sql.checked_parts(at, expr, other)
    ]


def _promoted(
    final: list[dict[str, Any]],
    looks: dict[int, tuple[Any, ...]],
    text_format: dict[str, Any],
    run: Callable[[list[str]], tuple[Any, ...]],
) -> set[int]:
    """Reads as numbers or dates the text columns WHOLE_SHARE of whose filled cells read
    so (plain numbers and ISO dates as such, amounts and date texts as mixed columns,
    counted again exactly); returns their positions."""
    promoted: set[int] = set()
    day_first = text_format.get("decimal") == "," or text_format.get("delimiter") == ";"
    candidates: dict[int, dict[str, Any]] = {}
    for at, (count, plain, amounts, iso, dates) in looks.items():
        name, enough = final[at]["name"], WHOLE_SHARE * count
        if not count:
            continue
        if plain >= enough:
            final[at] = {"name": name, "dtype": "float64"}
            promoted.add(at)
        elif iso >= enough:
            final[at] = {"name": name, "dtype": "datetime64[ns]", "date_format": "ISO8601"}
            promoted.add(at)
        elif amounts >= enough or dates >= enough:
            candidates[at] = _promotion(name, dates >= enough, day_first)
    if not candidates:
        return promoted
    both = {
        at: (
            typed_sql(f"c{at}", spec, text_format),
            typed_sql(
                f"c{at}",
                spec | {"decimal_separator": ",", "day_first": not spec.get("day_first")},
                text_format,
            ),
        )
        for at, spec in candidates.items()
    }
    row = run(_checked_parts(both))
    for n, (at, spec) in enumerate(candidates.items()):
        found = whole_sql.checked_counts(row[5 * n : 5 * n + 5])
        spec = _read_better(spec, found)
        if found["unread"] <= (1 - WHOLE_SHARE) * found["filled"]:
            final[at] = spec
            promoted.add(at)
    return promoted


def _promotion(name: str, dates: bool, day_first: bool) -> dict[str, Any]:
    """A text column's reading as mixed numbers or dates, to be counted."""
    if dates:
        return {
            "name": name,
            "dtype": "datetime64[ns]",
            "mixed": "date",
            "day_first": day_first,
            "settled_by": None,
        }
    return {"name": name, "dtype": "float64", "mixed": "number", "decimal_separator": "."}


def _read_better(spec: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """A promoted column's spec with the reading (decimal separator, day/month order) that
    reads more of its cells, the count `found` made its own, and its sentence."""
    date = spec["mixed"] == "date"
    other = found["other_unread"]
    if other is not None and other < found["unread"]:
        found["unread"] = other
        if date:
            spec = spec | {"day_first": not spec["day_first"], "settled_by": found["example"]}
        else:
            spec = spec | {"decimal_separator": ","}
    elif date and other is not None and other > found["unread"]:
        spec = spec | {"settled_by": found["own_example"]}
    reading = MixedReading(
        str(spec["mixed"]),
        decimal=str(spec.get("decimal_separator") or "."),
        day_first=bool(spec.get("day_first")),
        settled_by=spec.get("settled_by"),
    )
    return spec | {"unreadable": 0, "reading": reading.describe(0)}


def _with_missing(
    column: dict[str, Any], listed: list[dict[str, Any]], others: int, *, promoted: bool
) -> dict[str, Any]:
    """A column with the texts read as missing listed (`missing_values`, the most frequent
    first) and its sentence saying so; `others`: the cells of a promoted column that do not
    read and are not listed (marked in a mixed column, missing in another)."""
    entries = sorted(listed, key=lambda entry: (-entry["count"], entry["value"]))
    out = dict(column)
    if promoted and column.get("mixed"):
        reading = MixedReading(
            str(column["mixed"]),
            decimal=str(column.get("decimal_separator") or "."),
            day_first=bool(column.get("day_first")),
            settled_by=column.get("settled_by"),
        )
        said, out["unreadable"] = reading.describe(others), others
    elif promoted:
        said = f"{_WORDS[user_type(column['dtype'])]} over the whole file"
    else:
        said = str(column.get("reading") or "")
    told = ", ".join(f'"{entry["value"]}" ({entry["count"]:,})' for entry in entries)
    if others and promoted and not column.get("mixed"):
        told += f" and {others:,} other cell{'s' if others != 1 else ''}"
    if told:
        said = f"{said}; read as missing: {told}" if said else f"read as missing: {told}"
        out["missing_values"] = entries
    return out | {"reading": said}


def _amounts(
    final: list[dict[str, Any]],
    text_format: dict[str, Any],
    run: Callable[[list[str]], tuple[Any, ...]],
) -> None:
    """The currencies and usual decimals of the columns of amounts, from all their cells."""
    wanted: list[tuple[int, str]] = []
    parts: list[str] = []
    for at, column in enumerate(final):
        if user_type(column.get("dtype", "")) != "number":
            continue
        if "unit" not in column and column.get("mixed") != "number":
            continue
        if column.get("mixed") == "number":
            decimal = str(column.get("decimal_separator") or ".")
        else:
            decimal = str(column.get("decimal") or text_format.get("decimal") or ".")
        wanted.append((at, decimal))
        parts += whole_sql.amount_parts(at, typed_sql(f"c{at}", column, text_format), decimal)
    if not parts:
        return
    row = run(parts)
    for n, (at, _) in enumerate(wanted):
        units, decimals = row[2 * n : 2 * n + 2]
        final[at] = _with_units(final[at], units or {}, decimals)


def _with_units(column: dict[str, Any], units: dict[str, int], decimals: Any) -> dict[str, Any]:
    """A number column with the currencies its cells carry (the commonest first) and the
    decimals most of them are written with."""
    ranked = [unit for unit, _ in sorted(units.items(), key=lambda item: (-item[1], item[0]))]
    out = {key: value for key, value in column.items() if key not in ("currency", "currencies")}
    if "%" in ranked:
        return out | ({"decimals": int(decimals)} if decimals is not None else {})
    if len(ranked) == 1:
        out["currency"] = ranked[0]
        out["unit"] = ranked[0]
    elif ranked:
        out["currencies"] = ranked
        if "unit" in out:
            out["unit"] = None  # its cells read as amounts; no one currency to show
        if out.get("mixed") and isinstance(out.get("reading"), str):
            out["reading"] = _said_currencies(out["reading"], ranked)
    if ranked and decimals is not None:
        out["decimals"] = int(decimals)
    return out


def _said_currencies(reading: str, units: list[str]) -> str:
    """A mixed column's sentence saying the currencies its whole file holds."""
    said = re.sub(r"; amounts in [^;]*", "", reading)
    first, _, rest = said.partition(";")
    amounts = f"; amounts in {', '.join(units[:-1])} and {units[-1]}"
    return first + amounts + (f";{rest}" if rest else "")


def _other_order(column: dict[str, Any], at: int, text_format: dict[str, Any]) -> str | None:
    """The SQL that reads a date column's field with day and month the other way round,
    when the head did not settle its order; None for other columns."""
    if column.get("mixed") == "date":
        if column.get("settled_by"):
            return None
        return typed_sql(f"c{at}", column | {"day_first": not column.get("day_first")}, text_format)
    swapped = _swapped(column.get("date_format"))
    if swapped is None or not str(column.get("dtype", "")).startswith("datetime64"):
        return None
    return typed_sql(f"c{at}", column | {"date_format": swapped}, text_format)


def _swapped(date_format: Any) -> str | None:
    found = _SWAPPABLE.fullmatch(date_format) if isinstance(date_format, str) else None
    if found is None or found[1] == found[3]:
        return None
    return f"%{found[3]}{found[2]}%{found[1]}{found[2]}%Y{found[4]}"


def _flipped(column: dict[str, Any], example: Any) -> dict[str, Any]:
    """A date column read with day and month the other way round, settled by `example`."""
    if column.get("mixed") == "date":
        return column | {"day_first": not column.get("day_first"), "settled_by": example}
    date_format = _swapped(column.get("date_format")) or ""
    order = "day-first" if date_format.startswith("%d") else "month-first"
    return column | {"date_format": date_format, "reading": f"dates read {order} (from {example})"}


def _as_mixed(column: dict[str, Any], text_format: dict[str, Any]) -> dict[str, Any]:
    """A strict number or date column read as a mixed one (its unreadable cells marked)."""
    spec = {key: value for key, value in column.items() if key not in ("date_format", "reading")}
    if user_type(column.get("dtype", "")) == "date":
        day_first = str(column.get("date_format") or "").startswith("%d")
        return spec | {"mixed": "date", "day_first": day_first, "settled_by": None}
    decimal = column.get("decimal") or text_format.get("decimal") or "."
    return spec | {"mixed": "number", "decimal_separator": decimal}


def _judged(column: dict[str, Any], found: dict[str, Any], head_rows: int) -> dict[str, Any]:
    """A column as the whole file's counts of it decide: as it is, or text when too few of
    its cells read as its kind."""
    unread, filled = found["unread"], found["filled"]
    if unread > (1 - WHOLE_SHARE) * filled:
        return _as_text(column, found, head_rows)
    if not column.get("mixed"):
        return column
    reading = MixedReading(
        str(column["mixed"]),
        decimal=str(column.get("decimal_separator") or "."),
        day_first=bool(column.get("day_first")),
        settled_by=column.get("settled_by"),
    )
    return column | {"unreadable": unread, "reading": reading.describe(unread)}


def _as_text(column: dict[str, Any], found: dict[str, Any], head_rows: int) -> dict[str, Any]:
    """A column read as text, with the sentence that says why."""
    words = _WORDS.get(user_type(column.get("dtype", "")), "readable")
    after = found["unread"] - int(column.get("unreadable") or 0)
    cells = after if after > 0 else found["unread"]
    verb = "is" if cells == 1 else "are"
    where = f" after row {head_rows:,}" if after > 0 and head_rows else ""
    reading = f"text: {cells:,} cell{'s' if cells != 1 else ''}{where} {verb} not {words}"
    return {"name": column["name"], "dtype": "str", "reading": reading}
