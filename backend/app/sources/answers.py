"""What answered at a source's address when a driver could not connect: nothing within the
connect timeout, a refusal, or something that is not the database the URL names (Redis, an
HTTP server, the other kind of database). Said as it is, so the person who typed the URL can
fix it; which addresses may be tried at all is app.sources.reach's job, and how often the
source checks' rate limit's."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ssl

from app.sources.failures import (
    FailureKind,
    SourceFailure,
    nothing_answered,
    refused,
    wrong_service,
)

# How long the second look at a silent address may take: the driver already waited the
# whole connect timeout, this only tells "no connection" from "connected, then silence".
PROBE_SECONDS = 2.0
_UNREACHABLE = {errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN}


async def _accepts(address: str, port: int, seconds: float) -> bool | None:
    """Whether a TCP connection to address:port opens (True), is refused (False), or
    nothing answers within `seconds` (None)."""
    try:
        async with asyncio.timeout(seconds):
            _, writer = await asyncio.open_connection(address, port)
    except ConnectionRefusedError:
        return False
    except (TimeoutError, OSError):
        return None
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()
    return True


async def network_failure(
    exc: BaseException, address: str, port: int, where: str, product: str, seconds: float
) -> SourceFailure | None:
    """The failure for an error of the network's own while connecting to `where`
    (host:port, reached at `address`), if `exc` is one; None for anything else.

    A TLS certificate or handshake refused says so; a refusal, a silence and a server of
    another kind each say what they are. A timeout is looked at again: if a plain TCP
    connection opens, something is there that did not speak `product` back."""
    reason = f"{where}: {exc!r}"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return SourceFailure(
            FailureKind.tls,
            f"The TLS certificate of {where} was not accepted ({exc.verify_message}): use the "
            "host name the certificate was issued for, or a weaker TLS mode.",
        )
    if isinstance(exc, ssl.SSLError):
        return SourceFailure(FailureKind.tls, f"TLS with {where} failed: {exc.reason or exc}.")
    if isinstance(exc, ConnectionRefusedError):
        return refused(where, reason)
    if isinstance(exc, TimeoutError):
        opened = await _accepts(address, port, min(PROBE_SECONDS, seconds))
        if opened is True:
            return wrong_service(where, product, reason)
        if opened is False:
            return refused(where, reason)
        return nothing_answered(where, seconds, reason)
    if isinstance(exc, OSError) and exc.errno in _UNREACHABLE:
        return SourceFailure(
            FailureKind.no_answer,
            f"{where} cannot be reached from the workbench's server ({exc.strerror}).",
            reason,
        )
    if isinstance(exc, OSError):  # reset, closed mid-greeting, a greeting it cannot read
        return wrong_service(where, product, reason)
    return None
