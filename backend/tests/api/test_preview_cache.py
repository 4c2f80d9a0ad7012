"""What previews keep on the server's disk goes with the files (issue 24's leftover): the
local copy of a file in object storage and what a page keeps beside it (a UTF-8 copy of a
file in another encoding) are removed when the last file holding those bytes is deleted,
its project is deleted, or its version is pruned, on both stacks."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from tests.api.test_preview_pages import page
from tests.conftest import Api
from tests.support.server import LiveServer


def latin1_csv(tag: str, rows: int = 120) -> bytes:
    """A CSV in Latin-1 (a page of it keeps a UTF-8 copy beside the file's)."""
    lines = ["city,name,amount"] + [f"Zürich,{tag} café {i},{i}.5" for i in range(rows)]
    return ("\n".join(lines) + "\n").encode("latin-1")


def kept(live: LiveServer, content: bytes) -> list[str]:
    """What the previews' cache holds of these bytes."""
    digest = hashlib.sha256(content).hexdigest()
    folder = Path(live.settings.DATA_DIR) / "cache" / "files"
    return sorted(p.name for p in folder.glob(f"{digest}*")) if folder.is_dir() else []


def paged(api: Api, project: dict[str, Any], name: str, content: bytes) -> dict[str, Any]:
    response = api.upload(project["id"], name, content)
    assert response.status_code == 201, response.text
    file = dict(response.json())
    assert page(api, file, offset=60, limit=10)["rows"][0][1].endswith("café 60")
    return file


def test_deleting_the_last_file_with_those_bytes_removes_its_copies(
    alice: Api, live: LiveServer
) -> None:
    content = latin1_csv("a")
    first, second = alice.project("One"), alice.project("Two")
    file_one = paged(alice, first, "cities.csv", content)
    file_two = paged(alice, second, "same.csv", content)
    assert any(name.endswith(".utf8.csv") for name in kept(live, content))
    # Another file still holds the same bytes: its copies stay.
    assert alice.delete(f"/files/{file_one['id']}").status_code == 204
    assert kept(live, content)
    assert page(alice, file_two, offset=60, limit=10)["rows"]
    assert alice.delete(f"/files/{file_two['id']}").status_code == 204
    assert kept(live, content) == []


def test_deleting_a_project_removes_its_files_copies(alice: Api, live: LiveServer) -> None:
    content = latin1_csv("b")
    project = alice.project("Gone")
    paged(alice, project, "cities.csv", content)
    assert kept(live, content)
    assert alice.delete(f"/projects/{project['id']}").status_code == 204
    assert kept(live, content) == []


def test_a_pruned_version_takes_its_copies_along(alice: Api, live: LiveServer) -> None:
    project = alice.project("Versions")
    oldest = latin1_csv("v1")
    paged(alice, project, "cities.csv", oldest)
    assert kept(live, oldest)
    for n in range(2, live.settings.FILE_VERSIONS_KEPT + 2):  # one more than are kept
        response = alice.upload(project["id"], "cities.csv", latin1_csv(f"v{n}"))
        assert response.status_code == 201, response.text
    assert kept(live, oldest) == []
