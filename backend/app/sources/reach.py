"""Which servers and files sources may reach (SOURCES_ALLOWED_HOSTS, SOURCES_FILE_DIRS).

A source is a way to make the server open connections and files, so each connection goes
through `Reach.address`: the host is resolved once, every address it resolves to is
checked, and the caller connects to the checked address itself (never to the name again,
so a DNS answer that changes between the check and the connection changes nothing). The
workbench's own database, Redis and object store, and link-local and cloud-metadata
addresses, are refused unless an entry other than `*` names them; file sources must lie
inside SOURCES_FILE_DIRS once `..` and symbolic links are resolved, and never at the
workbench's own database or secret key.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from app.config import Settings
from app.sources.failures import FailureKind, SourceFailure, unknown_host

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Addresses where clouds answer with credentials, and link-local ranges in general.
GUARDED_NETWORKS: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(n)
    for n in ("169.254.0.0/16", "fe80::/10", "fd00:ec2::/32", "100.100.100.200/32")
)
_LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
# How long resolving a source's host may take.
RESOLVE_SECONDS = 5.0


@dataclass(frozen=True)
class HostRule:
    """One entry of SOURCES_ALLOWED_HOSTS: a name or a network, and maybe a port."""

    name: str | None
    network: IPNetwork | None
    port: int | None

    @classmethod
    def parse(cls, entry: str) -> HostRule:
        text, port = entry.strip().lower(), None
        if text.startswith("["):  # [v6]:port
            host, _, rest = text[1:].partition("]")
            text, port = (
                host,
                int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None,
            )
        elif text.count(":") == 1:
            host, _, digits = text.partition(":")
            if not digits.isdigit():
                raise ValueError(
                    f"SOURCES_ALLOWED_HOSTS: {entry!r} has a port that is not a number"
                )
            text, port = host, int(digits)
        try:
            return cls(None, ipaddress.ip_network(text, strict=False), port)
        except ValueError:
            return cls(text.rstrip("."), None, port)

    def matches(self, host: str, address: IPAddress, port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.network is not None:
            return address in self.network
        return self.name == host.lower().rstrip(".")


def _plain(address: IPAddress) -> IPAddress:
    """An IPv4-mapped IPv6 address as the IPv4 address it is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _same_server(protected: IPAddress, address: IPAddress) -> bool:
    if protected == address:
        return True
    # Any loopback (or unspecified) address reaches a service listening on this machine.
    local = protected.is_loopback or protected.is_unspecified
    return local and (address.is_loopback or address.is_unspecified)


async def _resolve(host: str, port: int, seconds: float = RESOLVE_SECONDS) -> list[IPAddress]:
    try:
        return [_plain(ipaddress.ip_address(host))]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(seconds):
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, TimeoutError) as exc:
        raise unknown_host(host, f"{host}: does not resolve ({exc!r})") from None
    found: list[IPAddress] = []
    for info in infos:
        address = _plain(ipaddress.ip_address(info[4][0]))
        if address not in found:
            found.append(address)
    return found


def _service_addresses(settings: Settings) -> list[tuple[str, int]]:
    """host:port of the workbench's own database, Redis and object store, where set."""
    found = []
    for url, default_port in ((settings.DATABASE_URL, 5432), (settings.REDIS_URL, 6379)):
        if url and not url.startswith("sqlite"):
            parts = urlsplit(url)
            if parts.hostname:
                found.append((parts.hostname, parts.port or default_port))
    if settings.S3_ENDPOINT:
        endpoint = settings.S3_ENDPOINT
        parts = urlsplit(endpoint if "://" in endpoint else f"//{endpoint}")
        if parts.hostname:
            found.append((parts.hostname, parts.port or (443 if settings.S3_SECURE else 80)))
    return found


def _protected_files(settings: Settings) -> tuple[Path, ...]:
    files = [settings.DATA_DIR / ".secret_key"]
    if settings.is_embedded_db:
        database = Path(settings.database_url.split("///", 1)[1])
        files += [database.with_name(database.name + s) for s in ("", "-wal", "-shm", "-journal")]
    return tuple(Path(os.path.realpath(f)) for f in files)


@dataclass(frozen=True)
class Reach:
    """Where sources may connect, built from the settings (see the module's docstring)."""

    rules: tuple[HostRule, ...]
    any_host: bool
    services: tuple[tuple[str, int], ...]
    file_dirs: tuple[Path, ...]
    data_dir: Path
    protected_files: tuple[Path, ...]
    connect_timeout: float

    @classmethod
    def of(cls, settings: Settings) -> Reach:
        entries = [e for e in settings.SOURCES_ALLOWED_HOSTS if e.strip()]
        return cls(
            rules=tuple(HostRule.parse(e) for e in entries if e.strip() != "*"),
            any_host="*" in (e.strip() for e in entries),
            services=tuple(_service_addresses(settings)),
            file_dirs=tuple(settings.SOURCES_FILE_DIRS),
            data_dir=settings.DATA_DIR,
            protected_files=_protected_files(settings),
            connect_timeout=settings.SOURCES_CONNECT_TIMEOUT_SECONDS,
        )

    async def address(self, host: str, port: int) -> str:
        """The address to connect to for `host:port`, once every address it resolves to
        has been checked.

        Raises:
            SourceFailure: the host is unknown, or one of its addresses is not allowed.
        """
        # Within the connect timeout: a name that does not resolve answers no later than a
        # silent port does.
        addresses = await _resolve(host, port, min(RESOLVE_SECONDS, self.connect_timeout))
        guarded = await self._guarded()
        for address in addresses:
            self._check(host, address, port, guarded)
        return str(addresses[0])

    async def _guarded(self) -> list[tuple[IPAddress, int]]:
        """The addresses of the workbench's own services (those that resolve)."""
        found = []
        for host, port in self.services:
            try:
                found += [(a, port) for a in await _resolve(host, port)]
            except SourceFailure:
                continue
        return found

    def _check(
        self, host: str, address: IPAddress, port: int, guarded: list[tuple[IPAddress, int]]
    ) -> None:
        # The address a name resolved to is not said: which names resolve, and to what,
        # inside the server's network is for its log.
        where = f"{host}:{port}"
        if address.is_unspecified or address.is_multicast:
            raise SourceFailure(
                FailureKind.host_not_allowed, f"{where} is not an address a source can use."
            )
        if any(rule.matches(host, address, port) for rule in self.rules):
            return
        if any(p == port and _same_server(a, address) for a, p in guarded):
            raise SourceFailure(
                FailureKind.host_not_allowed,
                f"{where} is the workbench's own database, Redis or object store, which "
                "sources may not reach unless SOURCES_ALLOWED_HOSTS names it explicitly.",
            )
        if any(address in network for network in GUARDED_NETWORKS):
            raise SourceFailure(
                FailureKind.host_not_allowed,
                f"{where} is a link-local or cloud-metadata address, which sources may not "
                "reach unless SOURCES_ALLOWED_HOSTS names it explicitly.",
            )
        if not self.any_host:
            raise SourceFailure(
                FailureKind.host_not_allowed,
                f"The workbench's operator does not allow sources on {where} "
                "(SOURCES_ALLOWED_HOSTS).",
            )

    def file(self, given: str) -> Path:
        """The real path of a file source, once it is known to be allowed and to exist.

        A relative path is taken inside the first of SOURCES_FILE_DIRS.

        Raises:
            SourceFailure: file sources are off, the file lies outside SOURCES_FILE_DIRS
                (after resolving `..` and links) or is the workbench's own, or is missing.
        """
        if not self.file_dirs:
            raise SourceFailure(
                FailureKind.file_not_allowed,
                "File sources (SQLite, DuckDB) are off on this server: its operator allows "
                "them in directories listed in SOURCES_FILE_DIRS.",
            )
        path = Path(given)
        if not path.is_absolute():
            path = self.file_dirs[0] / path
        real = Path(os.path.realpath(path))
        dirs = [Path(os.path.realpath(d)) for d in self.file_dirs]
        if not any(real.is_relative_to(d) for d in dirs):
            listed = ", ".join(str(d) for d in self.file_dirs)
            raise SourceFailure(
                FailureKind.file_not_allowed,
                f"{given} is not inside the directories file sources may use ({listed}).",
            )
        data_dir = Path(os.path.realpath(self.data_dir))
        hidden = real.parent == data_dir and real.name.startswith(".")
        if real in self.protected_files or hidden:
            raise SourceFailure(
                FailureKind.file_not_allowed,
                f"{given} is the workbench's own; it cannot be a source.",
            )
        if not real.is_file():
            raise SourceFailure(
                FailureKind.missing_file, f"There is no file {given} on the server."
            )
        return real
