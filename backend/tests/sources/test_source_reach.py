"""Which servers and files sources may reach: the allow-list, the app's own services and
cloud-metadata addresses refused unless named, files only inside the allowed folders."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.sources.failures import SourceFailure
from tests.sources.engine import reach


def _address(host: str, port: int, **settings: object) -> str:
    return asyncio.run(reach(**settings).address(host, port))  # type: ignore[arg-type]


def test_any_host_by_default_but_not_the_apps_own_services_or_metadata() -> None:
    own = {
        "DATABASE_URL": "postgresql+asyncpg://wb@localhost:5432/wb",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "S3_ENDPOINT": "10.9.8.7:9000",
        "S3_ACCESS_KEY": "k",
        "S3_SECRET_KEY": "s" * 20,
    }
    assert _address("127.0.0.1", 3306, **own) == "127.0.0.1"
    for host, port in [("127.0.0.1", 5432), ("127.0.0.2", 5432), ("::1", 6379), ("10.9.8.7", 9000)]:
        with pytest.raises(SourceFailure, match="workbench's own"):
            _address(host, port, **own)
    for host in ("169.254.169.254", "::ffff:169.254.169.254", "fe80::1", "100.100.100.200"):
        with pytest.raises(SourceFailure, match="cloud-metadata"):
            _address(host, 80)
    with pytest.raises(SourceFailure, match="not an address"):
        _address("0.0.0.0", 5432)
    # Named explicitly, they are allowed.
    assert _address("127.0.0.1", 5432, SOURCES_ALLOWED_HOSTS="*,127.0.0.1:5432", **own)
    assert _address("169.254.1.2", 80, SOURCES_ALLOWED_HOSTS="169.254.0.0/16")


def test_an_allow_list_of_names_networks_and_ports() -> None:
    allowed = {"SOURCES_ALLOWED_HOSTS": "localhost:3306,10.0.0.0/8,[::1]:5432"}
    assert _address("localhost", 3306, **allowed)
    assert _address("10.1.2.3", 5432, **allowed) == "10.1.2.3"
    assert _address("::1", 5432, **allowed) == "::1"
    for host, port in [("localhost", 5432), ("11.0.0.1", 5432), ("::1", 3306)]:
        with pytest.raises(SourceFailure, match="does not allow"):
            _address(host, port, **allowed)
    # A name that does not resolve says so.
    unknown = r"^The host name no-such-host\.invalid does not resolve\.$"
    with pytest.raises(SourceFailure, match=unknown):
        _address("no-such-host.invalid", 5432)


def test_files_only_inside_the_allowed_folders(tmp_path: Path) -> None:
    allowed, data = tmp_path / "allowed", tmp_path / "data"
    allowed.mkdir()
    data.mkdir()
    (allowed / "a.db").write_bytes(b"")
    (tmp_path / "outside.db").write_bytes(b"")
    (data / ".secret_key").write_text("k")
    (allowed / "link.db").symlink_to(tmp_path / "outside.db")
    files = reach(allowed, data_dir=data)
    assert files.file(str(allowed / "a.db")) == allowed / "a.db"
    assert files.file("a.db") == allowed / "a.db"
    for given in (
        str(tmp_path / "outside.db"),
        str(allowed / ".." / "outside.db"),
        str(allowed / "link.db"),
    ):
        with pytest.raises(SourceFailure, match="not inside"):
            files.file(given)
    with pytest.raises(SourceFailure, match="no file"):
        files.file(str(allowed / "missing.db"))
    with pytest.raises(SourceFailure, match="off on this server"):
        reach().file(str(allowed / "a.db"))
    mine = reach(data, data_dir=data)
    with pytest.raises(SourceFailure, match="workbench's own"):
        mine.file(str(data / ".secret_key"))
