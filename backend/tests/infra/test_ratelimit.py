"""Login rate limit counters, in-process and on real Redis: same behaviour."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from app.infra.ratelimit import (
    InProcessWindowCounters,
    LoginRateLimit,
    RedisWindowCounters,
    WindowCounters,
    address_key,
    deployment_namespace,
)


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url, decode_responses=True)
    yield client
    await client.aclose()


@pytest.fixture(params=["in-process", "redis"])
async def counters(request: pytest.FixtureRequest) -> AsyncIterator[WindowCounters]:
    if request.param == "in-process":
        yield InProcessWindowCounters()
        return
    client = Redis.from_url(request.getfixturevalue("redis_url"), decode_responses=True)
    yield RedisWindowCounters(client, f"wbtest:{uuid.uuid4().hex}:")
    await client.aclose()


async def test_the_limit_refuses_until_the_window_ends(counters: WindowCounters) -> None:
    limit = LoginRateLimit(counters, max_failures=3, window_seconds=1)
    email = "someone@example.com"
    assert [await limit.attempt(email, "10.0.0.1") for _ in range(3)] == [0, 0, 0]
    assert await limit.attempt(email, "10.0.0.1") == 1
    assert await limit.attempt(email.upper(), "10.0.0.1") == 1  # however it is typed
    assert await limit.attempt(email, "10.0.0.2") == 0  # the owner elsewhere is not locked
    await asyncio.sleep(1.1)
    assert await limit.attempt(email, "10.0.0.1") == 0


async def test_success_forgets_the_pair_but_not_the_addresss_failures(
    counters: WindowCounters,
) -> None:
    limit = LoginRateLimit(counters, max_failures=2, window_seconds=60)
    address = "192.0.2.7"
    # The address may fail 10 times (5 x 2); a success takes only its own attempt back.
    for number in range(9):
        assert await limit.attempt(f"user{number}@example.com", address) == 0
    assert await limit.attempt("me@example.com", address) == 0
    await limit.succeeded("me@example.com", address)
    assert await limit.attempt("me@example.com", address) == 0  # the 10th failure
    wait = await limit.attempt("me@example.com", address)
    assert 1 <= wait <= 60
    assert await limit.attempt("me@example.com", "192.0.2.8") == 0


async def test_taking_an_attempt_back_never_goes_below_zero(counters: WindowCounters) -> None:
    limit = LoginRateLimit(counters, max_failures=1, window_seconds=60)
    for _ in range(3):
        await limit.succeeded("me@example.com", "192.0.2.9")  # nothing counted yet
    assert await limit.attempt("other@example.com", "192.0.2.9") == 0
    for number in range(4):
        assert await limit.attempt(f"u{number}@example.com", "192.0.2.9") == 0
    assert await limit.attempt("last@example.com", "192.0.2.9") > 0


async def test_replicas_share_counts_through_redis(redis_client: Redis) -> None:
    prefix = f"wbtest:{uuid.uuid4().hex}:"
    first = LoginRateLimit(RedisWindowCounters(redis_client, prefix), 2, 60)
    second = LoginRateLimit(RedisWindowCounters(redis_client, prefix), 2, 60)
    assert await first.attempt("shared@example.com", "10.1.1.1") == 0
    assert await second.attempt("shared@example.com", "10.1.1.1") == 0
    assert await first.attempt("shared@example.com", "10.1.1.1") > 0
    assert await second.attempt("shared@example.com", "10.1.1.1") > 0
    # Keys carry a digest, never the email itself.
    keys = [key async for key in redis_client.scan_iter(f"{prefix}*")]
    assert keys and not any("shared" in key for key in keys)
    ttls = [await redis_client.pttl(key) for key in keys]
    assert all(0 < ttl <= 60_000 for ttl in ttls)


async def test_parallel_attempts_cannot_pass_the_limit(counters: WindowCounters) -> None:
    limit = LoginRateLimit(counters, max_failures=5, window_seconds=60)
    waits = await asyncio.gather(
        *(limit.attempt("burst@example.com", "10.2.0.1") for n in range(40))
    )
    assert waits.count(0) == 5


def test_the_in_process_store_is_bounded() -> None:
    counters = InProcessWindowCounters(max_keys=100)
    limit = LoginRateLimit(counters, max_failures=3, window_seconds=60)

    async def spray() -> None:
        for number in range(1000):
            await limit.attempt(f"user{number}@example.com", f"10.3.{number // 256}.{number % 256}")

    asyncio.run(spray())
    assert len(counters) <= 100


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:1:2:3", "2001:db8:1:2::/64"),
        ("::ffff:203.0.113.9", "203.0.113.9"),
        (None, "unknown"),
        ("testclient", "testclient"),
    ],
)
def test_addresses_are_counted_per_ipv4_address_and_ipv6_slash_64(
    host: str | None, key: str
) -> None:
    assert address_key(host) == key


def test_the_namespace_follows_the_database_not_its_password() -> None:
    one = deployment_namespace("postgresql+asyncpg://wb:secret@db:5432/workbench")
    assert one == deployment_namespace("postgresql+asyncpg://wb:other@db:5432/workbench")
    assert one != deployment_namespace("postgresql+asyncpg://wb:secret@db:5432/staging")
