"""Accounts and login settings: the first administrator, the key that signs login tokens,
how long a token lasts, the bounds on failed logins, invites, and whether passwords sign in.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.config.sections import Section, doc


class AuthSettings(BaseModel):
    """Section "Accounts and login": the first administrator, tokens and failed logins."""

    ADMIN_EMAIL: str | None = Field(
        None,
        description="Email of the first administrator, created once when there are no users "
        "(set with `ADMIN_PASSWORD`, or neither); changing it later changes nothing.",
        examples=["admin@example.com"],
        json_schema_extra=doc(
            Section.auth, unset="`admin@example.com` with a generated password, printed once"
        ),
    )
    ADMIN_PASSWORD: str | None = Field(
        None,
        description="Password of the first administrator, 8 characters or more (set with "
        "`ADMIN_EMAIL`, or neither). Choose your own before exposing the workbench.",
        json_schema_extra=doc(Section.auth, secret=True),
    )
    SECRET_KEY: str | None = Field(
        None,
        description="Key that signs login tokens; required in production, 32 characters or "
        "more, the same on every backend, e.g. "
        "`python -c 'import secrets; print(secrets.token_urlsafe(48))'`.",
        json_schema_extra=doc(
            Section.auth,
            unset="a random key kept in `DATA_DIR/.secret_key` (development only)",
            secret=True,
        ),
    )
    ACCESS_TOKEN_TTL_MINUTES: int = Field(
        60 * 24,
        ge=1,
        description="How long a login token lasts, in minutes (one day).",
        json_schema_extra=doc(Section.auth),
    )
    LOGIN_MAX_FAILURES: int = Field(
        10,
        ge=1,
        description="Failed logins one client address may make at one account within "
        "`LOGIN_WINDOW_SECONDS`; past it every login from that address to that account (even "
        "with the right password) answers 429 until the window ends. One address may fail "
        "five times as many, across accounts. Failures from elsewhere never lock an "
        "account's owner out. Shared links are guarded the same way: an address that asks "
        "for five times as many links that open nothing (unknown, revoked or expired) "
        "within the window gets 429 for every link until it ends.",
        json_schema_extra=doc(Section.auth),
    )
    LOGIN_WINDOW_SECONDS: int = Field(
        300,
        ge=1,
        description="Length of that window in seconds, counted from the first failure.",
        json_schema_extra=doc(Section.auth),
    )
    PASSWORD_LOGIN: bool = Field(
        True,
        description="Whether people sign in with an email and password. `false` (with single "
        "sign-on set up) leaves only the provider's button: `/auth/login` answers 403 and "
        "the login page hides the form; invites still let a person set a password, which "
        "then only serves API clients once this is true again.",
        json_schema_extra=doc(Section.auth),
    )
    INVITE_DAYS: int = Field(
        7,
        ge=1,
        description="How many days an invite link works when its maker does not say.",
        json_schema_extra=doc(Section.auth),
    )
    INVITE_MAX_DAYS: int = Field(
        30,
        ge=1,
        description="The longest an invite link may work, in days (`expires_in_days` above "
        "it answers 422).",
        json_schema_extra=doc(Section.auth),
    )
