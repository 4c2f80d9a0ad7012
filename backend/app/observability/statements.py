"""Database statements' spans: SQLAlchemy's instrumentation's `EngineTracer`, on the app's
engines, for the statements of recorded questions only (imported when traces are on).

The instrumentation's own hooks sit on the engine and its pool and cost every statement and
every connection their work, recorded or not (1% of a run). Here each statement's hook first
looks whether the question is recorded and returns at once when it is not; and a recorded
statement's span costs a third of the instrumentation's work: what is the same for every
statement of an engine (the connection's attributes, the database's name) is worked out at
its first statement, not at each, and the span is started with its attributes rather than
made current to be given them. The span (its name, kind and attributes, from the
instrumentation's own functions) is the instrumentation's; tests/test_statement_spans.py
compares the two on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.instrumentation._semconv import (
    _set_db_operation,
    _set_db_statement,
    _set_db_system,
)
from opentelemetry.instrumentation.sqlalchemy.engine import (
    EngineTracer,
    _after_cur_exec,
    _get_attributes_from_cursor_or_conn,
    _get_attributes_from_url,
    _get_db_name_from_cursor_or_conn,
    _handle_error,
)
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.metrics import NoOpUpDownCounter

from app.observability.recorder import in_recorded_trace

Hooks = tuple[tuple[str, Callable[..., Any]], ...]


class StatementTracer(EngineTracer):  # type: ignore[misc]
    """The instrumentation's `EngineTracer` for one engine, without its own event
    listeners (`hooks` are the ones to put on the engine)."""

    def __init__(self, tracer: trace.Tracer, engine: Any) -> None:
        super().__init__(tracer, engine, NoOpUpDownCounter("db.client.connections"))
        # The engine's statements' attributes but the statement and its operation, and the
        # database's name (at the first statement: they are read from the connection).
        self._known: tuple[dict[str, Any], Any] | None = None

    @classmethod
    def _register_event_listener(cls, target: Any, identifier: str, *args: Any, **kw: Any) -> None:
        pass  # its hooks are `hooks`'

    def hooks(self) -> Hooks:
        """The engine's event listeners: a span begins before each statement of a recorded
        question, and ends after it, or with its error (a hook of the dialect's, called only
        when a statement fails)."""
        return (
            ("before_cursor_execute", self._before_recorded),
            ("after_cursor_execute", _after_cur_exec),
            ("handle_error", _handle_error),
        )

    def _before_recorded(
        self, conn: Any, cursor: Any, statement: Any, params: Any, context: Any, many: bool
    ) -> tuple[Any, Any]:
        if not in_recorded_trace():
            return statement, params
        return self._before_cur_exec(conn, cursor, statement, params, context, many)

    def _before_cur_exec(
        self, conn: Any, cursor: Any, statement: Any, params: Any, context: Any, many: bool
    ) -> tuple[Any, Any]:
        """The instrumentation's, with the engine's attributes kept (see module)."""
        if self.enable_commenter:  # it changes the statement: the instrumentation's own way
            return super()._before_cur_exec(conn, cursor, statement, params, context, many)  # type: ignore[no-any-return]
        if not is_instrumentation_enabled():
            return statement, params
        known = self._known
        if known is None:
            known = self._known = self._engine_attributes(conn, cursor)
        attributes, db_name = known
        name = self._operation_name(db_name, statement)
        attributes = dict(attributes)
        _set_db_statement(attributes, statement, self._sem_conv_opt_in_mode_db)
        _set_db_operation(attributes, name, self._sem_conv_opt_in_mode_db)
        context._otel_span = self.tracer.start_span(
            name, kind=trace.SpanKind.CLIENT, attributes=attributes
        )
        return statement, params

    def _engine_attributes(self, conn: Any, cursor: Any) -> tuple[dict[str, Any], Any]:
        db_mode, http_mode = self._sem_conv_opt_in_mode_db, self._sem_conv_opt_in_mode_http
        attributes, found = _get_attributes_from_url(conn.engine.url, db_mode, http_mode)
        if not found:
            attributes = _get_attributes_from_cursor_or_conn(
                self.vendor, conn, cursor, attributes, db_mode, http_mode
            )
        _set_db_system(attributes, self.vendor, db_mode)
        return attributes, _get_db_name_from_cursor_or_conn(self.vendor, conn, cursor)
