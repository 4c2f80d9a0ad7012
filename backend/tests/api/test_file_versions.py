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


# Three ways of naming the file: a DuckDB glob then pandas, DuckDB on a path in a variable,
# and a comment that names it but reads nothing.
GLOBBED = (
    "import duckdb\nimport pandas as pd\n"
    "names = [r[0] for r in duckdb.sql(\"select file from glob('s*.csv')\").fetchall()]\n"
    "print('total', sum(pd.read_csv(n)['revenue'].sum() for n in names))"
)
IN_A_VARIABLE = (
    "import duckdb\npath = 'sa' + 'les.csv'\n"
    "total = duckdb.sql(f\"select sum(revenue) from read_csv_auto('{path}')\").fetchone()[0]\n"
    "print('total', total)"
)
IN_A_COMMENT = "# sales.csv holds the revenue; not needed here\nprint('total', 1 + 1)"


def test_the_api_says_which_files_a_question_read_and_which_questions_read_a_version(
    alice: Api, bob: Api, llm: ScriptedLLM
) -> None:
    project = alice.project()
    sales = upload(alice, project["id"], V1, "sales.csv")
    upload(alice, project["id"], b"region,cost\nNorth,1\n", "costs.csv")
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "Q4"}).json()
    for code, query in zip(
        (GLOBBED, IN_A_VARIABLE, IN_A_COMMENT),
        ("Globbed?", "In a variable?", "In a comment?"),
        strict=True,
    ):
        llm.script(code_reply(code), final_reply("'Done.'"))
        done = finished(ask(alice, session["id"], query))
        assert done["status"] == "succeeded", done
    upload(alice, project["id"], V2, "sales.csv")
    llm.script(code_reply(GLOBBED), final_reply("'Done.'"))
    events = ask(alice, session["id"], "Globbed again?")
    assert "total 375" in of(events, "step.output")[0]["output"]

    runs = alice.get(f"/sessions/{session['id']}/runs").json()["items"]
    read = [{f["name"]: (f["version"], f["read"]) for f in r["files"]} for r in runs]
    assert read == [
        {"costs.csv": (1, False), "sales.csv": (1, True)},
        {"costs.csv": (1, False), "sales.csv": (1, True)},
        {"costs.csv": (1, False), "sales.csv": (1, False)},
        {"costs.csv": (1, False), "sales.csv": (2, True)},
    ]
    one = alice.get(f"/runs/{runs[2]['id']}").json()
    assert [f["read"] for f in one["files"]] == [False, False]

    versions = alice.get(f"/files/{sales['id']}/versions").json()
    readers = {
        v["version"]: ([(r["query"], r["session_title"]) for r in v["read_by"]], v["read_by_total"])
        for v in versions
    }
    assert readers == {
        2: ([("Globbed again?", "Q4")], 1),
        1: ([("In a variable?", "Q4"), ("Globbed?", "Q4")], 2),
    }
    first = versions[1]["read_by"][1]
    assert (first["run_id"], first["session_id"]) == (runs[0]["id"], session["id"])
    assert first["asked_at"] == runs[0]["created_at"]
    assert bob.get(f"/files/{sales['id']}/versions").status_code == 404


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
