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
    host_unknown = "host_unknown"
    refused = "connection_refused"
    timeout = "timeout"
    wrong_password = "wrong_password"
    unknown_database = "unknown_database"
    tls = "tls"
    missing_file = "missing_file"
    unsafe_role = "unsafe_role"
    key_missing = "key_missing"
    other = "other"


class SourceFailure(Exception):
    """A source cannot be reached or used; `str()` is a sentence with no credential in it."""

    def __init__(self, kind: FailureKind, sentence: str):
        super().__init__(sentence)
        self.kind = kind
        self.sentence = sentence


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


def network_failure(exc: BaseException, where: str, timeout: float) -> SourceFailure | None:
    """The sentence for a failure to open a connection to `where` (host:port), if `exc` is
    one of the network's own (not a database's refusal)."""
    import ssl  # here: only this function needs it

    if isinstance(exc, TimeoutError):
        return SourceFailure(
            FailureKind.timeout,
            f"{where} did not answer within {timeout:g} s: the host may be down, or a firewall "
            "drops the connection.",
        )
    if isinstance(exc, ssl.SSLCertVerificationError):
        return SourceFailure(
            FailureKind.tls,
            f"The TLS certificate of {where} was not accepted ({exc.verify_message}): use the "
            "host name the certificate was issued for, or a weaker TLS mode.",
        )
    if isinstance(exc, ssl.SSLError):
        return SourceFailure(FailureKind.tls, f"TLS with {where} failed: {exc.reason or exc}.")
    if isinstance(exc, ConnectionRefusedError):
        return SourceFailure(
            FailureKind.refused,
            f"Nothing accepts connections at {where} (connection refused): is the database "
            "running there, on that port?",
        )
    if isinstance(exc, OSError):
        return SourceFailure(
            FailureKind.refused, f"{where} cannot be reached: {exc.strerror or exc}."
        )
    return None
