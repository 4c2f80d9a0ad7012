"""Attacks on the rate limits through forwarded headers (issue 40, weakened: "Behind no
proxy, X-Forwarded-For is trusted from loopback").

The workbench started as `make run` and the containers start it (`python -m app`), reached
straight from the loopback address, with no proxy in front: an attacker who sends a fresh
`X-Forwarded-For` with every request must still be counted at the one address they come
from, for logins and for guesses at shared links. Only where the operator names the proxy
in front (`TRUSTED_PROXIES`) is the forwarded address used, and then the right-most one the
operator does not trust, so a client cannot choose it by writing the header's left part.

Each test starts a server of its own, as a process, so that the counts it runs up at the
loopback address are its own (the suite's servers are shared by many tests).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.api.test_login_rate_limit import assert_rate_limited, new_address
from tests.support.services import free_port
from tests.test_startup import READY, read_until, start_env, started

MAX_FAILURES = 3
SHARE_ALLOWANCE = MAX_FAILURES * 5  # an address may guess as many links as it may fail logins
ADMIN = ("admin@example.com", "admin-password-1")  # as start_env sets them


@contextmanager
def workbench(tmp_path: Path, **env: str) -> Iterator[str]:
    """`python -m app` on a port of its own: the base of its API."""
    port = free_port()
    settings = start_env(tmp_path, port) | {
        "LOG_LEVEL": "warning",
        "LOGIN_MAX_FAILURES": str(MAX_FAILURES),
        **env,
    }
    with started(settings) as process:
        read_until(process, READY, [])
        yield f"http://127.0.0.1:{port}/api/v1"


def client(base: str, address: str = "127.0.0.1") -> httpx.Client:
    """A client of the API whose connections come from `address` (a loopback address)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=base, transport=transport, timeout=60)


def login(client: httpx.Client, password: str, forwarded: str | None = None) -> httpx.Response:
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    return client.post(
        "/auth/login", json={"email": ADMIN[0], "password": password}, headers=headers
    )


def test_fresh_forwarded_addresses_from_loopback_neither_reset_logins_nor_link_guesses(
    tmp_path: Path,
) -> None:
    with workbench(tmp_path) as base, client(base) as attacker:
        for guess in range(MAX_FAILURES):
            response = login(attacker, f"guess-{guess}", f"203.0.113.{guess + 1}")
            assert response.status_code == 401, (guess, response.text)
        # A new forwarded address every time, the right password at last: still refused.
        assert_rate_limited(login(attacker, ADMIN[1], "198.51.100.7"))
        assert_rate_limited(login(attacker, ADMIN[1]))

        for n in range(SHARE_ALLOWANCE):
            forged = {"X-Forwarded-For": f"198.51.{n // 250}.{n % 250 + 1}"}
            response = attacker.get(f"/shared/{n:043d}", headers=forged)
            assert response.status_code == 404, (n, response.text)
        refused = attacker.get("/shared/" + "Z" * 43, headers={"X-Forwarded-For": "192.0.2.99"})
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"

        # Counted at the address the attacker really comes from: the admin, elsewhere, is in.
        with client(base, new_address()) as owner:
            assert login(owner, ADMIN[1]).status_code == 200
            assert owner.get("/shared/" + "Z" * 43).status_code == 404


def test_behind_a_trusted_proxy_the_forwarded_address_is_counted(tmp_path: Path) -> None:
    """The proxy (here: loopback, and a network of proxies behind it) is named in
    TRUSTED_PROXIES: each client is counted at its own address, the right-most the
    proxies do not vouch for."""
    trusted = "127.0.0.1,10.0.0.0/8"
    with workbench(tmp_path, TRUSTED_PROXIES=trusted) as base, client(base) as proxy:
        for guess in range(MAX_FAILURES):
            # What a client wrote, then what the proxies appended: the client's address and
            # one of the proxies' own.
            chain = f"192.0.2.{guess + 1}, 198.51.100.7, 10.1.2.3"
            response = login(proxy, f"guess-{guess}", chain)
            assert response.status_code == 401, (guess, response.text)
        assert_rate_limited(login(proxy, ADMIN[1], "192.0.2.200, 198.51.100.7"))
        # Another client behind the same proxy is not refused: it is counted on its own.
        assert login(proxy, ADMIN[1], "198.51.100.8").status_code == 200
        # The proxy's own requests, forwarding nothing, are counted at the proxy.
        assert login(proxy, ADMIN[1]).status_code == 200
