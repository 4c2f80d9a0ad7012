"""Pages of a whole table, sorted over all its rows when asked, read by DuckDB rather than
by loading the table into pandas: a 1 GB CSV pages and sorts in seconds.

A page shows its cells as the preview of the file's head shows them (see table.py): the
head decided each column's type and how its text is read (decimal commas, amounts,
percents, yes/no, date formats), and the same reading is written in SQL for the whole
file (csv_sql.py). Parquet is read as it is. Workbooks and JSON, which DuckDB does not read
here, are read whole once as their preview reads them and kept beside the file as Parquet. A big CSV
is copied once, in the background, into Parquet with its columns typed as the preview reads
them (`build_table_copy`): its later pages and sorts read that copy's columns instead of
parsing all of its text again.

The file's contents are hostile: DuckDB runs with no access to anything but the one file it
reads (`allowed_paths`, external access off, settings locked, no extensions loaded), within
a memory limit, inside the preview child process (preview_process) and its own limits.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import duckdb
from duckdb.func import FunctionNullHandling
from duckdb.sqltypes import BOOLEAN, DOUBLE, TIMESTAMP, VARCHAR

from app.files.preview.csv_sql import csv_source, literal, present
from app.files.preview.errors import PreviewError, TooCostly, UnknownColumn, UnreadableFile
from app.files.preview.filters import Condition, where_sql
from app.files.preview.kinds import KIND_LABELS, preview_kind
from app.files.preview.table import PREVIEW_ROWS, cell, unreadable, user_type
from app.files.preview.whole_table import stored_marks, whole_table
from app.files.reading import date_of, number_of

T = TypeVar("T")

# The most rows a page holds.
MAX_PAGE_ROWS = 500
# What DuckDB may hold in memory (the preview child's own limit is above it), and its threads.
DUCKDB_MEMORY = "1GB"
DUCKDB_THREADS = 2
# A sorted page that ends further down than this sorts the keys alone, then fetches its rows.
DEEP_PAGE_ROWS = 10_000
# A CSV at least this large is worth a typed copy in Parquet (`build_table_copy`): below it,
# DuckDB parses the whole text in a fraction of a second anyway.
TABLE_COPY_MIN_BYTES = 16 << 20
# Changes when what a typed copy holds changes, so that older copies are not read.
_TABLE_COPY_SHAPE = 2
# A text column with at most this many distinct values sorts deep in its order by each
# value's rank (a small sort and a join) rather than by its text, which sorts slowly.
RANKED_TEXT_VALUES = 1_000_000


@dataclass(frozen=True)
class Window:
    """Which rows of the whole table to show, in which order.

    Attributes:
        offset: The first row shown (0-based, after sorting).
        limit: How many rows at most (up to MAX_PAGE_ROWS).
        sort: The column to sort all rows by, or None for the file's order.
        descending: Whether the sort is from the largest value down.
        conditions: The filter: only rows that meet all of these (filters.py).
    """

    offset: int = 0
    limit: int = PREVIEW_ROWS
    sort: str | None = None
    descending: bool = False
    conditions: tuple[Condition, ...] = ()

    @property
    def in_head(self) -> bool:
        """Whether the rows are among those the preview of the file's head holds."""
        return (
            self.sort is None and not self.conditions and self.offset + self.limit <= PREVIEW_ROWS
        )


def read_page(
    path: Path, *, name: str, shown: dict[str, Any], window: Window, work: Path
) -> dict[str, Any]:
    """The rows of a window of the whole table, and its exact row count.

    Runs in the preview child process.

    Args:
        path: The local file.
        name: Its user-facing name: its extension gives the kind; errors quote it.
        shown: The preview of its head (of the sheet and header row meant): its columns,
            `format`, `sheet` and `header_row` say how to read the rest.
        window: The rows asked for.
        work: A path prefix beside the file's cached copy for what a page keeps (a UTF-8
            copy of a text file in another encoding, a workbook's table as Parquet).

    Returns:
        `{rows, row_count}`.

    Raises:
        UnknownColumn: `window.sort` is no column of the table.
        UnreadableFile: The file cannot be read as its kind.
        TooCostly: Reading it needs more memory than allowed.
    """
    kind = preview_kind(name)
    columns = shown["columns"]
    names = [str(column["name"]) for column in columns]
    if window.sort is not None and window.sort not in names:
        raise UnknownColumn(f'{name} has no column named "{window.sort}".')
    try:
        if kind == "csv":
            # Counted exactly as the file was uploaded (counting.py), title rows taken off.
            count = int(shown["row_count"])
            copy = table_copy_path(shown, work)
            if copy.exists():
                stored = [f"u{i}" if _marks(column) else None for i, column in enumerate(columns)]
                return _query(
                    copy,
                    _numbered_parquet(copy),
                    Reading(None, stored),
                    columns,
                    window,
                    count,
                    numbered=True,
                )
            return read_csv_fields(
                path,
                shown,
                work,
                lambda readable, source, typed: _query(
                    readable,
                    source,
                    Reading(typed, unread_sql(typed, columns)),
                    columns,
                    window,
                    count,
                ),
            )
        if kind == "parquet":
            readable, source = path, f"SELECT * FROM read_parquet({literal(path)})"
            reading = Reading(None, [None] * len(columns))
        else:
            readable = whole_table(path, name, shown, work)
            source = f"SELECT * FROM read_parquet({literal(readable)})"
            reading = Reading(None, stored_marks(readable, len(columns)))
        return _query(readable, source, reading, columns, window, None)
    except PreviewError:
        raise
    except duckdb.OutOfMemoryException as exc:
        raise TooCostly(
            f"{name} is too large to page through: it needed more than {DUCKDB_MEMORY} of"
            " memory. It can still be downloaded and used in questions."
        ) from exc
    except (duckdb.Error, ValueError, OSError) as exc:
        label = KIND_LABELS[kind] if kind else "a table"
        raise UnreadableFile(f"{name} could not be read as {label}: {_describe(exc)}") from exc


def table_copy_path(shown: dict[str, Any], work: Path) -> Path:
    """Where the typed copy of a CSV read as `shown` says is kept (one per way of reading
    it: header row, separators, column types)."""
    reading = {key: shown.get(key) for key in ("columns", "format", "header_row")}
    text = json.dumps([_TABLE_COPY_SHAPE, reading], sort_keys=True, default=str)
    return Path(f"{work}.table.{hashlib.sha256(text.encode()).hexdigest()[:24]}.parquet")


def build_table_copy(path: Path, *, shown: dict[str, Any], work: Path) -> bool:
    """Copies a CSV into Parquet, each column typed as the preview of its head reads it
    (the SQL of csv_sql.py), rows in the file's order; kept at `table_copy_path`.

    Runs in the preview child process. DuckDB reads the file and writes the copy without
    holding the table in memory, and may touch nothing else.

    Args:
        path: The local CSV file.
        shown: The preview of its head (see `read_page`).
        work: The path prefix of what pages keep beside the file.

    Returns:
        Whether a copy was made (False: there was one already).

    Raises:
        duckdb.Error: The file could not be read as its head says (its pages say why).
    """
    target = table_copy_path(shown, work)
    if target.exists():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{uuid.uuid4().hex}.part")

    def copy(readable: Path, source: str, typed: list[str]) -> None:
        con = connect(readable, partial)
        try:
            fields = ", ".join(f"c{i}" for i in range(len(typed)))
            unread = unread_sql(typed, shown["columns"])
            select = ", ".join(
                [f"{expr} AS c{i}" for i, expr in enumerate(typed)]
                + [f"{sql} AS u{i}" for i, sql in enumerate(unread) if sql is not None]
            )
            con.execute(
                f"COPY (SELECT {select} FROM ({source}) AS s({fields}))"
                f" TO {literal(partial)} (FORMAT parquet, COMPRESSION zstd)"
            )
        finally:
            con.close()

    try:
        read_csv_fields(path, shown, work, copy)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return True


def read_csv_fields(
    path: Path,
    shown: dict[str, Any],
    work: Path,
    use: Callable[[Path, str, list[str]], T],
) -> T:
    """What `use(readable, source, typed)` makes of a CSV's fields (see `csv_source`): read
    again, short rows filled out, when DuckDB finds rows shorter than the header (in one
    thread: DuckDB cannot fill them in parallel when fields hold line breaks)."""
    readable, source, typed = csv_source(path, shown, work, padded=False)
    try:
        return use(readable, source, typed)
    except duckdb.InvalidInputException as exc:
        if "Expected Number of Columns" not in str(exc):
            raise
    return use(*csv_source(path, shown, work, padded=True))


def _numbered_parquet(copy: Path) -> str:
    """The SQL of a typed copy's rows, each with its number in the file's order (from 1)."""
    return (
        "SELECT file_row_number + 1 AS row_number_, * EXCLUDE (file_row_number)"
        f" FROM read_parquet({literal(copy)}, file_row_number = true)"
    )


def _describe(exc: Exception) -> str:
    """DuckDB's complaint in a few words: which line and what is wrong with it."""
    text = str(exc)
    line = re.search(r"CSV Error on Line: (\d+)", text)
    fields = re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", text)
    if line and fields:
        return f"line {line[1]} has {fields[2]} fields, expected {fields[1]}"
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    first = re.sub(r"^[\w ]*Error: ", "", first)
    return f"line {line[1]}: {first}"[:300] if line else first[:300]


def connect(readable: Path, writable: Path | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB that can read `readable` (and write `writable`) and nothing else, and can
    change none of that."""
    con = duckdb.connect(
        config={
            "threads": DUCKDB_THREADS,
            "memory_limit": DUCKDB_MEMORY,
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        }
    )
    con.execute("SET enable_progress_bar = false")  # it would print to the server's terminal
    # A mixed column's cells are read by the same Python as the preview's head (reading.py).
    con.create_function(
        "wb_number",
        lambda text, decimal: None if text is None else number_of(text, decimal),
        [VARCHAR, VARCHAR],
        DOUBLE,
        null_handling=FunctionNullHandling.SPECIAL,
    )
    con.create_function(
        "wb_date",
        lambda text, day_first: None if text is None else date_of(text, bool(day_first)),
        [VARCHAR, BOOLEAN],
        TIMESTAMP,
        null_handling=FunctionNullHandling.SPECIAL,
    )
    # DuckDB makes a long IN list (`present`) a join, which does not keep the rows' order:
    # a typed copy's rows, and a page's, must stay in it.
    con.execute("SET disabled_optimizers = 'in_clause'")
    paths = [readable] if writable is None else [readable, writable]
    con.execute(f"SET allowed_paths = [{', '.join(map(literal, paths))}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


@dataclass(frozen=True)
class Reading:
    """How a table's fields are read.

    Attributes:
        typed: Per column, the SQL that reads its field `c<i>` as the preview did; None
            when the source is typed already.
        unread: Per column, the SQL of the text of a cell that could not be read as its
            column's kind (a mixed column's), or None. With `typed` None, these are
            columns `u<i>` the source holds after its own.
    """

    typed: list[str] | None
    unread: list[str | None]


def _query(
    readable: Path,
    source: str,
    reading: Reading,
    columns: list[dict[str, Any]],
    window: Window,
    row_count: int | None,
    *,
    numbered: bool = False,
) -> dict[str, Any]:
    """Counts the rows of `source` that meet the window's filter and reads the window of them.

    Args:
        readable: The one file DuckDB may read.
        source: The SQL of the table as read (text fields of a CSV, or typed columns).
        reading: How its fields are read.
        columns: The preview's columns.
        window: The rows asked for.
        row_count: The rows of the table when known (None: counted here).
        numbered: Whether `source`'s first column is each row's number in the file's
            order, from 1 (a typed copy's: `_numbered_parquet`).
    """
    con = connect(readable)
    try:
        names = [str(column["name"]) for column in columns]
        stored = 0 if reading.typed is not None else sum(u is not None for u in reading.unread)
        found = len(con.execute(f"DESCRIBE {source}").fetchall()) - numbered - stored
        if found != len(names):
            raise ValueError(f"it has {found} columns where its first rows have {len(names)}")
        fields = [f"c{i}" for i in range(len(names))]
        listed = ", ".join(fields)
        if numbered:
            con.execute(
                f"CREATE TEMP VIEW numbered AS SELECT * FROM ({source}) AS s(row_number_, {listed})"
            )
            con.execute("CREATE TEMP VIEW raw AS SELECT * EXCLUDE (row_number_) FROM numbered")
        else:
            con.execute(f"CREATE TEMP VIEW raw AS SELECT * FROM ({source}) AS s({listed})")
            con.execute(
                "CREATE TEMP VIEW numbered AS"
                " SELECT row_number() OVER () AS row_number_, * FROM raw"
            )
        exprs = reading.typed or fields
        marks = [(at, sql) for at, sql in enumerate(reading.unread) if sql is not None]
        select = ", ".join(
            [f"{expr} AS {field}" for expr, field in zip(exprs, fields, strict=True)]
            + [f"{sql} AS u_{at}" for at, sql in marks]
        )
        kinds = [user_type(column.get("dtype", "")) for column in columns]
        where, params = where_sql(list(window.conditions), names, exprs, reading.unread, kinds)
        if window.conditions:
            counted = con.execute(f"SELECT count(*) FROM raw WHERE {where}", params).fetchone()
            row_count = int(counted[0])  # type: ignore[index]
        elif row_count is None:
            row_count = int(con.execute("SELECT count(*) FROM raw").fetchone()[0])  # type: ignore[index]
        if window.sort is None:
            # Only the rows shown are converted (but for the filter's columns).
            sql = f"SELECT {select} FROM (SELECT * FROM raw WHERE {where} LIMIT ? OFFSET ?)"
        else:
            at = names.index(window.sort)
            keys = [exprs[at]]
            text = (reading.typed is None and _type_of(con, fields[at]) == "VARCHAR") or (
                reading.typed is not None and keys[0] == present(fields[at])
            )
            if text:
                keys = [f"lower({keys[0]})", keys[0]]  # text sorts case-blind, then by case
            direction = "DESC" if window.descending else "ASC"
            order = ", ".join(f"{key} {direction} NULLS LAST" for key in keys)
            # Ties keep the file's order (row_number_ follows it), so pages neither overlap
            # nor skip rows. Only the sort key is converted for every row; the rest for
            # the rows shown.
            if window.offset + window.limit <= DEEP_PAGE_ROWS:
                sql = (
                    f"SELECT {select} FROM (SELECT * FROM numbered WHERE {where}"
                    f" ORDER BY {order}, row_number_ LIMIT ? OFFSET ?)"
                )
            else:
                # Deep in the order, sort only the keys and row numbers, then fetch the rows.
                if text and numbered and not window.conditions and _few_values(con, fields[at]):
                    field = fields[at]
                    ranks = (
                        "SELECT v, row_number() OVER (ORDER BY lower(v), v) AS rank_ FROM"
                        f" (SELECT DISTINCT {field} AS v FROM raw WHERE {field} IS NOT NULL)"
                    )
                    ranking = (
                        f"SELECT n.row_number_ FROM numbered AS n LEFT JOIN ({ranks}) AS r"
                        f" ON n.{field} = r.v"
                        f" ORDER BY r.rank_ {direction} NULLS LAST, n.row_number_"
                    )
                else:
                    ranking = (
                        f"SELECT row_number_ FROM numbered WHERE {where}"
                        f" ORDER BY {order}, row_number_"
                    )
                ranked = con.execute(
                    f"{ranking} LIMIT ? OFFSET ?", [*params, window.limit, window.offset]
                ).fetchall()
                wanted = [int(hit[0]) for hit in ranked]
                fetched = con.execute(
                    f"SELECT row_number_, {select} FROM numbered"
                    " WHERE row_number_ IN (SELECT unnest(?::BIGINT[]))",
                    [wanted],
                ).fetchall()
                by_number = {int(row[0]): row[1:] for row in fetched}
                rows = [by_number[number] for number in wanted]
                return _page(rows, columns, marks, row_count)
        rows = con.execute(sql, [*params, window.limit, window.offset]).fetchall()
        return _page(rows, columns, marks, row_count)
    finally:
        con.close()


def _marks(column: dict[str, Any]) -> bool:
    """Whether a column may hold cells that could not be read as its kind (a mixed one)."""
    return column.get("mixed") in ("number", "date")


def unread_sql(typed: list[str], columns: list[dict[str, Any]]) -> list[str | None]:
    """Per column of a CSV, the SQL of a cell's text where it could not be read as its
    column's kind, for the columns that keep such cells (mixed ones); `typed`: each
    column's SQL (csv_sql.typed_sql)."""
    return [
        f"CASE WHEN ({expr}) IS NULL AND trim({present(f'c{at}', column)}) <> ''"
        f" THEN trim(c{at}) END"
        if _marks(column)
        else None
        for at, (expr, column) in enumerate(zip(typed, columns, strict=True))
    ]


def _few_values(con: duckdb.DuckDBPyConnection, field: str) -> bool:
    """Whether a column holds few enough distinct values to sort them apart (about)."""
    found = con.execute(f"SELECT approx_count_distinct({field}) FROM raw").fetchone()
    return found is not None and int(found[0]) <= RANKED_TEXT_VALUES


def _page(
    rows: list[Any],
    columns: list[dict[str, Any]],
    marks: list[tuple[int, str]],
    row_count: int,
) -> dict[str, Any]:
    dtypes = [str(column.get("dtype", "")) for column in columns]
    width = len(columns)
    shown = []
    for row in rows:
        values = [
            shown_cell(value, dtype) for value, dtype in zip(row[:width], dtypes, strict=True)
        ]
        for (at, _), text in zip(marks, row[width:], strict=True):
            if text is not None:
                values[at] = unreadable(str(text))
        shown.append(values)
    return {"rows": shown, "row_count": row_count}


def _type_of(con: duckdb.DuckDBPyConnection, field: str) -> str:
    described = con.execute("DESCRIBE raw").fetchall()
    return next(str(row[1]) for row in described if row[0] == field)


def shown_cell(value: Any, dtype: str) -> Any:
    """A cell of a page as shown: a whole number of an integer column as an integer,
    otherwise as `table.cell` shows it."""
    if (
        isinstance(value, float)
        and dtype.lower().startswith(("int", "uint"))
        and value.is_integer()
    ):
        return int(value)
    return cell(value)
