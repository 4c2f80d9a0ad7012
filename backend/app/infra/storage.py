"""Object storage behind one small interface: S3 (MinIO, any S3) or a local folder.

Both stream: an upload is consumed chunk by chunk and never held whole in memory, and a
failed upload leaves nothing behind (no partial object, no temporary file).
"""

from __future__ import annotations

import asyncio
import os
import queue
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

from minio import Minio
from minio.error import S3Error

from app.config import Settings

CHUNK_SIZE = 1024 * 1024
# Parts are held in memory while they go up; 8 MB keeps an upload's footprint small, and
# bigger parts are used only when the upload limit needs them (S3 allows 10,000 parts).
S3_MIN_PART_SIZE = 8 * 1024 * 1024
S3_MAX_PARTS = 10_000


def s3_part_size(max_upload_bytes: int) -> int:
    needed = -(-max_upload_bytes // S3_MAX_PARTS)
    mib = 1024 * 1024
    return max(S3_MIN_PART_SIZE, -(-needed // mib) * mib)


class ObjectNotFound(Exception):
    """No object under that key."""


class ObjectStorage(Protocol):
    name: str

    async def put(self, key: str, chunks: AsyncIterator[bytes], content_type: str) -> None:
        """Store the chunks under `key`. If `chunks` raises, nothing is stored and it re-raises."""

    def iter_bytes(
        self, key: str, *, offset: int = 0, length: int | None = None
    ) -> AsyncIterator[bytes]:
        """Stream an object's bytes (optionally a range)."""

    async def read_range(self, key: str, offset: int, length: int) -> bytes:
        """Read up to `length` bytes from `offset`."""

    async def local_copy(self, key: str, cache_dir: Path, cache_name: str) -> Path:
        """A local file with the object's bytes (the object itself where it is already local)."""

    async def delete(self, key: str) -> None:
        """Delete an object; a missing one is not an error."""

    async def exists(self, key: str) -> bool: ...

    async def list_keys(self, prefix: str = "") -> list[str]: ...

    async def ping(self) -> None:
        """Raise when the storage cannot be used."""

    async def close(self) -> None: ...


async def _copy_to_cache(storage: ObjectStorage, key: str, target: Path) -> Path:
    if await asyncio.to_thread(target.exists):
        return target
    await asyncio.to_thread(target.parent.mkdir, parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.part")
    try:
        with tmp.open("wb") as out:
            async for chunk in storage.iter_bytes(key):
                await asyncio.to_thread(out.write, chunk)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


class LocalStorage:
    """Objects as files under one folder; keys are relative paths."""

    name = "local"

    def __init__(self, root: Path):
        self.root = root.resolve()
        self._tmp = self.root / ".tmp"
        self._tmp.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        path = (self.root / key).resolve()
        if not key or path == self.root or self.root not in path.parents or key.startswith(".tmp"):
            raise ValueError(f"invalid object key: {key!r}")
        return path

    async def put(self, key: str, chunks: AsyncIterator[bytes], content_type: str) -> None:
        target = self.path(key)
        tmp = self._tmp / uuid.uuid4().hex
        try:
            with tmp.open("wb") as out:
                async for chunk in chunks:
                    await asyncio.to_thread(out.write, chunk)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)

    async def iter_bytes(
        self, key: str, *, offset: int = 0, length: int | None = None
    ) -> AsyncIterator[bytes]:
        path = self.path(key)
        try:
            handle = path.open("rb")
        except FileNotFoundError:
            raise ObjectNotFound(key) from None
        with handle:
            handle.seek(offset)
            remaining = length
            while remaining is None or remaining > 0:
                size = CHUNK_SIZE if remaining is None else min(CHUNK_SIZE, remaining)
                chunk = await asyncio.to_thread(handle.read, size)
                if not chunk:
                    return
                if remaining is not None:
                    remaining -= len(chunk)
                yield chunk

    async def read_range(self, key: str, offset: int, length: int) -> bytes:
        return b"".join([c async for c in self.iter_bytes(key, offset=offset, length=length)])

    async def local_copy(self, key: str, cache_dir: Path, cache_name: str) -> Path:
        path = self.path(key)
        if not path.exists():
            raise ObjectNotFound(key)
        return path

    async def delete(self, key: str) -> None:
        path = self.path(key)
        path.unlink(missing_ok=True)
        # Drop now-empty folders up to the root so that deleted projects leave no trace.
        for parent in path.parents:
            if parent == self.root:
                break
            try:
                parent.rmdir()
            except OSError:
                break

    async def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    async def list_keys(self, prefix: str = "") -> list[str]:
        def walk() -> list[str]:
            keys = []
            for path in self.root.rglob("*"):
                rel = path.relative_to(self.root).as_posix()
                if path.is_file() and not rel.startswith(".tmp/") and rel.startswith(prefix):
                    keys.append(rel)
            return sorted(keys)

        return await asyncio.to_thread(walk)

    async def ping(self) -> None:
        probe = self._tmp / f"ping-{uuid.uuid4().hex}"
        await asyncio.to_thread(probe.write_bytes, b"")
        probe.unlink()

    async def close(self) -> None:
        return None


class _ChunkReader:
    """A blocking file-like `read()` for minio, fed from async code with back-pressure.

    The async side waits for room (at most `depth` chunks in flight); the reader thread
    frees room as it takes chunks, and frees all of it when it stops for any reason, so a
    failing S3 request never leaves the producer waiting.
    """

    _EOF = object()

    def __init__(self, loop: asyncio.AbstractEventLoop, depth: int = 4):
        self._loop = loop
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._room = asyncio.Semaphore(depth)
        self._buffer = bytearray()
        self._eof = False
        self.reader_done = False

    async def feed(self, chunk: bytes) -> bool:
        """Hand a chunk to the reader; False once the reader has stopped."""
        await self._room.acquire()
        if self.reader_done:
            return False
        self._queue.put(chunk)
        return True

    def finish(self) -> None:
        self._queue.put(self._EOF)

    def fail(self, exc: BaseException) -> None:
        self._queue.put(exc)

    def read(self, size: int = -1) -> bytes:
        while not self._eof and (size < 0 or len(self._buffer) < size):
            item = self._queue.get()
            self._loop.call_soon_threadsafe(self._room.release)
            if item is self._EOF:
                self._eof = True
            elif isinstance(item, BaseException):
                raise OSError(f"upload aborted: {item!r}")
            elif isinstance(item, bytes):
                self._buffer += item
        count = len(self._buffer) if size < 0 else min(size, len(self._buffer))
        with memoryview(self._buffer) as view:
            out = bytes(view[:count])  # one copy, not two
        del self._buffer[:count]
        return out

    def reader_stopped(self) -> None:
        """Called on the event loop when the reader thread returns or raises."""
        self.reader_done = True
        for _ in range(64):
            self._room.release()


class S3Storage:
    """Any S3 service through the `minio` client (a blocking client, run in threads)."""

    name = "s3"

    def __init__(self, settings: Settings):
        self.bucket = settings.S3_BUCKET
        self.part_size = s3_part_size(settings.MAX_UPLOAD_BYTES)
        self.client = Minio(
            settings.S3_ENDPOINT or "",
            access_key=settings.S3_ACCESS_KEY,
            secret_key=settings.S3_SECRET_KEY,
            secure=settings.S3_SECURE,
            region=settings.S3_REGION,
        )
        # Uploads hold a thread for their whole length: give them their own pool so they
        # never starve the default executor that everything else uses.
        self._pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="s3")

    async def _run(self, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: fn(*args, **kwargs))

    async def ensure_bucket(self) -> None:
        if not await self._run(self.client.bucket_exists, self.bucket):
            try:
                await self._run(self.client.make_bucket, self.bucket)
            except S3Error as exc:
                if exc.code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                    raise

    async def put(self, key: str, chunks: AsyncIterator[bytes], content_type: str) -> None:
        loop = asyncio.get_running_loop()
        reader = _ChunkReader(loop)

        def upload() -> None:
            try:
                self.client.put_object(
                    self.bucket,
                    key,
                    reader,  # type: ignore[arg-type]  # minio only calls read()
                    length=-1,
                    part_size=self.part_size,
                    content_type=content_type,
                )
            finally:
                loop.call_soon_threadsafe(reader.reader_stopped)

        task = loop.run_in_executor(self._pool, upload)
        try:
            async for chunk in chunks:
                if not await reader.feed(chunk):
                    break
            reader.finish()
            await task
        except BaseException as exc:
            reader.fail(exc)
            # minio aborts its multipart upload when the reader raises; wait for that.
            await asyncio.gather(task, return_exceptions=True)
            raise

    async def iter_bytes(
        self, key: str, *, offset: int = 0, length: int | None = None
    ) -> AsyncIterator[bytes]:
        try:
            response = await self._run(
                self.client.get_object, self.bucket, key, offset=offset, length=length or 0
            )
        except S3Error as exc:
            if exc.code == "NoSuchKey":
                raise ObjectNotFound(key) from None
            raise
        try:
            stream = response.stream(CHUNK_SIZE)
            while True:
                chunk = await self._run(next, stream, None)
                if chunk is None:
                    return
                yield chunk
        finally:
            response.close()
            response.release_conn()

    async def read_range(self, key: str, offset: int, length: int) -> bytes:
        return b"".join([c async for c in self.iter_bytes(key, offset=offset, length=length)])

    async def local_copy(self, key: str, cache_dir: Path, cache_name: str) -> Path:
        return await _copy_to_cache(self, key, cache_dir / cache_name)

    async def delete(self, key: str) -> None:
        await self._run(self.client.remove_object, self.bucket, key)

    async def exists(self, key: str) -> bool:
        try:
            await self._run(self.client.stat_object, self.bucket, key)
            return True
        except S3Error as exc:
            if exc.code in ("NoSuchKey", "NoSuchObject", "NotFound"):
                return False
            raise

    async def list_keys(self, prefix: str = "") -> list[str]:
        def collect() -> list[str]:
            objects = self.client.list_objects(self.bucket, prefix=prefix, recursive=True)
            return sorted(o.object_name for o in objects if o.object_name)

        return await self._run(collect)

    async def list_incomplete_uploads(self) -> list[str]:
        """Multipart uploads started and neither completed nor aborted (tests, cleanup)."""

        def collect() -> list[str]:
            result = self.client._list_multipart_uploads(self.bucket)
            return [u.object_name for u in result.uploads if u.object_name]

        return await self._run(collect)

    async def ping(self) -> None:
        if not await self._run(self.client.bucket_exists, self.bucket):
            raise RuntimeError(f"bucket {self.bucket!r} does not exist")

    async def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


async def delete_objects(storage: ObjectStorage, keys: list[str]) -> None:
    for key in keys:
        await storage.delete(key)


def create_storage(settings: Settings) -> LocalStorage | S3Storage:
    if settings.S3_ENDPOINT:
        return S3Storage(settings)
    return LocalStorage(settings.DATA_DIR / "objects")
