from __future__ import annotations

from tests.conftest import Api


def test_session_lifecycle(alice: Api) -> None:
    project = alice.project()
    base = f"/projects/{project['id']}/sessions"
    untitled = alice.post(base, json={})
    assert untitled.status_code == 201
    assert untitled.json()["title"] == "New session"
    assert untitled.json()["project_id"] == project["id"]
    titled = alice.post(base, json={"title": "Revenue by region"}).json()

    listed = alice.get(base).json()
    assert listed["total"] == 2
    assert {s["title"] for s in listed["items"]} == {"New session", "Revenue by region"}

    renamed = alice.patch(f"/sessions/{titled['id']}", json={"title": "Revenue, 2026"})
    assert renamed.json()["title"] == "Revenue, 2026"
    assert alice.get(f"/sessions/{titled['id']}").json()["title"] == "Revenue, 2026"
    assert alice.patch(f"/sessions/{titled['id']}", json={"title": ""}).status_code == 422

    assert alice.delete(f"/sessions/{titled['id']}").status_code == 204
    assert alice.get(f"/sessions/{titled['id']}").status_code == 404
    assert alice.get(base).json()["total"] == 1


def test_another_users_session_is_not_found(alice: Api, bob: Api) -> None:
    project = alice.project()
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "private"}).json()
    path = f"/sessions/{session['id']}"
    assert bob.get(path).status_code == 404
    assert bob.patch(path, json={"title": "hijacked"}).status_code == 404
    assert bob.delete(path).status_code == 404
    assert alice.get(path).json()["title"] == "private"
