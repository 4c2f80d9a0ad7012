"""Email settings: the SMTP server that sends invites (none: the invite's link is shown to
whoever made it, to pass on themselves)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.config.sections import Section, doc


class MailSettings(BaseModel):
    """Section "Email": the SMTP server invites are sent through."""

    SMTP_HOST: str | None = Field(
        None,
        description="The SMTP server that sends invites, e.g. `smtp.example.com`.",
        json_schema_extra=doc(
            Section.mail, unset="no email is sent: an invite's link is shown to its maker"
        ),
    )
    SMTP_PORT: int = Field(
        587, ge=1, le=65535, description="Its port.", json_schema_extra=doc(Section.mail)
    )
    SMTP_USERNAME: str | None = Field(
        None,
        description="The user to log in to the SMTP server as.",
        json_schema_extra=doc(Section.mail, unset="no SMTP login"),
    )
    SMTP_PASSWORD: str | None = Field(
        None,
        description="Its password.",
        json_schema_extra=doc(Section.mail, secret=True),
    )
    SMTP_FROM: str = Field(
        "workbench@localhost",
        description="The sender of the emails, e.g. `Workbench <workbench@example.com>`.",
        json_schema_extra=doc(Section.mail),
    )
    SMTP_STARTTLS: bool = Field(
        True,
        description="Whether to switch to TLS with STARTTLS before logging in (port 587). "
        "`false` for a server on the same network that offers no TLS.",
        json_schema_extra=doc(Section.mail),
    )
    SMTP_SSL: bool = Field(
        False,
        description="Whether to speak TLS from the start (port 465) instead of STARTTLS.",
        json_schema_extra=doc(Section.mail),
    )
    SMTP_TIMEOUT_SECONDS: float = Field(
        10,
        gt=0,
        le=120,
        description="How long to wait for the SMTP server at each step before the email "
        "counts as failed (the invite says so; its link still works).",
        json_schema_extra=doc(Section.mail),
    )
