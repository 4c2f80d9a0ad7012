"""A client of the public HTTP API (../shared/API.md), for the CLI and the eval harness.

Everything goes through `/api/v1` with a bearer token, exactly as any other client would;
nothing here imports the server's code. Errors come back as `ApiError` carrying the
server's sentence and code, so callers can show what the server said.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any

import httpx

# Reads may wait on a slow step; a stream waits as long as the run lasts (the server sends a
# heartbeat at least every 15 s, so a silent minute means the connection is gone).
TIMEOUT = httpx.Timeout(60.0, connect=10.0)
STREAM_TIMEOUT = httpx.Timeout(connect=10.0, read=60.0, write=60.0, pool=10.0)


class ApiError(Exception):
    """The server refused (status >= 400) or could not be reached (status 0)."""

    def __init__(self, status: int, detail: str, code: str | None = None):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.code = code

    def __str__(self) -> str:
        return self.detail if self.status == 0 else f"{self.detail} (HTTP {self.status})"


@dataclass(frozen=True)
class Event:
    """One server-sent event of a run: its name, sequence number and data."""

    event: str
    seq: int
    data: dict[str, Any]


def read_events(response: httpx.Response) -> Iterator[Event]:
    """Events as they arrive (heartbeat comments skipped), up to and including run.finished."""
    name, ident = "message", 0
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith(":"):
            continue
        if line == "":
            if data:
                event = Event(name, ident, json.loads("\n".join(data)))
                yield event
                if event.event == "run.finished":
                    return
            name, ident, data = "message", 0, []
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "id":
            ident = int(value) if value.isdigit() else 0
        elif field == "data":
            data.append(value)


def _raise_for(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    detail, code = response.reason_phrase or "The server refused the request.", None
    try:
        body = json.loads(response.read() or b"{}")
    except ValueError:
        body = None
    if isinstance(body, dict):
        if isinstance(body.get("detail"), str):
            detail = body["detail"]
        elif isinstance(body.get("detail"), list) and body["detail"]:
            first = body["detail"][0]
            detail = str(first.get("msg", detail)) if isinstance(first, dict) else detail
        code = body.get("code") if isinstance(body.get("code"), str) else None
    raise ApiError(response.status_code, detail, code)


class WorkbenchClient:
    """The API as methods. `url` is the server's root (e.g. http://127.0.0.1:8000)."""

    def __init__(self, url: str, token: str | None = None, *, timeout: httpx.Timeout = TIMEOUT):
        self.url = url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=f"{self.url}/api/v1", headers=headers, timeout=timeout)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> WorkbenchClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing --------------------------------------------------------------------------

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ApiError(0, f"Cannot reach the workbench at {self.url}: {exc}") from exc
        _raise_for(response)
        return response

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.request(method, path, **kwargs).json()

    def all_items(self, path: str, **params: Any) -> list[dict[str, Any]]:
        """Every item of a paginated list, page after page."""
        items: list[dict[str, Any]] = []
        while True:
            page = self.json("GET", path, params={**params, "limit": 100, "offset": len(items)})
            items.extend(page["items"])
            if not page["items"] or len(items) >= page["total"]:
                return items

    # -- auth ------------------------------------------------------------------------------

    def login(self, email: str, password: str) -> str:
        """A login token for these credentials."""
        body = self.json("POST", "/auth/login", json={"email": email, "password": password})
        return str(body["access_token"])

    def me(self) -> dict[str, Any]:
        return dict(self.json("GET", "/auth/me"))

    def create_token(self, name: str) -> dict[str, Any]:
        return dict(self.json("POST", "/auth/tokens", json={"name": name}))

    def tokens(self) -> list[dict[str, Any]]:
        """The user's API tokens: `{id, name, prefix, created_at, last_used_at}` each."""
        return self.all_items("/auth/tokens")

    def revoke_token(self, token_id: str) -> None:
        self.request("DELETE", f"/auth/tokens/{token_id}")

    # -- projects, files, sessions ---------------------------------------------------------

    def projects(self) -> list[dict[str, Any]]:
        return self.all_items("/projects")

    def project(self, project_id: str) -> dict[str, Any]:
        return dict(self.json("GET", f"/projects/{project_id}"))

    def create_project(self, name: str, description: str | None = None) -> dict[str, Any]:
        body = {"name": name, **({"description": description} if description else {})}
        return dict(self.json("POST", "/projects", json=body))

    def update_project(self, project_id: str, **fields: Any) -> dict[str, Any]:
        return dict(self.json("PATCH", f"/projects/{project_id}", json=fields))

    def delete_project(self, project_id: str) -> None:
        self.request("DELETE", f"/projects/{project_id}")

    def files(self, project_id: str) -> list[dict[str, Any]]:
        return self.all_items(f"/projects/{project_id}/files")

    def upload(self, project_id: str, path: Path, name: str | None = None) -> dict[str, Any]:
        """Stream a local file to the project (a file of the same name is replaced)."""
        with path.open("rb") as handle:
            files = {"file": (name or path.name, handle)}
            return dict(self.json("POST", f"/projects/{project_id}/files", files=files))

    def file(self, file_id: str) -> dict[str, Any]:
        return dict(self.json("GET", f"/files/{file_id}"))

    def download_file(self, file_id: str, target: Path) -> Path:
        """Write the file's bytes to `target` (in a folder: under the file's own name)."""
        return self._download(f"/files/{file_id}/content", target)

    def delete_file(self, file_id: str) -> None:
        self.request("DELETE", f"/files/{file_id}")

    def sessions(self, project_id: str) -> list[dict[str, Any]]:
        return self.all_items(f"/projects/{project_id}/sessions")

    def session(self, session_id: str) -> dict[str, Any]:
        return dict(self.json("GET", f"/sessions/{session_id}"))

    def create_session(
        self, project_id: str, title: str | None = None, *, autonomy: str | None = None
    ) -> dict[str, Any]:
        body = {"title": title} if title else {}
        if autonomy:
            body["autonomy"] = autonomy
        return dict(self.json("POST", f"/projects/{project_id}/sessions", json=body))

    def update_session(self, session_id: str, **fields: Any) -> dict[str, Any]:
        return dict(self.json("PATCH", f"/sessions/{session_id}", json=fields))

    def delete_session(self, session_id: str) -> None:
        self.request("DELETE", f"/sessions/{session_id}")

    # -- members ---------------------------------------------------------------------------

    def members(self, project_id: str) -> list[dict[str, Any]]:
        return self.all_items(f"/projects/{project_id}/members")

    def add_member(self, project_id: str, email: str, role: str) -> dict[str, Any]:
        body = {"email": email, "role": role}
        return dict(self.json("POST", f"/projects/{project_id}/members", json=body))

    def update_member(self, project_id: str, user_id: str, role: str) -> dict[str, Any]:
        path = f"/projects/{project_id}/members/{user_id}"
        return dict(self.json("PATCH", path, json={"role": role}))

    def remove_member(self, project_id: str, user_id: str) -> None:
        self.request("DELETE", f"/projects/{project_id}/members/{user_id}")

    # -- data sources ------------------------------------------------------------------------

    def sources(self, project_id: str) -> list[dict[str, Any]]:
        return self.all_items(f"/projects/{project_id}/sources")

    def create_source(self, project_id: str, **fields: Any) -> dict[str, Any]:
        return dict(self.json("POST", f"/projects/{project_id}/sources", json=fields))

    def update_source(self, source_id: str, **fields: Any) -> dict[str, Any]:
        return dict(self.json("PATCH", f"/sources/{source_id}", json=fields))

    def delete_source(self, source_id: str) -> None:
        self.request("DELETE", f"/sources/{source_id}")

    def check_source(self, source_id: str) -> dict[str, Any]:
        return dict(self.json("POST", f"/sources/{source_id}/check"))

    def source_schema(self, source_id: str) -> dict[str, Any]:
        return dict(self.json("GET", f"/sources/{source_id}/schema"))

    def source_sample(
        self, source_id: str, table: str, schema: str | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"table": table}
        if schema:
            params["schema"] = schema
        if limit is not None:
            params["limit"] = limit
        return dict(self.json("GET", f"/sources/{source_id}/sample", params=params))

    def describe_source(self, source_id: str, tables: list[dict[str, Any]]) -> dict[str, Any]:
        return dict(self.json("PATCH", f"/sources/{source_id}/schema", json={"tables": tables}))

    # -- project knowledge -----------------------------------------------------------------

    def knowledge(self, project_id: str, **params: Any) -> list[dict[str, Any]]:
        """Every knowledge item of the project, newest first (`kind`, `status`, `q` filter)."""
        chosen = {k: v for k, v in params.items() if v is not None}
        return self.all_items(f"/projects/{project_id}/knowledge", **chosen)

    def create_knowledge(self, project_id: str, **fields: Any) -> dict[str, Any]:
        return dict(self.json("POST", f"/projects/{project_id}/knowledge", json=fields))

    def knowledge_item(self, item_id: str) -> dict[str, Any]:
        return dict(self.json("GET", f"/knowledge/{item_id}"))

    def update_knowledge(self, item_id: str, **fields: Any) -> dict[str, Any]:
        return dict(self.json("PATCH", f"/knowledge/{item_id}", json=fields))

    # -- shared links and the audit log -----------------------------------------------------

    def create_share(
        self, session_id: str, expires_in_days: int | None = None, runs: list[str] | None = None
    ) -> dict[str, Any]:
        """A link to the session's report: `{id, url, token, expires_at}` (shown once)."""
        body: dict[str, Any] = {}
        if expires_in_days is not None:
            body["expires_in_days"] = expires_in_days
        if runs is not None:
            body["runs"] = runs
        return dict(self.json("POST", f"/sessions/{session_id}/shares", json=body))

    def shares(self, session_id: str) -> list[dict[str, Any]]:
        return self.all_items(f"/sessions/{session_id}/shares")

    def revoke_share(self, share_id: str) -> None:
        self.request("DELETE", f"/shares/{share_id}")

    def reissue_share(self, share_id: str) -> dict[str, Any]:
        """A new link of yours to a link's questions, the old one revoked (owners; shown once)."""
        return dict(self.json("POST", f"/shares/{share_id}/reissue"))

    def audit(
        self, project_id: str, limit: int, offset: int, action: str | None = None
    ) -> dict[str, Any]:
        """One page of the project's audit log, newest first: `{items, total}`."""
        params: dict[str, Any] = {"limit": limit, "offset": offset}
        if action:
            params["action"] = action
        return dict(self.json("GET", f"/projects/{project_id}/audit", params=params))

    def verify_audit(self, project_id: str) -> dict[str, Any]:
        """Whether the project's audit log is intact: `{intact, events, sentence, …}`."""
        return dict(self.json("GET", f"/projects/{project_id}/audit/verify"))

    # -- runs ------------------------------------------------------------------------------

    def runs(self, session_id: str) -> list[dict[str, Any]]:
        return self.all_items(f"/sessions/{session_id}/runs")

    def run(self, run_id: str) -> dict[str, Any]:
        return dict(self.json("GET", f"/runs/{run_id}"))

    def models(self) -> list[dict[str, Any]]:
        return list(self.json("GET", "/models")["items"])

    def ask(
        self,
        session_id: str,
        query: str,
        *,
        file_ids: list[str] | None = None,
        model: str | None = None,
        attempts: int | None = None,
    ) -> Iterator[Event]:
        """Start a run and yield its events as they happen, up to run.finished."""
        body: dict[str, Any] = {"query": query, "file_ids": file_ids or []}
        if model:
            body["model"] = model
        if attempts is not None:
            body["attempts"] = attempts
        yield from self._stream("POST", f"/sessions/{session_id}/query", json=body)

    def cell(
        self, session_id: str, language: str, code: str, source: str | None = None
    ) -> Iterator[Event]:
        """Run a cell (Python, or SQL on `source`) and yield its run's events, up to
        run.finished."""
        body: dict[str, Any] = {"language": language, "code": code}
        if source:
            body["source"] = source
        yield from self._stream("POST", f"/sessions/{session_id}/cells", json=body)

    def follow(self, run_id: str, after: int = 0) -> Iterator[Event]:
        """A run's events after seq `after`, then live ones up to run.finished."""
        yield from self._stream("GET", f"/runs/{run_id}/events", params={"after": after})

    def cancel(self, run_id: str) -> dict[str, Any]:
        return dict(self.json("POST", f"/runs/{run_id}/cancel"))

    def answer(self, run_id: str, answer: str) -> dict[str, Any]:
        return dict(self.json("POST", f"/runs/{run_id}/input", json={"answer": answer}))

    def decide(
        self,
        run_id: str,
        decision: str,
        *,
        code: str | None = None,
        feedback: str | None = None,
    ) -> dict[str, Any]:
        body = {"decision": decision, "code": code, "feedback": feedback}
        return dict(self.json("POST", f"/runs/{run_id}/approval", json=body))

    def artifacts(self, session_id: str) -> list[dict[str, Any]]:
        return self.all_items(f"/sessions/{session_id}/artifacts")

    def artifact(self, artifact_id: str) -> dict[str, Any]:
        return dict(self.json("GET", f"/artifacts/{artifact_id}"))

    def artifact_content(self, artifact_id: str) -> Any:
        """A JSON artifact's content (a table's `{columns, rows, row_count}`, a figure)."""
        return self.json("GET", f"/artifacts/{artifact_id}/content")

    def download_artifact(self, artifact_id: str, target: Path) -> Path:
        """Write the artifact's bytes to `target` (in a folder: under the server's name)."""
        return self._download(f"/artifacts/{artifact_id}/content", target)

    def export(
        self, session_id: str, fmt: str, target: Path, runs: list[str] | None = None
    ) -> Path:
        """The session as a notebook (ipynb), a standalone report (html) or markdown (md),
        written to `target` (in a folder: under the file name the server gives); only the
        runs `runs` names, if given."""
        params = {"format": fmt} | ({"runs": ",".join(runs)} if runs is not None else {})
        return self._download(f"/sessions/{session_id}/export", target, params=params)

    def download_version(self, file_id: str, version: int, target: Path) -> Path:
        """Write one version of a file's bytes to `target`."""
        return self._download(f"/files/{file_id}/versions/{version}/content", target)

    # -- streams and downloads -------------------------------------------------------------

    def _stream(self, method: str, path: str, **kwargs: Any) -> Iterator[Event]:
        try:
            with self.http.stream(method, path, timeout=STREAM_TIMEOUT, **kwargs) as response:
                _raise_for(response)
                yield from read_events(response)
        except httpx.HTTPError as exc:
            raise ApiError(0, f"Lost the connection to the workbench at {self.url}: {exc}") from exc

    def _download(self, path: str, target: Path, **kwargs: Any) -> Path:
        """Write a response body to `target` as it arrives (via a temporary file beside it).

        When `target` is a folder, the file goes in it under the name the server gives
        (Content-Disposition), else under the path's last part. Returns where it went.
        """
        partial: Path | None = None
        try:
            with self.http.stream("GET", path, **kwargs) as response:
                _raise_for(response)
                if target.is_dir():
                    fallback = path.rstrip("/").rsplit("/", 1)[-1]
                    target = target / (attachment_name(response) or fallback)
                partial = target.with_name(f".{target.name}.part")
                with partial.open("wb") as handle:
                    for chunk in response.iter_bytes():
                        handle.write(chunk)
            partial.replace(target)
            return target
        except httpx.HTTPError as exc:
            raise ApiError(0, f"Lost the connection to the workbench at {self.url}: {exc}") from exc
        finally:
            if partial is not None:
                partial.unlink(missing_ok=True)


def attachment_name(response: httpx.Response) -> str | None:
    """The file name a response suggests (RFC 6266, `filename*` first), without any folder."""
    header = response.headers.get("content-disposition")
    if not header:
        return None
    message = Message()
    message["content-disposition"] = header
    name = message.get_filename()
    if not name:
        return None
    name = name.replace("\\", "/").rsplit("/", 1)[-1].strip()
    return None if name in ("", ".", "..") else name
