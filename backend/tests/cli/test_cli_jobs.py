"""`workbench jobs` as a team uses it: make a job of a session, run it (with a parameter),
read its history, export it."""

from __future__ import annotations

import zipfile

import pytest

from tests.api.conftest import SALES
from tests.api.jobs_support import CHECKS, two_questions, when
from tests.api.test_job_repairs import RENAMED, proposal
from tests.cli.test_cli import Cli, cli  # noqa: F401  (the fixture)
from tests.conftest import Api
from tests.support.llm import ScriptedLLM

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)


def test_jobs_create_run_history_and_export(
    cli: Cli,  # noqa: F811
    alice: Api,
    llm: ScriptedLLM,
) -> None:
    project = alice.project("Shop")
    assert alice.upload(project["id"], "sales data.csv", SALES).status_code == 201
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "Revenue"}).json()
    two_questions(alice, session["id"], llm, CHECKS)

    made = cli.run("jobs", "create", "--session", session["id"], "--name", "Weekly", "--wait")
    assert made.code == 0, made.stderr
    assert "parameters: sales_data_csv='sales data.csv'" in made.stdout
    assert "Checks: ready" in made.stdout
    job_id = alice.get(f"/projects/{project['id']}/jobs").json()["items"][0]["id"]
    listed = cli.run("jobs", "list", "Shop")
    assert "Weekly" in listed.stdout and "ready" in listed.stdout

    ran = cli.run("jobs", "run", job_id, "--wait")
    assert ran.code == 0, ran.stderr
    assert "succeeded" in ran.stdout and "answer_1: 4490.75" in ran.stdout
    skipped = cli.run("jobs", "run", job_id, "--wait")
    assert "skipped: Its inputs are byte for byte" in skipped.stdout
    bad = cli.run("jobs", "run", job_id, "-p", "nope=1", "--wait")
    assert bad.code != 0 and "no parameter nope" in bad.stderr

    history = cli.run("jobs", "history", job_id)
    assert history.code == 0 and history.stdout.count("manual") == 2
    assert "answer_1 +" not in history.stdout  # (the first run: nothing to compare with)

    lower = SALES.replace(b"South,2026-02,1000", b"South,2026-02,461.11")
    assert alice.upload(project["id"], "sales data.csv", lower).status_code == 201
    assert cli.run("jobs", "run", job_id, "--wait").code == 0
    history = cli.run("jobs", "history", job_id)
    assert "answer_1 -12.0%" in history.stdout, history.stdout

    scheduled = cli.run("jobs", "schedule", job_id, "--cron", "0 8 * * 1", "--tz", "Europe/Berlin")
    assert scheduled.code == 0, scheduled.stderr
    assert "0 8 * * 1 (Europe/Berlin), next run 20" in scheduled.stdout
    paused = cli.run("jobs", "pause", job_id)
    assert paused.code == 0 and "paused" in paused.stdout
    resumed = cli.run("jobs", "resume", job_id)
    assert resumed.code == 0 and "next run" in resumed.stdout
    bad = cli.run("jobs", "schedule", job_id, "--every", "60", "--tz", "Mars/Olympus")
    assert bad.code != 0 and "Mars/Olympus" in bad.stderr, bad.stderr
    every = cli.run("jobs", "schedule", job_id, "--every", "60")
    assert "every 60 min (UTC)" in every.stdout

    exported = cli.run("jobs", "export", job_id, "--format", "py")
    assert exported.code == 0 and "Wrote Weekly.zip" in exported.stdout
    with zipfile.ZipFile(cli.home / "Weekly.zip") as archive:
        assert sorted(archive.namelist()) == ["job.py", "test_job.py"]


def test_jobs_repairs_and_approve(
    cli: Cli,  # noqa: F811
    alice: Api,
    llm: ScriptedLLM,
) -> None:
    project = alice.project("Shop")
    assert alice.upload(project["id"], "sales data.csv", SALES).status_code == 201
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "Revenue"}).json()
    two_questions(alice, session["id"], llm, CHECKS)
    assert cli.run("jobs", "create", "--session", session["id"], "--name", "W", "--wait").code == 0
    job_id = alice.get(f"/projects/{project['id']}/jobs").json()["items"][0]["id"]
    assert cli.run("jobs", "run", job_id, "--wait").code == 0
    assert alice.upload(project["id"], "sales data.csv", RENAMED).status_code == 201
    llm.repair_replies.extend([proposal(alice, job_id)])
    assert "failed" in cli.run("jobs", "run", job_id, "--wait").stdout
    job = when(alice, f"/jobs/{job_id}", lambda j: j["pending_repair"] is not None, 300)
    repair_id = job["pending_repair"]["id"]

    listed = cli.run("jobs", "repairs", job_id)
    assert listed.code == 0, listed.stderr
    assert "proposed" in listed.stdout and "+++ b/job.py" in listed.stdout
    assert f"workbench jobs approve {job_id} {repair_id}" in listed.stdout
    approved = cli.run("jobs", "approve", job_id, repair_id)
    assert approved.code == 0 and "runs the repaired code" in approved.stdout, approved.stderr
    again = cli.run("jobs", "approve", job_id, repair_id, "--reject")
    assert again.code != 0 and "not waiting for a decision" in again.stderr
    assert "succeeded" in cli.run("jobs", "run", job_id, "--wait").stdout
