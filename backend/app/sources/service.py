"""Sources of a project: create, read, change and delete them (the password sealed at
rest), and hand them to the query engine (`connections_of`) and to the agent's prompt
(`catalog_of`). Every statement on data_sources and their schema lives here and in
app.sources.dictionary."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from app.db import paginate
from app.errors import BadRequest, Conflict, NotFound
from app.models import DataSource, Project, User
from app.models.base import utcnow
from app.ownership import Role, one_visible
from app.sources import dictionary
from app.sources.catalog import SourceCatalog
from app.sources.connection import SourceConnection
from app.sources.credentials import CannotDecrypt, Keyring, Secret
from app.sources.reach import Reach
from app.sources.schemas import SourceCreate, SourceUpdate
from app.sources.urls import SourceUrl, Tls, parse


def keyring_of(settings: Settings) -> Keyring:
    """The keys that seal and open source passwords (SECRET_KEY, then the previous ones)."""
    return Keyring(settings.signing_key, settings.previous_secret_keys)


async def get_owned(
    db: AsyncSession, user: User, source_id: uuid.UUID, need: Role = Role.viewer
) -> DataSource:
    query = (
        select(DataSource)
        .join(Project, Project.id == DataSource.project_id)
        .where(DataSource.id == source_id)
    )
    missing = NotFound("No such source.", code="source_not_found")
    source: DataSource = await one_visible(db, user, query, missing, need)
    return source


async def list_for_project(
    db: AsyncSession, project: Project, limit: int, offset: int
) -> tuple[list[DataSource], int]:
    query = (
        select(DataSource)
        .where(DataSource.project_id == project.id)
        .order_by(DataSource.name, DataSource.id)
    )
    return await paginate(db, query, limit, offset)


async def _refuse_taken_name(db: AsyncSession, project_id: uuid.UUID, name: str) -> None:
    taken = await db.scalar(
        select(DataSource.id).where(DataSource.project_id == project_id, DataSource.name == name)
    )
    if taken is not None:
        raise Conflict(
            f"This project already has a source named {name!r}; choose another name.",
            code="source_name_taken",
        )


def _set_url(source: DataSource, url: SourceUrl, keyring: Keyring) -> None:
    source.kind = url.kind.value
    source.url = url.display(masked=False)
    source.password_sealed = keyring.seal(url.password, str(source.id)) if url.password else None
    source.status, source.status_detail, source.access = "unchecked", "", None
    source.server_version, source.table_count, source.checked_at = None, None, None


async def create(
    db: AsyncSession, project: Project, data: SourceCreate, settings: Settings
) -> DataSource:
    """A new source (not yet checked).

    Raises:
        BadRequest: the URL cannot be used (its sentence never repeats the password).
        Conflict: the project has a source of that name.
    """
    url = parse(data.url)
    if data.password is not None:
        url = url.with_password(Secret(data.password))
    await _refuse_taken_name(db, project.id, data.name)
    source = DataSource(
        id=uuid.uuid4(), project_id=project.id, name=data.name, description=data.description
    )
    _set_url(source, url, keyring_of(settings))
    db.add(source)
    await db.flush()
    return source


# What a source's password is sent to (and how): changing any of these without giving the
# password again would send the stored one to a server its owner never named.
TARGET_PARTS = ("kind", "host", "port", "user", "database")
# TLS modes from the least to the most careful.
_TLS_ORDER = list(Tls)


def changed_parts(before: SourceUrl, after: SourceUrl) -> list[str]:
    """The parts of a source's URL that differ (`tls` too, never the password)."""
    return [p for p in (*TARGET_PARTS, "tls") if getattr(before, p) != getattr(after, p)]


def _moves_the_password(before: SourceUrl, after: SourceUrl) -> bool:
    weaker = _TLS_ORDER.index(after.tls) < _TLS_ORDER.index(before.tls)
    return weaker or any(getattr(before, p) != getattr(after, p) for p in TARGET_PARTS)


async def update(
    db: AsyncSession, source: DataSource, data: SourceUpdate, settings: Settings
) -> list[str]:
    """Apply the fields sent.

    A new URL without a password (and no `password`) keeps the stored password only while
    it names the same server, port, user, database and kind, with TLS no weaker: the stored
    password is never sent anywhere else.

    Returns:
        What changed (`name`, `description`, the URL's parts, `password`), never a value.
        A source sent a URL or a password is left unchecked: the caller checks it again.

    Raises:
        BadRequest: `password_required` when the URL names another target without a
            password; `password_lost` when no key opens the stored one.
        Conflict: the project has another source of the new name.
    """
    changed = []
    if data.name is not None and data.name != source.name:
        await _refuse_taken_name(db, source.project_id, data.name)
        source.name = data.name
        changed.append("name")
    if data.description is not None and data.description != source.description:
        source.description = data.description
        changed.append("description")
    if data.url is not None or data.password is not None:
        keyring = keyring_of(settings)
        before = parse(source.url)
        url = parse(data.url) if data.url is not None else before
        if data.password is not None:
            url = url.with_password(Secret(data.password))
        new_password = data.password is not None or bool(url.password)
        if not new_password and source.password_sealed:
            if _moves_the_password(before, url):
                raise BadRequest(
                    "Give the password again to point this source at another server, port, "
                    "user, database or kind, or to weaken its TLS: the stored password is only "
                    "ever sent where it was entered for.",
                    code="password_required",
                )
            url = url.with_password(_stored_password(source, keyring))
        changed += changed_parts(before, url) + (["password"] if new_password else [])
        _set_url(source, url, keyring)
    source.updated_at = utcnow()
    await db.flush()
    return sorted(set(changed))


def _stored_password(source: DataSource, keyring: Keyring) -> Secret:
    assert source.password_sealed is not None
    try:
        return keyring.open(source.password_sealed, str(source.id))
    except CannotDecrypt as exc:
        raise BadRequest(f"Send the password again: {exc}.", code="password_lost") from None


async def delete(db: AsyncSession, source: DataSource) -> None:
    await db.delete(source)
    await db.flush()


def display_url(source: DataSource) -> str:
    """The source's URL with `***` where its password goes, if it has one."""
    url = parse(source.url)
    return url.with_password(Secret("x")).display() if source.password_sealed else url.display()


def connection_of(source: DataSource, settings: Settings) -> SourceConnection:
    """The source decrypted and ready to connect.

    Raises:
        CannotDecrypt: its password was sealed with a key this server does not have.
    """
    url = parse(source.url)
    if source.password_sealed:
        url = url.with_password(keyring_of(settings).open(source.password_sealed, str(source.id)))
    return SourceConnection(name=source.name, url=url, reach=Reach.of(settings))


async def connections_of(
    db: AsyncSession, project_id: uuid.UUID, settings: Settings
) -> dict[str, SourceConnection]:
    """The project's usable sources by name: those whose last check found them reachable
    and safe (status ready); a password no key opens leaves its source out.

    Args:
        db: A database session.
        project_id: The project whose sources are wanted.
        settings: The app's settings (the secret keys, where sources may connect).
    """
    sources = await db.scalars(
        select(DataSource).where(DataSource.project_id == project_id, DataSource.status == "ready")
    )
    found: dict[str, SourceConnection] = {}
    for source in sources:
        try:
            found[source.name] = connection_of(source, settings)
        except CannotDecrypt:
            continue
    return found


async def catalog_of(db: AsyncSession, project_id: uuid.UUID) -> list[SourceCatalog]:
    """Every source of the project as the agent's prompt describes it (no secret in it):
    its kind, description, status, access, and its cached tables with the team's
    descriptions (all of it untrusted text to the model)."""
    sources = list(
        await db.scalars(
            select(DataSource).where(DataSource.project_id == project_id).order_by(DataSource.name)
        )
    )
    catalog = []
    for source in sources:
        tables = await dictionary.tables_of(db, source)
        catalog.append(
            SourceCatalog(
                name=source.name,
                kind=source.kind,
                description=source.description,
                access=source.access,
                status=source.status,
                tables=tables,
                truncated=source.schema_truncated,
            )
        )
    return catalog


async def reseal_all(db: AsyncSession, keyring: Keyring) -> tuple[int, list[str]]:
    """Seal every stored password again with the current key.

    Returns:
        How many were sealed again, and the sources (project id / name) whose password no
        known key opens (left as they are: their owners must enter it again).
    """
    resealed, lost = 0, []
    sources = await db.scalars(
        select(DataSource).where(DataSource.password_sealed.is_not(None)).order_by(DataSource.id)
    )
    for source in sources:
        assert source.password_sealed is not None
        if keyring.is_current(source.password_sealed):
            continue
        try:
            password = keyring.open(source.password_sealed, str(source.id))
        except CannotDecrypt:
            lost.append(f"{source.project_id}/{source.name}")
            continue
        source.password_sealed = keyring.seal(password, str(source.id))
        resealed += 1
    await db.flush()
    return resealed, lost
