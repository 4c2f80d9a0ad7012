"""create_app(): the routers, and a lifespan that opens the database, storage and locks once."""

from __future__ import annotations

import asyncio
import ctypes
import logging
import sys
from collections.abc import AsyncIterator, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

import app.agent  # noqa: F401  (sets LiteLLM's offline price list before litellm is imported)
from app.agent import warm_up
from app.api import (
    auth,
    branches,
    cells,
    checks,
    comments,
    demo,
    files,
    health,
    invites,
    job_repairs,
    jobs,
    knowledge,
    live,
    notifications,
    oidc,
    projects,
    runs,
    search,
    sessions,
    shares,
    sources,
    storage,
    system,
)
from app.api.docs import docs_router
from app.api.errors import install_error_handlers
from app.api.forwarded import install_forwarded_headers
from app.api.headers import install_security_headers
from app.api.limits import install_body_limit
from app.api.metrics import install_metrics, watch_app
from app.api.nul_guard import install_nul_guard
from app.api.openapi import install_openapi, operation_id
from app.auth import security
from app.auth import service as auth_service
from app.checks.runner import CheckRunner
from app.config import Settings
from app.config.server import Environment
from app.db import create_engine, migrate, session_factory
from app.files import whole_file_work
from app.infra.events import create_event_log
from app.infra.feeds import create_session_feed
from app.infra.locks import create_session_locks
from app.infra.presence import create_presence
from app.infra.storage import S3Storage, create_storage
from app.jobs import wiring as jobs_wiring
from app.jobs.background import JobsBackground
from app.jobs.runner import JobRunner
from app.live.hub import LiveHub
from app.live.inbox import Inbox
from app.live.slots import LiveStreamSlots
from app.mail.sender import MailSender
from app.observability import tracing
from app.runs.chunk_sweep import ChunkSweeper
from app.runs.orchestrator import RunOrchestrator
from app.runs.sandboxes import SandboxPool
from app.web import mount_spa

API_PREFIX = "/api/v1"
BLOCKING_THREADS = 64
# How long a run waits for a connection of its pool before it fails (the database hangs).
RUNS_POOL_TIMEOUT_SECONDS = 60.0
log = logging.getLogger("app")


def forbid_reading_own_memory() -> None:
    """PR_SET_DUMPABLE=0: other processes of the same user cannot read our /proc/<pid>/environ."""
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)


def _not_traced(scope: MutableMapping[str, Any]) -> bool:
    """Probes and scrapes make no traces (they come every few seconds and say nothing)."""
    return scope.get("path") in ("/healthz", "/readyz", "/metrics")


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    security.use_test_cost(Environment.test == settings.ENVIRONMENT)
    # Traces only when an OTLP endpoint is set: otherwise nothing of OpenTelemetry is set up.
    tracer_provider = tracing.create_provider(settings) if tracing.wanted(settings) else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
        # Blocking work (file I/O, starting sandbox workers, previews) runs in threads; the
        # default pool has cpu+4 of them, which a few slow worker starts would fill.
        threads = ThreadPoolExecutor(max_workers=BLOCKING_THREADS, thread_name_prefix="blocking")
        asyncio.get_running_loop().set_default_executor(threads)
        engine = create_engine(
            settings.database_url,
            pool_size=settings.DATABASE_POOL_SIZE,
            max_overflow=settings.DATABASE_MAX_OVERFLOW,
            pool_timeout=settings.DATABASE_POOL_TIMEOUT_SECONDS,
        )
        # Runs in progress draw from a pool of their own: requests never starve them.
        runs_engine = create_engine(
            settings.database_url,
            pool_size=settings.DATABASE_RUNS_POOL_SIZE,
            max_overflow=settings.DATABASE_RUNS_POOL_SIZE,
            pool_timeout=RUNS_POOL_TIMEOUT_SECONDS,
        )
        await migrate(settings.database_url)
        storage = create_storage(settings)
        if isinstance(storage, S3Storage):
            await storage.ensure_bucket()
        locks = create_session_locks(settings.REDIS_URL)
        await locks.ping()
        events = create_event_log(settings.REDIS_URL)
        factory = session_factory(engine)
        async with factory() as db:
            await auth_service.ensure_admin(db, settings.ADMIN_EMAIL, settings.ADMIN_PASSWORD)
        sandboxes = SandboxPool(settings)
        slots = LiveStreamSlots(settings.LIVE_STREAMS_PER_USER, settings.LIVE_STREAMS_PER_PROCESS)
        hub = LiveHub(create_session_feed(events), create_presence(events), slots)
        inbox = Inbox(create_session_feed(events, kind="inbox"), slots)
        runs = RunOrchestrator(
            settings=settings,
            factory=session_factory(runs_engine),
            requests_factory=factory,
            storage=storage,
            locks=locks,
            events=events,
            sandboxes=sandboxes,
            run_created=hub.run_created,
        )
        await asyncio.to_thread(warm_up.first_model_call, settings)
        await runs.recover_interrupted_runs()
        check_runner = CheckRunner(settings=settings, factory=factory, locks=locks, runs=runs)
        await check_runner.recover_interrupted()
        check_runner.start_sweeper()
        job_runner = JobRunner(settings=settings, factory=factory, runs=runs)
        await job_runner.recover_interrupted()
        job_runner.start_sweeper()
        runs.start_sweeper()
        chunk_sweeper = ChunkSweeper(factory, storage, settings)
        chunk_sweeper.start()
        sandboxes.start_reaper()
        # One sender for invites and job alerts (its concurrency bound is the process's).
        mail_sender = MailSender()
        jobs_background = JobsBackground(settings, factory, mail_sender)
        jobs_background.start_deliveries()
        job_runner.on_job_run_finished.append(jobs_wiring.alerts_hook(factory, settings, storage))
        jobs_background.start_schedules(jobs_wiring.schedule_fire(job_runner))
        # Probes the isolation and builds the sandbox's runtime cache (slow only the first time).
        sandbox = await sandboxes.prepare()
        if not sandbox.available:
            log.error("ANALYSIS IS DISABLED: %s. Fix: %s", sandbox.detail, sandbox.fix)
        elif not sandbox.isolated:
            log.warning("SANDBOX NOT ISOLATED: %s", sandbox.detail)
        if sandbox.location == "backend" and sandbox.mechanism == "rlimits":
            # Without a pid namespace, sandboxed code could read this process's environment.
            forbid_reading_own_memory()
        app.state.engine = engine
        app.state.runs_engine = runs_engine
        app.state.session_factory = factory
        app.state.storage = storage
        app.state.locks = locks
        app.state.events = events
        app.state.sandboxes = sandboxes
        app.state.runs = runs
        app.state.live = hub
        app.state.inbox = inbox
        app.state.checks = check_runner
        app.state.mail_sender = mail_sender
        app.state.jobs_background = jobs_background
        app.state.chunk_sweeper = chunk_sweeper
        app.state.jobs = job_runner
        watch_app(app)
        if tracer_provider is not None:
            tracing.activate(tracer_provider, settings, (engine, runs_engine))
        log.info(
            # What it runs on; that it is ready is said once, with its address (__main__).
            "backends: database=%s storage=%s locks=%s sandbox=%s",
            engine.dialect.name,
            storage.name,
            locks.name,
            sandbox.mechanism if sandbox.available else "unavailable",
        )
        if not settings.llm_models:
            log.warning(
                "NO MODEL CONFIGURED: questions are refused until LLM_MODEL is set "
                "(with LLM_API_KEY or LLM_API_BASE as the provider needs; see the README, "
                "Connecting an LLM)"
            )
        try:
            yield
        finally:
            if tracer_provider is not None:
                await asyncio.to_thread(tracing.deactivate, tracer_provider)
            await jobs_background.stop()
            await check_runner.close()
            chunk_sweeper.stop()
            await job_runner.close()
            await runs.close()
            await whole_file_work.stop_table_copies()
            await sandboxes.close()
            await events.close()
            await locks.close()
            await storage.close()
            await engine.dispose()
            await runs_engine.dispose()
            threads.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(
        title="Workbench",
        version="0.1.0",
        description="Self-hosted AI data-analysis workbench",
        openapi_url=f"{API_PREFIX}/openapi.json",
        # Served by app.api.docs, from local assets rather than a CDN.
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        # FastAPI's own OpenTelemetry spans, with our provider (never the global one) and
        # only with traces on; metrics are Prometheus' (app.api.metrics), logs our lines.
        telemetry={
            "tracing": tracer_provider is not None,
            "metrics": False,
            "logs": False,
            "operation_spans": False,
            "auto_configure": False,
            "exclude": _not_traced,
            **({"tracer_provider": tracer_provider} if tracer_provider is not None else {}),
        },
        generate_unique_id_function=operation_id,
    )
    app.state.settings = settings
    app.state.tracer_provider = tracer_provider  # None: no traces
    install_openapi(app)
    install_error_handlers(app)
    install_body_limit(app, settings.MAX_JSON_BODY_BYTES)
    install_nul_guard(app)
    install_security_headers(app, docs_paths=(f"{API_PREFIX}/docs", f"{API_PREFIX}/redoc"))

    for module in (
        auth,
        oidc,
        invites,
        projects,
        files,
        sessions,
        branches,
        shares,
        runs,
        live,
        comments,
        notifications,
        search,
        cells,
        demo,
        sources,
        knowledge,
        checks,
        jobs,
        job_repairs,
        storage,
        system,
    ):
        app.include_router(module.router, prefix=API_PREFIX)
    app.include_router(auth.users, prefix=API_PREFIX)
    app.include_router(health.router)
    install_metrics(app, settings, (API_PREFIX,))
    app.include_router(docs_router(API_PREFIX))
    mount_spa(app)
    install_forwarded_headers(app, settings.TRUSTED_PROXIES)  # last: the outermost layer
    return app
