"""Running a project's checks in the background: one check run at a time per project (a
lock held and renewed while it runs, as a session's lock is while its run lives), each
check asked in turn in the session made for the run, results and counts written as each
check ends, so that progress shows; a check run left running by a process that died is
failed at start-up with a sentence."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app import audit
from app.agent.model import resolve_model
from app.audit import Action
from app.checks import service
from app.checks.asking import Asker, Outcome, Stop, judged, query_of, task_of
from app.checks.schemas import CheckRunCreate
from app.cli.eval_dabench import Task
from app.config import Settings
from app.db import after_commit
from app.errors import Unprocessable
from app.infra.locks import SessionLocks
from app.models import Project, Session, User
from app.models.base import utcnow
from app.models.knowledge import CheckResult, CheckRun, CheckRunStatus
from app.runs import budget
from app.runs.orchestrator import RunOrchestrator

log = logging.getLogger(__name__)

INTERRUPTED = (
    "The server stopped while these checks ran, so they could not all be asked; run them again."
)
FAILED = "The check run failed on the server ({}); run the checks again."


def lock_key(project_id: uuid.UUID) -> str:
    return f"checks:{project_id}"


class CheckRunner:
    def __init__(
        self,
        *,
        settings: Settings,
        factory: async_sessionmaker[AsyncSession],
        locks: SessionLocks,
        runs: RunOrchestrator,
    ):
        self.settings = settings
        self.factory = factory
        self.locks = locks
        self.runs = runs
        self.asker = Asker(runs, factory)
        self._tasks: dict[uuid.UUID, asyncio.Task[None]] = {}
        self._sweeper: asyncio.Task[None] | None = None

    @property
    def ttl(self) -> float:
        return self.settings.SESSION_LOCK_TTL_SECONDS

    # -- starting ----------------------------------------------------------------------------

    async def start(
        self, db: AsyncSession, project: Project, user: User, body: CheckRunCreate
    ) -> CheckRun:
        """Record a check run of every check of the project (its results pending) and its
        session, in the request's transaction; it runs once that has committed.

        Raises:
            ModelNotOffered, Unprocessable (no checks), BudgetExceeded, CheckRunInProgress.
        """
        model = resolve_model(self.settings, body.model)
        checks = await service.all_checks(db, project.id)
        if not checks:
            raise Unprocessable(
                "This project has no checks yet: add one (a question and its expected answer) "
                "first.",
                code="no_checks",
            )
        _, used = await self.runs.requests.project_budget(project.id)
        budget.remaining(project, used)
        token = await self.locks.acquire(lock_key(project.id), self.ttl)
        if token is None:
            raise service.CheckRunInProgress()
        try:
            for orphan in await self._orphans(db, project.id):
                await self._fail(db, orphan, INTERRUPTED)
            now = utcnow()
            session = Session(
                project_id=project.id, title=service.session_title(now), autonomy="auto"
            )
            db.add(session)
            await db.flush()
            about = {"session_id": str(session.id), "title": session.title}
            subject = ("session", session.id)
            await audit.record(db, project.id, user, Action.session_created, subject, about)
            check_run = CheckRun(
                project_id=project.id,
                status=CheckRunStatus.running,
                model=model,
                attempts=body.attempts,
                session_id=session.id,
                total=len(checks),
                created_by=user.id,
                created_at=now,
                started_at=now,
            )
            db.add(check_run)
            await db.flush()
            for position, check in enumerate(checks, start=1):
                db.add(
                    CheckResult(
                        check_run_id=check_run.id,
                        check_id=check.id,
                        position=position,
                        question=check.question,
                        expected=check.expected,
                    )
                )
            started = {"check_run_id": str(check_run.id), "model": model, "total": len(checks)}
            subject = ("check_run", check_run.id)
            await audit.record(db, project.id, user, Action.check_run_started, subject, started)
            await db.flush()
            await db.refresh(check_run)
        except BaseException:
            await self.locks.release(lock_key(project.id), token)
            raise
        formats = {check.id: check.format for check in checks}
        asker = (user.id, user.email)
        run_id, project_id = check_run.id, project.id

        async def launch() -> None:
            self._tasks[run_id] = asyncio.create_task(
                self._drive(run_id, project_id, token, asker, formats), name=f"check-run-{run_id}"
            )

        after_commit(db, launch)
        return check_run

    # -- running -----------------------------------------------------------------------------

    async def _drive(
        self,
        check_run_id: uuid.UUID,
        project_id: uuid.UUID,
        token: str,
        asker: tuple[uuid.UUID, str],
        formats: dict[uuid.UUID, str],
    ) -> None:
        keeper = asyncio.create_task(self._keep_lock(project_id, token))
        error: str | None = None
        try:
            async with self.factory() as db:
                check_run = await db.get(CheckRun, check_run_id)
                if check_run is None:  # deleted with its project meanwhile
                    return
                session_id = check_run.session_id
                model, attempts = check_run.model, check_run.attempts
                results = list(
                    await db.scalars(
                        select(CheckResult)
                        .where(CheckResult.check_run_id == check_run_id)
                        .order_by(CheckResult.position)
                    )
                )
            for index, result in enumerate(results):
                format = formats.get(result.check_id, "") if result.check_id else ""
                task = task_of(result.position, result.question, result.expected, format)
                try:
                    if session_id is None:
                        raise Stop(
                            "The check run's session was deleted, so its checks cannot be asked."
                        )
                    outcome = await self._ask(result.id, session_id, task, model, attempts, asker)
                except Stop as exc:
                    error = str(exc)
                    await self._not_asked(check_run_id, [r.id for r in results[index:]], error)
                    break
                await self._record(check_run_id, result.id, outcome)
        except asyncio.CancelledError:
            error = INTERRUPTED
            raise
        except Exception as exc:
            log.exception("check run %s failed", check_run_id)
            error = FAILED.format(type(exc).__name__)
        finally:
            keeper.cancel()
            await self._finish(check_run_id, error)
            with contextlib.suppress(Exception):  # else it expires within the lock's TTL
                await self.locks.release(lock_key(project_id), token)
            self._tasks.pop(check_run_id, None)

    async def _ask(
        self,
        result_id: uuid.UUID,
        session_id: uuid.UUID,
        task: Task,
        model: str,
        attempts: int,
        asker: tuple[uuid.UUID, str],
    ) -> Outcome:
        started = await self.asker.start(session_id, query_of(task, model, attempts), asker)
        if isinstance(started, Outcome):
            return started
        async with self.factory() as db:  # the run shows in the result while it runs
            await db.execute(
                update(CheckResult).where(CheckResult.id == result_id).values(run_id=started.id)
            )
            await db.commit()
        run = await self.asker.wait(started.id)
        return judged(task, run)

    async def _record(
        self, check_run_id: uuid.UUID, result_id: uuid.UUID, outcome: Outcome
    ) -> None:
        async with self.factory() as db:
            result = await db.get(CheckResult, result_id)
            check_run = await db.get(CheckRun, check_run_id)
            assert result is not None and check_run is not None
            result.status = outcome.status
            result.run_id = outcome.run_id or result.run_id
            result.answer = outcome.answer
            result.detail = outcome.detail
            if outcome.status == "passed":
                check_run.passed += 1
            elif outcome.status == "failed":
                check_run.failed += 1
            else:
                check_run.errors += 1
            check_run.tokens_in += outcome.tokens_in
            check_run.tokens_out += outcome.tokens_out
            if outcome.cost_usd is not None:
                check_run.cost_usd = (check_run.cost_usd or 0.0) + outcome.cost_usd
            await db.commit()

    async def _not_asked(
        self, check_run_id: uuid.UUID, result_ids: list[uuid.UUID], why: str
    ) -> None:
        async with self.factory() as db:
            await self._close_pending(db, check_run_id, f"Not asked: {why}", result_ids)
            await db.commit()

    async def _finish(self, check_run_id: uuid.UUID, error: str | None) -> None:
        with contextlib.suppress(Exception):  # shutting down: start-up fails it instead
            async with self.factory() as db:
                check_run = await db.get(CheckRun, check_run_id)
                if check_run is None or check_run.status not in service.ACTIVE:
                    return
                if error is None:
                    check_run.status = CheckRunStatus.succeeded
                    check_run.finished_at = utcnow()
                    await self._audit_finished(db, check_run)
                else:
                    await self._fail(db, check_run, error)
                await db.commit()

    async def _fail(self, db: AsyncSession, check_run: CheckRun, error: str) -> None:
        await self._close_pending(db, check_run.id, f"Not asked: {error}")
        check_run.status = CheckRunStatus.failed
        check_run.error = error
        check_run.finished_at = utcnow()
        await self._audit_finished(db, check_run)

    async def _close_pending(
        self,
        db: AsyncSession,
        check_run_id: uuid.UUID,
        detail: str,
        result_ids: list[uuid.UUID] | None = None,
    ) -> None:
        """The results still pending become errors with `detail`, counted as such."""
        query = select(CheckResult).where(
            CheckResult.check_run_id == check_run_id, CheckResult.status == "pending"
        )
        if result_ids is not None:
            query = query.where(CheckResult.id.in_(result_ids))
        pending = list(await db.scalars(query))
        for result in pending:
            result.status, result.detail = "error", detail
        check_run = await db.get(CheckRun, check_run_id)
        assert check_run is not None
        check_run.errors += len(pending)
        await db.flush()

    async def _audit_finished(self, db: AsyncSession, check_run: CheckRun) -> None:
        about = {
            "check_run_id": str(check_run.id),
            "model": check_run.model,
            "status": check_run.status,
            "total": check_run.total,
            "passed": check_run.passed,
            "failed": check_run.failed,
            "errors": check_run.errors,
            "error": check_run.error,
        }
        subject = ("check_run", check_run.id)
        await audit.record(
            db, check_run.project_id, None, Action.check_run_finished, subject, about
        )

    async def _keep_lock(self, project_id: uuid.UUID, token: str) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            with contextlib.suppress(Exception):  # Redis away a moment: the next try
                await self.locks.renew(lock_key(project_id), token, self.ttl)

    # -- recovery and closing ----------------------------------------------------------------

    async def _orphans(self, db: AsyncSession, project_id: uuid.UUID | None) -> list[CheckRun]:
        """Active check runs no process runs (nobody holds their project's lock)."""
        query = select(CheckRun).where(CheckRun.status.in_(service.ACTIVE))
        if project_id is not None:
            query = query.where(CheckRun.project_id == project_id)
            return list(await db.scalars(query))  # the caller holds the lock
        found = []
        for check_run in await db.scalars(query):
            if await self.locks.holder(lock_key(check_run.project_id)) is None:
                found.append(check_run)
        return found

    async def recover_interrupted(self) -> int:
        """At start-up: fail the check runs a process that died left running."""
        async with self.factory() as db:
            orphans = await self._orphans(db, None)
            for check_run in orphans:
                await self._fail(db, check_run, INTERRUPTED)
            await db.commit()
        if orphans:
            log.warning("marked %d interrupted check run(s) as failed", len(orphans))
        return len(orphans)

    def start_sweeper(self) -> None:
        """Every lock TTL, fail the check runs of another replica that died meanwhile (their
        lock expired without their end being recorded)."""
        self._sweeper = asyncio.create_task(self._sweep_forever())

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.ttl)
            try:
                await self.recover_interrupted()
            except Exception as exc:  # the database or Redis away a moment: the next sweep
                log.warning("could not look for interrupted check runs: %r", exc)

    async def close(self) -> None:
        """Stop the check runs of this process (each is failed with INTERRUPTED)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=10)
