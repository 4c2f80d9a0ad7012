"""Job runs in the background: admitted (the project's hourly cap, one run a job at a time),
bounded (JOB_RUNS_CONCURRENCY at once on a replica; the rest wait, queued), leased (the
lease renewed while the run lives; one whose lease ran out, its replica dead, is ended by
the sweeper), skipped when its inputs are those of the last run, and executed with no model:
the checks first, then the job (app.jobs.driver), in the job's session (app.jobs.execution).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app import audit
from app.audit import Action
from app.config import Settings
from app.db import after_commit
from app.errors import NotFound, TooManyRequests
from app.jobs import checks_writer, driver, repair, service
from app.jobs.execution import NotRun, execute
from app.models import DataSource, User
from app.models.base import utcnow
from app.models.jobs import Job, JobRun, JobRunStatus
from app.observability import metrics
from app.runs.orchestrator import RunOrchestrator

log = logging.getLogger(__name__)

INTERRUPTED = "The server running this job run stopped before it ended; run the job again."
FAILED = "The job run failed on the server ({}); run it again."
JobRunFinished = Callable[[uuid.UUID], Awaitable[None]]


class Inputs(Exception):
    """An input of the job is gone (the sentence says which)."""


class JobRunner:
    def __init__(
        self,
        *,
        settings: Settings,
        factory: async_sessionmaker[AsyncSession],
        runs: RunOrchestrator,
    ):
        self.settings = settings
        self.factory = factory
        self.runs = runs
        self.slots = asyncio.Semaphore(settings.JOB_RUNS_CONCURRENCY)
        # Called with a job run's id once it ended (alerts, deliveries).
        self.on_job_run_finished: list[JobRunFinished] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self.checks = checks_writer.ChecksWriter(self)
        # A run that failed because of its code: a repair proposed (app.jobs.repair).
        self.repairs = repair.JobRepairer(self)
        self.on_job_run_finished.append(self.repairs.after_run)

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=self.settings.JOB_RUN_LEASE_SECONDS)

    def spawn(self, work: Awaitable[None], name: str) -> None:
        task = asyncio.ensure_future(work)
        task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- starting ----------------------------------------------------------------------------

    async def start_job_run(
        self,
        job_id: uuid.UUID,
        trigger: str,
        params: dict[str, Any] | None = None,
        by: User | None = None,
        scheduled_for: datetime | None = None,
    ) -> uuid.UUID:
        """Record a queued run of the job and run it in the background.

        Args:
            job_id: The job.
            trigger: What started it ("manual", "schedule", ...).
            params: Parameters for this run (the rest: the job's defaults).
            by: Who started it (None: the workbench, e.g. its schedule).
            scheduled_for: The schedule's tick it runs for: one run a tick (a second
                raises IntegrityError).

        Raises:
            NotFound (job_not_found), Unprocessable (unknown parameters), JobRunInProgress,
            ChecksPending, TooManyRequests (the project's hourly cap, with retry_after).
        """
        async with self.factory() as db:
            job = await db.get(Job, job_id)
            if job is None:
                raise NotFound("No such job.", code="job_not_found")
            job_run = await self._record(db, job, trigger, params, by, scheduled_for)
            await db.commit()
            job_run_id = job_run.id
        self.spawn(self._drive(job_run_id), f"job-run-{job_run_id}")
        return job_run_id

    async def start_in(
        self,
        db: AsyncSession,
        job: Job,
        trigger: str,
        params: dict[str, Any] | None,
        by: User | None,
    ) -> JobRun:
        """As start_job_run, in the request's transaction (`db`): the run starts once it
        has committed (a request that wrote already, e.g. an API token's last use, holds
        SQLite's one writer)."""
        job_run = await self._record(db, job, trigger, params, by)
        job_run_id = job_run.id

        async def launch() -> None:
            self.spawn(self._drive(job_run_id), f"job-run-{job_run_id}")

        after_commit(db, launch)
        return job_run

    async def _record(
        self,
        db: AsyncSession,
        job: Job,
        trigger: str,
        params: dict[str, Any] | None,
        by: User | None,
        scheduled_for: datetime | None = None,
    ) -> JobRun:
        if job.checks.get("status") == "writing":
            raise service.ChecksPending()
        service.check_overrides(job, params or {})
        await self._admit(db, job)
        now = utcnow()
        job_run = JobRun(
            job_id=job.id,
            project_id=job.project_id,
            trigger=trigger,
            scheduled_for=scheduled_for,
            status=JobRunStatus.queued,
            params=params or {},
            created_by=by.id if by is not None else None,
            lease_until=now + self.lease,
            created_at=now,
        )
        db.add(job_run)
        await db.flush()
        about = {
            "job_id": str(job.id),
            "name": job.name,
            "job_run_id": str(job_run.id),
            "trigger": trigger,
        }
        subject = ("job_run", job_run.id)
        await audit.record(db, job.project_id, by, Action.job_run_started, subject, about)
        await db.refresh(job_run)
        return job_run

    async def _admit(self, db: AsyncSession, job: Job) -> None:
        active = await db.scalar(
            select(func.count())
            .select_from(JobRun)
            .where(JobRun.job_id == job.id, JobRun.status.in_(service.ACTIVE))
        )
        if active:
            raise service.JobRunInProgress()
        since = utcnow() - timedelta(hours=1)
        recent = list(
            await db.scalars(
                select(JobRun.created_at)
                .where(JobRun.project_id == job.project_id, JobRun.created_at > since)
                .order_by(JobRun.created_at)
            )
        )
        cap = self.settings.JOB_RUNS_PER_HOUR
        if len(recent) >= cap:
            wait = recent[len(recent) - cap] + timedelta(hours=1) - utcnow()
            raise TooManyRequests(
                f"This project started {len(recent)} job runs in the last hour, its most "
                f"(JOB_RUNS_PER_HOUR); try again in {max(1, int(wait.total_seconds()))} s.",
                code="job_runs_per_hour",
                retry_after=max(1, int(wait.total_seconds()) + 1),
            )

    # -- running -----------------------------------------------------------------------------

    async def _drive(self, job_run_id: uuid.UUID) -> None:
        keeper = asyncio.create_task(self._keep_lease(job_run_id))
        began = time.monotonic()
        outcome: dict[str, Any] = {"status": JobRunStatus.failed, "error": INTERRUPTED}
        try:
            async with self.slots:
                outcome = await self._run(job_run_id)
        except asyncio.CancelledError:
            raise
        except (NotRun, Inputs) as exc:
            outcome = {"status": JobRunStatus.failed, "error": str(exc)}
        except Exception as exc:
            log.exception("job run %s failed", job_run_id)
            outcome = {"status": JobRunStatus.failed, "error": FAILED.format(type(exc).__name__)}
        finally:
            keeper.cancel()
            await self._finish(job_run_id, outcome, time.monotonic() - began)

    async def _run(self, job_run_id: uuid.UUID) -> dict[str, Any]:
        async with self.factory() as db:
            job_run = await db.get(JobRun, job_run_id)
            job = await db.get(Job, job_run.job_id) if job_run is not None else None
            if job_run is None or job is None or job.session_id is None:
                raise NotRun("The job was deleted before its run started.")
            if job_run.status != JobRunStatus.queued:
                raise NotRun(INTERRUPTED)
            job_run.status = JobRunStatus.running
            job_run.started_at = utcnow()
            files, sources = await self._inputs(db, job, job_run.params)
            last = await db.scalar(
                select(JobRun)
                .where(
                    JobRun.job_id == job.id,
                    JobRun.id != job_run.id,
                    JobRun.status.in_((JobRunStatus.succeeded, JobRunStatus.skipped)),
                )
                .order_by(JobRun.created_at.desc())
                .limit(1)
            )
            last_inputs = dict(last.inputs) if last is not None else None
            asker = await self._asker(db, job, job_run)
            code, tests, session_id = job.code, job.tests, job.session_id
            overrides = dict(job_run.params)
            pinned = not overrides and files == (job.made_from or {}).get("files")
            await db.commit()
        same_files = last_inputs is not None and last_inputs.get("files") == files
        if same_files and not sources:
            return {
                "status": JobRunStatus.skipped,
                "skipped_reason": "Its inputs are byte for byte those of the last run "
                f"({_listed(files)}): nothing to do.",
                "inputs": {"files": files, "queries": {}},
            }
        last_queries = (last_inputs or {}).get("queries") if same_files else None
        code_run = driver.driver(
            code, tests, overrides, sources, pinned=pinned, last_queries=last_queries
        )
        started: asyncio.Future[uuid.UUID] = asyncio.get_running_loop().create_future()
        started.add_done_callback(lambda f: self.spawn(self._link(job_run_id, f.result()), "link"))
        done = await execute(self.runs, self.factory, session_id, code_run, *asker, started)
        report = driver.report_of(done.output)
        base: dict[str, Any] = {"run_id": done.run_id}
        if report is None:
            return {
                **base,
                "status": JobRunStatus.failed,
                "error": done.failure,
                "inputs": {"files": files},
            }
        inputs = {"files": files, "queries": report.queries}
        if report.same_inputs:
            return {
                **base,
                "status": JobRunStatus.skipped,
                "checks": report.checks,
                "inputs": inputs,
                "skipped_reason": "Its inputs are byte for byte those of the last run "
                f"({_listed(files, report.queries)}): nothing to do.",
            }
        failed = report.failed_checks
        results = {name: brief.get("value") for name, brief in report.results.items()}
        return {
            **base,
            "status": JobRunStatus.failed if failed else JobRunStatus.succeeded,
            "error": failed[0]["message"] if failed else None,
            "checks": report.checks,
            "results": results,
            "inputs": inputs,
        }

    async def _inputs(
        self, db: AsyncSession, job: Job, overrides: dict[str, Any]
    ) -> tuple[dict[str, str], dict[str, str | None]]:
        """The files it reads now ({name: sha256}) and its queries' sources ({param: source}).

        Raises:
            Inputs: a file or a source it reads is no longer in the project.
        """
        now = await service.project_files(db, job.project_id)
        files: dict[str, str] = {}
        sources: dict[str, str | None] = {}
        names = set(
            await db.scalars(select(DataSource.name).where(DataSource.project_id == job.project_id))
        )
        for param in job.params:
            value = overrides.get(param["name"], param["default"])
            if param["kind"] == "file":
                if value not in now:
                    raise Inputs(f"The job reads {value}, which is no longer in the project.")
                files[str(value)] = now[value]
            elif param["kind"] == "query":
                source = param.get("source")
                if source is not None and source not in names:
                    raise Inputs(
                        f"The job queries the source {source}, which is no longer in the project."
                    )
                sources[param["name"]] = source
        return files, sources

    async def _asker(
        self, db: AsyncSession, job: Job, job_run: JobRun
    ) -> tuple[tuple[uuid.UUID, str], uuid.UUID | None]:
        """Who the job's code runs as: who started the run, else its maker, else the job
        (a job whose maker was removed keeps running under the project)."""
        for user_id in (job_run.created_by, job.created_by):
            if user_id is not None:
                user = await db.get(User, user_id)
                if user is not None:
                    return (user.id, user.email), user.id
        return (job.id, f"job {job.name}"), None

    async def _link(self, job_run_id: uuid.UUID, run_id: uuid.UUID) -> None:
        async with self.factory() as db:
            await db.execute(update(JobRun).where(JobRun.id == job_run_id).values(run_id=run_id))
            await db.commit()

    async def _finish(self, job_run_id: uuid.UUID, outcome: dict[str, Any], seconds: float) -> None:
        with contextlib.suppress(Exception):  # shutting down: the sweeper ends it instead
            async with self.factory() as db:
                job_run = await db.get(JobRun, job_run_id)
                if job_run is None or job_run.status not in service.ACTIVE:
                    return
                for key, value in outcome.items():
                    setattr(job_run, key, value)
                job_run.finished_at = utcnow()
                job_run.lease_until = None
                await service.fill_change(db, job_run)
                await self._audit_finished(db, job_run)
                await db.commit()
            metrics.JOB_RUNS.labels(outcome["status"]).inc()
            metrics.JOB_RUN_DURATION.labels(outcome["status"]).observe(seconds)
            await self._finished(job_run_id)

    async def _finished(self, job_run_id: uuid.UUID) -> None:
        for hook in list(self.on_job_run_finished):
            try:
                await hook(job_run_id)
            except Exception:
                log.exception("a hook on job run %s's end failed", job_run_id)

    async def _audit_finished(self, db: AsyncSession, job_run: JobRun) -> None:
        job = await db.get(Job, job_run.job_id)
        about = {
            "job_id": str(job_run.job_id),
            "name": job.name if job else "",
            "job_run_id": str(job_run.id),
            "status": job_run.status,
            "error": job_run.error or job_run.skipped_reason,
        }
        subject = ("job_run", job_run.id)
        await audit.record(db, job_run.project_id, None, Action.job_run_finished, subject, about)

    async def _keep_lease(self, job_run_id: uuid.UUID) -> None:
        while True:
            await asyncio.sleep(self.lease.total_seconds() / 3)
            with contextlib.suppress(Exception):  # the database away a moment: the next try
                async with self.factory() as db:
                    await db.execute(
                        update(JobRun)
                        .where(JobRun.id == job_run_id, JobRun.status.in_(service.ACTIVE))
                        .values(lease_until=utcnow() + self.lease)
                    )
                    await db.commit()

    # -- recovery and closing ----------------------------------------------------------------

    async def recover_interrupted(self) -> int:
        """End the job runs whose lease ran out (their replica died), and the checks' writing
        of jobs left so."""
        now = utcnow()
        async with self.factory() as db:
            stale = list(
                await db.scalars(
                    select(JobRun).where(
                        JobRun.status.in_(service.ACTIVE), JobRun.lease_until < now
                    )
                )
            )
            for job_run in stale:
                job_run.status = JobRunStatus.failed
                job_run.error = INTERRUPTED
                job_run.finished_at = now
                job_run.lease_until = None
                await self._audit_finished(db, job_run)
            await db.commit()
        for job_run in stale:
            metrics.JOB_RUNS.labels(JobRunStatus.failed).inc()
            await self._finished(job_run.id)
        await self.checks.recover_interrupted()
        await self.repairs.recover_interrupted()
        if stale:
            log.warning("ended %d interrupted job run(s) as failed", len(stale))
        return len(stale)

    def start_sweeper(self) -> None:
        self._sweeper = asyncio.create_task(self._sweep_forever())

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.lease.total_seconds() / 2)
            try:
                await self.recover_interrupted()
            except Exception as exc:  # the database away a moment: the next sweep
                log.warning("could not look for interrupted job runs: %r", exc)

    async def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=10)


def _listed(files: dict[str, str], queries: dict[str, str] | None = None) -> str:
    parts = [f"{name} {sha[:12]}" for name, sha in sorted(files.items())]
    parts += [f"{name}'s result" for name in sorted(queries or {})]
    return ", ".join(parts) or "no inputs"
