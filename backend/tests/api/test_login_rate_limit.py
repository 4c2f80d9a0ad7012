"""Failed logins are limited per client address and per (account, address), on both stacks.

Each test logs in from loopback addresses of its own (all of 127.0.0.0/8 reaches the
server) and with accounts of its own, so the counts it leaves behind in the long-lived
server touch no other test.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from tests.conftest import Api
from tests.support.server import LiveServer

MAX_FAILURES = 10  # the default LOGIN_MAX_FAILURES
PASSWORD = "right-password-1"


def new_address() -> str:
    return f"127.{random.randint(1, 254)}.{random.randint(0, 255)}.{random.randint(2, 254)}"


@contextmanager
def client_from(live: LiveServer, address: str) -> Iterator[httpx.Client]:
    """A client whose connections come from `address` (a loopback address)."""
    transport = httpx.HTTPTransport(local_address=address)
    with httpx.Client(base_url=f"{live.url}/api/v1", transport=transport, timeout=60) as client:
        yield client


def new_account(admin: Api) -> str:
    email = f"target-{uuid.uuid4().hex[:12]}@example.com"
    response = admin.post("/users", json={"email": email, "password": PASSWORD})
    assert response.status_code == 201, response.text
    return email


def login(client: httpx.Client, email: str, password: str) -> httpx.Response:
    return client.post("/auth/login", json={"email": email, "password": password})


def assert_rate_limited(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    body = response.json()
    assert body["code"] == "rate_limited"
    assert "try again in" in body["detail"]
    retry_after = int(response.headers["retry-after"])
    assert 1 <= retry_after <= 300
    assert "access_token" not in body


def test_an_address_that_failed_too_often_at_an_account_is_refused_even_with_the_right_password(
    admin: Api, live: LiveServer
) -> None:
    email = new_account(admin)
    with client_from(live, new_address()) as attacker:
        for guess in range(MAX_FAILURES):
            response = login(attacker, email, f"guess-{guess}")
            assert response.status_code == 401, (guess, response.text)
        assert_rate_limited(login(attacker, email, PASSWORD))
        # The account is counted lower-case, however the email is typed.
        assert_rate_limited(login(attacker, f"  {email.upper()} ", PASSWORD))
    # The account is not locked for its owner at another address.
    with client_from(live, new_address()) as owner:
        assert login(owner, email, PASSWORD).status_code == 200
    # Other accounts are not locked either.
    other = new_account(admin)
    with client_from(live, new_address()) as someone:
        assert login(someone, other, PASSWORD).status_code == 200


def test_a_successful_login_forgets_the_failures(admin: Api, live: LiveServer) -> None:
    email = new_account(admin)
    with client_from(live, new_address()) as user:
        for _ in range(2):
            for guess in range(MAX_FAILURES - 1):
                assert login(user, email, f"typo-{guess}").status_code == 401
            assert login(user, email, PASSWORD).status_code == 200
        # 18 failures in all, never 10 in a row: still welcome.
        assert login(user, email, PASSWORD).status_code == 200


def test_one_address_failing_across_many_accounts_is_refused(admin: Api, live: LiveServer) -> None:
    email = new_account(admin)
    address = new_address()
    with client_from(live, address) as sprayer:
        # Five accounts' worth of failures, one on each account.
        for _ in range(MAX_FAILURES * 5):
            guessed = f"user-{uuid.uuid4().hex[:12]}@example.com"
            assert login(sprayer, guessed, "password-1").status_code == 401
        assert_rate_limited(login(sprayer, email, PASSWORD))
    with client_from(live, new_address()) as owner:
        assert login(owner, email, PASSWORD).status_code == 200


def test_successful_logins_do_not_use_up_an_addresss_allowance(
    admin: Api, live: LiveServer
) -> None:
    """An office behind one address logs in all day without being locked out."""
    email = new_account(admin)
    with client_from(live, new_address()) as office:
        for _ in range(MAX_FAILURES * 5 + 5):
            assert login(office, email, PASSWORD).status_code == 200
        assert login(office, email, "a-typo-1").status_code == 401
        assert login(office, email, PASSWORD).status_code == 200
