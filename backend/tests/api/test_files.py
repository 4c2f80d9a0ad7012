from __future__ import annotations

import hashlib
import io
from urllib.parse import quote

import httpx
import pandas as pd
import pytest

from app.infra.storage import S3Storage
from tests.conftest import UPLOAD_LIMIT, Api

SALES = b"region,month,revenue\nNorth,2026-01,1200.5\nSouth,2026-01,980\nNorth,2026-02,1310.25\n"


def keys(live) -> list[str]:  # type: ignore[no-untyped-def]
    return live.call(live.state.storage.list_keys())


def leftovers(live) -> list[str]:  # type: ignore[no-untyped-def]
    """Objects, plus half-written ones: local temp files or unfinished S3 multipart uploads."""
    storage = live.state.storage
    if isinstance(storage, S3Storage):
        partial = live.call(storage.list_incomplete_uploads())
    else:
        partial = [str(p) for p in (storage.root / ".tmp").iterdir()]
    return keys(live) + partial


def test_upload_list_get_download_preview(alice: Api, live) -> None:  # type: ignore[no-untyped-def]
    project = alice.project()
    response = alice.upload(project["id"], "sales.csv", SALES)
    assert response.status_code == 201, response.text
    file = response.json()
    assert file["name"] == "sales.csv" and file["project_id"] == project["id"]
    assert file["size"] == len(SALES)
    assert file["sha256"] == hashlib.sha256(SALES).hexdigest()
    assert file["content_type"] == "text/csv"

    assert alice.get(f"/projects/{project['id']}/files").json() == {"items": [file], "total": 1}
    assert alice.get(f"/files/{file['id']}").json() == file
    download = alice.get(f"/files/{file['id']}/content")
    assert download.status_code == 200 and download.content == SALES
    assert download.headers["content-type"].startswith("text/csv")

    preview = alice.get(f"/files/{file['id']}/preview").json()
    # "2026-01" is a month, not a date: it stays text.
    plain = {
        "date_format": None,
        "unit": None,
        "decimal": None,
        "true_values": None,
        "false_values": None,
    } | dict.fromkeys(
        (
            "mixed",
            "reading",
            "unreadable",
            "day_first",
            "settled_by",
            "decimal_separator",
            "currency",
            "currencies",
            "decimals",
            "missing_values",
        )
    )
    assert preview["columns"] == [
        {"name": "region", "dtype": preview["columns"][0]["dtype"], "type": "text"} | plain,
        {"name": "month", "dtype": preview["columns"][1]["dtype"], "type": "text"} | plain,
        {"name": "revenue", "dtype": "float64", "type": "number"} | plain,
    ]
    assert preview["header_row"] == 0
    assert preview["format"] == {
        "delimiter": ",",
        "decimal": ".",
        "thousands": None,
        "encoding": "utf-8",
    }
    assert (preview["sheets"], preview["sheet"]) == (None, None)
    assert preview["rows"] == [
        ["North", "2026-01", 1200.5],
        ["South", "2026-01", 980.0],
        ["North", "2026-02", 1310.25],
    ]
    assert preview["row_count"] == 3
    assert len(keys(live)) == 1


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("Q1 sales (final) = v2+.csv", "Q1 sales (final) = v2+.csv"),
        ("données €.csv", "données €.csv"),
        ("年度 报告.csv", "年度 报告.csv"),
        ("../../etc/passwd.csv", "passwd.csv"),
        ("C:\\Users\\me\\Desktop\\data.csv", "data.csv"),
    ],
)
def test_file_names_keep_their_characters_but_lose_directories(
    alice: Api, sent: str, kept: str
) -> None:
    project = alice.project()
    file = alice.upload(project["id"], sent, SALES).json()
    assert file["name"] == kept
    download = alice.get(f"/files/{file['id']}/content")
    assert download.content == SALES
    assert f"filename*=UTF-8''{quote(kept, safe='')}" in download.headers["content-disposition"]


def test_a_name_that_is_only_a_directory_is_refused(alice: Api) -> None:
    project = alice.project()
    for name in ("../", "..", "dir/"):
        response = alice.upload(project["id"], name, SALES)
        assert response.status_code == 400, name
        assert response.json()["code"] == "invalid_file_name"


def test_an_empty_file_uploads_and_previews_as_empty(alice: Api) -> None:
    project = alice.project()
    file = alice.upload(project["id"], "empty.csv", b"").json()
    assert file["size"] == 0 and file["sha256"] == hashlib.sha256(b"").hexdigest()
    assert alice.get(f"/files/{file['id']}/content").content == b""
    assert alice.get(f"/files/{file['id']}/preview").json() == {
        "columns": [],
        "rows": [],
        "row_count": 0,
        "sheets": None,
        "sheet": None,
        "format": None,
        "header_row": None,
        "offset": 0,
        "limit": 50,
        "sort": None,
        "order": "asc",
        "notice": None,
        "filter": [],
        "unfiltered_row_count": 0,
        "decided_rows": None,
        "kinds_pending": False,
    }


def test_a_file_over_the_limit_is_refused_and_leaves_nothing(alice: Api, live) -> None:  # type: ignore[no-untyped-def]
    project = alice.project()
    big = b"a,b\n" + b"1,2\n" * (UPLOAD_LIMIT // 4 + 10)
    response = alice.upload(project["id"], "big.csv", big)
    assert response.status_code == 413
    assert response.json()["code"] == "file_too_large"
    assert "upload limit" in response.json()["detail"]
    assert alice.get(f"/projects/{project['id']}/files").json()["total"] == 0
    assert leftovers(live) == []


def test_a_streamed_upload_without_length_is_cut_at_the_limit(alice: Api, live) -> None:  # type: ignore[no-untyped-def]
    project = alice.project()
    boundary = "wbboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="stream.csv"\r\n'
        "Content-Type: text/csv\r\n\r\n"
    ).encode()

    def body():  # type: ignore[no-untyped-def]
        yield head
        for _ in range(UPLOAD_LIMIT // (256 * 1024) + 4):
            yield b"1,2,3\n" * (256 * 1024 // 6)
        yield f"\r\n--{boundary}--\r\n".encode()

    try:
        response = alice.post(
            f"/projects/{project['id']}/files",
            content=body(),
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
        )
        assert response.status_code == 413
    except httpx.TransportError:
        pass  # the server may close the connection while the client is still sending
    assert alice.get(f"/projects/{project['id']}/files").json()["total"] == 0
    assert keys(live) == []


def test_uploading_the_same_name_makes_a_new_version(alice: Api, live) -> None:  # type: ignore[no-untyped-def]
    project = alice.project()
    first = alice.upload(project["id"], "sales.csv", SALES).json()
    alice.get(f"/files/{first['id']}/preview")
    newer = SALES + b"West,2026-03,77\n"
    second = alice.upload(project["id"], "sales.csv", newer).json()
    assert second["id"] == first["id"] and second["version"] == 2
    assert second["sha256"] == hashlib.sha256(newer).hexdigest() and second["size"] == len(newer)
    listing = alice.get(f"/projects/{project['id']}/files").json()
    assert listing["total"] == 1 and listing["items"][0]["sha256"] == second["sha256"]
    assert alice.get(f"/files/{first['id']}/content").content == newer
    assert alice.get(f"/files/{first['id']}/preview").json()["row_count"] == 4
    assert len(keys(live)) == 2  # the old bytes stay, as version 1 (see test_file_versions)


def test_deleting_a_file_removes_its_bytes(alice: Api, live) -> None:  # type: ignore[no-untyped-def]
    project = alice.project()
    file = alice.upload(project["id"], "sales.csv", SALES).json()
    alice.upload(project["id"], "other.csv", b"k\n1\n")
    assert alice.delete(f"/files/{file['id']}").status_code == 204
    assert alice.get(f"/files/{file['id']}").status_code == 404
    assert alice.get(f"/files/{file['id']}/content").status_code == 404
    assert [f["name"] for f in alice.get(f"/projects/{project['id']}/files").json()["items"]] == [
        "other.csv"
    ]
    assert len(keys(live)) == 1


def test_another_users_file_is_not_found_on_every_route(alice: Api, bob: Api) -> None:
    project = alice.project()
    file = alice.upload(project["id"], "sales.csv", SALES).json()
    for method, suffix in [("GET", ""), ("GET", "/content"), ("GET", "/preview"), ("DELETE", "")]:
        response = bob.request(method, f"/files/{file['id']}{suffix}")
        assert response.status_code == 404, (method, suffix)
        assert response.json()["code"] == "file_not_found"
    assert alice.get(f"/files/{file['id']}/content").content == SALES


def test_unsupported_types_and_bad_requests(alice: Api) -> None:
    project = alice.project()
    exe = alice.upload(project["id"], "setup.exe", b"MZ\x90\x00")
    assert exe.status_code == 415 and exe.json()["code"] == "unsupported_file_type"
    not_multipart = alice.post(
        f"/projects/{project['id']}/files", content=b"a,b\n", headers={"Content-Type": "text/csv"}
    )
    assert not_multipart.status_code == 400 and not_multipart.json()["code"] == "expected_multipart"
    wrong_field = alice.post(f"/projects/{project['id']}/files", files={"data": ("a.csv", b"a\n")})
    assert wrong_field.status_code == 400 and wrong_field.json()["code"] == "missing_file"
    assert alice.get(f"/projects/{project['id']}/files").json()["total"] == 0


def test_a_malformed_csv_uploads_downloads_and_explains_its_preview(alice: Api) -> None:
    project = alice.project()
    ragged = b"a,b,c\n1,2,3\n4,5,6,7,8\n"
    file = alice.upload(project["id"], "ragged.csv", ragged).json()
    assert alice.get(f"/files/{file['id']}/content").content == ragged
    preview = alice.get(f"/files/{file['id']}/preview")
    assert preview.status_code == 422
    assert preview.json()["code"] == "unreadable_file"
    assert "ragged.csv" in preview.json()["detail"]


def test_excel_and_parquet_preview_and_corrupt_ones_explain(alice: Api) -> None:
    project = alice.project()
    frame = pd.DataFrame(
        {"city": ["Oslo", "Lima", "Pune"], "temp": [3.5, 19.0, 31.25], "n": [1, 2, 3]}
    )
    excel, parquet = io.BytesIO(), io.BytesIO()
    frame.to_excel(excel, index=False)
    frame.to_parquet(parquet, index=False)
    for name, data in [("weather.xlsx", excel.getvalue()), ("weather.parquet", parquet.getvalue())]:
        file = alice.upload(project["id"], name, data).json()
        assert alice.get(f"/files/{file['id']}/content").content == data
        preview = alice.get(f"/files/{file['id']}/preview").json()
        assert [c["name"] for c in preview["columns"]] == ["city", "temp", "n"]
        assert preview["rows"][1] == ["Lima", 19.0, 2] and preview["row_count"] == 3
        assert {c["name"]: c["dtype"] for c in preview["columns"]}["n"] == "int64"
    for name in ("broken.xlsx", "broken.parquet"):
        file = alice.upload(project["id"], name, b"this is not a " + name.encode()).json()
        response = alice.get(f"/files/{file['id']}/preview")
        assert response.status_code == 422, name
        assert name in response.json()["detail"]


def test_a_non_tabular_file_has_no_preview_but_downloads(alice: Api) -> None:
    project = alice.project()
    file = alice.upload(project["id"], "notes.md", b"# Data dictionary\n").json()
    assert alice.get(f"/files/{file['id']}/content").content == b"# Data dictionary\n"
    response = alice.get(f"/files/{file['id']}/preview")
    assert response.status_code == 415 and response.json()["code"] == "preview_unsupported"


def test_a_client_that_hangs_up_mid_upload_leaves_nothing(alice: Api, live) -> None:  # type: ignore[no-untyped-def]
    import socket
    import time

    project = alice.project()
    boundary = "hangup"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="half.csv"\r\n\r\n'
    ).encode()
    declared = len(head) + 6 * 1024 * 1024
    request = (
        f"POST /api/v1/projects/{project['id']}/files HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: {alice.headers['Authorization']}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
        f"Content-Length: {declared}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", live.port)) as sock:
        sock.sendall(request + head + b"1,2,3\n" * (3 * 1024 * 1024 // 6))
    time.sleep(1.5)  # the server has read what was sent and seen the hang-up
    assert leftovers(live) == []
    assert alice.get(f"/projects/{project['id']}/files").json()["total"] == 0
    assert alice.upload(project["id"], "half.csv", SALES).status_code == 201
