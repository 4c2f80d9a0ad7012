"""`sql()`, `tables()` and `columns()` for analysis code: the backend runs them.

The runner holds no password, host or socket of any database. A call sends an ask to the
supervisor, which passes it on to the backend; the backend runs the statement with the
source's credentials and answers with the rows as Arrow IPC, one frame per ask:

    runner -> backend: query {sql, source, into}      -> query_rows | query_end | query_error
    runner -> backend: query_next                     -> query_rows | query_end | query_error
    runner -> backend: query_close (stop early)       -> query_end
    runner -> backend: lookup {what, source, table}   -> lookup_result | query_error

The helpers live in the code's namespace as values (not as smolagents tools), so code may
still name its own variables `sql` or `columns`; a helper the code replaced comes back at
the next step if the name is free again.
"""

from __future__ import annotations

import base64
import contextlib
import os
from pathlib import Path
from typing import Any

from app.sandbox.layout import BOOKKEEPING_DIR
from app.sandbox.protocol import MAX_ASK_CHARS, Message, read_message, write_message

HELPERS = ("sql", "tables", "columns")


class SQLError(Exception):
    """A query the backend refused or the database failed (its own message)."""


class Helper:
    """A helper in the namespace: copied as itself, never saved with the variables."""

    def __init__(self, name: str, function: Any, doc: str) -> None:
        self.__name__ = name
        self._function = function
        self.__doc__ = doc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function(*args, **kwargs)

    def __deepcopy__(self, memo: dict[int, Any]) -> Helper:
        return self

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"


class Querying:
    """The runner's side of the asks; attached to the runner's pipes once it is forked."""

    def __init__(self) -> None:
        self._requests = self._replies = -1
        self._nonce: str | None = None

    def attach(self, requests: int, replies: int) -> None:
        """Use the runner's pipes to and from the supervisor."""
        self._requests, self._replies = requests, replies

    def begin(self, nonce: object) -> None:
        """A step starts: its asks carry the nonce of its request."""
        self._nonce = nonce if isinstance(nonce, str) else None

    def helpers(self) -> dict[str, Helper]:
        """The values the code's namespace holds."""
        return {
            "sql": Helper("sql", self.sql, SQL_DOC),
            "tables": Helper("tables", self.tables, "tables(source=None): the source's tables."),
            "columns": Helper(
                "columns", self.columns, "columns(table, source=None): a table's columns."
            ),
        }

    def _ask(self, frame: Message) -> Message:
        if self._replies < 0 or self._nonce is None:
            raise SQLError("sql() is only available while a step runs")
        write_message(self._replies, {**frame, "nonce": self._nonce})
        answer = read_message(self._requests)
        if answer is None:
            raise SQLError("the backend is gone")
        if answer.get("type") == "query_error":
            raise SQLError(str(answer.get("error") or "the query failed"))
        return answer

    def sql(self, query: str, source: str | None = None, into: str | None = None) -> Any:
        """Run one read-only SQL query on a data source of the project.

        Args:
            query: One SELECT statement, in the source's SQL dialect.
            source: The source's name (may be left out when the project has only one).
            into: A `.parquet` file in the workspace to stream the result into (for a result
                too big to hold), instead of returning it.

        Returns:
            A pandas DataFrame, or with `into` the file's path.
        """
        if not isinstance(query, str) or not query.strip():
            raise SQLError("sql() needs the query as a string, e.g. sql('SELECT 1')")
        if len(query) > MAX_ASK_CHARS:
            raise SQLError(f"the query is longer than {MAX_ASK_CHARS} characters")
        if source is not None and not isinstance(source, str):
            raise SQLError("source= is the source's name, a string")
        target = _parquet_target(into) if into is not None else None
        answer = self._ask(
            {"type": "query", "sql": query, "source": source, "into": target is not None}
        )
        if target is None:
            return self._frame(answer)
        self._write(answer, target)
        return into

    def _batches(self, answer: Message) -> Any:
        """Each frame's table, asking for the next until the end."""
        import pyarrow as pa

        while answer.get("type") == "query_rows":
            data = base64.b64decode(str(answer.get("data") or ""))
            try:
                table = pa.ipc.open_stream(data).read_all()
            except BaseException:
                self._close()
                raise
            try:
                yield _decimals_as_floats(table)
            except BaseException:
                self._close()
                raise
            answer = self._ask({"type": "query_next"})
        if answer.get("type") != "query_end":
            raise SQLError(f"unexpected answer {answer.get('type')!r}")

    def _close(self) -> None:
        with contextlib.suppress(SQLError, OSError):
            self._ask({"type": "query_close"})

    def _frame(self, answer: Message) -> Any:
        import pyarrow as pa

        with contextlib.closing(self._batches(answer)) as batches:
            tables = list(batches)
        if not tables:
            raise SQLError("the backend sent no rows and no columns")
        table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        return table.to_pandas()

    def _write(self, answer: Message, target: Path) -> None:
        import pyarrow.parquet as pq

        partial = target.with_name(f".{target.name}.partial")
        writer = None
        try:
            with contextlib.closing(self._batches(answer)) as batches:
                for table in batches:
                    if writer is None:
                        writer = pq.ParquetWriter(partial, table.schema)
                    writer.write_table(table)
            if writer is None:
                raise SQLError("the backend sent no rows and no columns")
            writer.close()
            writer = None
            os.replace(partial, target)
        finally:
            if writer is not None:
                writer.close()
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()

    def tables(self, source: str | None = None) -> Any:
        """The tables of a source: schema, name, estimated rows, description."""
        return self._lookup("tables", source, None)

    def columns(self, table: str, source: str | None = None) -> Any:
        """The columns of one table: name, type, nullable, description."""
        if not isinstance(table, str) or not table:
            raise SQLError("columns() needs the table's name, e.g. columns('orders')")
        return self._lookup("columns", source, table)

    def _lookup(self, what: str, source: str | None, table: str | None) -> Any:
        import pandas as pd

        if source is not None and not isinstance(source, str):
            raise SQLError("source= is the source's name, a string")
        answer = self._ask({"type": "lookup", "what": what, "source": source, "table": table})
        rows = answer.get("rows")
        return pd.DataFrame(rows if isinstance(rows, list) else [])


def _decimals_as_floats(table: Any) -> Any:
    """A result with its DECIMAL columns as float64: MariaDB's DECIMAL arrives as Arrow
    decimals, which pandas would hold as Python Decimal objects (an object column that
    plots, sums and rounds unlike a number); PostgreSQL's numeric already comes as float."""
    import pyarrow as pa

    schema = table.schema
    if not any(pa.types.is_decimal(field.type) for field in schema):
        return table
    floats = pa.schema(
        [
            field.with_type(pa.float64()) if pa.types.is_decimal(field.type) else field
            for field in schema
        ]
    )
    return table.cast(floats)


def _parquet_target(into: object) -> Path:
    """The workspace file a result is streamed into: a relative `.parquet` path inside it."""
    if not isinstance(into, str) or not into.endswith(".parquet"):
        raise SQLError("into= is a .parquet file name in the workspace, e.g. into='orders.parquet'")
    path = Path(into)
    if path.is_absolute() or ".." in path.parts or path.parts[0] == BOOKKEEPING_DIR:
        raise SQLError("into= must name a file inside the workspace, e.g. 'data/orders.parquet'")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.resolve()


SQL_DOC = (
    "sql(query, source=None, into=None): run one read-only SELECT on a data source; "
    "returns a DataFrame (or, with into='x.parquet', writes the result there)."
)
