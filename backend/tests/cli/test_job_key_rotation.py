"""Rotating the key also moves the jobs' secrets (issue 45): after SECRET_KEY changes (the old
one kept in SOURCES_PREVIOUS_SECRET_KEYS), `workbench admin reencrypt-sources` seals each
job's webhook secret and its share link's token again with the new key."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from app.auth import security
from app.models import Share
from app.models.jobs import Job
from app.sources.credentials import Keyring, Secret
from tests.api.conftest import SALES
from tests.api.jobs_support import CHECKS, make_job, two_questions
from tests.cli.test_admin import admin_command
from tests.conftest import TEST_SECRET, Api
from tests.support.llm import ScriptedLLM
from tests.support.server import LiveServer

NEW_SECRET = "rotated-signing-key-" + "j" * 40
HOOK_SECRET = "whsec-0123456789-abcdefghij"


def test_reencrypt_sources_moves_the_jobs_webhook_secrets_and_links(
    alice: Api, live: LiveServer, llm: ScriptedLLM
) -> None:
    project = alice.project()
    assert alice.upload(project["id"], "sales data.csv", SALES).status_code == 201
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "S"}).json()
    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, project["id"], session["id"])
    deliver = [
        {"channel": "webhook", "url": "http://127.0.0.1:9/hook", "secret": HOOK_SECRET},
        {"channel": "share"},
    ]
    alerts = [{"when": "failed", "deliver": deliver}]
    saved = alice.patch(f"/jobs/{job['id']}", json={"alerts": alerts})
    assert saved.status_code == 200, saved.text
    job_id = uuid.UUID(job["id"])

    async def sealed() -> tuple[str, Share]:
        async with live.state.session_factory() as db:
            found = await db.get(Job, job_id)
            assert found is not None
            share = (await db.scalars(select(Share).where(Share.job_id == job_id))).one()
            return found.alerts[0]["deliver"][0]["secret_sealed"], share

    hook_before, share = live.call(sealed())
    old, new = Keyring(TEST_SECRET), Keyring(NEW_SECRET)
    assert old.is_current(hook_before) and share.token_sealed is not None

    done = admin_command(
        live,
        "reencrypt-sources",
        extra_env={"SECRET_KEY": NEW_SECRET, "SOURCES_PREVIOUS_SECRET_KEYS": TEST_SECRET},
    )
    assert done.returncode == 0, done.stderr
    assert "Encrypted 2 job secrets (webhook secrets, share links) again" in done.stdout
    hook_after, moved = live.call(sealed())
    assert new.is_current(hook_after) and new.open(hook_after, job["id"]) == Secret(HOOK_SECRET)
    assert moved.token_sealed is not None and new.is_current(moved.token_sealed)
    token = new.open(moved.token_sealed, str(moved.id)).reveal()
    assert security.hash_token(token) == moved.token_hash

    # The old key forgotten first: what it sealed is named, and kept as it is.
    lost: Any = admin_command(
        live, "reencrypt-sources", extra_env={"SECRET_KEY": "another-" + "q" * 40}
    )
    assert lost.returncode == 1 and "cannot be decrypted" in lost.stderr
    assert f"{project['id']}/Revenue (webhook http://127.0.0.1:9/hook)" in lost.stderr
