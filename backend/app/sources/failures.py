"""Why a source could not be reached or used: a kind a program can act on and a sentence a
person can, with the credentials scrubbed out of whatever a driver said."""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum

from app.sources.credentials import MASK, Secret


class FailureKind(StrEnum):
    host_not_allowed = "host_not_allowed"
    file_not_allowed = "file_not_allowed"
    # Nothing answered at the address within the connect timeout (a blackholed address).
    no_answer = "no_answer"
    # The address refused the connection (a closed port).
    refused = "refused"
    # Something answered, but not the database the URL names (Redis, HTTP, another one).
    wrong_service = "wrong_service"
    # The host name does not resolve.
    unknown_host = "unknown_host"
    timeout = "timeout"
    wrong_password = "wrong_password"
    unknown_database = "unknown_database"
    tls = "tls"
    missing_file = "missing_file"
    unsafe_role = "unsafe_role"
    key_missing = "key_missing"
    other = "other"


class SourceFailure(Exception):
    """A source cannot be reached or used; `str()` is a sentence with no credential in it.
    `reason` says more, for the server's log only (why nothing answered)."""

    def __init__(self, kind: FailureKind, sentence: str, reason: str | None = None):
        super().__init__(sentence)
        self.kind = kind
        self.sentence = sentence
        self.reason = reason or sentence


def nothing_answered(where: str, seconds: float, reason: str | None = None) -> SourceFailure:
    """Nothing answered at `where` (host:port) within the connect timeout."""
    return SourceFailure(
        FailureKind.no_answer, f"Nothing answered at {where} within {seconds:g} s.", reason
    )


def refused(where: str, reason: str | None = None) -> SourceFailure:
    """The address answered the connection with a refusal: no server listens there."""
    return SourceFailure(FailureKind.refused, f"{where} refused the connection.", reason)


def wrong_service(where: str, product: str, reason: str | None = None) -> SourceFailure:
    """Something accepted the connection but did not speak `product`'s protocol back."""
    return SourceFailure(
        FailureKind.wrong_service, f"Something answers at {where}, but not {product}.", reason
    )


def unknown_host(host: str, reason: str | None = None) -> SourceFailure:
    return SourceFailure(
        FailureKind.unknown_host, f"The host name {host} does not resolve.", reason
    )


# user:password@ in a DSN, and password=… / pwd=… key-value pairs; MySQL's own "(using
# password: YES)" says whether one was sent, not what it was, and stays whole.
_DSN_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@\s]*@", re.IGNORECASE)
_KEY_VALUE = re.compile(
    r"(?P<head>\b(?:password|passwd|pwd)\s*[=:]\s*)(?!(?:YES|NO)\))('[^']*'|\"[^\"]*\"|\S+)",
    re.I,
)


def scrub(text: str, secrets: Iterable[Secret] = ()) -> str:
    """`text` with every given secret, and anything shaped like a password in a DSN or a
    `password=…` pair, replaced by `***`."""
    for secret in secrets:
        if secret:
            text = text.replace(secret.reveal(), MASK)
    text = _DSN_PASSWORD.sub(lambda m: f"{m['head']}{MASK}@", text)
    return _KEY_VALUE.sub(lambda m: f"{m['head']}{MASK}", text)
