"""Job repairs in the background: after a run of a job failed because of its code (a check
failed, or the code raised), the model is shown the script, its tests, the failure and
today's inputs (their columns and types, read in the sandbox) and proposes new code (and
tests, only when a test's premise changed); the proposal runs in the job's sandbox worker,
with the question's limits, until its checks pass (JOB_REPAIR_ATTEMPTS tries). Bounded
(JOB_REPAIRS_CONCURRENCY at once on a replica), leased (renewed while it lives; one whose
replica died is ended by the job runs' sweeper), never holding a request. The model's
tokens (and cost) are added to the repair's sandbox run (app.jobs.spend), so they count
against the project's budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update

from app.agent.calls import redact
from app.agent.model import resolve_model
from app.jobs import driver, repair_prompt, repairs, spend
from app.jobs.execution import NotRun, execute
from app.models.base import utcnow
from app.models.job_repairs import JobRepair, JobRepairStatus
from app.models.jobs import Job, JobRun
from app.observability import metrics
from app.runs.errors import BudgetExceeded

if TYPE_CHECKING:
    from app.jobs.runner import JobRunner

log = logging.getLogger(__name__)

INTERRUPTED = "The server stopped while the repair was made; the job keeps its code."


class JobRepairer:
    def __init__(self, runner: JobRunner):
        self.runner = runner
        self.slots = asyncio.Semaphore(runner.settings.JOB_REPAIRS_CONCURRENCY)

    async def after_run(self, job_run_id: uuid.UUID) -> None:
        """The hook on a job run's end: a repair recorded (`repairing`) and made in the
        background when the run failed because of its code and the job has none under way."""
        if self.runner.settings.JOB_REPAIR_ATTEMPTS < 1:
            return
        async with self.runner.factory() as db:
            job_run = await db.get(JobRun, job_run_id)
            if job_run is None or not repairs.repairable(job_run):
                return
            job = await db.get(Job, job_run.job_id)
            if job is None or job.session_id is None or await repairs.waiting(db, job.id):
                return
            repair = JobRepair(
                job_id=job.id,
                project_id=job.project_id,
                job_run_id=job_run.id,
                status=JobRepairStatus.repairing,
                reason=job_run.error or "The job's run failed.",
                old_code=job.code,
                old_tests=job.tests,
                diff="",
                checks=[],
                checked_on={},
                lease_until=utcnow() + self.runner.lease,
                created_at=utcnow(),
            )
            db.add(repair)
            await db.commit()
            repair_id = repair.id
        self.runner.spawn(self._repair(repair_id), f"job-repair-{repair_id}")

    async def _repair(self, repair_id: uuid.UUID) -> None:
        keeper = asyncio.create_task(self._keep_lease(repair_id))
        outcome: dict[str, Any] = {"status": JobRepairStatus.failed, "note": INTERRUPTED}
        try:
            async with self.slots:
                outcome = await self._attempts(repair_id)
        except asyncio.CancelledError:
            raise
        except NotRun as exc:
            outcome = {"status": JobRepairStatus.failed, "note": str(exc)}
        except Exception as exc:
            log.exception("repairing job repair %s failed", repair_id)
            note = f"The repair failed on the server ({type(exc).__name__})."
            outcome = {"status": JobRepairStatus.failed, "note": note}
        finally:
            keeper.cancel()
            await self._save(repair_id, outcome)

    async def _attempts(self, repair_id: uuid.UUID) -> dict[str, Any]:
        runner, settings = self.runner, self.runner.settings
        async with runner.factory() as db:
            repair = await db.get(JobRepair, repair_id)
            job_run = await db.get(JobRun, repair.job_run_id) if repair is not None else None
            job = await db.get(Job, repair.job_id) if repair is not None else None
            if repair is None or job_run is None or job is None or job.session_id is None:
                raise NotRun("The job was deleted before it was repaired.")
            asker = await runner._asker(db, job, job_run)
            code, tests, params = repair.old_code, repair.old_tests, list(job.params)
            session_id = job.session_id
            overrides = dict(job_run.params)
            files = dict((job_run.inputs or {}).get("files") or {})
            failing = [c["message"] for c in job_run.checks or [] if not c.get("passed", True)]
            reason = "\n".join(dict.fromkeys([repair.reason, *failing]))
        sources = {p["name"]: p.get("source") for p in params if p["kind"] == "query"}

        async def run(text: str) -> Any:
            return await execute(runner.runs, runner.factory, session_id, text, *asker)

        try:
            model = resolve_model(settings, None)
        except Exception as exc:
            return {"status": JobRepairStatus.failed, "note": f"No model to repair it: {exc}"}
        seen = await run(repair_prompt.probe(code, params, overrides))
        columns = repair_prompt.probed(seen.output)
        base = repair_prompt.without_pinned(tests)
        failures: list[str] = []
        last: dict[str, Any] = {}
        attempts = settings.JOB_REPAIR_ATTEMPTS
        for _ in range(attempts):
            await self._budget(session_id)
            request = repair_prompt.messages(code, base, reason, columns, failures)
            try:
                reply = await spend.ask(runner.factory, settings, model, request, seen.run_id)
            except Exception as exc:
                note = redact(str(exc), [settings.LLM_API_KEY])[:300]
                return {
                    **last,
                    "status": JobRepairStatus.failed,
                    "note": f"The model failed: {note}",
                }
            try:
                proposal = repair_prompt.proposal_of(reply)
            except repair_prompt.Unusable as exc:
                failures = [str(exc)]
                continue
            new_tests = proposal.tests if proposal.tests is not None else base
            if proposal.code.strip() == code.strip() and new_tests.strip() == base.strip():
                failures = ["The proposal changed nothing; the job fails as it is."]
                continue
            done = await run(
                driver.driver(
                    proposal.code, new_tests, overrides, sources, pinned=False, last_queries=None
                )
            )
            report = driver.report_of(done.output)
            shown = repair_prompt.diff(code, proposal.code, tests, new_tests)
            last = {"new_code": proposal.code, "new_tests": new_tests, "diff": shown}
            if report is None:
                failures = [done.failure]
                last["checks"] = []
                continue
            last["checks"] = report.checks
            failures = [c["message"] for c in report.failed_checks]
            if failures:
                continue
            pinned = driver.pinned_test(report.results)
            final = (new_tests.strip() + "\n\n\n" + pinned).strip() + "\n"
            results = {n: b.get("value") for n, b in report.results.items()}
            return {
                **last,
                "status": JobRepairStatus.proposed,
                "new_tests": final,
                "diff": repair_prompt.diff(code, proposal.code, tests, final),
                "note": proposal.note,
                "checked_on": {"files": files, "results": results},
            }
        why = failures[0] if failures else "?"
        note = f"After {attempts} tries the proposed code still failed: {why}"
        return {**last, "status": JobRepairStatus.failed, "note": note}

    async def _budget(self, session_id: uuid.UUID) -> None:
        """Raises NotRun when the project's budget is spent."""
        try:
            await spend.check_budget(self.runner.factory, session_id)
        except BudgetExceeded as exc:
            raise NotRun(f"The job was not repaired: {exc.detail}") from None

    async def _save(self, repair_id: uuid.UUID, outcome: dict[str, Any]) -> None:
        with contextlib.suppress(Exception):  # shutting down: the sweeper ends it instead
            async with self.runner.factory() as db:
                repair = await db.get(JobRepair, repair_id)
                job = await db.get(Job, repair.job_id) if repair is not None else None
                if repair is None or job is None or repair.status != JobRepairStatus.repairing:
                    return
                for key, value in outcome.items():
                    setattr(repair, key, value)
                repair.lease_until = None
                metrics.JOB_REPAIRS.labels(repair.status).inc()
                if repair.status == JobRepairStatus.proposed:
                    repair.proposed_at = utcnow()
                    await repairs.proposed(db, job, repair)
                await db.commit()

    async def _keep_lease(self, repair_id: uuid.UUID) -> None:
        while True:
            await asyncio.sleep(self.runner.lease.total_seconds() / 3)
            with contextlib.suppress(Exception):  # the database away a moment: the next try
                async with self.runner.factory() as db:
                    await db.execute(
                        update(JobRepair)
                        .where(
                            JobRepair.id == repair_id,
                            JobRepair.status == JobRepairStatus.repairing,
                        )
                        .values(lease_until=utcnow() + self.runner.lease)
                    )
                    await db.commit()

    async def recover_interrupted(self) -> None:
        """Repairs whose replica died: failed, the job keeps its code."""
        async with self.runner.factory() as db:
            stale = await db.scalars(
                select(JobRepair).where(
                    JobRepair.status == JobRepairStatus.repairing,
                    JobRepair.lease_until < utcnow(),
                )
            )
            for repair in stale:
                repair.status = JobRepairStatus.failed
                repair.note = INTERRUPTED
                repair.lease_until = None
            await db.commit()
