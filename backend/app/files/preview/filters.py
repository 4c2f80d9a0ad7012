"""Filters of a preview (`?filter=[{column, op, value?}]`): checked against the file's
columns and written as SQL over the whole table, typed as the columns are read.

Numbers compare as numbers, dates as dates, text case-blind for `contains`. The SQL names
columns only by position (`c0`, `c1`…, never by the user's text) and passes every value as
a parameter, so neither a column's name nor a value can become SQL.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from app.files.preview.errors import PreviewError, UnknownColumn
from app.files.preview.table import user_type
from app.files.reading import number_of

Op = Literal["eq", "ne", "contains", "gt", "ge", "lt", "le", "empty", "not_empty"]
OPS: tuple[Op, ...] = get_args(Op)
# The most conditions one filter holds, and the longest value.
MAX_CONDITIONS = 20
MAX_VALUE_CHARS = 1000
_COMPARE = {"eq": "=", "ne": "<>", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}


class BadFilter(PreviewError):
    """The filter is not one the preview can apply: malformed, an unknown operator, a
    missing or ill-typed value, or too many conditions."""

    code = "bad_filter"


@dataclass(frozen=True)
class Condition:
    """One condition of a filter: a column, an operator and (but for empty and not_empty)
    a value."""

    column: str
    op: Op
    value: Any = None


def parse_filter(text: str | None) -> list[Condition]:
    """The conditions of a filter as the query gives it (JSON); [] for none.

    Raises:
        BadFilter: It is not a JSON list of `{column, op, value?}`, an operator is unknown,
            a value is missing, or it holds more than MAX_CONDITIONS conditions.
    """
    if text is None or not text.strip():
        return []
    try:
        found = json.loads(text)
    except ValueError:
        raise BadFilter(
            'The filter is not valid JSON: it should be a list such as [{"column": "Amount",'
            ' "op": "gt", "value": 100}].'
        ) from None
    if not isinstance(found, list):
        raise BadFilter("The filter should be a JSON list of conditions {column, op, value}.")
    if len(found) > MAX_CONDITIONS:
        raise BadFilter(
            f"A filter holds at most {MAX_CONDITIONS} conditions; this has {len(found)}."
        )
    conditions = []
    for at, item in enumerate(found, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("column"), str):
            raise BadFilter(f"Condition {at} of the filter needs a column name (a string).")
        op = item.get("op")
        if op not in OPS:
            raise BadFilter(
                f"Condition {at} of the filter has an unknown op {json.dumps(op)[:40]}: use one"
                f" of {', '.join(OPS)}."
            )
        value = item.get("value")
        if op not in ("empty", "not_empty"):
            if value is None:
                raise BadFilter(f'Condition {at} of the filter ("{op}") needs a value.')
            if not isinstance(value, str | int | float) or (
                isinstance(value, bool) and op not in ("eq", "ne")
            ):
                raise BadFilter(f"Condition {at} of the filter has a value of the wrong type.")
            if isinstance(value, str) and len(value) > MAX_VALUE_CHARS:
                raise BadFilter(
                    f"Condition {at}'s value is longer than {MAX_VALUE_CHARS} characters."
                )
        conditions.append(Condition(item["column"], cast(Op, op), value))
    return conditions


def check_filter(
    conditions: list[Condition], columns: list[dict[str, Any]], name: str
) -> list[Condition]:
    """The conditions with their values typed as their columns are read.

    Raises:
        UnknownColumn: A condition names no column of the table.
        BadFilter: A value cannot be read as its column's type, or `contains` is asked of a
            column that is not text, or a range of yes/no.
    """
    kinds = {str(column["name"]): user_type(column.get("dtype", "")) for column in columns}
    specs = {str(column["name"]): column for column in columns}
    typed = []
    for condition in conditions:
        if condition.column not in kinds:
            raise UnknownColumn(f'{name} has no column named "{condition.column[:200]}".')
        kind = kinds[condition.column]
        value = condition.value
        if condition.op in ("empty", "not_empty"):
            typed.append(Condition(condition.column, condition.op))
            continue
        if condition.op == "contains" and kind != "text":
            raise BadFilter(
                f'"contains" applies to text columns; "{condition.column}" holds {kind} values.'
            )
        if kind == "number":
            value = _number(value, specs[condition.column])
            if value is None:
                raise BadFilter(
                    f'"{condition.column}" holds numbers: {condition.value!r} is not one.'
                )
        elif kind == "date":
            value = _date(value)
            if value is None:
                raise BadFilter(
                    f'"{condition.column}" holds dates: {condition.value!r} is not one'
                    " (write it as 2025-07-31)."
                )
        elif kind == "yes/no":
            if condition.op not in ("eq", "ne") or not isinstance(value, bool | str):
                raise BadFilter(f'"{condition.column}" holds yes/no: compare it with eq or ne.')
            value = (
                value if isinstance(value, bool) else value.strip().lower() in ("true", "yes", "y")
            )
        else:
            value = str(value)
        typed.append(Condition(condition.column, condition.op, value))
    return typed


def _number(value: Any, column: dict[str, Any]) -> float | None:
    """A filter's value for a number column, typed as a person reads the column: `1371.3`
    or `€1,371.30`, `1.371,30 €` in a column written so, `12.5` or `12.5%` in a column of
    percents (read as fractions)."""
    if not isinstance(value, str):
        return number_of(value)
    comma = "," in (column.get("decimal"), column.get("decimal_separator"))
    number = number_of(value, ",") if comma else None
    if number is None:
        number = number_of(value)
    percent = column.get("unit") == "%" and "%" not in value
    return number / 100 if percent and number is not None else number


def _date(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        found = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return found.replace(tzinfo=None)


def where_sql(
    conditions: list[Condition],
    names: list[str],
    exprs: list[str],
    unread: list[str | None],
    kinds: Sequence[str],
) -> tuple[str, list[Any]]:
    """The SQL condition (`TRUE` for none) and its parameters.

    Args:
        conditions: Checked by `check_filter`.
        names: The table's column names, in order.
        exprs: Per column, the SQL of its typed value.
        unread: Per column, the SQL of an unreadable cell's text (None: it has none).
        kinds: Per column, its type in a person's words.
    """
    parts: list[str] = []
    params: list[Any] = []
    for condition in conditions:
        at = names.index(condition.column)
        expr, kind = exprs[at], kinds[at]
        if condition.op in ("empty", "not_empty"):
            blank = f"{expr} IS NULL" + (
                f" OR trim(CAST({expr} AS VARCHAR)) = ''" if kind == "text" else ""
            )
            blank = f"({blank})" if unread[at] is None else f"(({blank}) AND {unread[at]} IS NULL)"
            parts.append(blank if condition.op == "empty" else f"NOT {blank}")
        elif condition.op == "contains":
            parts.append(f"contains(lower(CAST({expr} AS VARCHAR)), lower(?))")
            params.append(condition.value)
        elif kind == "date" and isinstance(condition.value, dt.datetime):
            # A date without a time matches the whole day.
            day = condition.value.time() == dt.time()
            left = f"CAST({expr} AS DATE)" if day else expr
            parts.append(f"{left} {_COMPARE[condition.op]} ?")
            params.append(condition.value.date() if day else condition.value)
        else:
            parts.append(f"{expr} {_COMPARE[condition.op]} ?")
            params.append(condition.value)
    return (" AND ".join(parts) or "TRUE"), params
