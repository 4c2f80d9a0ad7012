"""Email through SMTP (invites, job alerts), off the event loop: smtplib talks to the server
in a worker thread, a few at a time, so a slow or unreachable server never holds a request or
the loop; past a bounded backlog an email fails at once (with a sentence) rather than queue
without end."""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import make_msgid

from app.config import Settings

# Emails in the SMTP server's hands at once, and how many more may wait for a turn.
CONCURRENCY = 2
BACKLOG = 100


class MailFailed(Exception):
    """The email was not sent; the message is a sentence for whoever sent it."""


class MailSender:
    """Sends one email at a time per worker thread, at most CONCURRENCY at once."""

    def __init__(self, concurrency: int = CONCURRENCY, backlog: int = BACKLOG) -> None:
        self._slots = asyncio.Semaphore(concurrency)
        self._backlog = backlog
        self._waiting = 0

    async def send(self, settings: Settings, to: str, subject: str, text: str) -> None:
        """Send a plain-text email.

        Raises:
            MailFailed: No SMTP server is configured, too many emails wait already, or the
                server refused or did not answer (the sentence says which, never a secret).
        """
        message = EmailMessage()
        message["From"] = settings.SMTP_FROM
        message["To"] = to
        message["Subject"] = subject
        message["Message-ID"] = make_msgid(domain="workbench")
        message.set_content(text)
        await self.send_message(settings, message)

    async def send_message(self, settings: Settings, message: EmailMessage) -> None:
        """Send a message made by the caller (its From, To and Subject set), e.g. one with a
        chart inline.

        Raises:
            MailFailed: as `send`.
        """
        if not settings.SMTP_HOST:
            raise MailFailed("No SMTP server is configured (SMTP_HOST).")
        if self._waiting >= self._backlog:
            raise MailFailed("Too many emails are waiting to be sent; try again later.")
        self._waiting += 1
        try:
            async with self._slots:
                await asyncio.to_thread(_deliver, settings, message)
        finally:
            self._waiting -= 1


def _deliver(settings: Settings, message: EmailMessage) -> None:
    host, port, timeout = (
        settings.SMTP_HOST or "",
        settings.SMTP_PORT,
        settings.SMTP_TIMEOUT_SECONDS,
    )
    try:
        if settings.SMTP_SSL:
            client: smtplib.SMTP = smtplib.SMTP_SSL(
                host, port, timeout=timeout, context=ssl.create_default_context()
            )
        else:
            client = smtplib.SMTP(host, port, timeout=timeout)
        with client:
            if settings.SMTP_STARTTLS and not settings.SMTP_SSL:
                client.starttls(context=ssl.create_default_context())
            if settings.SMTP_USERNAME:
                client.login(settings.SMTP_USERNAME, settings.SMTP_PASSWORD or "")
            client.send_message(message)
    except smtplib.SMTPAuthenticationError:
        raise MailFailed(
            f"The SMTP server {host}:{port} refused the login of SMTP_USERNAME."
        ) from None
    except smtplib.SMTPNotSupportedError:
        raise MailFailed(
            f"The SMTP server {host}:{port} does not offer STARTTLS; set SMTP_STARTTLS=false "
            "if it is on a trusted network."
        ) from None
    except smtplib.SMTPRecipientsRefused:
        raise MailFailed(f"The SMTP server refused the address {message['To']}.") from None
    except smtplib.SMTPException as exc:
        raise MailFailed(f"The SMTP server {host}:{port} refused the email: {_said(exc)}") from None
    except (OSError, ssl.SSLError) as exc:
        raise MailFailed(
            f"Could not reach the SMTP server {host}:{port}: {exc.strerror or exc}."
        ) from None


def _said(exc: smtplib.SMTPException) -> str:
    """What the server answered (its code and text), cut short."""
    code = getattr(exc, "smtp_code", None)
    error = getattr(exc, "smtp_error", b"")
    text = error.decode(errors="replace") if isinstance(error, bytes) else str(error or exc)
    return (f"{code} " if code else "") + " ".join(text.split())[:200]
