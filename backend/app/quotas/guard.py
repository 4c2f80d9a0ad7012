"""The quotas an upload must stay within, and the sentence that refuses one past them.

An upload is charged to its project and to the user who uploads it. It is measured three
times: before its bytes stream in (against the declared length), while they stream (the
room left bounds them), and once more in the transaction that records it, after taking
the project's row (and with it, on SQLite, the database's write lock) and the user's: two
uploads at the same moment are counted one after the other, and the second past the quota
is refused, its bytes deleted and no row kept.
"""

from __future__ import annotations

import dataclasses
import uuid

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.agent.prompting import human_size
from app.config import Settings
from app.errors import PayloadTooLarge
from app.models import File, FileVersion, Project, User
from app.models.base import utcnow
from app.quotas import usage
from app.quotas.usage import StorageUsage

MIB = 1 << 20


class StorageQuotaExceeded(PayloadTooLarge):
    """Storing this would take a project or a user past their storage quota."""

    code = "storage_quota_exceeded"


def user_quota_bytes(settings: Settings, user: User) -> int | None:
    """The user's quota in bytes (their own, else the server's); None: unlimited."""
    mb = user.storage_quota_mb
    return (settings.USER_STORAGE_QUOTA_MB if mb is None else mb) * MIB or None


def project_quota_bytes(settings: Settings) -> int | None:
    """A project's quota in bytes; None: unlimited."""
    return settings.PROJECT_STORAGE_QUOTA_MB * MIB or None


async def project_usage(
    db: AsyncSession, settings: Settings, project_id: uuid.UUID
) -> StorageUsage:
    quota = project_quota_bytes(settings)
    return await usage.of_project(db, project_id, quota, settings.previews_cache)


async def user_usage(db: AsyncSession, settings: Settings, user: User) -> StorageUsage:
    quota = user_quota_bytes(settings, user)
    return await usage.of_user(db, user.id, quota, settings.previews_cache)


def _count(number: int, word: str) -> str:
    return f"{number:,} {word}{'' if number == 1 else 's'}"


def _uses(used: StorageUsage, *, mine: bool) -> str:
    """What fills the storage, in a clause: files and versions, artifacts and snapshots."""
    files = f"{human_size(used.files_bytes)} is used by {_count(used.files, 'file')} "
    files += f"({_count(used.versions, 'version')})"
    if mine:
        files += f" you uploaded in {_count(used.projects, 'project')}"
    made = human_size(used.artifacts_bytes + used.snapshots_bytes)
    of_runs = "the artifacts and snapshots of your questions" if mine else "artifacts and snapshots"
    copies = f", {human_size(used.copies_bytes)} by preview copies" if used.copies_bytes else ""
    return f"{files}, {made} by {of_runs}{copies}"


def project_refusal(name: str, used: StorageUsage) -> StorageQuotaExceeded:
    quota = human_size(used.quota_bytes or 0)
    return StorageQuotaExceeded(
        f"This upload would take project '{name}' past its {quota} storage quota: "
        f"{_uses(used, mine=False)}. Delete files or old versions, or ask an admin to raise "
        "it (PROJECT_STORAGE_QUOTA_MB)."
    )


def user_refusal(used: StorageUsage) -> StorageQuotaExceeded:
    quota = human_size(used.quota_bytes or 0)
    return StorageQuotaExceeded(
        f"This upload would take your storage past its {quota} quota: {_uses(used, mine=True)}. "
        "Delete files or old versions, or ask an admin to raise your quota."
    )


async def copy_refused(db: AsyncSession, settings: Settings, file: File) -> str | None:
    """Why a typed copy of the file (as big as the file, at most) would not fit in its
    project's or its uploader's quota, or None when it fits. Previews never fail for it:
    their pages read the file's text instead (app.files.previewing)."""
    used = await project_usage(db, settings, file.project_id)
    if used.room_bytes is not None and file.size > used.room_bytes:
        return (
            f"Pages of {file.name} are read from its text, more slowly: a typed copy would "
            "take its project past its storage quota."
        )
    uploader = await db.scalar(
        select(User)
        .join(FileVersion, FileVersion.uploaded_by == User.id)
        .where(FileVersion.file_id == file.id, FileVersion.version == file.version)
    )
    if uploader is not None:
        mine = await user_usage(db, settings, uploader)
        if mine.room_bytes is not None and file.size > mine.room_bytes:
            return (
                f"Pages of {file.name} are read from its text, more slowly: a typed copy would "
                "take its uploader past their storage quota."
            )
    return None


@dataclasses.dataclass
class UploadQuota:
    """The project's and the uploader's quotas, as an upload into the project meets them."""

    settings: Settings
    project: Project
    user: User
    project_used: StorageUsage | None = None
    user_used: StorageUsage | None = None

    async def measure(self, db: AsyncSession) -> None:
        self.project_used = await project_usage(db, self.settings, self.project.id)
        self.user_used = await user_usage(db, self.settings, self.user)

    def room(self) -> int | None:
        """Bytes the upload may have, as last measured (None: no limit)."""
        rooms = [u.room_bytes for u in (self.project_used, self.user_used) if u is not None]
        bounded = [room for room in rooms if room is not None]
        return min(bounded) if bounded else None

    def refuse(self, adding: int) -> None:
        """Refuse `adding` more bytes if they do not fit in the room last measured.

        Raises:
            StorageQuotaExceeded: naming the quota and what uses it.
        """
        project, user = self.project_used, self.user_used
        if project is not None and project.room_bytes is not None and adding > project.room_bytes:
            raise project_refusal(self.project.name, project)
        if user is not None and user.room_bytes is not None and adding > user.room_bytes:
            raise user_refusal(user)

    async def settle(self, db: AsyncSession, size: int, new_file: bool) -> None:
        """In the transaction that recorded the upload (its version flushed, old versions
        pruned): take the project's and the user's rows, so concurrent uploads are counted
        one after the other, and refuse it if either is now past its quota.

        Raises:
            StorageQuotaExceeded: the transaction must roll back and the bytes be deleted.
        """
        await db.execute(
            update(Project).where(Project.id == self.project.id).values(updated_at=utcnow())
        )
        # FOR NO KEY UPDATE: the new version's foreign key holds a KEY SHARE lock on this
        # row, which FOR UPDATE would wait for (two uploads would deadlock).
        await db.execute(
            select(User.id).where(User.id == self.user.id).with_for_update(key_share=True)
        )
        await self.measure(db)
        project, user = self.project_used, self.user_used
        if project is not None and _over(project):
            raise project_refusal(self.project.name, _before(project, size, new_file))
        if user is not None and _over(user):
            raise user_refusal(_before(user, size, new_file))


def _over(used: StorageUsage) -> bool:
    return used.quota_bytes is not None and used.used_bytes > used.quota_bytes


def _before(used: StorageUsage, size: int, new_file: bool) -> StorageUsage:
    """The usage without the upload just counted in it (what the refusal describes)."""
    return dataclasses.replace(
        used,
        files=used.files - (1 if new_file else 0),
        versions=used.versions - 1,
        files_bytes=used.files_bytes - size,
    )
