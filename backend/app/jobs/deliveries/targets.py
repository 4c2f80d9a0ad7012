"""Where an alert may be delivered: a webhook URL's form (checked with the alert), and its
address (checked before every attempt) under the same outbound rules as data sources
(SOURCES_ALLOWED_HOSTS, app.sources.reach), with the workbench's own server added to what
is refused: never its own API, database, Redis or object store, never a link-local or
cloud-metadata address.
"""

from __future__ import annotations

import dataclasses
from urllib.parse import urlsplit

from app.config import Settings
from app.sources.failures import FailureKind, SourceFailure
from app.sources.reach import Reach


class DeliveryFailed(Exception):
    """A delivery that did not go out: the sentence says why (never a secret). `retry` is
    False when trying again cannot help (an address the rules refuse, a malformed URL)."""

    def __init__(self, sentence: str, *, retry: bool = True) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.retry = retry


def check_webhook_url_form(url: str) -> str:
    """The URL, stripped, when it is an http(s) URL with a host and no credentials in it.

    Raises:
        ValueError: a sentence saying what is wrong (pydantic shows it as a 422).
    """
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError("a webhook URL starts with https:// (or http://)")
    if not parts.hostname:
        raise ValueError("a webhook URL needs a host")
    if parts.username or parts.password:
        raise ValueError(
            "a webhook URL may not carry a user name or password; the messages are signed "
            "with the webhook's secret instead"
        )
    try:
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError:
        raise ValueError("the webhook URL's port is not a number") from None
    return url


def webhook_reach(settings: Settings) -> Reach:
    """Sources' outbound rules, with the workbench's own HTTP server refused too."""
    reach = Reach.of(settings)
    return dataclasses.replace(reach, services=(*reach.services, (settings.HOST, settings.PORT)))


def _webhook_sentence(failure: SourceFailure) -> str:
    return (
        failure.sentence.replace(
            "the workbench's own database, Redis or object store",
            "the workbench itself (its server, database, Redis or object store)",
        )
        .replace("which sources may not reach", "which webhooks may not reach")
        .replace("does not allow sources on", "does not allow webhooks to")
        .replace("is not an address a source can use", "is not an address a webhook can use")
    )


async def webhook_address(settings: Settings, url: str) -> str:
    """The checked address to connect to for the webhook `url` (its host resolved once,
    every address checked).

    Raises:
        DeliveryFailed: the URL is malformed or its host is not one webhooks may reach (not
            to be retried), or its name does not resolve (retried).
    """
    try:
        url = check_webhook_url_form(url)
    except ValueError as exc:
        raise DeliveryFailed(f"The webhook URL cannot be used: {exc}.", retry=False) from None
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        return await webhook_reach(settings).address(parts.hostname or "", port)
    except SourceFailure as failure:
        retry = failure.kind == FailureKind.unknown_host
        raise DeliveryFailed(_webhook_sentence(failure), retry=retry) from None
