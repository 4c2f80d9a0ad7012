"""TLS for network sources, checked against the name the user gave although the socket
goes to an address resolved and checked beforehand (app.sources.reach)."""

from __future__ import annotations

import ssl
from typing import Any

from app.sources.urls import Tls


class _NamedContext(ssl.SSLContext):
    """A client context that verifies (and sends as SNI) `expected_name`, whatever host
    name the driver passes: the driver only knows the checked IP address."""

    expected_name: str

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        kwargs["server_hostname"] = self.expected_name
        if len(args) > 3:
            args = (*args[:3], self.expected_name, *args[4:])
        return super().wrap_bio(*args, **kwargs)


def context_for(tls: Tls, host: str) -> ssl.SSLContext | None:
    """The context to connect with (None: no TLS); `prefer` is answered by the driver,
    which falls back to plain text when the server offers no TLS.

    require: encrypted, certificate not checked (libpq's meaning); verify-ca: signed by a
    CA this server trusts; verify-full: that, and issued to `host`.
    """
    if tls is Tls.disable:
        return None
    context = _NamedContext(ssl.PROTOCOL_TLS_CLIENT)
    context.expected_name = host
    if tls in (Tls.prefer, Tls.require):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    context.load_default_certs()
    context.check_hostname = tls is Tls.verify_full
    context.verify_mode = ssl.CERT_REQUIRED
    return context
