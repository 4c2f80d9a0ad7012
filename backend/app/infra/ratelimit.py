"""Login attempts, counted per client address and per (account, address) pair in fixed windows;
guesses at shared links, counted per client address; and costly actions of a signed-in
user (checking a data source, adding one), counted per user.

Never per account alone: then anyone could lock any account, the admin's included, for
everyone by failing ten times. An attacker at one address exhausts that address's guesses
at an account (and, some accounts later, all of the address's guesses); the owner logging
in from another address is not affected.

Every attempt is counted before the password is checked, atomically with the check that
refuses it, so a burst of parallel guesses cannot slip past the limit while the first ones
are still being verified. A successful login forgets its pair's count and takes its own
attempt back from the address, so only failures add up.

With Redis the counters are shared by every replica (one Lua script checks and counts all
keys at once); without it they live in this process, in a bounded dictionary.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import time
from collections import OrderedDict
from typing import Protocol

from redis.asyncio import Redis
from sqlalchemy.engine import make_url

# A shared office address (or a proxy) carries many people's typos: it gets this many times
# the allowance it has at one account.
ADDRESS_ALLOWANCE_FACTOR = 5
# The in-process store forgets the least recently used counters beyond this many.
MAX_IN_PROCESS_KEYS = 50_000

# KEYS: the counters; ARGV[1]: the window in ms; ARGV[2..]: each key's limit.
# Returns 0 after counting the attempt in every key, or the ms until the fullest key frees.
_HIT = """
local wait = 0
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('get', key) or '0') >= tonumber(ARGV[i + 1]) then
    local ttl = redis.call('pttl', key)
    if ttl < 0 then
      redis.call('pexpire', key, ARGV[1])
      ttl = tonumber(ARGV[1])
    end
    wait = math.max(wait, ttl)
  end
end
if wait > 0 then return wait end
for _, key in ipairs(KEYS) do
  if redis.call('incr', key) == 1 then redis.call('pexpire', key, ARGV[1]) end
end
return 0
"""
# Takes one attempt back without creating a key or touching its expiry.
_UNDO = """
local count = tonumber(redis.call('get', KEYS[1]) or '0')
if count > 0 then return redis.call('decr', KEYS[1]) end
return 0
"""


class WindowCounters(Protocol):
    """Counters that start at the first event and reset `window` seconds later."""

    name: str

    async def hit(self, limits: dict[str, int], window: float) -> float:
        """Count one event under every key, unless one of them is at its limit.

        Args:
            limits: Each counter's key and the count at which it refuses.
            window: Seconds a counter lives from its first event.

        Returns:
            0 when counted; else the seconds until the fullest refusing counter resets.
        """

    async def undo(self, key: str) -> None:
        """Take one event back from a live counter."""

    async def reset(self, key: str) -> None:
        """Forget a counter."""


class RedisWindowCounters:
    name = "redis"

    def __init__(self, redis: Redis, prefix: str):
        self.redis = redis
        self.prefix = prefix
        self._hit = redis.register_script(_HIT)
        self._undo = redis.register_script(_UNDO)

    async def hit(self, limits: dict[str, int], window: float) -> float:
        keys = [self.prefix + key for key in limits]
        wait_ms = await self._hit(keys=keys, args=[math.ceil(window * 1000), *limits.values()])
        return int(wait_ms) / 1000

    async def undo(self, key: str) -> None:
        await self._undo(keys=[self.prefix + key])

    async def reset(self, key: str) -> None:
        await self.redis.delete(self.prefix + key)


class InProcessWindowCounters:
    """The same counters in one process, holding at most `max_keys` of them."""

    name = "in-process"

    def __init__(self, max_keys: int = MAX_IN_PROCESS_KEYS) -> None:
        self.max_keys = max_keys
        # key -> (count, when the window ends), least recently used first.
        self._counters: OrderedDict[str, tuple[int, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._counters)

    def _live(self, key: str, now: float) -> tuple[int, float] | None:
        entry = self._counters.get(key)
        if entry is not None and entry[1] <= now:
            del self._counters[key]
            return None
        return entry

    async def hit(self, limits: dict[str, int], window: float) -> float:
        now = time.monotonic()
        entries = {key: self._live(key, now) for key in limits}
        wait = max(
            (
                entry[1] - now
                for key, entry in entries.items()
                if entry is not None and entry[0] >= limits[key]
            ),
            default=0.0,
        )
        if wait > 0:
            return wait
        for key, entry in entries.items():
            count, ends = entry if entry is not None else (0, now + window)
            self._counters[key] = (count + 1, ends)
            self._counters.move_to_end(key)
        while len(self._counters) > self.max_keys:
            self._counters.popitem(last=False)
        return 0.0

    async def undo(self, key: str) -> None:
        entry = self._live(key, time.monotonic())
        if entry is not None and entry[0] > 0:
            self._counters[key] = (entry[0] - 1, entry[1])

    async def reset(self, key: str) -> None:
        self._counters.pop(key, None)


def address_key(host: str | None) -> str:
    """The unit an address is counted in: an IPv4 address, or an IPv6 /64 network.

    One IPv6 subscriber usually holds a whole /64, so counting single addresses would let
    them rotate through billions of them.
    """
    if not host:
        return "unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{address}/64", strict=False))
    return str(address)


def deployment_namespace(database_url: str) -> str:
    """A short name for the deployment that owns this database (its password left out).

    Replicas of one deployment share their database, so they share counters; another
    deployment, or a test run with a database of its own, on the same Redis does not.
    """
    where = make_url(database_url).render_as_string(hide_password=True)
    return hashlib.sha256(where.encode()).hexdigest()[:12]


def _digest(value: str) -> str:
    # Keys name no email address in Redis or in memory dumps.
    return hashlib.sha256(value.encode()).hexdigest()[:32]


class _Attempts:
    """Attempts counted in `counters`, each count lasting `window_seconds` from its first."""

    def __init__(self, counters: WindowCounters, max_failures: int, window_seconds: float):
        self.counters = counters
        self.max_failures = max_failures
        self.window_seconds = window_seconds

    async def _count(self, limits: dict[str, int]) -> int:
        """Count an attempt under each key unless one is at its limit: 0, or the whole
        seconds until the attempt would be allowed."""
        wait = await self.counters.hit(limits, self.window_seconds)
        return max(1, math.ceil(wait)) if wait > 0 else 0


class LoginRateLimit(_Attempts):
    """How many logins an address, and an address at one account, may fail within a window.

    Args:
        counters: Where the counts live.
        max_failures: Failed attempts an address may make at one account per window; an
            address may make ADDRESS_ALLOWANCE_FACTOR times as many over all accounts.
        window_seconds: How long a count lasts from its first attempt.
    """

    @staticmethod
    def _keys(email: str, address: str | None) -> tuple[str, str]:
        account, origin = email.strip().lower(), address_key(address)
        return (
            f"login:pair:{_digest(origin + ' ' + account)}",
            f"login:address:{_digest(origin)}",
        )

    async def attempt(self, email: str, address: str | None) -> int:
        """Count a login attempt before its password is checked.

        Args:
            email: The email as sent; counted lower-case, whether or not such a user exists.
            address: The client's IP address, as the server sees it (X-Forwarded-For only
                from a trusted proxy).

        Returns:
            0 when the attempt may go on; else the whole seconds until one would be allowed.
        """
        pair, origin = self._keys(email, address)
        return await self._count(
            {pair: self.max_failures, origin: self.max_failures * ADDRESS_ALLOWANCE_FACTOR}
        )

    async def succeeded(self, email: str, address: str | None) -> None:
        """The attempt logged in: forget the pair's failures, give the address its one back."""
        pair, origin = self._keys(email, address)
        await self.counters.reset(pair)
        await self.counters.undo(origin)


class SharedLinkRateLimit(_Attempts):
    """How many shared links that open nothing (unknown, revoked or expired) an address may
    ask for within a window: past that, every link from the address answers 429 until the
    window ends, a working one too. A link that opens takes its attempt back, so only
    failures add up; counted before the link is looked up, like logins.

    Args:
        counters: Where the counts live.
        max_failures: Links that open nothing an address may ask for per window.
        window_seconds: How long a count lasts from its first attempt.
    """

    @staticmethod
    def _key(address: str | None) -> str:
        return f"shared:address:{_digest(address_key(address))}"

    async def attempt(self, address: str | None) -> int:
        """Count a link asked for from `address`; 0, or the whole seconds to wait."""
        return await self._count({self._key(address): self.max_failures})

    async def succeeded(self, address: str | None) -> None:
        """The link opened: the address gets its attempt back."""
        await self.counters.undo(self._key(address))


class InviteRateLimit(SharedLinkRateLimit):
    """The same bound for invite tokens that accept nothing (unknown, used, revoked or
    expired), counted apart from shared links."""

    @staticmethod
    def _key(address: str | None) -> str:
        return f"invite:address:{_digest(address_key(address))}"


class UserActionRateLimit(_Attempts):
    """How many times one user may take an action (each counted apart) within a window:
    every attempt counts, refused or not; the limit is given at each attempt (a setting
    read then).

    Args:
        counters: Where the counts live.
        window_seconds: How long a count lasts from its first attempt.
    """

    def __init__(self, counters: WindowCounters, window_seconds: float = 60):
        super().__init__(counters, 0, window_seconds)

    async def attempt(self, action: str, user_id: str, limit: int) -> int:
        """Count `action` by `user_id`; 0, or the whole seconds until it would be allowed."""
        return await self._count({f"user:{action}:{_digest(user_id)}": limit})


def wait_sentence(seconds: int) -> str:
    """How long to wait, in words: "40 seconds", "3 minutes"."""
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = -(-seconds // 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def create_window_counters(redis: Redis | None, namespace: str) -> WindowCounters:
    """Counters in Redis when a client is given, in this process otherwise.

    Args:
        redis: The app's Redis client, shared by every replica; None for embedded mode.
        namespace: Keeps deployments (and test runs) that share one Redis apart.
    """
    if redis is not None:
        return RedisWindowCounters(redis, f"workbench:{namespace}:")
    return InProcessWindowCounters()
