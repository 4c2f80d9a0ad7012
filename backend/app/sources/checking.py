"""Checking a source: connect within the connect timeout, see what its role may do, list
its schema (cached for the browser and the agent), and keep the outcome as its status."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from app.db import release_connection
from app.models import DataSource
from app.models.base import utcnow
from app.sources import dictionary
from app.sources.catalog import Introspection
from app.sources.connection import RoleReport
from app.sources.credentials import CannotDecrypt
from app.sources.drivers import open_session
from app.sources.failures import FailureKind, SourceFailure, scrub
from app.sources.service import connection_of

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    detail: str
    server_version: str | None
    table_count: int | None
    status: str
    access: str | None


REFUSING = {FailureKind.host_not_allowed, FailureKind.file_not_allowed, FailureKind.unsafe_role}


async def _probe(source: DataSource, settings: Settings) -> tuple[str, RoleReport, Introspection]:
    """Connect, ask what the role may do, list the schema: (server version, role, schema)."""
    try:
        connection = connection_of(source, settings)
    except CannotDecrypt as exc:
        raise SourceFailure(
            FailureKind.key_missing, f"The password cannot be read: {exc}."
        ) from None
    timeout = settings.SOURCES_CONNECT_TIMEOUT_SECONDS
    try:
        async with asyncio.timeout(timeout * 3):
            session = await open_session(connection)
            try:
                role = await session.role()
                if role.refusal is not None:
                    raise SourceFailure(FailureKind.unsafe_role, role.refusal)
                found = await session.introspect(
                    settings.SOURCES_SCHEMA_MAX_TABLES, settings.SOURCES_SCHEMA_MAX_COLUMNS
                )
                return session.server_version, role, found
            finally:
                await session.close()
    except TimeoutError:
        raise SourceFailure(
            FailureKind.timeout, f"The source did not answer within {timeout * 3:g} s."
        ) from None
    except SourceFailure:
        raise
    except Exception as exc:  # a driver's own, after connecting: said, scrubbed
        said = scrub(str(exc), [connection.url.password])
        raise SourceFailure(
            FailureKind.other, f"Listing the source's tables failed: {said}"
        ) from None


async def check(db: AsyncSession, source: DataSource, settings: Settings) -> CheckResult:
    """Check the source now and keep the outcome (status, detail, access, schema). The
    request's transaction is committed first: no database connection of the workbench's is
    held while the source's server is reached (that can take the connect timeout)."""
    source.checked_at = utcnow()
    await release_connection(db)
    try:
        version, role, found = await _probe(source, settings)
    except SourceFailure as failure:
        source.status = "refused" if failure.kind in REFUSING else "failed"
        source.status_detail = failure.sentence
        source.access = None
        log.info(
            "source %s (%s) check: %s: %s", source.id, source.kind, failure.kind, failure.reason
        )
        await db.flush()
        return CheckResult(
            False, failure.sentence, source.server_version, source.table_count, source.status, None
        )
    source.status, source.access = "ready", role.access.value if role.access else None
    source.server_version = version.removeprefix("5.5.5-")[:200]
    source.table_count = found.table_count
    listed = f"{found.table_count} table{'' if found.table_count == 1 else 's'}"
    if found.truncated:
        listed += f" ({len(found.tables)} kept: the schema is larger than the workbench keeps)"
    source.status_detail = f"Connected to {source.server_version}: {listed}. {role.detail}"
    await dictionary.replace_tables(db, source, found)
    return CheckResult(
        True, source.status_detail, source.server_version, found.table_count, "ready", source.access
    )
