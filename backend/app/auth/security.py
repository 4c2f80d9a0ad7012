"""Passwords, login tokens (signed JWTs that expire) and API tokens (random, stored hashed)."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import secrets
import uuid
from datetime import UTC, datetime, timedelta

import jwt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

API_TOKEN_PREFIX = "wb_"
_ALGORITHM = "HS256"
# argon2's recommended cost (RFC 9106's second profile: 64 MiB, 3 passes, 4 lanes).
_STANDARD = PasswordHasher()
# Its lowest cost, for ENVIRONMENT=test only: a test suite makes and checks thousands of
# passwords, and nothing it protects is real. A hash records its own cost, so either hasher
# verifies the other's hashes.
_TEST = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
_hasher = _STANDARD


@functools.cache
def _dummy_hash(hasher: PasswordHasher) -> str:
    """Verifying against this keeps a login for an unknown email as slow as a wrong password."""
    return hasher.hash(secrets.token_hex(16))


def use_test_cost(enabled: bool) -> None:
    """Hash passwords at argon2's lowest cost (ENVIRONMENT=test) or its standard one."""
    global _hasher
    _hasher = _TEST if enabled else _STANDARD


class TokenExpired(Exception):
    pass


class TokenInvalid(Exception):
    pass


async def hash_password(password: str) -> str:
    """The password's argon2 hash, made in a worker thread: argon2 spends tens of
    milliseconds of CPU by design (seconds on a busy machine), which would hold the event
    loop and every other request with it; it releases the GIL while it works."""
    return await asyncio.to_thread(_hasher.hash, password)


async def verify_password(password: str, password_hash: str | None) -> bool:
    """Whether the password matches the hash (in a worker thread, like hash_password)."""
    return await asyncio.to_thread(_verify, password, password_hash)


def _verify(password: str, password_hash: str | None) -> bool:
    try:
        dummy = _dummy_hash(_hasher)
        return _hasher.verify(password_hash or dummy, password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


def create_access_token(
    user_id: uuid.UUID, key: str, ttl: timedelta, version: int = 0
) -> tuple[str, datetime]:
    """A login token for the user's current login version (see User.login_version)."""
    expires = datetime.now(UTC) + ttl
    claims = {
        "sub": str(user_id),
        "exp": expires,
        "iat": datetime.now(UTC),
        "typ": "access",
        "ver": version,
    }
    return jwt.encode(claims, key, algorithm=_ALGORITHM), expires


def read_access_token(token: str, key: str) -> tuple[uuid.UUID, int]:
    """The user id and login version a token was issued for."""
    try:
        claims = jwt.decode(
            token, key, algorithms=[_ALGORITHM], options={"require": ["exp", "sub"]}
        )
    except jwt.ExpiredSignatureError:
        raise TokenExpired from None
    except jwt.PyJWTError:
        raise TokenInvalid from None
    if claims.get("typ") != "access":
        raise TokenInvalid
    version = claims.get("ver", 0)
    if not isinstance(version, int):
        raise TokenInvalid
    try:
        return uuid.UUID(claims["sub"]), version
    except ValueError:
        raise TokenInvalid from None


def new_api_token() -> str:
    return API_TOKEN_PREFIX + secrets.token_urlsafe(32)


def new_share_token() -> str:
    """The secret of a shared link: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """What is stored of an API token or a shared link's token (their SHA-256)."""
    # They carry 256 random bits: a fast hash is enough and keeps lookups indexable.
    return hashlib.sha256(token.encode()).hexdigest()


def generate_password() -> str:
    return secrets.token_urlsafe(18)
