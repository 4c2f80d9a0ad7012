"""Observability settings: the Prometheus endpoint, OpenTelemetry traces and the log format."""

from __future__ import annotations

from enum import StrEnum
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator

from app.config.sections import Section, doc


class LogFormat(StrEnum):
    text = "text"
    json = "json"


class ObservabilitySettings(BaseModel):
    """Section "Observability": metrics, traces and logs for an operator's tools."""

    METRICS_ENABLED: bool = Field(
        True,
        description="Serve Prometheus metrics at `GET /metrics` (names prefixed `workbench_`; "
        "each replica or uvicorn worker serves its own) and count HTTP requests for them.",
        json_schema_extra=doc(Section.observability),
    )
    METRICS_TOKEN: str | None = Field(
        None,
        description="When set, `GET /metrics` needs `Authorization: Bearer <METRICS_TOKEN>` "
        "(Prometheus: `authorization: {credentials: …}` in the scrape job).",
        json_schema_extra=doc(
            Section.observability, unset="`/metrics` answers anyone who reaches it", secret=True
        ),
    )
    OTEL_EXPORTER_OTLP_ENDPOINT: str | None = Field(
        None,
        description="OpenTelemetry collector (OTLP over HTTP, protobuf) that traces are sent "
        "to, at `<endpoint>/v1/traces`: one trace per question, from the request through "
        "the queue, each step (model call, code, artifacts) and the check to the end. The "
        "other standard variables (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`, "
        "`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SDK_DISABLED`, …) are read as OpenTelemetry "
        "documents them, from the environment.",
        examples=["http://otel-collector:4318"],
        json_schema_extra=doc(Section.observability, unset="no traces (and no cost)"),
    )
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: str | None = Field(
        None,
        description="The full URL traces are sent to, instead of "
        "`OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces` (e.g. Langfuse's or Phoenix's OTLP "
        "endpoint).",
        examples=["http://phoenix:6006/v1/traces"],
        json_schema_extra=doc(Section.observability, unset="from `OTEL_EXPORTER_OTLP_ENDPOINT`"),
    )
    OTEL_CAPTURE_CONTENT: bool = Field(
        False,
        description="Put the prompts and the model's replies on model-call spans "
        "(`gen_ai.input.messages`, `gen_ai.output.messages`; known secrets removed). Off: "
        "spans carry sizes, tokens and timings, never the data's or the user's words.",
        json_schema_extra=doc(Section.observability),
    )
    LOG_FORMAT: LogFormat = Field(
        LogFormat.text,
        description="`text` (lines for a person) or `json` (one JSON object a line, with the "
        "run, session and trace ids where there are some, for a log collector).",
        json_schema_extra=doc(Section.observability, compose="`json`"),
    )

    @field_validator("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parsed = urlsplit(value.strip())
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError("must be an http:// or https:// URL of an OTLP/HTTP receiver")
        return value.strip()

    @property
    def traces_endpoint(self) -> str | None:
        """Where spans go (OTLP/HTTP), or None: no traces."""
        if self.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT:
            return self.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
        if self.OTEL_EXPORTER_OTLP_ENDPOINT:
            return self.OTEL_EXPORTER_OTLP_ENDPOINT.rstrip("/") + "/v1/traces"
        return None
