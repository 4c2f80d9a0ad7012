"""Jobs (issue 45, points 1-3): a two-question session made into a job whose checks the
(scripted) model writes and the sandbox passes; its runs execute with no model call, skip
when nothing changed, follow a file's new version, stop at a failing check with the check's
sentence, and fail with a sentence when a file they read is gone. On both stacks."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.api.jobs_support import CHECKS, make_job, run_job, two_questions, when
from tests.conftest import Api
from tests.support.llm import ScriptedLLM

NEWER = b"region,month,revenue\nNorth,2026-01,1200.5\nSouth,2026-01,980\nWest,2026-03,500\n"
RENAMED = b"region,month,amount\nNorth,2026-01,1200.5\nSouth,2026-01,980\n"


def test_a_session_becomes_a_job_that_runs_without_the_model(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    project_id = session["project_id"]
    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, project_id, session["id"])
    assert job["checks"] == {"status": "ready", "note": None}, job["checks"]
    assert job["params"] == [
        {"name": "sales_data_csv", "kind": "file", "default": "sales data.csv", "source": None}
    ]
    assert {(r["name"], r["kind"]) for r in job["results"]} == {
        ("answer_1", "value"),
        ("answer_2", "value"),
        ("by_region", "table"),
    }
    code = alice.get(f"/jobs/{job['id']}/code").json()
    assert "def run(params):" in code["script"] and "final_answer" not in code["script"]
    assert "pd.read_csv(params['sales_data_csv'])" in code["script"]
    assert "display(by_region, title='by_region')" in code["script"]
    assert "def test_results_pinned(params, results):" in code["tests"]
    assert "def test_sales_has_the_columns_the_job_reads(params):" in code["tests"]

    asked = len(llm.requests)
    first = run_job(alice, job["id"])
    assert len(llm.requests) == asked  # the scripted model saw nothing
    assert first["status"] == "succeeded", first
    assert first["results"]["answer_1"] == 4490.75
    assert first["results"]["answer_2"] == 2510.75
    assert first["results"]["by_region"]["rows"] == [["North", 2510.75], ["South", 1980.0]]
    assert [c["passed"] for c in first["checks"]] == [True] * 4, first["checks"]
    assert "test_results_pinned" in [c["name"] for c in first["checks"]]
    assert [a["kind"] for a in first["artifacts"]] == ["table", "file"]  # (its full data)
    assert first["artifacts"][0]["name"] == "by_region.json"

    again = run_job(alice, job["id"])
    assert again["status"] == "skipped" and again["checks"] == [], again
    assert "byte for byte those of the last run" in again["skipped_reason"]

    assert alice.upload(project_id, "sales data.csv", NEWER).status_code == 201
    newer = run_job(alice, job["id"])
    assert newer["status"] == "succeeded", newer
    assert newer["results"]["answer_1"] == 2680.5
    # The pinned test holds on the data the job was made from only.
    assert "test_results_pinned" not in [c["name"] for c in newer["checks"]]

    assert alice.upload(project_id, "sales data.csv", RENAMED).status_code == 201
    broken = run_job(alice, job["id"])
    sentence = "sales data.csv lacks the columns ['revenue']; the job reads them"
    assert broken["status"] == "failed" and broken["error"] == sentence, broken
    assert {
        "name": "test_sales_has_the_columns_the_job_reads",
        "passed": False,
        "message": sentence,
    } in broken["checks"]
    assert broken["results"] == {}
    assert len(llm.requests) == asked

    history = alice.get(f"/jobs/{job['id']}/runs").json()
    assert [r["status"] for r in history["items"]] == [
        "failed",
        "succeeded",
        "skipped",
        "succeeded",
    ]
    assert alice.get(f"/jobs/{job['id']}").json()["last_run"]["status"] == "failed"

    [file] = alice.get(f"/projects/{project_id}/files").json()["items"]
    assert alice.delete(f"/files/{file['id']}").status_code == 204
    gone = run_job(alice, job["id"])
    assert gone["status"] == "failed"
    assert gone["error"] == "The job reads sales data.csv, which is no longer in the project."


def test_checks_that_never_pass_are_left_out_and_the_job_says_so(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    wrong = CHECKS.replace('("region", "revenue")', '("region", "profit")')
    two_questions(alice, session["id"], llm, wrong, wrong, wrong)
    job = make_job(alice, session["project_id"], session["id"])
    assert job["checks"]["status"] == "partial", job["checks"]
    assert job["checks"]["note"].startswith("2 of 3 checks the model wrote were kept")
    assert "lacks the columns ['profit']" in job["checks"]["note"]
    tests = alice.get(f"/jobs/{job['id']}/code").json()["tests"]
    assert "test_sales_has_the_columns_the_job_reads" not in tests
    assert "test_revenue_has_no_missing_values" in tests and "test_results_pinned" in tests
    # The model was shown the failures when asked again.
    assert "lacks the columns ['profit']" in llm.prompts()[-1]
    assert run_job(alice, job["id"])["status"] == "succeeded"


def test_bad_input_is_refused_with_a_sentence(
    alice: Api, bob: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    project_id = session["project_id"]
    unknown = alice.post(
        f"/projects/{project_id}/jobs", json={"session_id": project_id, "name": "X"}
    )
    assert unknown.status_code == 404 and unknown.json()["code"] == "session_not_found"
    other = alice.post(f"/projects/{project_id}/sessions", json={"title": "Other"}).json()
    two_questions(alice, session["id"], llm, CHECKS)
    runs = alice.get(f"/sessions/{session['id']}/runs").json()["items"]
    mixed = alice.post(
        f"/projects/{project_id}/jobs",
        json={"session_id": other["id"], "run_ids": [runs[0]["id"]], "name": "X"},
    )
    assert mixed.status_code == 404 and mixed.json()["code"] == "run_not_found"
    empty = alice.post(
        f"/projects/{project_id}/jobs", json={"session_id": other["id"], "name": "X"}
    )
    assert empty.status_code == 422 and empty.json()["code"] == "nothing_ran"
    nameless = alice.post(
        f"/projects/{project_id}/jobs", json={"session_id": session["id"], "name": ""}
    )
    assert nameless.status_code == 422

    job = make_job(alice, project_id, session["id"], run_ids=[runs[0]["id"]])
    assert [r["name"] for r in job["results"]] == ["answer_1"]
    bad = alice.post(f"/jobs/{job['id']}/runs", json={"params": {"nope": 1}})
    assert bad.status_code == 422 and bad.json()["code"] == "unknown_param"
    alert = alice.patch(f"/jobs/{job['id']}", json={"alerts": [{"when": "sometimes"}]})
    assert alert.status_code == 422
    # Another user's job is no job at all.
    for response in (
        bob.get(f"/jobs/{job['id']}"),
        bob.post(f"/jobs/{job['id']}/runs", json={}),
        bob.get(f"/jobs/{job['id']}/code"),
    ):
        assert response.status_code == 404, response.text


def test_viewers_read_jobs_and_editors_manage_them(
    alice: Api, bob: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    project_id = session["project_id"]
    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, project_id, session["id"])
    added = alice.post(
        f"/projects/{project_id}/members", json={"email": "bob@example.com", "role": "viewer"}
    )
    assert added.status_code == 201, added.text
    assert bob.get(f"/jobs/{job['id']}").status_code == 200
    assert bob.get(f"/projects/{project_id}/jobs").json()["total"] == 1
    for response in (
        bob.post(f"/projects/{project_id}/jobs", json={"session_id": session["id"], "name": "B"}),
        bob.post(f"/jobs/{job['id']}/runs", json={}),
        bob.patch(f"/jobs/{job['id']}", json={"name": "Mine"}),
        bob.delete(f"/jobs/{job['id']}"),
    ):
        assert response.status_code == 403, response.text
        assert response.json()["code"] == "forbidden_role"


def test_patch_renames_marks_a_value_and_keeps_alerts(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, session["project_id"], session["id"])
    alerts = [
        {
            "when": "change_pct",
            "result": "answer_1",
            "value": 10,
            "deliver": [{"channel": "email", "to": ["team@example.com"]}],
        }
    ]
    params = [
        {"name": "sales_file", "kind": "file", "default": "sales data.csv"},
        {"name": "digits", "kind": "value", "default": 2},
    ]
    changed = alice.patch(
        f"/jobs/{job['id']}",
        json={"name": "Weekly revenue", "autonomy": "auto", "alerts": alerts, "params": params},
    )
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert body["name"] == "Weekly revenue" and body["autonomy"] == "auto"
    assert body["alerts"] == alerts
    assert [p["name"] for p in body["params"]] == ["sales_file", "digits"]
    assert body["schedule"] is None and body["paused"] is False and body["next_run_at"] is None
    script = alice.get(f"/jobs/{job['id']}/code").json()["script"]
    assert "round(total, params['digits'])" in script
    assert "params['sales_file']" in script
    done = run_job(alice, job["id"], params={"digits": 0})
    assert done["status"] == "succeeded" and done["results"]["answer_1"] == 4491.0
    assert done["params"] == {"digits": 0}
    audit = alice.get(f"/projects/{session['project_id']}/audit").json()["items"]
    actions = [e["action"] for e in audit]
    assert "job.create" in actions and "job.update" in actions
    assert "job_run.started" in actions and "job_run.finished" in actions


def test_the_project_caps_its_job_runs_an_hour(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, live: Any
) -> None:
    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, session["project_id"], session["id"])
    runner = live.state.jobs
    settings = runner.settings
    runner.settings = settings.model_copy(update={"JOB_RUNS_PER_HOUR": 1})
    try:
        assert run_job(alice, job["id"])["status"] == "succeeded"
        over = alice.post(f"/jobs/{job['id']}/runs", json={})
        assert over.status_code == 429 and over.json()["code"] == "job_runs_per_hour"
        assert int(over.headers["retry-after"]) > 0
    finally:
        runner.settings = settings
    when(alice, f"/jobs/{job['id']}/runs", lambda p: p["total"] == 1)


def test_a_job_run_of_a_replica_that_died_is_ended_not_stuck(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, live: Any
) -> None:
    """A run whose lease ran out (nobody renews it: its replica died) is ended as failed with
    a sentence by the sweeper, and the job runs again."""
    from datetime import timedelta

    from app.jobs.runner import INTERRUPTED
    from app.models.base import utcnow
    from app.models.jobs import JobRun

    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, session["project_id"], session["id"])
    stale = uuid.uuid4()

    async def orphan() -> None:
        async with live.state.session_factory() as db:
            db.add(
                JobRun(
                    id=stale,
                    job_id=uuid.UUID(job["id"]),
                    project_id=uuid.UUID(session["project_id"]),
                    trigger="schedule",
                    status="running",
                    params={},
                    results={},
                    change={},
                    checks=[],
                    inputs={},
                    lease_until=utcnow() - timedelta(seconds=1),
                )
            )
            await db.commit()

    live.call(orphan())
    busy = alice.post(f"/jobs/{job['id']}/runs", json={})
    assert busy.status_code == 409 and busy.json()["code"] == "job_run_in_progress"
    live.call(live.state.jobs.recover_interrupted())  # (or its own sweeper, first)
    ended = alice.get(f"/job-runs/{stale}").json()
    assert ended["status"] == "failed" and ended["error"] == INTERRUPTED
    assert ended["finished_at"] is not None
    assert run_job(alice, job["id"])["status"] == "succeeded"
    metrics = httpx.get(f"{live.url}/metrics", timeout=30).text
    assert 'workbench_job_runs_total{status="failed"}' in metrics
    assert 'workbench_job_runs_total{status="succeeded"}' in metrics
    assert "workbench_job_run_duration_seconds_bucket" in metrics
