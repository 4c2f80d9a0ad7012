"""Database statements' spans: SQLAlchemy's instrumentation's `EngineTracer`, on the app's
engines, for the statements of recorded questions only (imported when traces are on).

The instrumentation's own listeners are connection events (before and after each statement)
and pool events: with them on the engine, every event point of every connection (its begin,
its commit, each execution) looks through the engine's listeners, recorded question or
not (1% of a run). Here the listeners are the dialect's, around a statement's execution
(`do_execute` and its two kin): a statement outside a recorded question costs one check and
is left to the dialect; a recorded one is executed as the dialect does, in its span. And a
span costs a third of the instrumentation's work: what is the same for every statement of
an engine (the connection's attributes, the database's name) is worked out at its first
statement, not at each, and the span is started with its attributes rather than made
current to be given them.

The spans (names, kinds, attributes and statuses, from the instrumentation's own functions)
are the instrumentation's; tests/test_statement_spans.py compares the two on SQLite and
PostgreSQL. One difference: the dialect's own first queries on an engine's first
connection would have spans here, not there; the app connects at its start, outside any
question.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.instrumentation._semconv import (
    _set_db_operation,
    _set_db_statement,
    _set_db_system,
)
from opentelemetry.instrumentation.sqlalchemy.engine import (
    EngineTracer,
    _get_attributes_from_cursor_or_conn,
    _get_attributes_from_url,
    _get_db_name_from_cursor_or_conn,
)
from opentelemetry.instrumentation.utils import (
    _SUPPRESS_INSTRUMENTATION_KEY,
    _SUPPRESS_INSTRUMENTATION_KEY_PLAIN,
)
from opentelemetry.metrics import NoOpUpDownCounter
from opentelemetry.trace import Status, StatusCode
from sqlalchemy import event

from app.observability.current import current_context
from app.observability.recorder import in_recorded_trace


class StatementTracer(EngineTracer):  # type: ignore[misc]
    """The instrumentation's `EngineTracer` for one engine, with the app's listeners
    (`listen`, `stop`) rather than its own."""

    def __init__(self, tracer: trace.Tracer, engine: Any) -> None:
        super().__init__(tracer, engine, NoOpUpDownCounter("db.client.connections"))
        self.target = engine
        # What is the same for all the engine's statements (at the first: it is read from
        # the connection).
        self._known: _Known | None = None
        # The dialect's events, around the statement's execution (see module).
        self._hooks: tuple[tuple[str, Callable[..., bool]], ...] = (
            ("do_execute", self._do_execute),
            ("do_executemany", self._do_executemany),
            ("do_execute_no_params", self._do_execute_no_params),
        )

    @classmethod
    def _register_event_listener(cls, target: Any, identifier: str, *args: Any, **kw: Any) -> None:
        pass  # its listeners are the app's: `listen`

    def listen(self) -> StatementTracer:
        """Put the listeners on the engine (a span for each statement of a recorded
        question, from just before it to just after it or its error; others are left to
        the dialect at once)."""
        for name, hook in self._hooks:
            event.listen(self.target, name, hook)
        return self

    def stop(self) -> None:
        """Take the listeners off the engine."""
        for name, hook in self._hooks:
            if event.contains(self.target, name, hook):
                event.remove(self.target, name, hook)

    def _do_execute(self, cursor: Any, statement: str, parameters: Any, context: Any) -> bool:
        return self._traced(context.dialect.do_execute, cursor, statement, parameters, context)

    def _do_executemany(self, cursor: Any, statement: str, parameters: Any, context: Any) -> bool:
        run = context.dialect.do_executemany
        return self._traced(run, cursor, statement, parameters, context, many=True)

    def _do_execute_no_params(self, cursor: Any, statement: str, context: Any) -> bool:
        return self._traced(_without_parameters, cursor, statement, None, context)

    def _traced(
        self,
        run: Callable[[Any, str, Any, Any], Any],
        cursor: Any,
        statement: str,
        parameters: Any,
        context: Any,
        many: bool = False,
    ) -> bool:
        """Outside a recorded question, False: the dialect executes the statement. In one,
        execute it as the dialect does (`run`), in its span (the instrumentation's
        `_before_cur_exec`, then its `_after_cur_exec` or `_handle_error`'s work)."""
        if not in_recorded_trace():
            return False
        context._otel_span = None
        statement, parameters = self._before_cur_exec(
            context.root_connection, cursor, statement, parameters, context, many
        )
        span = context._otel_span
        try:
            run(cursor, statement, parameters, context)
        except BaseException as error:
            if span is not None:
                if span.is_recording():
                    span.set_status(Status(StatusCode.ERROR, str(error)))
                span.end()
            raise
        if span is not None:
            span.end()
        return True

    def _before_cur_exec(
        self, conn: Any, cursor: Any, statement: Any, params: Any, context: Any, many: bool
    ) -> tuple[Any, Any]:
        """The instrumentation's, with the engine's attributes kept (see module)."""
        if self.enable_commenter:  # it changes the statement: the instrumentation's own way
            return super()._before_cur_exec(conn, cursor, statement, params, context, many)  # type: ignore[no-any-return]
        now = current_context()  # (the instrumentation's is_instrumentation_enabled)
        if now.get(_SUPPRESS_INSTRUMENTATION_KEY) or now.get(_SUPPRESS_INSTRUMENTATION_KEY_PLAIN):
            return statement, params
        known = self._known
        if known is None:
            known = self._known = self._engine_attributes(conn, cursor)
        name = self._operation_name(known.db_name, statement)
        attributes = dict(known.attributes)
        if statement is not None:  # (_set_db_statement's and _set_db_operation's work)
            for key in known.statement_keys:
                attributes[key] = statement
        if name:
            for key in known.operation_keys:
                attributes[key] = name
        context._otel_span = self.tracer.start_span(
            name, kind=trace.SpanKind.CLIENT, attributes=attributes
        )
        return statement, params

    def _engine_attributes(self, conn: Any, cursor: Any) -> _Known:
        db_mode, http_mode = self._sem_conv_opt_in_mode_db, self._sem_conv_opt_in_mode_http
        attributes, found = _get_attributes_from_url(conn.engine.url, db_mode, http_mode)
        if not found:
            attributes = _get_attributes_from_cursor_or_conn(
                self.vendor, conn, cursor, attributes, db_mode, http_mode
            )
        _set_db_system(attributes, self.vendor, db_mode)
        # Which attributes the instrumentation gives a statement and its operation, in
        # this semantic conventions' mode (the old names, the new ones, or both).
        statement_keys: dict[str, Any] = {}
        _set_db_statement(statement_keys, "statement", db_mode)
        operation_keys: dict[str, Any] = {}
        _set_db_operation(operation_keys, "operation", db_mode)
        return _Known(
            attributes,
            _get_db_name_from_cursor_or_conn(self.vendor, conn, cursor),
            tuple(statement_keys),
            tuple(operation_keys),
        )


@dataclass(frozen=True)
class _Known:
    """What is the same for all an engine's statements."""

    attributes: dict[str, Any]  # all a statement's but the statement and its operation
    db_name: Any  # the database's name (in each span's name)
    statement_keys: tuple[str, ...]  # the attributes that hold the statement
    operation_keys: tuple[str, ...]  # and its operation


def _without_parameters(cursor: Any, statement: str, _parameters: None, context: Any) -> None:
    context.dialect.do_execute_no_params(cursor, statement, context)
