"""What the whole-file pass over a CSV counts of its columns, in DuckDB's SQL (whole_kinds.py
decides from the counts): per column of numbers or dates, its filled cells and those its
reading cannot read (and the other day/month order's); per column of text, the cells that
look like numbers, amounts, ISO dates or date texts (native SQL only, so that a column of
words costs little); per column, the texts pandas reads as missing; and, for a column of
amounts, its currencies and its usual decimals.

Every count runs over the fields as `csv_sql.csv_source` reads them (`c<i>`), in as few
passes over the file as the decision needs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from app.files.preview.csv_sql import literal, missing_markers, present
from app.files.preview.paging import connect
from app.files.reading import CURRENCY

# The currencies and the percent sign an amount text carries (as reading.unit_of finds them).
_UNIT = f"(?i){CURRENCY}|%"
# What reading.number_of reads, loosely (digits and separators not checked): a text that
# does not match cannot be an amount.
_AMOUNT = (
    rf"(?i)\(?\s*[+-]?\s*(?:{CURRENCY})?\s*[+-]?\s*(?:\d[\d,.'\x{{00a0}}\x{{202f}}]*|[.,]\d+)"
    rf"\s*(?:{CURRENCY})?\s*%?\s*\)?"
)
# What reading.date_of reads, loosely (no check that the day or month exists).
_DATE_TEXT = (
    r"\d{4}[/-]\d{1,2}[/-]\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"
    r"|\d{1,2}[/.-]\d{1,2}[/.-]\d{4}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?"
)
# The texts a column's decision lists as read as missing (the most frequent first).
LISTED_MISSING = 20


def filled(at: int, column: dict[str, Any] | None = None) -> str:
    """The SQL of whether field `c<at>` holds a value (not one read as missing)."""
    return f"trim({present(f'c{at}', column)}) <> ''"


def select_one(readable: Path, source: str, width: int, parts: list[str]) -> tuple[Any, ...]:
    """The aggregates `parts` over every row of the CSV, in one pass."""
    fields = ", ".join(f"c{i}" for i in range(width))
    con = connect(readable)
    try:
        row = con.execute(f"SELECT {', '.join(parts)} FROM ({source}) AS s({fields})").fetchone()
    finally:
        con.close()
    assert row is not None
    return tuple(row)


def checked_parts(at: int, expr: str, other: str | None) -> list[str]:
    """Five aggregates of a column read by `expr` (and by `other`, the other day/month
    order): filled cells, cells `expr` cannot read, cells `other` cannot read, a text
    only `other` reads and a text only `expr` reads (those settle the order)."""
    has = filled(at)
    parts = [
        f"count(*) FILTER (WHERE {has})",
        f"count(*) FILTER (WHERE {has} AND ({expr}) IS NULL)",
    ]
    if other is None:
        return [*parts, "NULL", "NULL", "NULL"]
    return [
        *parts,
        f"count(*) FILTER (WHERE {has} AND ({other}) IS NULL)",
        f"min(trim(c{at})) FILTER (WHERE {has} AND ({expr}) IS NULL AND ({other}) IS NOT NULL)",
        f"min(trim(c{at})) FILTER (WHERE {has} AND ({other}) IS NULL AND ({expr}) IS NOT NULL)",
    ]


def checked_counts(values: tuple[Any, ...]) -> dict[str, Any]:
    """The five aggregates of `checked_parts`, named."""
    count, unread, other_unread, example, own_example = values
    return {
        "filled": int(count),
        "unread": int(unread),
        "other_unread": None if other_unread is None else int(other_unread),
        "example": example,
        "own_example": own_example,
    }


# The first characters a number, an amount or a date can start with: a column of text whose
# cells mostly start otherwise is not looked at further (the only cheap test).
_STARTS = "0123456789+-.,(€$£¥₹UuEeGgCcJjIi"


def gate_parts(at: int) -> list[str]:
    """Two cheap aggregates of a text column: its filled cells, and those whose first
    character a number, an amount or a date can start with."""
    has, text = filled(at), f"trim(c{at})"
    starts = ", ".join(map(literal, _STARTS))
    return [
        f"count(*) FILTER (WHERE {has})",
        f"count(*) FILTER (WHERE {has} AND left({text}, 1) IN ({starts}))",
    ]


def text_parts(at: int) -> list[str]:
    """Five aggregates of a text column: its filled cells, and those that read as plain
    numbers, that look like amounts, that read as ISO dates, and that look like dates."""
    has, text = filled(at), f"trim(c{at})"
    return [
        f"count(*) FILTER (WHERE {has})",
        f"count(*) FILTER (WHERE {has} AND TRY_CAST({text} AS DOUBLE) IS NOT NULL)",
        f"count(*) FILTER (WHERE {has} AND regexp_full_match({text}, {literal(_AMOUNT)}))",
        f"count(*) FILTER (WHERE {has} AND TRY_CAST({text} AS TIMESTAMP) IS NOT NULL)",
        f"count(*) FILTER (WHERE {has} AND regexp_full_match({text}, {literal(_DATE_TEXT)}))",
    ]


def marker_part(at: int) -> str:
    """The texts pandas reads as missing in field `c<at>`, each with its count."""
    markers = missing_markers()
    # Their first characters first: a cheap test that most fields fail.
    firsts = ", ".join(map(literal, sorted({marker[0] for marker in markers})))
    listed = ", ".join(map(literal, markers))
    return (
        f"histogram(c{at}) FILTER (WHERE CASE WHEN left(c{at}, 1) IN ({firsts})"
        f" THEN c{at} IN ({listed}) ELSE false END)"
    )


def amount_parts(at: int, typed: str, decimal: str) -> list[str]:
    """Two aggregates of a column of amounts read by `typed`: each currency (or `%`) its
    readable cells carry, with its count; and the digits after the decimal separator
    most of them are written with."""
    read = f"{filled(at)} AND ({typed}) IS NOT NULL"
    text = f"trim(c{at})"
    unit = f"upper(regexp_extract({text}, {literal(_UNIT)}, 0))"
    pattern = re.escape(decimal) + r"(\d+)\D*$"
    fraction = f"regexp_extract({text}, {literal(pattern)}, 1)"
    return [
        f"histogram({unit}) FILTER (WHERE {read} AND {unit} <> '')",
        f"mode(length({fraction})) FILTER (WHERE {read})",
    ]


def unread_texts(
    readable: Path, source: str, width: int, at: int, typed: str
) -> tuple[list[dict[str, Any]], int]:
    """The texts of field `c<at>` that `typed` cannot read, the most frequent first (up to
    LISTED_MISSING, each `{value, count}`), and how many cells hold them all."""
    fields = ", ".join(f"c{i}" for i in range(width))
    where = f"{filled(at)} AND ({typed}) IS NULL"
    con = connect(readable)
    try:
        top = con.execute(
            f"SELECT trim(c{at}) AS v, count(*) AS n, sum(count(*)) OVER () AS total"
            f" FROM ({source}) AS s({fields}) WHERE {where}"
            " GROUP BY v ORDER BY n DESC, v LIMIT ?",
            [LISTED_MISSING],
        ).fetchall()
    finally:
        con.close()
    listed = [{"value": str(value), "count": int(count)} for value, count, _ in top]
    return listed, int(top[0][2]) if top else 0
