"""Database statements' spans (app/observability/statements.py) are SQLAlchemy's
instrumentation's own: the same statements, on SQLite and on PostgreSQL, make spans with the
same names, kinds, attributes and statuses through the app's hooks as through the
instrumentation's `EngineTracer` with its own listeners; outside a recorded question they
make none."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.instrumentation._semconv import _StabilityMode
from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer
from opentelemetry.metrics import NoOpUpDownCounter
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanProto
from opentelemetry.trace import SpanKind
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db import create_engine
from app.observability.statements import StatementTracer
from tests.support.services import create_postgres_database, drop_postgres_database
from tests.test_span_recorder import Collector, attributes_of, recorder_for

# (statement, its parameters): none, one set, several (executemany).
STATEMENTS: tuple[tuple[str, Any], ...] = (
    ("CREATE TABLE sales (region TEXT, revenue INTEGER)", None),
    ("/* a comment first */ INSERT INTO sales VALUES ('North', 10), ('South', 4)", None),
    ("INSERT INTO sales VALUES (:region, :revenue)", [{"region": "East", "revenue": 1}] * 3),
    ("SELECT region, sum(revenue) FROM sales WHERE revenue > :least GROUP BY region", {"least": 0}),
    ("SELECT nothing FROM nowhere", None),  # fails: the span ends with an error status
    ("  update sales set revenue = revenue + 1", None),
)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'statements.db'}"
        return
    made, name = create_postgres_database()
    try:
        yield made
    finally:
        drop_postgres_database(name)


def run(engine: AsyncEngine, tracer: trace.Tracer, recorded: bool) -> None:
    """The statements, one transaction each, under a request's span (`recorded`: its
    trace is, if the sampler says so) or outside any."""

    async def statements() -> None:
        for statement, parameters in STATEMENTS:
            try:
                async with engine.begin() as conn:
                    await conn.execute(text(statement), parameters)
            except DBAPIError:
                pass

    async def go() -> None:
        async with engine.connect():  # the dialect's first queries, as at the app's start
            pass
        if recorded:
            with tracer.start_as_current_span("POST /q", kind=SpanKind.SERVER):
                await statements()
        else:
            await statements()
        await engine.dispose()

    asyncio.run(go())


def statement_spans(collector: Collector) -> list[tuple[str, int, dict[str, object], int]]:
    return [
        (s.name, s.kind, attributes_of(s), s.status.code)
        for s in collector.spans()
        if s.name != "POST /q"
    ]


# The semantic conventions' names of a statement's attributes: the old ones (the default),
# the new ones, or both (OTEL_SEMCONV_STABILITY_OPT_IN=database, database/dup).
MODES = {
    _StabilityMode.DEFAULT: {"db.statement", "db.operation"},
    _StabilityMode.DATABASE: {"db.query.text", "db.operation.name"},
    _StabilityMode.DATABASE_DUP: {"db.statement", "db.operation", "db.query.text",
                                  "db.operation.name"},
}  # fmt: skip


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.value)
def test_the_apps_statement_spans_are_the_instrumentations(url: str, mode: _StabilityMode) -> None:
    made: dict[str, list[tuple[str, int, dict[str, object], int]]] = {}
    for who in ("instrumentation", "app"):
        collector = Collector()
        recorder = recorder_for(collector)
        tracer = recorder.get_tracer("opentelemetry.instrumentation.sqlalchemy")
        engine = create_engine(url)
        if who == "instrumentation":  # its listeners
            hooks = EngineTracer(tracer, engine.sync_engine, NoOpUpDownCounter("c"))
        else:
            hooks = StatementTracer(tracer, engine.sync_engine).listen()
        hooks._sem_conv_opt_in_mode_db = mode  # (read from the environment once a process)
        try:
            run(engine, recorder.get_tracer("app"), recorded=True)
        finally:
            EngineTracer.remove_all_event_listeners()
            recorder.shutdown()
            drop_sales(url)
        made[who] = statement_spans(collector)

    spans = made["app"]
    assert spans == made["instrumentation"]
    assert [name.split()[0] for name, *_ in spans] == [
        "CREATE", "INSERT", "INSERT", "SELECT", "SELECT", "update"
    ]  # fmt: skip
    for name, _, attributes, _ in spans:
        assert MODES[mode] <= set(attributes)
        assert {attributes[k] for k in MODES[mode] if "operation" in k} == {name}
    text_key = "db.query.text" if mode is _StabilityMode.DATABASE else "db.statement"
    statements = [attributes[text_key] for _, _, attributes, _ in spans]
    assert [s.split()[:3] for s in statements] == [s.split()[:3] for s, _ in STATEMENTS]
    assert {kind for _, kind, _, _ in spans} == {SpanProto.SPAN_KIND_CLIENT}
    assert [status for *_, status in spans] == [0, 0, 0, 0, 2, 0]  # the failed one: ERROR


def drop_sales(url: str) -> None:
    """The database as it was before `run` (no table), with no span of it."""

    async def drop() -> None:
        engine = create_engine(url)
        async with engine.begin() as conn:
            await conn.execute(text("DROP TABLE IF EXISTS sales"))
        await engine.dispose()

    asyncio.run(drop())


def test_outside_a_recorded_question_no_statement_has_a_span(tmp_path: Path) -> None:
    collector = Collector()
    recorder = recorder_for(collector, ratio=0.0)
    tracer = recorder.get_tracer("opentelemetry.instrumentation.sqlalchemy")
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'quiet.db'}")
    StatementTracer(tracer, engine.sync_engine).listen()
    run(engine, recorder.get_tracer("app"), recorded=True)  # a request sampled out
    run(engine, recorder.get_tracer("app"), recorded=False)  # no request at all
    recorder.shutdown()
    assert collector.spans() == []
