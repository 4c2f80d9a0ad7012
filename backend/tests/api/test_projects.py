from __future__ import annotations

import uuid

from tests.conftest import Api


def test_project_lifecycle(alice: Api) -> None:
    created = alice.post("/projects", json={"name": "  Churn study ", "description": "Q3 churn"})
    assert created.status_code == 201
    project = created.json()
    assert project["name"] == "Churn study" and project["description"] == "Q3 churn"

    assert alice.get(f"/projects/{project['id']}").json() == project
    renamed = alice.patch(f"/projects/{project['id']}", json={"name": "Churn 2026"})
    assert renamed.status_code == 200
    assert renamed.json()["name"] == "Churn 2026" and renamed.json()["description"] == "Q3 churn"

    assert alice.delete(f"/projects/{project['id']}").status_code == 204
    assert alice.get(f"/projects/{project['id']}").status_code == 404
    assert alice.get("/projects").json() == {"items": [], "total": 0}


def test_lists_are_paged_and_show_only_ones_own(alice: Api, bob: Api) -> None:
    for i in range(5):
        alice.project(f"alice {i}")
    bob.project("bob's")
    first = alice.get("/projects", params={"limit": 2}).json()
    rest = alice.get("/projects", params={"limit": 10, "offset": 2}).json()
    assert first["total"] == rest["total"] == 5
    names = [p["name"] for p in first["items"] + rest["items"]]
    assert sorted(names) == [f"alice {i}" for i in range(5)]
    assert [p["name"] for p in bob.get("/projects").json()["items"]] == ["bob's"]
    assert alice.get("/projects", params={"limit": 0}).status_code == 422


def test_another_users_project_looks_exactly_like_a_missing_one(alice: Api, bob: Api) -> None:
    project = alice.project()
    missing = f"/projects/{uuid.uuid4()}"
    theirs = f"/projects/{project['id']}"
    for method, suffix, body in [
        ("GET", "", None),
        ("PATCH", "", {"name": "mine now"}),
        ("DELETE", "", None),
        ("GET", "/files", None),
        ("GET", "/sessions", None),
        ("POST", "/sessions", {"title": "x"}),
    ]:
        got_theirs = bob.request(method, theirs + suffix, json=body)
        got_missing = bob.request(method, missing + suffix, json=body)
        assert got_theirs.status_code == got_missing.status_code == 404, (method, suffix)
        assert got_theirs.json() == got_missing.json()
    upload = bob.upload(project["id"], "x.csv", b"a\n1\n")
    assert upload.status_code == 404
    assert alice.get(theirs).json()["name"] == "Sales"
    assert alice.get(f"{theirs}/files").json()["total"] == 0


def test_a_malformed_id_is_not_found(alice: Api) -> None:
    response = alice.get("/projects/not-a-uuid")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_validation_errors_say_what_is_wrong(alice: Api) -> None:
    response = alice.post("/projects", json={"name": ""})
    assert response.status_code == 422
    assert response.json()["code"] == "validation_error"
    assert "name" in response.json()["detail"]


def test_deleting_a_project_deletes_its_files_and_sessions(alice: Api, live) -> None:  # type: ignore[no-untyped-def]
    project = alice.project()
    file = alice.upload(project["id"], "a.csv", b"x,y\n1,2\n").json()
    session = alice.post(f"/projects/{project['id']}/sessions", json={}).json()
    assert live.call(live.state.storage.list_keys()) != []

    assert alice.delete(f"/projects/{project['id']}").status_code == 204
    assert alice.get(f"/files/{file['id']}").status_code == 404
    assert alice.get(f"/sessions/{session['id']}").status_code == 404
    assert live.call(live.state.storage.list_keys()) == []
