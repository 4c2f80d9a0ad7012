"""What goes with a job (issue 45), on both stacks: deleting a project (or a job) leaves none
of its schedules, deliveries or share links; a job's own session is not one of the project's
sessions; the model call that writes a job's checks counts against the project's budget,
and none is made once the budget is spent."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select

from app.models import Share
from app.models.job_schedules import JobDelivery, JobSchedule
from tests.api.jobs_support import CHECKS, make_job, run_job, two_questions, when
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, count_tokens


def _rows(live: Any, job_id: str) -> dict[str, int]:
    async def count() -> dict[str, int]:
        async with live.state.session_factory() as db:
            return {
                "schedules": await db.scalar(
                    select(func.count()).where(JobSchedule.job_id == job_id)
                ),
                "deliveries": await db.scalar(
                    select(func.count()).where(JobDelivery.job_id == job_id)
                ),
                "shares": await db.scalar(
                    select(func.count()).where(Share.job_id == uuid.UUID(job_id))
                ),
            }

    return dict(live.call(count()))


def _job_with_everything(alice: Api, session: dict[str, Any], llm: ScriptedLLM) -> dict[str, Any]:
    """A job with a schedule, an alert delivering to its share link, and a run that alerted."""
    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, session["project_id"], session["id"])
    alerts = [
        {"when": "above", "result": "answer_1", "value": 0, "deliver": [{"channel": "share"}]}
    ]
    body = {"alerts": alerts, "schedule": {"cron": "0 8 * * 1"}}
    assert alice.patch(f"/jobs/{job['id']}", json=body).status_code == 200
    ran = run_job(alice, job["id"])
    when(alice, f"/job-runs/{ran['id']}", lambda r: len(r["deliveries"]) == 1)
    return job


def test_deleting_a_project_or_a_job_leaves_no_schedule_delivery_or_link(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, live: Any
) -> None:
    job = _job_with_everything(alice, session, llm)
    assert _rows(live, job["id"]) == {"schedules": 1, "deliveries": 1, "shares": 1}
    assert alice.delete(f"/jobs/{job['id']}").status_code == 204
    assert _rows(live, job["id"]) == {"schedules": 0, "deliveries": 0, "shares": 0}

    second = _job_with_everything(alice, session, llm)
    assert _rows(live, second["id"]) == {"schedules": 1, "deliveries": 1, "shares": 1}
    assert alice.delete(f"/projects/{session['project_id']}").status_code == 204
    assert _rows(live, second["id"]) == {"schedules": 0, "deliveries": 0, "shares": 0}


def test_a_jobs_session_is_not_listed_with_the_projects_sessions(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    two_questions(alice, session["id"], llm, CHECKS)
    make_job(alice, session["project_id"], session["id"])
    listed = alice.get(f"/projects/{session['project_id']}/sessions").json()
    assert [s["id"] for s in listed["items"]] == [session["id"]]
    assert listed["total"] == 1


def test_the_checks_model_call_counts_against_the_budget(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    project_path = f"/projects/{session['project_id']}"
    two_questions(alice, session["id"], llm, CHECKS)
    before = alice.get(project_path).json()
    make_job(alice, session["project_id"], session["id"])
    after = alice.get(project_path).json()
    prompt = llm.prompts()[-1]
    assert "[workbench:job-checks]" in prompt  # (the checks' request)
    assert after["tokens_in"] - before["tokens_in"] == count_tokens(prompt)
    assert after["tokens_out"] - before["tokens_out"] == count_tokens(CHECKS)

    used = after["tokens_in"] + after["tokens_out"]
    assert alice.patch(project_path, json={"budget_tokens": used}).status_code == 200
    llm.script(CHECKS)  # (and no request recorded yet)
    job = make_job(alice, session["project_id"], session["id"])
    assert llm.requests == []  # no model call past the budget
    # (Its code's run in the sandbox is refused first, as every run of a spent project is.)
    assert job["checks"]["status"] == "failed", job["checks"]
    assert f"used {used:,} of its {used:,} token budget" in job["checks"]["note"]
