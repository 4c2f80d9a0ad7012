"""A new job's data checks, written by the project's model (the same LiteLLM path as the
agent's, its own prompt: app.jobs.checks_prompt) and run in the sandbox until they pass:
first the job runs once with no checks (what it gives on the data it was made from pins its
results: driver.pinned_test), then the model writes tests and repairs them from their
failures, at most JOB_CHECK_ATTEMPTS times. A job whose model never gets them all to pass
keeps the ones that passed and says so (`checks.note`). While they are written the job's
`checks.status` is `writing`, under a lease the sweeper ends if the replica dies."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from app.agent.calls import redact
from app.agent.model import resolve_model
from app.jobs import checks_prompt, driver, spend
from app.jobs.execution import NotRun, execute
from app.models import User
from app.models.base import utcnow
from app.models.jobs import Job
from app.runs.errors import BudgetExceeded

if TYPE_CHECKING:
    from app.jobs.runner import JobRunner

log = logging.getLogger(__name__)

INTERRUPTED = "The server stopped while the job's checks were written; it has none yet."


class ChecksWriter:
    def __init__(self, runner: JobRunner):
        self.runner = runner

    def start(self, job_id: uuid.UUID) -> None:
        """Write the job's checks in the background (call once its row is committed)."""
        self.runner.spawn(self._write(job_id), f"job-checks-{job_id}")

    async def _write(self, job_id: uuid.UUID) -> None:
        outcome: dict[str, Any] = {"status": "failed", "note": INTERRUPTED}
        try:
            outcome = await self._attempts(job_id)
        except NotRun as exc:
            outcome = {"status": "failed", "note": str(exc)}
        except Exception as exc:
            log.exception("writing job %s's checks failed", job_id)
            outcome = {
                "status": "failed",
                "note": f"Writing the checks failed ({type(exc).__name__}).",
            }
        finally:
            await self._save(job_id, outcome)

    async def _attempts(self, job_id: uuid.UUID) -> dict[str, Any]:
        factory, settings = self.runner.factory, self.runner.settings
        async with factory() as db:
            job = await db.get(Job, job_id)
            if job is None or job.session_id is None:
                return {"status": "failed", "note": "The job was deleted."}
            job.checks = {**job.checks, "lease_until": (utcnow() + self.runner.lease).isoformat()}
            asker = await self._asker(db, job)
            code, params, session_id = job.code, list(job.params), job.session_id
            await db.commit()

        last_run: list[uuid.UUID] = []  # the latest sandbox run: it carries the model's tokens

        async def run(tests: str) -> tuple[driver.Report | None, str]:
            await self._renew(job_id)
            done = await execute(
                self.runner.runs,
                factory,
                session_id,
                driver.driver(
                    code, tests, {}, _sources(params), pinned=True, last_queries=None, gate=False
                ),
                *asker,
            )
            last_run[:] = [done.run_id]
            return driver.report_of(done.output), done.failure

        first, failure = await run("")
        if first is None:
            return {"status": "failed", "note": f"{failure} (on the data it was made from)"}
        pinned = driver.pinned_test(first.results)
        await self._made(job_id, first)
        try:
            model = resolve_model(settings, None)
        except Exception as exc:
            return await self._keep(job_id, pinned, "", set(), f"No model wrote checks: {exc}")
        tests, passed = "", set[str]()
        failures: list[str] = []
        attempts = settings.JOB_CHECK_ATTEMPTS
        for _ in range(attempts):
            try:
                await spend.check_budget(factory, session_id)
            except BudgetExceeded as exc:
                return await self._keep(job_id, pinned, tests, passed, exc.detail.rstrip("."))
            try:
                reply = await spend.ask(
                    factory,
                    settings,
                    model,
                    checks_prompt.messages(code, params, first.results, tests, failures),
                    last_run[0],
                )
            except Exception as exc:
                note = redact(str(exc), [settings.LLM_API_KEY])[:300]
                return await self._keep(job_id, pinned, tests, passed, f"The model failed: {note}")
            written = checks_prompt.tests_of(reply)
            if not written:
                failures = ["The reply had no test functions (def test_...(params[, results]))."]
                continue
            tests = written
            report, failure = await run(tests + "\n\n" + pinned)
            if report is None:
                failures, passed = [failure], set()
                continue
            failures = [c["message"] for c in report.failed_checks]
            passed = {c["name"] for c in report.checks if c["passed"]}
            if not failures:
                return await self._keep(job_id, pinned, tests, passed, None)
        first_failure = failures[0] if failures else "?"
        why = f"after {attempts} attempts some checks still failed ({first_failure})"
        return await self._keep(job_id, pinned, tests, passed, why)

    async def _keep(
        self, job_id: uuid.UUID, pinned: str, tests: str, passed: set[str], why: str | None
    ) -> dict[str, Any]:
        kept = checks_prompt.only(tests, passed)
        inputs, outputs = driver.test_names(tests) if tests else ([], [])
        names = set(inputs) | set(outputs)
        together = (kept + "\n\n" + pinned).strip() + "\n" if (kept or pinned) else ""
        async with self.runner.factory() as db:
            job = await db.get(Job, job_id)
            if job is not None:
                job.tests = "import pandas as pd\n\n\n" + together if together else ""
                await db.commit()
        if why is None:
            return {"status": "ready", "note": None}
        return {
            "status": "partial",
            "note": f"{len(passed & names)} of {len(names)} checks the model wrote were kept: "
            f"{why}." + (" The test pinning its results is kept." if pinned else ""),
        }

    async def _asker(self, db: Any, job: Job) -> tuple[tuple[uuid.UUID, str], uuid.UUID | None]:
        user = await db.get(User, job.created_by) if job.created_by else None
        if user is not None:
            return (user.id, user.email), user.id
        return (job.id, f"job {job.name}"), None

    async def _made(self, job_id: uuid.UUID, report: driver.Report) -> None:
        """The results' kinds as the job gave them, and their values on its first data."""
        async with self.runner.factory() as db:
            job = await db.get(Job, job_id)
            if job is None:
                return
            kinds = {name: brief.get("kind", "value") for name, brief in report.results.items()}
            job.results = [{"name": n, "kind": k} for n, k in kinds.items()]
            job.made_from = {
                **job.made_from,
                "results": {n: b.get("value") for n, b in report.results.items()},
            }
            await db.commit()

    async def _renew(self, job_id: uuid.UUID) -> None:
        async with self.runner.factory() as db:
            job = await db.get(Job, job_id)
            if job is not None:
                lease = (utcnow() + self.runner.lease * 3).isoformat()
                job.checks = {**job.checks, "lease_until": lease}
                await db.commit()

    async def _save(self, job_id: uuid.UUID, outcome: dict[str, Any]) -> None:
        async with self.runner.factory() as db:
            job = await db.get(Job, job_id)
            if job is not None:
                job.checks = outcome
                await db.commit()

    async def recover_interrupted(self) -> None:
        """Jobs whose checks' writer died: they say so, and can run (with no checks)."""
        now = utcnow()
        async with self.runner.factory() as db:
            for job in await db.scalars(select(Job)):
                lease = job.checks.get("lease_until")
                if (
                    job.checks.get("status") == "writing"
                    and lease
                    and datetime.fromisoformat(lease) < now
                ):
                    job.checks = {"status": "failed", "note": INTERRUPTED}
            await db.commit()


def _sources(params: list[dict[str, Any]]) -> dict[str, str | None]:
    return {p["name"]: p.get("source") for p in params if p["kind"] == "query"}
