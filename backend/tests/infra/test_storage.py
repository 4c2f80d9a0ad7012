"""Both storage adapters against the real thing: a local folder and S3 (SeaweedFS)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from app.infra.storage import LocalStorage, ObjectNotFound, S3Storage
from tests.conftest import stack_settings


@pytest.fixture(params=["local", "s3"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LocalStorage | S3Storage]:
    if request.param == "local":
        yield LocalStorage(tmp_path / "objects")
        return
    s3 = request.getfixturevalue("s3_server")
    settings = stack_settings(
        "services",
        tmp_path,
        S3_ENDPOINT=s3.endpoint,
        S3_ACCESS_KEY=s3.access_key,
        S3_SECRET_KEY=s3.secret_key,
        S3_BUCKET=f"adapter-{os.getpid()}",
    )
    yield S3Storage(settings)


async def chunks(
    data: bytes, size: int = 1024 * 1024, fail_after: int | None = None
) -> AsyncIterator[bytes]:
    for offset in range(0, len(data), size):
        if fail_after is not None and offset >= fail_after:
            raise RuntimeError("the client went away")
        yield data[offset : offset + size]


async def prepared(storage: LocalStorage | S3Storage) -> LocalStorage | S3Storage:
    if isinstance(storage, S3Storage):
        await storage.ensure_bucket()
        for key in await storage.list_keys():
            await storage.delete(key)
    return storage


async def test_put_read_list_delete(storage: LocalStorage | S3Storage) -> None:
    store = await prepared(storage)
    data = os.urandom(3 * 1024 * 1024 + 17)
    await store.put("projects/p1/files/a", chunks(data), "application/octet-stream")
    assert await store.exists("projects/p1/files/a")
    assert b"".join([c async for c in store.iter_bytes("projects/p1/files/a")]) == data
    assert await store.read_range("projects/p1/files/a", 10, 100) == data[10:110]
    assert await store.list_keys("projects/p1/") == ["projects/p1/files/a"]
    await store.delete("projects/p1/files/a")
    await store.delete("projects/p1/files/a")  # a missing object is not an error
    assert not await store.exists("projects/p1/files/a")
    assert await store.list_keys() == []
    with pytest.raises(ObjectNotFound):
        [c async for c in store.iter_bytes("projects/p1/files/a")]
    await store.close()


async def test_a_large_object_goes_up_in_parts(
    storage: LocalStorage | S3Storage, tmp_path: Path
) -> None:
    store = await prepared(storage)
    data = os.urandom(40 * 1024 * 1024)  # more than two 16 MB parts
    await store.put("big", chunks(data), "application/octet-stream")
    copy = await store.local_copy("big", tmp_path / "cache", "big-copy")
    assert hashlib.sha256(copy.read_bytes()).digest() == hashlib.sha256(data).digest()
    await store.close()


async def test_a_failing_upload_leaves_nothing_behind(storage: LocalStorage | S3Storage) -> None:
    store = await prepared(storage)
    data = os.urandom(40 * 1024 * 1024)
    with pytest.raises(RuntimeError, match="went away"):
        await store.put("half", chunks(data, fail_after=20 * 1024 * 1024), "text/csv")
    assert await store.list_keys() == []
    if isinstance(store, S3Storage):
        assert await store.list_incomplete_uploads() == []  # the multipart upload was aborted
    else:
        assert list((store.root / ".tmp").iterdir()) == []
    await store.close()


def test_local_keys_cannot_escape_the_folder(tmp_path: Path) -> None:
    store = LocalStorage(tmp_path / "objects")
    for key in ("../outside", "/etc/passwd", "", ".tmp/x", "a/../../b"):
        with pytest.raises(ValueError):
            store.path(key)


def test_s3_parts_stay_small_unless_the_limit_needs_more() -> None:
    from app.infra.storage import s3_part_size

    assert s3_part_size(2 * 1024**3) == 8 * 1024 * 1024
    big = 200 * 1024**3
    assert s3_part_size(big) * 10_000 >= big and s3_part_size(big) % (1024 * 1024) == 0
