"""Object storage settings: the S3 endpoint (MinIO or any S3), its keys, bucket and region."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from app.config.sections import Section, doc


class StorageSettings(BaseModel):
    """Section "Object storage": where files and artifacts go when not under DATA_DIR."""

    S3_ENDPOINT: str | None = Field(
        None,
        description="Files and artifacts go to S3 (MinIO or any S3) at this `host:port`, "
        "without a scheme (e.g. `minio:9000`).",
        examples=["localhost:9000"],
        json_schema_extra=doc(
            Section.storage, unset="files in `DATA_DIR/objects`", compose="`minio:9000`"
        ),
    )
    S3_ACCESS_KEY: str | None = Field(
        None,
        description="S3 access key, required with `S3_ENDPOINT`; also the MinIO root user of "
        "docker compose.",
        examples=["minioadmin"],
        json_schema_extra=doc(Section.storage, compose="`minioadmin`"),
    )
    S3_SECRET_KEY: str | None = Field(
        None,
        description="S3 secret key, required with `S3_ENDPOINT`; also the MinIO root "
        "password of docker compose, whose default (`minioadmin`) is refused in production: "
        "change it before exposing the workbench.",
        json_schema_extra=doc(Section.storage, secret=True),
    )
    S3_BUCKET: str = Field(
        "workbench",
        description="Bucket for files and artifacts (created at start-up when missing; "
        "docker compose creates it too).",
        json_schema_extra=doc(Section.storage),
    )
    S3_SECURE: bool = Field(
        False,
        description="Talk to S3 over https: `true` or `false`.",
        json_schema_extra=doc(Section.storage),
    )
    S3_REGION: str | None = Field(
        None,
        description="S3 region, for providers that need one (e.g. AWS).",
        examples=["us-east-1"],
        json_schema_extra=doc(Section.storage),
    )

    @field_validator("S3_ENDPOINT")
    @classmethod
    def _bare_endpoint(cls, value: str | None) -> str | None:
        if value is not None and "://" in value:
            raise ValueError(
                "S3_ENDPOINT is host:port without a scheme (e.g. minio:9000); "
                "set S3_SECURE=true for https"
            )
        return value
