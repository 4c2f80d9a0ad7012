"""Limits on what a request may carry: body size, and the length of an uploaded file's name."""

from __future__ import annotations

import json
import socket

import httpx

from tests.conftest import Api
from tests.support.server import LiveServer

BODY_LIMIT = 1024**2  # the default MAX_JSON_BODY_BYTES
SALES = b"region,revenue\nNorth,1200.5\nSouth,980\n"


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, str]:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code, body
    assert isinstance(body["detail"], str) and body["detail"]
    return dict(body)


def exchange(live: LiveServer, head: bytes, body_parts: list[bytes]) -> tuple[int, dict[str, str]]:
    """Send a request's head and only these body parts, then read the answer.

    The body is never finished: an answer proves the server answered without the rest.
    """
    with socket.create_connection(("127.0.0.1", live.port), timeout=30) as sock:
        sock.sendall(head)
        for part in body_parts:
            sock.sendall(part)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            assert chunk, f"the server closed the connection without answering: {received!r}"
            received += chunk
        head_part, _, body = received.partition(b"\r\n\r\n")
        lines = head_part.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:])}
        while len(body) < int(headers["content-length"]):
            chunk = sock.recv(65536)
            assert chunk, "the answer was cut short"
            body += chunk
    return status, json.loads(body)


# Request bodies ------------------------------------------------------------------------


def test_a_json_body_over_the_limit_is_refused(alice: Api) -> None:
    big = {"name": "Sales", "description": "x" * (BODY_LIMIT + 10)}
    body = assert_error(alice.post("/projects", json=big), 413, "body_too_large")
    assert "1,048,576 bytes" in body["detail"]
    assert alice.get("/projects").json()["total"] == 0


def test_a_body_under_the_limit_reaches_the_route(alice: Api) -> None:
    # Validation answers (the description allows 10,000 characters): the body was read.
    near = {"name": "Sales", "description": "x" * (BODY_LIMIT - 1000)}
    assert_error(alice.post("/projects", json=near), 422, "validation_error")
    assert alice.post("/projects", json={"name": "Sales"}).status_code == 201


def test_a_declared_length_over_the_limit_is_refused_before_the_body_is_read(
    live: LiveServer,
) -> None:
    head = (
        b"POST /api/v1/auth/login HTTP/1.1\r\nHost: test\r\n"
        b"Content-Type: application/json\r\nContent-Length: 60000000\r\n\r\n"
    )
    status, body = exchange(live, head, [b'{"email": "' + b"a" * 1000])
    assert status == 413 and body["code"] == "body_too_large"


def test_a_chunked_body_is_refused_once_it_grows_past_the_limit(live: LiveServer) -> None:
    head = (
        b"POST /api/v1/auth/login HTTP/1.1\r\nHost: test\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    piece = b"x" * 65536
    chunks = [b'{"email": "'] + [piece] * (BODY_LIMIT // len(piece) + 1)
    status, body = exchange(live, head, [b"%x\r\n%s\r\n" % (len(c), c) for c in chunks])
    assert status == 413 and body["code"] == "body_too_large"


def test_a_small_chunked_body_is_read_as_usual(live: LiveServer) -> None:
    payload = json.dumps({"email": "nobody@example.com", "password": "x" * 12}).encode()
    head = (
        b"POST /api/v1/auth/login HTTP/1.1\r\nHost: test\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    parts = [b"%x\r\n%s\r\n" % (len(payload), payload), b"0\r\n\r\n"]
    status, body = exchange(live, head, parts)
    assert status == 401 and body["code"] == "invalid_credentials"


def test_uploads_are_not_held_to_the_body_limit(alice: Api) -> None:
    project = alice.project()
    rows = b"region,revenue\n" + b"North,1200.5\n" * (2 * BODY_LIMIT // 13)
    response = alice.upload(project["id"], "big.csv", rows)
    assert response.status_code == 201, response.text
    assert response.json()["size"] == len(rows)


# Uploaded file names -------------------------------------------------------------------


def test_a_five_thousand_character_name_is_refused_as_too_long(
    alice: Api, live: LiveServer
) -> None:
    project = alice.project()
    body = assert_error(
        alice.upload(project["id"], "a" * 5000 + ".csv", SALES), 400, "name_too_long"
    )
    assert "255 bytes" in body["detail"]
    assert alice.get(f"/projects/{project['id']}/files").json()["total"] == 0


def test_a_name_over_255_bytes_is_refused_and_one_of_255_is_kept(alice: Api) -> None:
    project = alice.project()
    # 2 bytes per character in UTF-8: 127 characters plus ".csv" make 258 bytes.
    body = assert_error(
        alice.upload(project["id"], "é" * 127 + ".csv", SALES), 400, "name_too_long"
    )
    assert "258 bytes" in body["detail"]
    longest = "é" * 125 + "a.csv"
    assert len(longest.encode()) == 255
    response = alice.upload(project["id"], longest, SALES)
    assert response.status_code == 201, response.text
    assert response.json()["name"] == longest


def test_a_malformed_multipart_body_is_a_bad_request(alice: Api) -> None:
    project = alice.project()
    for garbled in (b"--abX\r\n", b"--abc\r\nNot A Header\r\n\r\n1,2\r\n--abc--\r\n"):
        response = alice.post(
            f"/projects/{project['id']}/files",
            content=garbled,
            headers={"Content-Type": "multipart/form-data; boundary=abc"},
        )
        body = assert_error(response, 400, "malformed_upload")
        assert "not valid multipart/form-data" in body["detail"]
