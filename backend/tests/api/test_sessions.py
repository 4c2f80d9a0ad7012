from __future__ import annotations

import subprocess

from tests.conftest import Api
from tests.support.server import LiveServer


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


def test_a_workspace_that_cannot_be_removed_fails_the_deletion_and_loses_nothing(
    alice: Api, live: LiveServer
) -> None:
    project = alice.project()
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "t"}).json()
    workspace = live.settings.DATA_DIR / "workspaces" / session["id"]
    busy = workspace / "mounted"
    busy.mkdir(parents=True)
    # A mount point cannot be removed (EBUSY), whoever asks: the deletion must say so.
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(busy)], check=True)
    try:
        refused = alice.delete(f"/sessions/{session['id']}")
        assert refused.status_code == 500
        assert refused.json()["code"] == "workspace_not_removed"
        assert "nothing was deleted" in refused.json()["detail"]
        assert alice.get(f"/sessions/{session['id']}").status_code == 200
    finally:
        subprocess.run(["umount", str(busy)], check=True)
    assert alice.delete(f"/sessions/{session['id']}").status_code == 204
    assert alice.get(f"/sessions/{session['id']}").status_code == 404
    assert not workspace.exists()
