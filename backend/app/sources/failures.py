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
    # Nothing that speaks the database's protocol answered: a closed port, a silent one, a
    # port that speaks something else, a name that does not resolve (one sentence for all).
    no_answer = "no_answer"
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


NO_ANSWER = "No database answered at that address."


def no_answer(reason: str) -> SourceFailure:
    """The one failure for every address where no database answered (a closed port, a
    silent one, one that speaks another protocol or refuses TLS, a name that does not
    resolve): one sentence whatever was there, so checks cannot map the network around the
    server. `reason` goes to the server's log only."""
    return SourceFailure(FailureKind.no_answer, NO_ANSWER, reason=reason)


# user:password@ in a DSN, and password=… / pwd=… key-value pairs.
_DSN_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@\s]*@", re.IGNORECASE)
_KEY_VALUE = re.compile(
    r"(?P<head>\b(?:password|passwd|pwd)\s*[=:]\s*)('[^']*'|\"[^\"]*\"|\S+)", re.I
)


def scrub(text: str, secrets: Iterable[Secret] = ()) -> str:
    """`text` with every given secret, and anything shaped like a password in a DSN or a
    `password=…` pair, replaced by `***`."""
    for secret in secrets:
        if secret:
            text = text.replace(secret.reveal(), MASK)
    text = _DSN_PASSWORD.sub(lambda m: f"{m['head']}{MASK}@", text)
    return _KEY_VALUE.sub(lambda m: f"{m['head']}{MASK}", text)


def network_failure(exc: BaseException, where: str) -> SourceFailure | None:
    """The failure for an error of the network's own while connecting to `where`
    (host:port), if `exc` is one: a TLS certificate or handshake refused (a database had
    answered first) says so; anything else is `no_answer`."""
    import ssl  # here: only this function needs it

    if isinstance(exc, ssl.SSLCertVerificationError):
        return SourceFailure(
            FailureKind.tls,
            f"The TLS certificate of {where} was not accepted ({exc.verify_message}): use the "
            "host name the certificate was issued for, or a weaker TLS mode.",
        )
    if isinstance(exc, ssl.SSLError):
        return SourceFailure(FailureKind.tls, f"TLS with {where} failed: {exc.reason or exc}.")
    if isinstance(exc, OSError):  # refused, unreachable, reset, timed out
        return no_answer(f"{where}: {exc!r}")
    return None
