"""The client's address behind the proxies an operator names (TRUSTED_PROXIES), and only there.

Uvicorn's own handling of forwarded headers is off (`python -m app` starts it with
`proxy_headers=False`): it believes `X-Forwarded-For` from 127.0.0.1 by default, so a
client on the same machine, or any client of a workbench that listens behind no proxy on
loopback, could name a new address with every request and escape the per-address limits
of logins and shared links. Here the header is read only when the request comes from a
named proxy; the address taken is the right-most of the chain that is not a named proxy
(what a client writes itself sits to the left of what the proxies append).
"""

from __future__ import annotations

from fastapi import FastAPI
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware


def install_forwarded_headers(app: FastAPI, trusted_proxies: list[str]) -> None:
    """Take the client's address and scheme from forwarded headers of `trusted_proxies`
    (addresses or networks), outermost, so every layer sees the client; none: add nothing.

    Args:
        app: The application.
        trusted_proxies: The proxies' addresses or networks (CIDR), as validated by Settings.
    """
    if trusted_proxies:
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=list(trusted_proxies))
