"""The profile of a CSV's columns over all its rows, read as the whole file's decision of
its kinds reads them (whole_kinds.py): from its typed copy in Parquet when it has one
(paging.build_table_copy), else from its text with the same SQL as its pages. DuckDB reads
the file; nothing of it is held. The same shape as app.files.profile's sample profile,
which remains the fallback (a file too costly to read whole within the time allowed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from app.files.preview.csv_sql import literal
from app.files.preview.paging import (
    connect,
    read_csv_fields,
    shown_cell,
    table_copy_path,
    unread_sql,
)
from app.files.preview.table import jsonable, user_type
from app.files.preview.whole_table import stored_marks

# The most frequent values listed for a text column, and the characters kept of each.
TOP_VALUES = 5
TOP_VALUE_CHARS = 100
_KIND = {"number": "number", "date": "datetime", "yes/no": "boolean", "text": "text"}


def profile_whole_csv(path: Path, *, shown: dict[str, Any], work: Path) -> dict[str, Any]:
    """Profiles every row of a CSV as `shown` (its preview, with the whole file's decision)
    reads it. Runs in the preview child process.

    Returns:
        `{rows_profiled, complete, columns}` as app.files.profile.profile_frame gives them.
    """
    columns: list[dict[str, Any]] = shown["columns"]
    copy = table_copy_path(shown, work)
    if copy.exists():
        marks = stored_marks(copy, len(columns))
        source = f"SELECT * FROM read_parquet({literal(copy)})"
        return _profile(copy, source, [f"c{i}" for i in range(len(columns))], marks, columns)
    return read_csv_fields(
        path,
        shown,
        work,
        lambda readable, source, typed: _profile(
            readable, source, typed, unread_sql(typed, columns), columns
        ),
    )


def _profile(
    readable: Path,
    source: str,
    exprs: list[str],
    unread: list[str | None],
    columns: list[dict[str, Any]],
) -> dict[str, Any]:
    con = connect(readable)
    try:
        width = len(con.execute(f"DESCRIBE {source}").fetchall())
        fields = ", ".join(f"c{i}" for i in range(len(columns)))
        extra = [f"u{i}" for i, mark in enumerate(unread) if mark == f"u{i}"]
        listed = ", ".join([fields, *extra])
        if width != len(columns) + len(extra):
            raise ValueError(f"it has {width} columns where its first rows have {len(columns)}")
        con.execute(f"CREATE TEMP VIEW raw AS SELECT * FROM ({source}) AS s({listed})")
        select = ", ".join(
            [f"{expr} AS v{i}" for i, expr in enumerate(exprs)]
            + [f"{mark} AS m{i}" for i, mark in enumerate(unread) if mark is not None]
        )
        con.execute(f"CREATE TEMP VIEW typed AS SELECT {select} FROM raw")
        kinds = [user_type(column.get("dtype", "")) for column in columns]
        parts = ["count(*)"]
        for i, kind in enumerate(kinds):
            unreadable = f"count(m{i})" if unread[i] is not None else "0"
            missing = f"count(*) FILTER (WHERE v{i} IS NULL)"
            parts += [missing, unreadable, f"count(DISTINCT v{i})"]
            if kind == "number":
                parts += [f"min(v{i})", f"max(v{i})", f"avg(v{i})"]
            elif kind == "date":
                parts += [f"min(v{i})", f"max(v{i})", f"avg(epoch_us(v{i}))"]
            else:
                parts += ["NULL", "NULL", "NULL"]
        found = con.execute(f"SELECT {', '.join(parts)} FROM typed").fetchone()
        assert found is not None
        rows = int(found[0])
        out = []
        for i, (column, kind) in enumerate(zip(columns, kinds, strict=True)):
            missing, unreadable, distinct, low, high, mean = found[1 + 6 * i : 7 + 6 * i]
            dtype = str(column.get("dtype", ""))
            profiled: dict[str, Any] = {
                "name": str(column["name"]),
                "dtype": dtype,
                "kind": _KIND[kind],
                "missing": int(missing) - int(unreadable),
                "unreadable": int(unreadable),
                "distinct": int(distinct),
                "min": None,
                "max": None,
                "mean": None,
                "top": None,
            }
            if kind in ("number", "date") and low is not None:
                profiled["min"], profiled["max"] = shown_cell(low, dtype), shown_cell(high, dtype)
                profiled["mean"] = (
                    jsonable(pd.Timestamp(int(mean), unit="us"))
                    if kind == "date"
                    else jsonable(float(mean))
                )
            elif kind in ("yes/no", "text"):
                profiled["top"] = _top(con, i)
            out.append(profiled)
    finally:
        con.close()
    return {"rows_profiled": rows, "complete": True, "columns": out}


def _top(con: Any, at: int) -> list[dict[str, Any]]:
    """A column's most frequent values, most first; ties in the order of their text."""
    found = con.execute(
        f"SELECT v{at}, count(*) AS n FROM typed WHERE v{at} IS NOT NULL"
        f" GROUP BY v{at} ORDER BY n DESC, CAST(v{at} AS VARCHAR) LIMIT ?",
        [TOP_VALUES],
    ).fetchall()
    return [{"value": _shown(value), "count": int(count)} for value, count in found]


def _shown(value: Any) -> Any:
    if isinstance(value, str) and len(value) > TOP_VALUE_CHARS:
        return value[: TOP_VALUE_CHARS - 1] + "…"
    return jsonable(value)
