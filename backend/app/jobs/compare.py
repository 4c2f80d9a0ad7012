"""What changed between two runs of a job: for each named result, its value before and after
and the change in per cent; for a table, its rows counted, and the rows added and removed
(by whole-row content).

Results are plain JSON values: numbers, strings, lists, and tables given either as records
(`[{column: value}, ...]`) or as `{"columns": [...], "rows": [[...], ...]}`. The shape of an
entry is API.md's `{before, after, pct}`, with `changed` (and for tables `rows_added`,
`rows_removed`) added.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

# Rows of a table compared one by one at most (per side); a bigger table is compared by its
# row count alone (rows_added / rows_removed are then null), so the work stays bounded.
MAX_COMPARED_ROWS = 200_000


def is_number(value: object) -> bool:
    """A finite int or float (a bool is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value)


def pct_change(before: object, after: object) -> float | None:
    """The change from `before` to `after` in per cent of |before|; None when either is not a
    number or `before` is 0."""
    if not (is_number(before) and is_number(after)) or before == 0:
        return None
    assert isinstance(before, int | float) and isinstance(after, int | float)
    return round((after - before) / abs(before) * 100, 4)


def table_rows(value: object) -> tuple[list[str], list[list[Any]]] | None:
    """(columns, rows) when `value` is a table (records, or columns and rows), else None."""
    if isinstance(value, Mapping) and isinstance(value.get("rows"), list):
        columns = value.get("columns")
        if isinstance(columns, list):
            names = [c.get("name") if isinstance(c, Mapping) else c for c in columns]
            rows = [list(r) if isinstance(r, list | tuple) else [r] for r in value["rows"]]
            return [str(n) for n in names], rows
    if isinstance(value, list) and value and all(isinstance(r, Mapping) for r in value):
        names = list(dict.fromkeys(k for r in value for k in r))
        return [str(n) for n in names], [[r.get(n) for n in names] for r in value]
    return None


def _row_key(columns: list[str], row: list[Any]) -> str:
    """A row's content by column name (the columns' order does not matter)."""
    content = json.dumps(sorted(zip(columns, row, strict=False)), default=str, sort_keys=True)
    return hashlib.blake2b(content.encode(), digest_size=16).hexdigest()


def _compare_tables(
    before: tuple[list[str], list[list[Any]]] | None, after: tuple[list[str], list[list[Any]]]
) -> dict[str, Any]:
    after_count = len(after[1])
    if before is None:
        return {
            "before": None,
            "after": after_count,
            "pct": None,
            "changed": True,
            "rows_added": after_count,
            "rows_removed": 0,
        }
    before_count = len(before[1])
    entry: dict[str, Any] = {
        "before": before_count,
        "after": after_count,
        "pct": pct_change(before_count, after_count),
    }
    if max(before_count, after_count) > MAX_COMPARED_ROWS:
        entry.update(changed=before_count != after_count, rows_added=None, rows_removed=None)
        return entry
    old = Counter(_row_key(before[0], row) for row in before[1])
    new = Counter(_row_key(after[0], row) for row in after[1])
    added, removed = sum((new - old).values()), sum((old - new).values())
    entry.update(changed=bool(added or removed), rows_added=added, rows_removed=removed)
    return entry


def _compare_value(before: object, after: object) -> dict[str, Any]:
    before_table, after_table = table_rows(before), table_rows(after)
    if after_table is not None and (before is None or before_table is not None):
        return _compare_tables(before_table, after_table)
    if before_table is not None and after is None:
        count = len(before_table[1])
        return {
            "before": count,
            "after": None,
            "pct": None,
            "changed": True,
            "rows_added": 0,
            "rows_removed": count,
        }
    return {
        "before": before,
        "after": after,
        "pct": pct_change(before, after),
        "changed": _canonical(before) != _canonical(after),
    }


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def compare(
    previous: Mapping[str, Any] | None, current: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """Each named result's change since the previous run (`previous` None: the first run,
    where every `before` is null).

    Args:
        previous: the previous run's results, `{name: value}`.
        current: this run's results.

    Returns:
        `{name: {before, after, pct, changed}}` (tables: counts of rows as before/after, and
        rows_added / rows_removed); a name the previous run had and this one lacks is
        listed with `after` null.
    """
    previous = previous or {}
    names = list(dict.fromkeys([*current, *previous]))
    return {name: _compare_value(previous.get(name), current.get(name)) for name in names}
