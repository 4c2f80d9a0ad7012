"""Reading a source's SQLAlchemy-style URL into its parts, and writing it back without
(or with a masked) password.

Only a short list of query parameters is taken: a driver option such as libpq's
`sslkey=/path` or `sslrootcert=/path` would make the server read its own files, and
`options=-c …` would change the session's settings under the read-only guards.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from urllib.parse import quote, unquote

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from app.errors import BadRequest
from app.sources.credentials import MASK, Secret


class SourceKind(StrEnum):
    postgresql = "postgresql"
    mysql = "mysql"
    sqlite = "sqlite"
    duckdb = "duckdb"

    @property
    def is_file(self) -> bool:
        return self in (SourceKind.sqlite, SourceKind.duckdb)


class Tls(StrEnum):
    """How a network source uses TLS (libpq's sslmode names)."""

    disable = "disable"
    prefer = "prefer"
    require = "require"
    verify_ca = "verify-ca"
    verify_full = "verify-full"


_SCHEMES = {
    "postgresql": SourceKind.postgresql,
    "postgres": SourceKind.postgresql,
    "mysql": SourceKind.mysql,
    "mariadb": SourceKind.mysql,
    "sqlite": SourceKind.sqlite,
    "duckdb": SourceKind.duckdb,
}
DEFAULT_PORTS = {SourceKind.postgresql: 5432, SourceKind.mysql: 3306}
_PG_SSLMODES = {
    "disable": Tls.disable,
    "allow": Tls.prefer,
    "prefer": Tls.prefer,
    "require": Tls.require,
    "verify-ca": Tls.verify_ca,
    "verify-full": Tls.verify_full,
}
_MYSQL_SSL_MODES = {
    "disabled": Tls.disable,
    "preferred": Tls.prefer,
    "required": Tls.require,
    "verify_ca": Tls.verify_ca,
    "verify_identity": Tls.verify_full,
}
# The query parameters each kind takes, and what each allows.
_OPTIONS: dict[SourceKind, dict[str, dict[str, Tls]]] = {
    SourceKind.postgresql: {"sslmode": _PG_SSLMODES},
    SourceKind.mysql: {"ssl_mode": _MYSQL_SSL_MODES},
    SourceKind.sqlite: {},
    SourceKind.duckdb: {},
}
EXAMPLES = (
    "postgresql://user:password@host:5432/database, mysql://user:password@host:3306/database, "
    "sqlite:////path/on/server.db or duckdb:////path/on/server.duckdb"
)


@dataclass(frozen=True)
class SourceUrl:
    """A source's URL in parts; `password` masks itself in repr()."""

    kind: SourceKind
    host: str | None = None
    port: int | None = None
    user: str | None = None
    password: Secret = field(default_factory=lambda: Secret(""))
    # The database's name (network kinds) or the file's path as given (file kinds).
    database: str | None = None
    tls: Tls = Tls.prefer

    def display(self, *, masked: bool = True) -> str:
        """The URL to show: the password as `***` when there is one (`masked`), or left out."""
        if self.kind.is_file:
            return f"{self.kind.value}:///{self.database or ''}"
        user = quote(self.user or "", safe="")
        if self.password and masked:
            user += f":{MASK}"
        host = f"[{self.host}]" if self.host and ":" in self.host else (self.host or "")
        port = f":{self.port}" if self.port else ""
        url = f"{self.kind.value}://{user}{'@' if user else ''}{host}{port}"
        url += f"/{quote(self.database, safe='')}" if self.database else ""
        option = "sslmode" if self.kind is SourceKind.postgresql else "ssl_mode"
        if self.tls is not Tls.prefer:
            value = self.tls.value
            if self.kind is SourceKind.mysql:
                mysql = {tls: name for name, tls in _MYSQL_SSL_MODES.items()}
                value = mysql[self.tls].upper()
            url += f"?{option}={value}"
        return url

    def with_password(self, password: Secret) -> SourceUrl:
        return replace(self, password=password)


def parse(text: str) -> SourceUrl:
    """A source URL from what a user typed.

    Raises:
        BadRequest: not a URL, an unsupported kind, a missing part or a query parameter
            that is not taken; the sentence never repeats the URL (it holds a password).
    """
    try:
        url = _split(text.strip())
    except (ArgumentError, ValueError):
        raise BadRequest(
            f"That is not a database URL. Examples: {EXAMPLES}.", code="invalid_source_url"
        ) from None
    kind = _SCHEMES.get(url.drivername.split("+", 1)[0].lower())
    if kind is None:
        raise BadRequest(
            f"Sources can be PostgreSQL, MySQL/MariaDB, SQLite or DuckDB, not "
            f"{url.drivername.split('+', 1)[0]!r}. Examples: {EXAMPLES}.",
            code="unsupported_source_kind",
        )
    tls = _options(kind, url)
    if kind.is_file:
        if url.host or url.username or url.password:
            raise BadRequest(
                f"A {kind.value} source is a file on the server: write its path after three "
                f"slashes ({kind.value}:////srv/data/file), with no user, password or host.",
                code="invalid_source_url",
            )
        if not url.database:
            raise BadRequest(
                f"Give the file's path: {kind.value}:////srv/data/file.", code="invalid_source_url"
            )
        return SourceUrl(kind=kind, database=url.database, tls=Tls.disable)
    if not url.host:
        raise BadRequest(
            "Give the database server's host: "
            f"{kind.value}://user:password@host:{DEFAULT_PORTS[kind]}/database.",
            code="invalid_source_url",
        )
    if not url.username:
        raise BadRequest(
            f"Give the user to connect as: {kind.value}://user:password@{url.host}/database.",
            code="invalid_source_url",
        )
    return SourceUrl(
        kind=kind,
        host=url.host.lower(),
        port=url.port or DEFAULT_PORTS[kind],
        user=url.username,
        password=Secret(url.password or ""),
        database=url.database or None,
        tls=tls,
    )


def _split(text: str) -> URL:
    """`text` as a URL whose user and password end at the rightmost `@` before the query:
    a password typed raw may hold `@`, `:` or `/` (make_url alone would end it at the first
    `@`, and show the rest as the host); percent-encoded parts are decoded. A file's URL
    (`sqlite:////path`) has no user: an `@` in its path stays there."""
    scheme, separator, rest = text.partition("://")
    at = rest.partition("?")[0].rfind("@")
    if not separator or at < 0 or rest.startswith("/"):
        return make_url(text)
    user, colon, password = rest[:at].partition(":")
    url = make_url(f"{scheme}://{rest[at + 1 :]}")
    return url.set(username=unquote(user), password=unquote(password) if colon else None)


def _options(kind: SourceKind, url: URL) -> Tls:
    """The TLS mode the query parameters ask for; any other parameter is refused."""
    allowed = _OPTIONS[kind]
    tls = Tls.prefer
    for name, value in url.query.items():
        choices = allowed.get(name.lower())
        if choices is None:
            taken = ", ".join(allowed) or "none"
            raise BadRequest(
                f"The URL parameter {name!r} is not taken for {kind.value} sources "
                f"(taken: {taken}).",
                code="invalid_source_url",
            )
        if not isinstance(value, str) or value.lower() not in choices:
            raise BadRequest(
                f"{name} must be one of {', '.join(choices)}.", code="invalid_source_url"
            )
        tls = choices[value.lower()]
    return tls
