"""`GET /metrics` (Prometheus' text format, at the root) and the count of HTTP requests.

Each replica (each uvicorn worker) serves its own process's metrics; Prometheus scrapes
every one and adds them up. With METRICS_TOKEN set the endpoint needs it as a bearer token.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.core import GaugeMetricFamily
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import Settings
from app.errors import Unauthorized
from app.observability import metrics

router = APIRouter(tags=["operations"])
# What a request that matched no route counts as (its path is not a label: anyone types one).
UNMATCHED = "unmatched"


@router.get("/metrics", include_in_schema=False)
async def serve_metrics(request: Request) -> Response:
    state = request.app.state
    token: str | None = state.settings.METRICS_TOKEN
    if token:
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            raise Unauthorized("This endpoint needs METRICS_TOKEN as a bearer token.")
    sandboxes = getattr(state, "sandboxes", None)
    gauges: metrics.AppGauges = state.metrics
    if sandboxes is not None:  # cached by the launcher: cheap
        gauges.sandbox_available = (await sandboxes.status()).available
    return Response(metrics.render(gauges), media_type=CONTENT_TYPE_LATEST)


class RequestMetrics:
    """Counts each HTTP request by method, route template and status, and times it."""

    def __init__(self, app: ASGIApp, prefixes: tuple[str, ...]):
        self.app = app
        self.prefixes = prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = self.route_of(scope)
            method = scope["method"] if route != UNMATCHED else "other"
            metrics.HTTP_REQUESTS.labels(method, route, str(status)).inc()
            metrics.HTTP_DURATION.labels(method, route).observe(time.perf_counter() - started)

    def route_of(self, scope: Scope) -> str:
        """The template of the route that answered (`/api/v1/runs/{run_id}`), not the path.

        A route of an included router knows its path without the router's prefix: the
        prefix is the part of the request's path before the route's segments, kept only
        if it is one of the app's own prefixes.
        """
        route = scope.get("route")
        template = getattr(route, "path_format", None)
        if not isinstance(template, str):
            return UNMATCHED
        if "{path}" in template and template.endswith("{path}"):
            return template  # a catch-all: its own template, whatever was asked
        segments = template.count("/")
        path: str = scope.get("path", "")
        cut = len(path)
        for _ in range(segments):
            cut = path.rfind("/", 0, cut)
            if cut < 0:
                return UNMATCHED
        prefix = path[:cut]
        return prefix + template if prefix in self.prefixes else UNMATCHED


def install_metrics(app: FastAPI, settings: Settings, prefixes: tuple[str, ...]) -> None:
    """Serve `/metrics` and count requests (unless METRICS_ENABLED is false)."""
    app.state.metrics = metrics.AppGauges()
    if not settings.METRICS_ENABLED:
        return
    metrics.BUILD.labels(app.version).set(1)
    app.include_router(router)
    app.add_middleware(RequestMetrics, prefixes=("", *prefixes))


def watch_app(app: FastAPI) -> None:
    """Read the app's pools and queues at each scrape (call once they exist: lifespan)."""
    state = app.state
    gauges: metrics.AppGauges = state.metrics
    gauges.readers[:] = [lambda: _runs(state), lambda: _pools(state)]


def _runs(state: Any) -> Iterator[GaugeMetricFamily]:
    sandboxes, runs = state.sandboxes, state.runs
    yield _one(
        "runs_in_progress", "Runs this replica runs now (queued or running).", len(runs.runs.live)
    )
    yield _one("queue_length", "Runs waiting for a sandbox slot.", sandboxes.queued)
    workers = metrics.gauge(
        "sandbox_workers",
        "Sandbox workers by state (busy: running a session's step; idle: a session's, "
        "warm; spare: started ahead for the next session; starting).",
        ["state"],
    )
    busy = sandboxes.busy
    workers.add_metric(["busy"], busy)
    workers.add_metric(["idle"], max(0, sandboxes.live - busy))
    workers.add_metric(["spare"], sandboxes.spares)
    workers.add_metric(["starting"], metrics.starting_workers())
    yield workers
    yield _one(
        "sandbox_worker_slots",
        "The most sandbox workers that may live at once.",
        sandboxes.max_workers,
    )
    available = state.metrics.sandbox_available
    if available is not None:
        yield _one("sandbox_available", "1 while analysis code can run, else 0.", int(available))


def _pools(state: Any) -> Iterator[GaugeMetricFamily]:
    connections = metrics.gauge(
        "db_pool_connections",
        "Database connections by pool (requests, runs) and state (in_use, idle).",
        ["pool", "state"],
    )
    limit = metrics.gauge(
        "db_pool_max_connections", "The most connections a database pool opens.", ["pool"]
    )
    for name, engine in (("requests", state.engine), ("runs", state.runs_engine)):
        pool = engine.pool
        connections.add_metric([name, "in_use"], pool.checkedout())
        connections.add_metric([name, "idle"], pool.checkedin())
        limit.add_metric([name], pool.size() + max(0, pool._max_overflow))
    yield connections
    yield limit
    redis = metrics.gauge(
        "redis_pool_connections",
        "Redis connections by pool (locks, events, followers) and state (in_use, idle).",
        ["pool", "state"],
    )
    found = False
    for name, client in (
        ("locks", getattr(state.locks, "redis", None)),
        ("events", getattr(state.events, "redis", None)),
        ("followers", getattr(state.events, "followers", None)),
    ):
        pool = getattr(client, "connection_pool", None)
        if pool is None:
            continue
        found = True
        redis.add_metric([name, "in_use"], len(pool._in_use_connections))
        redis.add_metric([name, "idle"], len(pool._available_connections))
    if found:
        yield redis


def _one(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    family = metrics.gauge(name, documentation)
    family.add_metric([], value)
    return family
