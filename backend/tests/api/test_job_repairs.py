"""Job repairs (issue 45, point 3): a renamed column fails the job's checks with the check's
sentence; the (scripted) model proposes new code and tests that pass in the sandbox; an
editor approves (the next run passes, with the right values) or rejects (the job keeps its
code); with autonomy `auto` the repair is applied at once; a proposal that still fails ends
`failed`. On both stacks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.jobs_support import CHECKS, make_job, run_job, two_questions, when
from tests.conftest import Api
from tests.jobs.receivers import WebhookReceiver
from tests.support.llm import ScriptedLLM, count_tokens

RENAMED = b"region,month,amount\nNorth,2026-01,1200.5\nSouth,2026-01,980\n"
SENTENCE = "sales data.csv lacks the columns ['revenue']; the job reads them"


@pytest.fixture
def hooks() -> Iterator[WebhookReceiver]:
    made = WebhookReceiver()
    yield made
    made.close()


def renamed(text: str) -> str:
    return text.replace("'revenue'", "'amount'").replace('"revenue"', '"amount"')


def proposal(api: Api, job_id: str, fix: Any = renamed) -> str:
    """What the model answers: the job's script and tests with the column renamed."""
    code = api.get(f"/jobs/{job_id}/code").json()
    tests = code["tests"].split("def test_results_pinned")[0]
    return (
        "NOTE: The column revenue is now called amount; the script and the check that "
        "names it read amount.\n"
        f"```python job\n{fix(code['script'])}```\n"
        f"```python tests\n{renamed(tests)}```\n"
    )


def broken_job(alice: Api, session: dict[str, Any], llm: ScriptedLLM, **patch: Any) -> str:
    """A job that ran once, whose file then lost its column `revenue` (renamed `amount`)."""
    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, session["project_id"], session["id"])
    if patch:
        assert alice.patch(f"/jobs/{job['id']}", json=patch).status_code == 200
    assert run_job(alice, job["id"])["status"] == "succeeded"
    assert alice.upload(session["project_id"], "sales data.csv", RENAMED).status_code == 201
    return str(job["id"])


def repaired(api: Api, job_run_id: str) -> dict[str, Any]:
    """The repair made after the run, once it is made."""
    found = when(
        api,
        f"/job-runs/{job_run_id}",
        lambda r: r["repair"] is not None and r["repair"]["status"] != "repairing",
        timeout=300,
    )
    return dict(found["repair"])


def test_a_renamed_column_is_repaired_once_an_editor_approves(
    alice: Api,
    bob: Api,
    session: dict[str, Any],
    llm: ScriptedLLM,
    hooks: WebhookReceiver,
    live: Any,
) -> None:
    project_id = session["project_id"]
    deliver = [{"channel": "webhook", "url": hooks.url, "secret": "whsec-0123456789-abcdef"}]
    job_id = broken_job(alice, session, llm, alerts=[{"when": "failed", "deliver": deliver}])
    fix = proposal(alice, job_id)
    llm.repair_replies.extend([fix])
    asked = len(llm.requests)
    broken = run_job(alice, job_id)
    assert broken["status"] == "failed" and broken["error"] == SENTENCE, broken

    repair = repaired(alice, broken["id"])
    assert repair["status"] == "proposed", repair
    assert repair["reason"] == SENTENCE
    assert repair["note"].startswith("The column revenue is now called amount")
    removed = [line for line in repair["diff"].splitlines() if line.startswith("-")]
    added = [line for line in repair["diff"].splitlines() if line.startswith("+")]
    assert any("'revenue'" in line for line in removed), repair["diff"]
    assert any("'amount'" in line for line in added), repair["diff"]
    assert "+++ b/job.py" in repair["diff"] and "+++ b/test_job.py" in repair["diff"]
    assert repair["checks"] and all(c["passed"] for c in repair["checks"]), repair["checks"]
    assert repair["decided_by_name"] is None and repair["proposed_at"]
    # The model was shown the failure and today's columns; the agent's script untouched.
    [request] = llm.repair_requests
    shown = "\n".join(str(m["content"]) for m in request["messages"])
    assert SENTENCE in shown and '"amount": "float64"' in shown
    assert len(llm.requests) == asked
    assert alice.get(f"/jobs/{job_id}").json()["pending_repair"]["id"] == repair["id"]
    assert "'revenue'" in alice.get(f"/jobs/{job_id}/code").json()["script"]
    # The failure's alert says a repair is proposed.
    when(
        alice,
        f"/job-runs/{broken['id']}",
        lambda r: bool(r["deliveries"]) and r["deliveries"][0]["status"] == "sent",
    )
    said = json.loads(hooks.requests[0][1])["text"]
    assert SENTENCE in said and "A repair of the job's code is being proposed" in said, said

    approval = f"/jobs/{job_id}/repairs/{repair['id']}/approval"
    assert bob.post(approval, json={"decision": "approve"}).status_code == 404
    alice.post(
        f"/projects/{project_id}/members", json={"email": "bob@example.com", "role": "viewer"}
    )
    assert bob.post(approval, json={"decision": "approve"}).status_code == 403
    assert bob.get(f"/jobs/{job_id}/repairs").json()["total"] == 1

    # Rejected: the job keeps its code, and fails again.
    rejected = alice.post(approval, json={"decision": "reject"})
    assert rejected.status_code == 200, rejected.text
    assert rejected.json()["status"] == "rejected"
    assert rejected.json()["decided_by_name"] == "alice@example.com"
    again = alice.post(approval, json={"decision": "approve"})
    assert again.status_code == 409 and again.json()["code"] == "repair_not_pending"
    assert "'revenue'" in alice.get(f"/jobs/{job_id}/code").json()["script"]
    assert alice.get(f"/jobs/{job_id}").json()["pending_repair"] is None

    llm.repair_replies.extend([fix])
    second = run_job(alice, job_id)
    assert second["status"] == "failed" and second["error"] == SENTENCE
    repair = repaired(alice, second["id"])
    assert repair["status"] == "proposed", repair
    approved = alice.post(
        f"/jobs/{job_id}/repairs/{repair['id']}/approval", json={"decision": "approve"}
    )
    assert approved.status_code == 200, approved.text
    assert approved.json()["status"] == "applied"
    assert approved.json()["decided_by_name"] == "alice@example.com"
    code = alice.get(f"/jobs/{job_id}/code").json()
    assert "'revenue'" not in code["script"] and "pd.read_csv" in code["script"]
    assert "'amount'" in code["tests"] and "def test_results_pinned" in code["tests"]

    passed = run_job(alice, job_id)
    assert passed["status"] == "succeeded", passed
    assert passed["results"]["answer_1"] == 2180.5
    assert passed["results"]["answer_2"] == 1200.5
    assert all(c["passed"] for c in passed["checks"]) and passed["checks"]
    assert len(llm.requests) == asked

    history = alice.get(f"/jobs/{job_id}/repairs").json()
    assert [r["status"] for r in history["items"]] == ["applied", "rejected"]
    assert history["items"][0]["job_run_id"] == second["id"]
    runs = alice.get(f"/jobs/{job_id}/runs").json()["items"]
    assert [r["repair"]["status"] if r["repair"] else None for r in runs] == [
        None,
        "applied",
        "rejected",
        None,
    ]
    actions = [e["action"] for e in alice.get(f"/projects/{project_id}/audit").json()["items"]]
    for action in (
        "job.repair_proposed",
        "job.repair_rejected",
        "job.repair_approved",
        "job.repair_applied",
    ):
        assert action in actions, actions
    metrics = httpx.get(f"{live.url}/metrics", timeout=30).text
    for status in ("proposed", "rejected", "approved", "applied"):
        assert f'workbench_job_repairs_total{{status="{status}"}}' in metrics


def test_auto_autonomy_applies_a_repair_and_a_failing_one_changes_nothing(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    project_id = session["project_id"]
    job_id = broken_job(alice, session, llm, autonomy="auto")
    spent = alice.get(f"/projects/{project_id}").json()["tokens_in"]
    still_wrong = proposal(alice, job_id, fix=lambda code: code.replace("sum()", "sum() * 1"))
    llm.repair_replies.extend([still_wrong] * 3)
    broken = run_job(alice, job_id)
    assert broken["status"] == "failed" and broken["error"] == SENTENCE
    failed = repaired(alice, broken["id"])
    assert failed["status"] == "failed", failed
    assert failed["note"].startswith("After 3 tries the proposed code still failed")
    assert "revenue" in failed["note"], failed["note"]
    assert "'revenue'" in alice.get(f"/jobs/{job_id}/code").json()["script"]
    assert len(llm.repair_requests) == 3
    # The model's tokens count in the project's spending (and so its budget).
    prompts = ["\n".join(str(m["content"]) for m in r["messages"]) for r in llm.repair_requests]
    grown = alice.get(f"/projects/{project_id}").json()["tokens_in"] - spent
    assert grown >= sum(count_tokens(p) for p in prompts), (grown, spent)

    llm.repair_replies.extend([proposal(alice, job_id)])
    again = run_job(alice, job_id)
    assert again["status"] == "failed"
    applied = repaired(alice, again["id"])
    assert applied["status"] == "applied", applied
    assert applied["decided_by_name"] is None
    assert alice.get(f"/jobs/{job_id}").json()["pending_repair"] is None
    assert "'amount'" in alice.get(f"/jobs/{job_id}/code").json()["script"]
    passed = run_job(alice, job_id)
    assert passed["status"] == "succeeded", passed
    assert passed["results"]["answer_1"] == 2180.5

    # A project whose budget is spent gets no repair (and the model is not asked).
    assert alice.patch(f"/projects/{project_id}", json={"budget_tokens": 1}).status_code == 200
    gone = RENAMED.replace(b"amount", b"total")
    assert alice.upload(project_id, "sales data.csv", gone).status_code == 201
    asked = len(llm.repair_requests)
    refused = repaired(alice, run_job(alice, job_id)["id"])
    assert refused["status"] == "failed" and "budget" in refused["note"], refused
    assert len(llm.repair_requests) == asked


def test_a_repair_of_a_replica_that_died_is_ended_not_stuck(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, live: Any
) -> None:
    """A repair whose lease ran out (its replica died) is ended `failed` by the sweeper with
    a sentence; the job keeps its code and may be repaired again."""
    import uuid
    from datetime import timedelta

    from app.jobs.repair import INTERRUPTED
    from app.models.base import utcnow
    from app.models.job_repairs import JobRepair
    from app.models.jobs import JobRun

    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, session["project_id"], session["id"])
    code = alice.get(f"/jobs/{job['id']}/code").json()
    job_run_id, repair_id = uuid.uuid4(), uuid.uuid4()

    async def orphan() -> None:
        async with live.state.session_factory() as db:
            ids = {"job_id": uuid.UUID(job["id"]), "project_id": uuid.UUID(session["project_id"])}
            db.add(JobRun(id=job_run_id, trigger="manual", status="failed", **ids))
            await db.flush()
            db.add(
                JobRepair(
                    id=repair_id,
                    job_run_id=job_run_id,
                    status="repairing",
                    reason="x",
                    old_code=code["script"],
                    old_tests=code["tests"],
                    diff="",
                    checks=[],
                    checked_on={},
                    lease_until=utcnow() - timedelta(seconds=1),
                    **ids,
                )
            )
            await db.commit()

    live.call(orphan())
    live.call(live.state.jobs.recover_interrupted())
    [repair] = alice.get(f"/jobs/{job['id']}/repairs").json()["items"]
    assert repair["status"] == "failed" and repair["note"] == INTERRUPTED, repair
    assert alice.get(f"/jobs/{job['id']}/code").json() == code
