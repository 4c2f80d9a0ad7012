"""Files with versions: uploading a name again keeps the old bytes as a previous version, a
run records which version it read, and old versions go past FILE_VERSIONS_KEPT."""

from __future__ import annotations

from typing import Any

from tests.api.test_query import READ, ask, finished, of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer

V1 = b"region,revenue\nNorth,100\nSouth,50\n"
V2 = b"region,revenue\nNorth,300\nSouth,50\nEast,25\n"


def upload(
    api: Api, project_id: str, content: bytes, name: str = "sales data.csv"
) -> dict[str, Any]:
    response = api.upload(project_id, name, content)
    assert response.status_code == 201, response.text
    return dict(response.json())


def stored_keys(live: LiveServer, project_id: str) -> list[str]:
    return live.call(live.state.storage.list_keys(f"projects/{project_id}/files/"))


def test_uploading_a_name_again_keeps_the_old_version(
    alice: Api, bob: Api, live: LiveServer
) -> None:
    project = alice.project()
    first = upload(alice, project["id"], V1)
    assert first["version"] == 1
    second = upload(alice, project["id"], V2)
    assert second["id"] == first["id"] and second["version"] == 2
    assert second["size"] == len(V2) and second["updated_at"] > first["updated_at"]

    versions = alice.get(f"/files/{first['id']}/versions").json()
    assert [(v["version"], v["current"], v["size"]) for v in versions] == [
        (2, True, len(V2)),
        (1, False, len(V1)),
    ]
    assert versions[1]["created_at"] == first["updated_at"]
    assert alice.get(f"/files/{first['id']}/content").content == V2
    old = alice.get(f"/files/{first['id']}/versions/1/content")
    assert old.status_code == 200 and old.content == V1
    assert "sales%20data%20%28version%201%29.csv" in old.headers["content-disposition"]
    assert alice.get(f"/files/{first['id']}/versions/7/content").json()["code"] == (
        "version_not_found"
    )
    assert bob.get(f"/files/{first['id']}/versions").status_code == 404
    assert bob.get(f"/files/{first['id']}/versions/1/content").status_code == 404
    assert len(stored_keys(live, project["id"])) == 2

    assert alice.delete(f"/files/{first['id']}").status_code == 204
    assert stored_keys(live, project["id"]) == []


def test_a_run_records_the_version_it_read(alice: Api, llm: ScriptedLLM) -> None:
    project = alice.project()
    file = upload(alice, project["id"], V1)
    session = alice.post(f"/projects/{project['id']}/sessions", json={}).json()
    llm.script(
        code_reply(f"{READ}\nprint('total', df['revenue'].sum())"),
        final_reply("'Done.'"),
        code_reply(f"{READ}\nprint('total', df['revenue'].sum())"),
        final_reply("'Done.'"),
    )
    before = ask(alice, session["id"], "Total revenue?")
    assert "total 150" in of(before, "step.output")[0]["output"]
    upload(alice, project["id"], V2)
    after = ask(alice, session["id"], "And now?", file_ids=[file["id"]])
    assert finished(after)["status"] == "succeeded"
    assert "total 375" in of(after, "step.output")[0]["output"]  # the new version is read

    runs = alice.get(f"/sessions/{session['id']}/runs").json()["items"]
    assert [r["file_ids"] for r in runs] == [[], [file["id"]]]  # what each question pinned
    used = [[(f["file_id"], f["name"], f["version"]) for f in r["files"]] for r in runs]
    assert used == [[(file["id"], "sales data.csv", 1)], [(file["id"], "sales data.csv", 2)]]
    # The first run's record still says version 1 while the file is at 2: it changed since.
    assert alice.get(f"/files/{file['id']}").json()["version"] == 2


def test_only_the_newest_versions_are_kept(alice: Api, live: LiveServer) -> None:
    kept = live.settings.FILE_VERSIONS_KEPT
    project = alice.project()
    for n in range(1, kept + 3):
        file = upload(alice, project["id"], f"n\n{n}\n".encode())
    assert file["version"] == kept + 2
    versions = alice.get(f"/files/{file['id']}/versions").json()
    assert [v["version"] for v in versions] == list(range(kept + 2, 2, -1))
    assert alice.get(f"/files/{file['id']}/versions/1/content").status_code == 404
    assert alice.get(f"/files/{file['id']}/versions/3/content").content == b"n\n3\n"
    assert len(stored_keys(live, project["id"])) == kept  # the bytes of the others are gone

    assert alice.delete(f"/projects/{project['id']}").status_code == 204
    assert stored_keys(live, project["id"]) == []
