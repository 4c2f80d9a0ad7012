"""`workbench admin …`: recovery on the server's own machine, straight to its database.

Unlike the rest of the CLI this does not go through the API (a lost admin password is
exactly when the API cannot be used): it reads the server's settings the way the server
does (the environment and `.env`: DATABASE_URL, or DATA_DIR for the embedded database).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.output import echo

if TYPE_CHECKING:  # the server's code is imported only when an admin command runs
    from sqlalchemy.ext.asyncio import AsyncSession

    from app.config import Settings
    from app.models import User

admin = typer.Typer(
    help="Recover accounts and rotate keys on the server's own machine (uses its settings and "
    "database).",
    no_args_is_help=True,
)

MIN_PASSWORD = 8


def _settings() -> Settings:
    from pydantic import ValidationError

    from app.config import Settings

    try:
        settings = Settings()
    except ValidationError as exc:
        raise typer.BadParameter(
            "the server's settings are not valid: "
            + "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        ) from None
    if settings.is_embedded_db:
        path = Path(settings.database_url.split("///", 1)[1])
        if not path.exists():
            echo(
                f"No workbench database at {path}. Run this where the workbench runs, with "
                "its DATA_DIR (or DATABASE_URL) set as the server has it.",
                error=True,
            )
            raise typer.Exit(1)
    return settings


@admin.command("reset-password")
def reset_password(
    email: Annotated[str, typer.Argument(help="The account's email")],
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the new password from standard input")
    ] = False,
    enable: Annotated[
        bool, typer.Option("--enable", help="Also enable the account if it was disabled")
    ] = False,
) -> None:
    """Set a new password for an account (e.g. a lost admin password). Its logins end and
    its API tokens are revoked."""
    normalised = _email(email)
    settings = _settings()
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = typer.prompt("New password", hide_input=True, confirmation_prompt=True)
    if len(password) < MIN_PASSWORD:
        echo(f"The password needs at least {MIN_PASSWORD} characters.", error=True)
        raise typer.Exit(2)
    outcome = asyncio.run(_reset(settings, normalised, password, enable))
    echo(outcome.message)
    if not outcome.found:
        raise typer.Exit(1)


@admin.command("revoke-tokens")
def revoke_tokens(email: Annotated[str, typer.Argument(help="The account's email")]) -> None:
    """Revoke every API token of an account (e.g. one that leaked), leaving the account
    enabled and its password as it is."""
    normalised = _email(email)
    outcome = asyncio.run(_revoke(_settings(), normalised))
    echo(outcome.message)
    if not outcome.found:
        raise typer.Exit(1)


@admin.command("storage-quota")
def storage_quota(
    email: Annotated[str, typer.Argument(help="The account's email")],
    mb: Annotated[
        int | None,
        typer.Argument(help="Their storage quota in MiB (0: unlimited); left out: show it", min=0),
    ] = None,
    default: Annotated[
        bool, typer.Option("--default", help="Back to the server's USER_STORAGE_QUOTA_MB")
    ] = False,
) -> None:
    """Show or set an account's storage quota: what the files they upload, and the artifacts
    and snapshots of their questions, may fill in all (USER_STORAGE_QUOTA_MB otherwise)."""
    normalised = _email(email)
    if default and mb is not None:
        raise typer.BadParameter("give a quota or --default, not both")
    outcome = asyncio.run(_quota(_settings(), normalised, mb, default))
    typer.echo(outcome.message)
    if not outcome.found:
        raise typer.Exit(1)


@admin.command("reencrypt-sources")
def reencrypt_sources() -> None:
    """Encrypt every data source's password, and the jobs' webhook secrets and share links,
    again with the current SECRET_KEY (after changing it, with the old one listed in
    SOURCES_PREVIOUS_SECRET_KEYS)."""
    (resealed, jobs), lost = asyncio.run(_reseal(_settings()))
    echo(
        f"Encrypted {resealed} source password{'' if resealed == 1 else 's'} again "
        "with the current key."
    )
    echo(
        f"Encrypted {jobs} job secret{'' if jobs == 1 else 's'} (webhook secrets, share "
        "links) again with the current key."
    )
    if lost:
        echo(
            f"{len(lost)} cannot be decrypted with any key given (their owners must enter the "
            f"password or the webhook's secret again): {', '.join(lost)}",
            error=True,
        )
        raise typer.Exit(1)


async def _reseal(settings: Settings) -> tuple[tuple[int, int], list[str]]:
    from app.db import create_engine, session_factory
    from app.jobs import reseal
    from app.sources import service

    engine = create_engine(settings.database_url, pool_size=1, max_overflow=0)
    try:
        async with session_factory(engine)() as db:
            keyring = service.keyring_of(settings)
            sources, lost = await service.reseal_all(db, keyring)
            jobs, jobs_lost = await reseal.reseal_all(db, keyring)
            await db.commit()
            return (sources, jobs), lost + jobs_lost
    finally:
        await engine.dispose()


def _email(email: str) -> str:
    from app.auth.schemas import normalise_email

    try:
        return normalise_email(email)
    except ValueError:
        raise typer.BadParameter(f"{email!r} is not an email address") from None


def _tokens(count: int) -> str:
    return f"{count} API token{'' if count == 1 else 's'}"


class _Outcome:
    def __init__(self, found: bool, message: str):
        self.found = found
        self.message = message


async def _with_user(
    settings: Settings, email: str, change: Callable[[AsyncSession, User], Awaitable[str]]
) -> _Outcome:
    """Apply `change` to the account with this email and commit; its sentence, or why not."""
    from sqlalchemy import select

    from app.db import create_engine, session_factory
    from app.models import User

    engine = create_engine(settings.database_url, pool_size=1, max_overflow=0)
    try:
        async with session_factory(engine)() as db:
            user = (await db.scalars(select(User).where(User.email == email))).one_or_none()
            if user is None:
                known = list(await db.scalars(select(User.email).order_by(User.email).limit(20)))
                return _Outcome(
                    False,
                    f"No account {email} here. Accounts: {', '.join(known) or 'none'}.",
                )
            message = await change(db, user)
            await db.commit()
            return _Outcome(True, message)
    finally:
        await engine.dispose()


async def _reset(settings: Settings, email: str, password: str, enable: bool) -> _Outcome:
    from app.auth import service as auth_service

    async def change(db: AsyncSession, user: User) -> str:
        revoked = await auth_service.set_password(db, user, password)
        note = ""
        if user.disabled and enable:
            user.disabled_at = None
            note = " The account is enabled again."
        elif user.disabled:
            note = " The account is still disabled (add --enable to enable it)."
        return (
            f"The password of {email} is reset; earlier logins of it are signed out and "
            f"{_tokens(revoked)} revoked.{note}"
        )

    return await _with_user(settings, email, change)


async def _revoke(settings: Settings, email: str) -> _Outcome:
    from app.auth import service as auth_service

    async def change(db: AsyncSession, user: User) -> str:
        revoked = await auth_service.revoke_all_api_tokens(db, user)
        return f"Revoked {_tokens(revoked)} of {email}; the account and its password are unchanged."

    return await _with_user(settings, email, change)


async def _quota(settings: Settings, email: str, mb: int | None, default: bool) -> _Outcome:
    from app.agent.prompting import human_size
    from app.quotas import guard

    async def change(db: AsyncSession, user: User) -> str:
        if default or mb is not None:
            user.storage_quota_mb = None if default else mb
            await db.flush()
        used = await guard.user_usage(db, settings, user)
        quota = "unlimited" if used.quota_bytes is None else human_size(used.quota_bytes)
        whose = "the server's" if user.storage_quota_mb is None else "their own"
        return (
            f"{email}: storage quota {quota} ({whose}); {human_size(used.used_bytes)} used "
            f"by {used.versions} file version(s), artifacts and snapshots."
        )

    return await _with_user(settings, email, change)


if __name__ == "__main__":
    admin()
