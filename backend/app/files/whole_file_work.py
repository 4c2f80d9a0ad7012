"""The work on a whole file that its previews wait for, done in the background after its
upload or its first pages: each column's kind decided over all its cells when its head
decided them (whole_kinds.decide_whole), then a big CSV's copy into typed Parquet with that
decision (paging.build_table_copy); and removing what the previews' cache keeps of
contents no file holds any more.

Each runs in the preview child process, in preview slots of its own owner, shared fairly
with the users' previews (preview_process).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from app.files.preview import paging, preview_kind, whole_kinds
from app.files.preview_process import (
    PREVIEW_TIMEOUT_SECONDS,
    PreviewsBusy,
    preview_owner,
    run_preview,
)
from app.infra.storage import ObjectStorage
from app.models import File

log = logging.getLogger(__name__)

# Copying a CSV into typed Parquet reads and converts all of it, and writes the copy.
COPY_SECONDS_PER_GB = 45.0
# Deciding each column's kind over a whole file reads and converts all of it (a worksheet
# read whole takes longer than a CSV of its size).
KINDS_SECONDS_PER_GB = 120.0
# Typed copies of big CSVs made at once by this process, in the background; a file whose
# copy cannot start now is copied when its pages are next read.
MAX_TABLE_COPIES = 1
# Whose preview slots the copies take: their own, shared fairly with the users' previews.
_COPIES_OWNER = "table-copies"
_copies: dict[Path, asyncio.Task[None]] = {}


def makes_table_copy(file: File) -> bool:
    """Whether reading the file's pages copies it into typed Parquet (a big CSV)."""
    return preview_kind(file.name) == "csv" and file.size >= paging.TABLE_COPY_MIN_BYTES


def start_table_copy(
    storage: ObjectStorage,
    file: File,
    cache_dir: Path,
    shown: dict[str, Any],
    *,
    copy: bool = True,
) -> bool:
    """Starts the work on the whole file that its pages wait for, in the background: the
    whole file's decision of each column's kind when its head decided them
    (whole_kinds.decide_whole), then, for a big CSV, its copy into typed Parquet with that
    decision, so that its later pages and sorts read columns instead of parsing all of its
    text (paging.build_table_copy).

    Nothing happens when there is nothing to do, the work is under way, or as much work as
    allowed is under way already (it starts when the file's preview is next read).

    Args:
        copy: Whether the typed copy may be made (not past a storage quota).

    Returns:
        Whether work started.
    """
    head = {key: value for key, value in shown.items() if key != "_cache"}
    work = cache_dir / file.sha256
    decide = bool(head.get("kinds_pending")) and whole_kinds.stored_decision(head, work) is None
    copy = copy and makes_table_copy(file)
    if not decide and not copy:
        return False
    target = whole_kinds.kinds_path(head, work) if decide else paging.table_copy_path(head, work)
    for done in [path for path, task in _copies.items() if _ended(task)]:
        del _copies[done]
    if target in _copies or len(_copies) >= MAX_TABLE_COPIES or target.exists():
        return False
    job = _whole_file_work(storage, file.name, file.storage_key, file.sha256, file.size, head, work)
    _copies[target] = asyncio.create_task(job(decide, copy), name=f"whole-{file.sha256[:12]}")
    return True


async def stop_table_copies() -> None:
    """Stops the copies this event loop has under way (their child processes are killed):
    at shutdown."""
    loop = asyncio.get_running_loop()
    stopping = {path: task for path, task in _copies.items() if task.get_loop() is loop}
    for path, task in stopping.items():
        del _copies[path]
        task.cancel()
    await asyncio.gather(*stopping.values(), return_exceptions=True)


def _ended(task: asyncio.Task[None]) -> bool:
    return task.done() or task.get_loop().is_closed()


def _whole_file_work(
    storage: ObjectStorage,
    name: str,
    key: str,
    sha256: str,
    size: int,
    head: dict[str, Any],
    work: Path,
) -> Callable[[bool, bool], Coroutine[Any, Any, None]]:
    async def run(decide: bool, copy: bool) -> None:
        shown = head
        try:
            with preview_owner(_COPIES_OWNER):
                path = await storage.local_copy(key, work.parent, sha256)
                if decide:
                    decision = await run_preview(
                        name,
                        whole_kinds.decide_whole,
                        path,
                        name=name,
                        shown=head,
                        work=work,
                        time_limit=_whole_file_seconds(size, KINDS_SECONDS_PER_GB),
                    )
                    shown = whole_kinds.settled(head, decision)
                    log.info("the kinds of %s decided over the whole file", name)
                if copy:
                    made = await run_preview(
                        name,
                        paging.build_table_copy,
                        path,
                        shown=shown,
                        work=work,
                        time_limit=_whole_file_seconds(size, COPY_SECONDS_PER_GB),
                    )
                    if made:
                        log.info("typed copy of %s made for its pages", name)
        except PreviewsBusy:
            pass  # done when its preview is next read
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # its pages read the text, and say what is wrong with it
            log.info("the whole of %s was not read for its pages: %s", name, exc)
            if decide and shown is head:  # its head's decision stands, not checked again
                await asyncio.to_thread(whole_kinds.keep_head, head, work)
        # A file deleted meanwhile had its copies removed (service.forget_copies) before
        # these were made: they go too.
        try:
            if not await storage.exists(key):
                await asyncio.to_thread(remove_copies, work.parent, [sha256])
        except Exception as exc:  # storage unreachable: the copies stay until the file goes
            log.warning("could not check that %s is still stored: %s", name, exc)

    return run


def _whole_file_seconds(size: int, per_gb: float) -> float:
    return PREVIEW_TIMEOUT_SECONDS + per_gb * size / (1 << 30)


def remove_copies(cache_dir: Path, digests: list[str]) -> None:
    """Removes what the previews' cache keeps of these contents (a local copy, a page's
    UTF-8 copy or Parquet table, a typed copy)."""
    for digest in digests:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            continue  # a digest names the copies; nothing else is matched
        for path in cache_dir.glob(f"{digest}*"):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
