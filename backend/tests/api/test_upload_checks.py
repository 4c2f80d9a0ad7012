"""Uploads are checked up front: a file is read as its kind right after upload, and one
that cannot be read, or holds nothing, says so at once in a sentence."""

from __future__ import annotations

import io
import os

import pandas as pd

from tests.api.conftest import SALES
from tests.conftest import Api


def uploaded(api: Api, project_id: str, name: str, content: bytes) -> dict[str, object]:
    response = api.upload(project_id, name, content)
    assert response.status_code == 201, response.text
    return dict(response.json())


def workbook() -> bytes:
    buffer = io.BytesIO()
    pd.DataFrame({"a": [1, 2]}).to_excel(buffer, index=False)
    return buffer.getvalue()


def test_each_upload_says_whether_it_can_be_read(alice: Api) -> None:
    project = alice.project()
    cases = {
        "sales.csv": (SALES, "ok", None),
        "book.xlsx": (workbook(), "ok", None),
        "notes.md": (b"# notes", "not_tabular", None),
        "random.csv": (os.urandom(4096), "unreadable", "random.csv does not look like a text file"),
        "fake.xlsx": (
            b"this is not a workbook",
            "unreadable",
            "fake.xlsx could not be read as Excel: the file is damaged or is not an Excel workbook",
        ),
        "empty.csv": (b"", "empty", "empty.csv is empty."),
        "header.csv": (b"a,b,c\n", "empty", "header.csv has a header but no rows."),
    }
    for name, (content, check, problem) in cases.items():
        file = uploaded(alice, project["id"], name, content)
        assert (file["check"], file["problem"]) == (check, problem), name
    # The list says it too, and an unreadable file can still be downloaded (and asked about).
    listed = {f["name"]: f for f in alice.get(f"/projects/{project['id']}/files").json()["items"]}
    assert listed["random.csv"]["check"] == "unreadable"
    assert "engine" not in str(listed["fake.xlsx"]["problem"])  # no raw pandas text
    assert alice.get(f"/files/{listed['random.csv']['id']}/content").status_code == 200

    # A new version is checked again.
    fixed = uploaded(alice, project["id"], "random.csv", SALES)
    assert (fixed["check"], fixed["problem"], fixed["version"]) == ("ok", None, 2)
