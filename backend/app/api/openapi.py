"""The OpenAPI document: operation ids that read as names, and the run events' schemas.

The browser app's API client and its event types are generated from this document
(`make client`), so what it says is what the SPA's code is checked against.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic import TypeAdapter

from app.live.events import InboxEvent, LiveEvent
from app.runs.events import PAYLOADS, RunEventPayload

REF_TEMPLATE = "#/components/schemas/{model}"
EVENT_SCHEMA = "RunEvent"
LIVE_EVENT_SCHEMA = "LiveEvent"
INBOX_EVENT_SCHEMA = "InboxEvent"


def operation_id(route: APIRoute) -> str:
    """The route function's name (`list_runs`, generated as `listRuns`), not FastAPI's
    name-path-method (`list_runs_api_v1_sessions__session_id__runs_get`)."""
    return route.name


def event_stream_doc(description: str) -> dict[str, Any]:
    """A 200 answer of server-sent run events: each message's `event:` line is the
    schema's `event`, its `data:` line the rest."""
    return {
        "description": description,
        "content": {
            "text/event-stream": {"schema": {"$ref": REF_TEMPLATE.format(model=EVENT_SCHEMA)}}
        },
    }


def live_stream_doc(description: str, model: str = LIVE_EVENT_SCHEMA) -> dict[str, Any]:
    """A 200 answer of live events (LiveEvent, or InboxEvent; `event:` line as for runs)."""
    schema = {"$ref": REF_TEMPLATE.format(model=model)}
    return {"description": description, "content": {"text/event-stream": {"schema": schema}}}


def _union_schemas(adapter: TypeAdapter[Any], name: str, about: str) -> dict[str, Any]:
    union = adapter.json_schema(ref_template=REF_TEMPLATE, mode="serialization")
    defined: dict[str, Any] = union.pop("$defs", {})
    union.update(title=name, description=about)
    return {**defined, name: union}


def live_event_schemas() -> dict[str, Any]:
    """`LiveEvent` and `InboxEvent` (one of the live payloads of a session's stream, of a
    user's notification stream, told apart by `event`) and what they refer to."""
    return {
        **_union_schemas(
            TypeAdapter(LiveEvent), LIVE_EVENT_SCHEMA, "One message of a session's live stream"
        ),
        **_union_schemas(
            TypeAdapter(InboxEvent),
            INBOX_EVENT_SCHEMA,
            "One message of a user's notification stream",
        ),
    }


def event_schemas() -> dict[str, Any]:
    """`RunEvent` (one of the payloads, told apart by `event`) and what it refers to; each
    payload named `<Name>Event` (`StepStartedEvent`), as the generated types are."""
    union = TypeAdapter(RunEventPayload).json_schema(
        ref_template=REF_TEMPLATE, mode="serialization"
    )
    defined = union.pop("$defs", {})
    renamed = {
        payload.__name__: payload.__name__.removesuffix("Event") + "Event" for payload in PAYLOADS
    }
    text = json.dumps({**defined, EVENT_SCHEMA: union})
    for old, new in renamed.items():
        text = text.replace(
            f'"{REF_TEMPLATE.format(model=old)}"', f'"{REF_TEMPLATE.format(model=new)}"'
        )
    schemas: dict[str, Any] = {renamed.get(k, k): v for k, v in json.loads(text).items()}
    for new in renamed.values():
        schemas[new]["title"] = new
    schemas[EVENT_SCHEMA].update(
        title=EVENT_SCHEMA,
        description='One message of a run\'s event stream (API.md, "The event stream")',
    )
    return schemas


def install_openapi(app: FastAPI) -> None:
    """Build the document once, with the run events' payloads among its schemas."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            schemas = document.setdefault("components", {}).setdefault("schemas", {})
            for name, schema in {**event_schemas(), **live_event_schemas()}.items():
                schemas.setdefault(name, schema)
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
