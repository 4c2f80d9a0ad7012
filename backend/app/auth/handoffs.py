"""One-time records of a sign-on, in the database so any replica finds them: the state of a
sign-in at the provider (its nonce and PKCE verifier), and the code the browser trades for
a login. Each is found by the SHA-256 of its key and deleted as it is used: a replayed
state or code finds nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import security
from app.models import SignInHandoff
from app.models.base import utcnow

Kind = Literal["oidc_state", "login_code"]


async def put(db: AsyncSession, kind: Kind, payload: dict[str, Any], ttl: timedelta) -> str:
    """A new record; returns its key (256 random bits, never stored)."""
    # Expired records of any sign-in go as new ones come: the table stays small.
    await db.execute(delete(SignInHandoff).where(SignInHandoff.expires_at <= utcnow()))
    key = security.new_share_token()
    db.add(
        SignInHandoff(
            key_hash=security.hash_token(key),
            kind=kind,
            payload=payload,
            expires_at=utcnow() + ttl,
        )
    )
    await db.flush()
    return key


async def take(db: AsyncSession, kind: Kind, key: str) -> dict[str, Any] | None:
    """The record's payload, deleting it (None: unknown, used, expired or of another kind).
    The delete decides: of two requests with one key, only one deletes the row."""
    if not key or len(key) > 128:
        return None
    digest = security.hash_token(key)
    row = await db.get(SignInHandoff, digest)
    if row is None or row.kind != kind:
        return None
    payload, expired = dict(row.payload), row.expires_at <= utcnow()
    result = await db.execute(delete(SignInHandoff).where(SignInHandoff.key_hash == digest))
    if not getattr(result, "rowcount", 0) or expired:
        return None
    return payload
