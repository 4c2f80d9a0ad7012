"""Attacks on shared links (issue 26): whoever holds a link, or guesses at one, gets the
report of the runs it holds and nothing else, and nothing at all once it is revoked,
whichever replica they ask.

Each attack is made as an outsider would, through the real API on both stacks (the replica
one on two app instances sharing PostgreSQL, Redis and S3), and asserts what they see.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.auth import security
from tests.api.test_login_rate_limit import client_from, new_address
from tests.api.test_query import ask, finished, of
from tests.api.test_shares import answered, expire, share
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api
from tests.support.browser import dump_dom
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.services import free_port
from tests.test_startup import READY, read_until, start_env, started

HOSTILE = "</script><script>document.title='pwned'</script><img src=x onerror=alert(1)>"
ARTIFACTS = code_reply(
    "import pandas as pd\nimport plotly.express as px\n"
    f"hostile = {HOSTILE!r}\n"
    "fig = px.bar(x=['a', 'b'], y=[1, 2], title=hostile)\nfig.show()\n"
    "display(pd.DataFrame({hostile: [hostile, 'b']}))\n"
    "open('page.html', 'w').write(hostile)\n"
)
ANSWER = "'<script>document.title=\"pwned\"</script> [click](javascript:alert(3)) Drawn.'"


def new_project_session(api: Api, title: str) -> tuple[str, str]:
    project = api.project(title)
    session = api.post(f"/projects/{project['id']}/sessions", json={"title": title}).json()
    return project["id"], session["id"]


def shared_path(made: dict[str, Any]) -> str:
    return str(made["url"]).split("/api/v1", 1)[1]


def test_a_guessed_altered_or_expired_token_opens_nothing_and_says_nothing(
    live: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    _, session_id = new_project_session(alice, "Secret plans")
    answered(alice, llm, session_id, "The plan?", "Launch on Tuesday.")
    made = share(alice, session_id)
    token = made["token"]
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    guesses = [
        flipped,
        token[:-1],
        token + "A",
        token.swapcase(),
        security.hash_token(token),  # what the database holds
        made["id"],  # the share's id
        "x" * 10_000,
        f"{token}%00",
        "é" * 43,
    ]
    # Paths that leave the route: they reach nothing either.
    strays = [f"{token}/..", f"..%2F..%2Fsessions%2F{session_id}%2Fexport", f"{token}%2Fx"]
    with client_from(live, new_address()) as client:
        unknown = client.get(f"/shared/{'Q' * 43}")
        assert unknown.status_code == 404 and unknown.json()["code"] == "share_not_found"
        for guess in guesses + strays:
            response = client.get(f"/shared/{guess}")
            assert response.status_code == 404, (guess[:80], response.status_code)
            assert "Launch on Tuesday" not in response.text and "Secret plans" not in response.text
            if guess in guesses:
                assert response.text == unknown.text, guess[:80]
        assert client.get(shared_path(made)).status_code == 200
        expire(live, made["id"])
        expired = client.get(shared_path(made))
        assert expired.status_code == 404 and expired.text == unknown.text


def test_a_link_revoked_on_one_replica_opens_nothing_on_another_at_once(
    two_instances: tuple[LiveServer, LiveServer], llm: ScriptedLLM
) -> None:
    first, second = two_instances
    with Api(first).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
        here = admin.new_user("carol@example.com")
    _, session_id = new_project_session(here, "Replicas")
    answered(here, llm, session_id, "Which replica?", "Any of them.")
    made = share(here, session_id)
    path = shared_path(made)
    with client_from(second, new_address()) as elsewhere:
        assert "Any of them." in elsewhere.get(path).text
        assert here.delete(f"/shares/{made['id']}").status_code == 204
        assert elsewhere.get(path).status_code == 404
    with client_from(first, new_address()) as on_first:
        assert on_first.get(path).status_code == 404


def test_a_link_to_one_session_never_shows_another(alice: Api, llm: ScriptedLLM) -> None:
    project_id, first = new_project_session(alice, "Sales")
    second = alice.post(f"/projects/{project_id}/sessions", json={"title": "Payroll"}).json()
    answered(alice, llm, first, "Revenue?", "Revenue is 4490.75.")
    other_run = answered(alice, llm, second["id"], "Salaries?", "Salaries are 98765.")
    _, elsewhere = new_project_session(alice, "Elsewhere")
    foreign_run = answered(alice, llm, elsewhere, "Foreign?", "Foreign 55555.")

    for run in (other_run, foreign_run):
        refused = alice.post(f"/sessions/{first}/shares", json={"runs": [run]})
        assert refused.status_code == 422 and refused.json()["code"] == "unknown_run"
    made = share(alice, first)
    page = httpx.get(made["url"], timeout=60).text
    assert "Revenue is 4490.75." in page
    for other in ("98765", "Salaries", "Payroll", "55555", "Foreign", "Elsewhere"):
        assert other not in page


def test_the_page_runs_only_its_own_scripts_in_a_sandbox(
    alice: Api, llm: ScriptedLLM, tmp_path: Path
) -> None:
    """Hostile text in a chart's title, a table and a written file, and markup in the
    answer: the page escapes it all, carries the report's policy as its header (with the
    same nonce), and draws the chart in a real browser without running anything else."""
    _, session_id = new_project_session(alice, "Charts")
    llm.script(ARTIFACTS, final_reply(ANSWER))
    events = ask(alice, session_id, "Draw it.")
    assert finished(events)["status"] == "succeeded", events
    assert {a["artifact"]["kind"] for a in of(events, "artifact")} >= {"plotly", "table", "file"}
    made = share(alice, session_id)
    response = httpx.get(made["url"], timeout=60)
    page, policy = response.text, response.headers["content-security-policy"]

    nonce = re.search(r"script-src 'nonce-([A-Za-z0-9_-]+)'", policy)
    assert nonce is not None
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert meta is not None and policy.startswith(meta.group(1) + "; ")
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
    sandbox = next(p for p in policy.split("; ") if p.startswith("sandbox"))
    assert "allow-scripts" in sandbox and "allow-same-origin" not in sandbox
    for tag in re.findall(r"<script\b[^>]*>", page):
        assert tag == f'<script nonce="{nonce.group(1)}">' or tag.startswith(
            '<script type="application/json" id="chart-'
        ), tag
    assert "<script>document" not in page and "<img src=x" not in page
    assert not re.search(r"""(?:href|src)\s*=\s*["']?\s*javascript:""", page, re.I)
    assert "[click](javascript:alert(3)) Drawn." in page  # text, not a link
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "no-referrer"

    dom = dump_dom(made["url"], flags=[f"--user-data-dir={tmp_path / 'profile'}"])
    assert 'class="main-svg"' in dom  # plotly drew the chart under the link's policy
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title is not None and "pwned" not in title.group(1)
    assert '<img src="x"' not in dom and "<img src=x" not in dom


def test_the_page_holds_no_secret_id_or_api_data(alice: Api, llm: ScriptedLLM) -> None:
    """Neither the page nor its headers carry the token, its hash, an id of the project or
    anything in it, a member's email, or a way into the API."""
    project_id, session_id = new_project_session(alice, "Quiet")
    upload = alice.upload(project_id, "sales.csv", b"region,amount\nnorth,10\n")
    assert upload.status_code == 201
    llm.script(
        code_reply("import pandas as pd\ndf = pd.read_csv('sales.csv')\ndisplay(df)"),
        final_reply("'North sold 10.'"),
    )
    events = ask(alice, session_id, "Sales?")
    assert finished(events)["status"] == "succeeded"
    made = share(alice, session_id)
    response = httpx.get(made["url"], timeout=60)
    assert response.status_code == 200 and "North sold 10." in response.text
    seen = response.text + "\n".join(f"{k}: {v}" for k, v in response.headers.items())
    secrets = {
        "token": made["token"],
        "token hash": security.hash_token(made["token"]),
        "share id": made["id"],
        "project id": project_id,
        "session id": session_id,
        "file id": upload.json()["id"],
        "run id": events[0].data["run_id"],
        "email": "alice@example.com",
        "API path": "/api/v1",
    }
    secrets |= {
        f"artifact {a['artifact']['name']}": a["artifact"]["id"] for a in of(events, "artifact")
    }
    assert not [name for name, value in secrets.items() if value in seen]
    # What members see of a link is no secret either.
    listed = alice.get(f"/sessions/{session_id}/shares").text
    assert made["token"] not in listed and security.hash_token(made["token"]) not in listed


def test_a_viewer_cannot_make_or_revoke_a_link_nor_a_stranger_see_one(
    admin: Api, alice: Api, bob: Api, llm: ScriptedLLM
) -> None:
    carol = admin.new_user("carol@example.com")
    project_id, session_id = new_project_session(alice, "Team")
    added = alice.post(
        f"/projects/{project_id}/members", json={"email": "bob@example.com", "role": "viewer"}
    )
    assert added.status_code == 201
    answered(alice, llm, session_id, "Anything?", "Something.")
    made = share(alice, session_id)
    path = f"/sessions/{session_id}/shares"
    for response in (bob.post(path, json={}), bob.delete(f"/shares/{made['id']}")):
        assert response.status_code == 403 and response.json()["code"] == "forbidden_role"
    assert bob.get(path).json()["total"] == 1  # a viewer sees the links, never a token
    for response in (
        carol.post(path, json={}),
        carol.get(path),
        carol.delete(f"/shares/{made['id']}"),
    ):
        assert response.status_code == 404
    with Api(alice.live) as nobody:
        assert nobody.post(path, json={}).status_code == 401
        assert nobody.delete(f"/shares/{made['id']}").status_code == 401
    assert httpx.get(made["url"], timeout=60).status_code == 200  # still working


def test_guessing_at_links_is_refused_per_address_after_a_while(
    live: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    """An address that asks for as many links that open nothing as it may fail logins
    across accounts is refused, the right link too, until the window ends; others are not.
    Links that open something never use the allowance up."""
    _, session_id = new_project_session(alice, "Guessed")
    answered(alice, llm, session_id, "Guess?", "Not guessed.")
    path = shared_path(share(alice, session_id))
    allowance = live.settings.LOGIN_MAX_FAILURES * 5
    with client_from(live, new_address()) as reader:
        for _ in range(allowance + 2):
            assert reader.get(path).status_code == 200
        assert reader.get(f"/shared/{'Z' * 43}").status_code == 404
    with client_from(live, new_address()) as guesser:
        for n in range(allowance):
            response = guesser.get(f"/shared/{n:043d}")
            assert response.status_code == 404, (n, response.text)
        refused = guesser.get(path)
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
        assert 1 <= int(refused.headers["retry-after"]) <= live.settings.LOGIN_WINDOW_SECONDS
        assert "Not guessed." not in refused.text
    with client_from(live, new_address()) as someone_else:
        assert "Not guessed." in someone_else.get(path).text


@pytest.mark.parametrize("form", ["text", "json"])
def test_a_links_token_never_reaches_the_log(tmp_path: Path, form: str) -> None:
    """The token is the report's password: `python -m app` writes every request's path in
    its access lines (LOG_LEVEL=info), and a shared link's shows there masked, in either
    log format."""
    port = free_port()
    env = start_env(tmp_path, port) | {"LOG_FORMAT": form}
    token = "Tk" + "x7" * 21
    with started(env) as process:
        seen: list[str] = []
        read_until(process, READY, seen)
        for path in (f"/api/v1/shared/{token}", f"/api/v1/shared/{token}?utm=1"):
            assert httpx.get(f"http://127.0.0.1:{port}{path}", timeout=30).status_code == 404
        process.terminate()
        assert process.stdout is not None
        log = "".join(seen) + process.stdout.read()
    assert token not in log, log
    assert log.count("/api/v1/shared/***") >= 2, log


def member_id(owner: Api, project_id: str, email: str) -> str:
    members = owner.get(f"/projects/{project_id}/members").json()
    listed = members["items"] if isinstance(members, dict) else members
    return str(next(m["user_id"] for m in listed if m["email"] == email))


@pytest.mark.parametrize("lost", ["removed", "demoted", "disabled"])
def test_a_link_stops_when_its_author_loses_access_and_an_owner_reissues_it(
    live: LiveServer, admin: Api, alice: Api, bob: Api, llm: ScriptedLLM, lost: str
) -> None:
    """Bob, an editor, shares a report; then he is removed from the project, made a viewer
    (who cannot make links), or his account is disabled. His link opens what a revoked
    one opens (the same 404, nothing of the report), on the next request; the owner sees
    why in the list and re-issues it, a link of her own to the same questions."""
    project_id, session_id = new_project_session(alice, "Departed")
    added = alice.post(
        f"/projects/{project_id}/members", json={"email": "bob@example.com", "role": "editor"}
    )
    assert added.status_code == 201, added.text
    answered(alice, llm, session_id, "Margin?", "Margin is 31.4%.")
    made = share(bob, session_id)
    path = shared_path(made)
    bob_id = member_id(alice, project_id, "bob@example.com")
    with client_from(live, new_address()) as outsider:
        unknown = outsider.get(f"/shared/{'Q' * 43}")
        assert "Margin is 31.4%." in outsider.get(path).text
        if lost == "removed":
            gone = alice.delete(f"/projects/{project_id}/members/{bob_id}")
            assert gone.status_code == 204, gone.text
        elif lost == "demoted":
            demoted = alice.patch(
                f"/projects/{project_id}/members/{bob_id}", json={"role": "viewer"}
            )
            assert demoted.status_code == 200, demoted.text
        else:
            disabled = admin.patch(f"/users/{bob_id}", json={"disabled": True})
            assert disabled.status_code == 200, disabled.text
        dead = outsider.get(path)
        assert dead.status_code == 404 and dead.text == unknown.text
        assert "Margin" not in dead.text
    [listed] = alice.get(f"/sessions/{session_id}/shares").json()["items"]
    assert listed["status"] == "author_lost_access" and listed["active"] is False
    reissued = alice.post(f"/shares/{made['id']}/reissue")
    assert reissued.status_code == 201, reissued.text
    again = reissued.json()
    assert again["token"] != made["token"] and again["expires_at"] == made["expires_at"]
    assert "Margin is 31.4%." in httpx.get(again["url"], timeout=60).text
    assert httpx.get(made["url"], timeout=60).status_code == 404
    statuses = {
        s["id"]: s["status"] for s in alice.get(f"/sessions/{session_id}/shares").json()["items"]
    }
    assert statuses == {again["id"]: "active", made["id"]: "revoked"}
