"""The OpenAPI document that the SPA's client and event types are generated from.

Every event that the API tests read is checked against the same definitions on the way
(tests/support/sse.py), so what the document says of the stream is what the stream sends.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from app.main import create_app
from app.runs.events import PAYLOADS

SPA = Path(__file__).resolve().parents[3] / "frontend"


def test_operations_are_named_after_what_they_do(live) -> None:  # type: ignore[no-untyped-def]
    paths = httpx.get(f"{live.url}/api/v1/openapi.json").json()["paths"]
    ids = [op["operationId"] for path in paths.values() for op in path.values()]
    assert len(ids) == len(set(ids))
    assert paths["/api/v1/sessions/{session_id}/runs"]["get"]["operationId"] == "list_runs"
    assert paths["/api/v1/files/{file_id}/preview"]["get"]["operationId"] == "preview_file"
    assert not [i for i in ids if "api_v1" in i]


def test_the_event_stream_is_described_event_by_event(live) -> None:  # type: ignore[no-untyped-def]
    document = httpx.get(f"{live.url}/api/v1/openapi.json").json()
    stream = document["paths"]["/api/v1/runs/{run_id}/events"]["get"]["responses"]["200"]
    assert stream["content"]["text/event-stream"]["schema"] == {
        "$ref": "#/components/schemas/RunEvent"
    }
    schemas = document["components"]["schemas"]
    mapping = schemas["RunEvent"]["discriminator"]["mapping"]
    names = {payload.model_fields["event"].default for payload in PAYLOADS}
    assert set(mapping) == names
    assert {"run.started", "step.code", "artifact", "final", "run.finished"} <= names
    finished = schemas["RunFinishedEvent"]
    assert finished["properties"]["event"]["const"] == "run.finished"
    assert {"event", "run_id", "seq", "status", "error", "cost_usd"} <= set(finished["required"])
    # Left out when not told, so not required.
    assert "tokens_estimated" not in finished["required"]
    artifact = schemas["ArtifactEvent"]["properties"]["artifact"]
    assert artifact == {"$ref": "#/components/schemas/ArtifactOut"}


def test_the_spas_client_is_generated_from_this_document() -> None:
    """The checked-in frontend/openapi.json (and the client made from it) is the backend's
    document as it is now: after changing the API, run `make client`."""
    checked_in = json.loads((SPA / "openapi.json").read_text())
    assert checked_in == create_app().openapi(), "frontend/openapi.json is stale: run make client"
    sdk = (SPA / "src" / "client" / "sdk.gen.ts").read_text()
    assert "export const listRuns = " in sdk
    types = (SPA / "src" / "client" / "types.gen.ts").read_text()
    assert "export type RunEvent = " in types
