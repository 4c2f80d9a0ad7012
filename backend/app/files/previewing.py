"""What a person and the agent see of a dataset file: the preview of its head (of a sheet,
under a header row) kept on the file's row, windows of the whole table read on demand,
column profiles, and the check right after upload.

All parsing runs in the preview child process (preview_process), within its limits.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from app.errors import NotFound
from app.files import preview as previews
from app.files import profile as profiles
from app.files.preview import paging, whole_kinds, whole_profile
from app.files.preview import table as preview_table
from app.files.preview.filters import check_filter
from app.files.preview.paging import Window
from app.files.preview_process import PREVIEW_TIMEOUT_SECONDS, PreviewsBusy, run_preview
from app.files.whole_file_work import start_table_copy
from app.infra.storage import ObjectNotFound, ObjectStorage
from app.models import File

log = logging.getLogger(__name__)

CSV_HEAD_START = 4 * 1024 * 1024
CSV_HEAD_MAX = 64 * 1024 * 1024
# What a stored preview holds: one computed before the current shape is computed again.
PREVIEW_SHAPE = 5
# Previews of further sheets and profiles kept on the row, per kind.
MAX_CACHED = 20
# A page of the whole table (sorted, or deep in it) reads all of the file: the time it may
# take grows with the file's size (DuckDB reads a CSV at 200-400 MB/s on two busy cores).
PAGE_SECONDS_PER_GB = 15.0


def page_time_limit(size: int) -> float:
    """Seconds a page of the whole table of a file of `size` bytes may take to read."""
    return PREVIEW_TIMEOUT_SECONDS + PAGE_SECONDS_PER_GB * size / (1 << 30)


async def preview(
    storage: ObjectStorage,
    file: File,
    cache_dir: Path,
    sheet: str | None = None,
    *,
    header_row: int | None = None,
    window: Window | None = None,
    copies: bool = True,
    whole: bool = True,
) -> dict[str, Any]:
    """The file's preview (of one sheet of a workbook): its head computed once per content
    (and header row) and kept on the row, and any other window of the whole table read on
    demand.

    The parsing runs in a child process under a time and memory limit (preview_process):
    a file too costly to preview answers 422 and can still be downloaded.

    Args:
        storage: Where the file's bytes are.
        file: The file; its `preview` is filled in (the caller's transaction stores it).
        cache_dir: Where local copies of files are kept.
        sheet: A workbook's worksheet; None for the first (the preview the agent sees).
        header_row: The row of column names of a CSV or worksheet; None: the one detected.
        window: The rows to show (with `offset`, `limit`, `sort`, `order` in the answer);
            None: the head as stored, the first 50 rows.
        copies: Whether a big CSV may be copied into typed Parquet for its pages (not when
            the copy would take its project or uploader past a storage quota).
        whole: Whether the whole file's decision of its columns' kinds is made after its
            head's (not for a file read once, such as an artifact's).

    Raises:
        PreviewError: Not previewable (415), unreadable or too costly (422), no such sheet
            (404), sheets or a header row asked of a file that has none, a header row past
            the rows, or a sort by no column (422).
    """
    shown = await _settled(
        file, await _head(storage, file, cache_dir, sheet, header_row), cache_dir
    )
    if not whole and shown.get("kinds_pending"):
        shown = shown | {"kinds_pending": False}  # read once: its head's decision is final
    if window is not None and window.in_head and shown.get("kinds_pending"):
        start_table_copy(storage, file, cache_dir, shown, copy=False)
    row_count = shown["row_count"]
    if window is None:
        return shown
    asked = [asdict(condition) for condition in window.conditions]
    if window.conditions:
        typed = check_filter(list(window.conditions), shown["columns"], file.name)
        window = replace(window, conditions=tuple(typed))
    if window.in_head:
        rows = shown["rows"][window.offset : window.offset + window.limit]
    else:
        async with _contents(file):
            path = await storage.local_copy(file.storage_key, cache_dir, file.sha256)
            head = _without_cache(shown)
            start_table_copy(storage, file, cache_dir, head, copy=copies)
            page = await run_preview(
                file.name,
                paging.read_page,
                path,
                name=file.name,
                shown=head,
                window=window,
                work=cache_dir / file.sha256,
                time_limit=page_time_limit(file.size),
            )
        rows, shown = page["rows"], shown | {"row_count": page["row_count"]}
    order = "desc" if window.descending else "asc"
    return shown | {
        "unfiltered_row_count": row_count,
        "filter": asked,
        "rows": rows,
        "offset": window.offset,
        "limit": window.limit,
        "sort": window.sort,
        "order": order,
    }


async def _head(
    storage: ObjectStorage, file: File, cache_dir: Path, sheet: str | None, header_row: int | None
) -> dict[str, Any]:
    """The preview of the file's head (of a sheet, under a header row), kept on the row."""
    main = _stored(file)
    if main is None:
        kind = previews.preview_kind(file.name)
        if kind is None:
            raise previews.PreviewUnsupported(
                f"{file.name}: previews are available for CSV, TSV, Excel, Parquet and JSON files."
            )
        async with _contents(file):
            if kind == "csv":
                result = await _preview_csv(storage, file)
            else:
                path = await storage.local_copy(file.storage_key, cache_dir, file.sha256)
                result = await run_preview(file.name, previews.preview_file, path, name=file.name)
        main = file.preview = result.to_dict() | {"_cache": {"shape": PREVIEW_SHAPE}}
    if header_row is not None and previews.preview_kind(file.name) not in ("csv", "excel"):
        raise previews.no_header_row(file.name)
    if sheet is not None and main["sheets"] is None:
        raise previews.no_sheets(file.name)
    if sheet is not None and sheet not in main["sheets"]:
        raise previews.sheet_not_found(file.name, sheet, main["sheets"])
    first = sheet is None or sheet == main["sheet"]
    if first and header_row in (None, main.get("header_row")):
        return main
    key = sheet or main["sheet"] or ""
    section, entry = (
        ("headers", f"{key}\n{header_row}") if header_row is not None else ("sheets", key)
    )
    cached = _cached(file, section, entry)
    if cached is None:
        async with _contents(file):
            if previews.preview_kind(file.name) == "csv":
                shown = await _preview_csv(storage, file, header_row)
            else:
                path = await storage.local_copy(file.storage_key, cache_dir, file.sha256)
                shown = await run_preview(
                    file.name,
                    previews.preview_file,
                    path,
                    name=file.name,
                    sheet=key or None,
                    header_row=header_row,
                )
        cached = _remember(file, section, entry, shown.to_dict())
    return cached


async def _settled(file: File, shown: dict[str, Any], cache_dir: Path) -> dict[str, Any]:
    """The preview of a head with the whole file's decision of its columns' kinds in place
    of the head's, once it is made (whole_kinds.py); kept on the row in place of the
    head's, so that later previews, the file's profile and the agent's description read it."""
    if not shown.get("kinds_pending"):
        return shown
    head = _without_cache(shown)
    decision = await asyncio.to_thread(whole_kinds.stored_decision, head, cache_dir / file.sha256)
    if decision is None:
        return shown
    final = whole_kinds.settled(head, decision)
    stored = dict(file.preview or {})
    if shown is file.preview:
        file.preview = final | {"_cache": stored.get("_cache", {})}
        return file.preview
    cache = dict(stored.get("_cache", {}))
    for section, entries in cache.items():
        if isinstance(entries, dict):
            for key, entry in entries.items():
                if entry is shown:
                    cache[section] = dict(entries) | {key: final}
    file.preview = stored | {"_cache": cache}
    return final


async def profile(
    storage: ObjectStorage,
    file: File,
    cache_dir: Path,
    sheet: str | None = None,
    header_row: int | None = None,
) -> dict[str, Any]:
    """The profile of the file's columns (of one sheet of a workbook, under a header row),
    computed once per content and kept on the row: a CSV's over all its rows as the whole
    file's decision reads them (whole_profile.py), another file's over its first rows
    (app.files.profile bounds them; `sampled` says how many), each number column's values
    with its currency and decimals.

    Raises:
        PreviewError: As `preview`, whose checks come first.
    """
    shown = await preview(storage, file, cache_dir, sheet, header_row=header_row)
    key = shown["sheet"] or ""
    if header_row is not None:
        key = f"{key}\n{shown['header_row']}"
    cached = _cached(file, "profiles", key)
    if cached is not None:
        return cached
    async with _contents(file):
        result = await _whole_profile(storage, file, cache_dir, shown)
        if result is None:
            result = await _sample_profile(storage, file, cache_dir, shown)
    # The sample may end exactly where the file does.
    complete = result["complete"] or result["rows_profiled"] >= shown["row_count"]
    body = {
        "sheet": shown["sheet"],
        "header_row": shown.get("header_row"),
        "row_count": shown["row_count"],
        "sampled": None
        if complete
        else f"{result['rows_profiled']:,} of {shown['row_count']:,} rows",
    } | profiles.with_formats(result, shown["columns"])
    body["complete"] = complete
    if shown.get("kinds_pending"):
        return body  # profiled as the head reads it: again once the whole file decided
    return _remember(file, "profiles", key, body)


async def _whole_profile(
    storage: ObjectStorage, file: File, cache_dir: Path, shown: dict[str, Any]
) -> dict[str, Any] | None:
    """A CSV's profile over all its rows as the whole file's decision reads them (from its
    typed copy when it has one); None when that cannot be had (not a CSV, its kinds still
    being decided, or too costly to read whole in time): the sample profile stands in."""
    if previews.preview_kind(file.name) != "csv" or shown.get("kinds_pending"):
        return None
    path = await storage.local_copy(file.storage_key, cache_dir, file.sha256)
    try:
        found: dict[str, Any] = await run_preview(
            file.name,
            whole_profile.profile_whole_csv,
            path,
            shown=_without_cache(shown),
            work=cache_dir / file.sha256,
            time_limit=page_time_limit(file.size),
        )
    except PreviewsBusy:
        raise
    except Exception as exc:  # too costly, or unreadable past its pages: a sample stands in
        log.info("%s was profiled from a sample: %s", file.name, exc)
        return None
    return found


async def _sample_profile(
    storage: ObjectStorage, file: File, cache_dir: Path, shown: dict[str, Any]
) -> dict[str, Any]:
    """The profile of the file's first rows (app.files.profile bounds them)."""
    if previews.preview_kind(file.name) == "csv":
        length = min(profiles.PROFILE_MAX_BYTES, file.size)
        head = await storage.read_range(file.storage_key, 0, length) if length else b""
        found: dict[str, Any] = await run_preview(
            file.name,
            profiles.profile_csv_head,
            head,
            name=file.name,
            complete=length >= file.size,
            header_row=shown["header_row"],
        )
        return found
    path = await storage.local_copy(file.storage_key, cache_dir, file.sha256)
    found = await run_preview(
        file.name,
        profiles.profile_file,
        path,
        name=file.name,
        sheet=shown["sheet"],
        header_row=shown.get("header_row"),
    )
    return found


@asynccontextmanager
async def _contents(file: File) -> AsyncIterator[None]:
    """Turns bytes missing from storage into a 404."""
    try:
        yield
    except ObjectNotFound:
        raise NotFound(
            "This file's contents are missing from storage.", code="content_missing"
        ) from None


def _without_cache(shown: dict[str, Any]) -> dict[str, Any]:
    """The preview of a head without what the row keeps beside it (`_remember`)."""
    return {key: value for key, value in shown.items() if key != "_cache"}


def _stored(file: File) -> dict[str, Any] | None:
    """The stored preview, unless it was computed before previews had their current shape."""
    stored = file.preview
    if stored is None or stored.get("_cache", {}).get("shape") != PREVIEW_SHAPE:
        return None
    return stored


def _cached(file: File, section: str, key: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = (file.preview or {}).get("_cache", {}).get(section, {}).get(key)
    return found


def _remember(file: File, section: str, key: str, value: dict[str, Any]) -> dict[str, Any]:
    """Keeps `value` in the stored preview's cache (a new dict, so the change is saved)."""
    stored = dict(file.preview or {})
    cache = dict(stored.get("_cache", {}))
    entries = dict(cache.get(section, {}))
    if len(entries) < MAX_CACHED:
        entries[key] = value
    cache[section] = entries
    stored["_cache"] = cache
    file.preview = stored
    return value


async def check(storage: ObjectStorage, file: File, cache_dir: Path, copies: bool = True) -> None:
    """Read the file's head as its kind right after upload (the preview, within its bounds)
    and note what a user should know at once: unreadable, empty, or too large to check.
    A big CSV starts its typed copy when `copies` allows (see `preview`)."""
    if previews.preview_kind(file.name) is None:
        file.check, file.problem = "not_tabular", None
        return
    try:
        result = await preview(storage, file, cache_dir)
    except previews.TooCostly as exc:
        file.check, file.problem = "too_large", str(exc)
    except previews.UnreadableFile as exc:
        file.check, file.problem = "unreadable", str(exc)
    else:
        if result["rows"] or result["row_count"]:
            file.check, file.problem = "ok", None
            start_table_copy(storage, file, cache_dir, result, copy=copies)
        elif result["columns"]:
            file.check, file.problem = "empty", f"{file.name} has a header but no rows."
        else:
            file.check, file.problem = "empty", f"{file.name} is empty."


async def _count_rows(storage: ObjectStorage, file: File) -> int:
    counter = previews.CsvRowCounter()
    async for chunk in storage.iter_bytes(file.storage_key):
        counter.feed(chunk)
    return counter.finish()


async def _preview_csv(
    storage: ObjectStorage, file: File, header_row: int | None = None
) -> previews.Preview:
    # Only the first bytes are read: a 1 GB CSV costs a few megabytes. Its row count was
    # taken while it uploaded; only a file that has none is read through once to count.
    if file.row_count is None and file.size > CSV_HEAD_START:
        file.row_count = await _count_rows(storage, file)
    size = CSV_HEAD_START
    while True:
        length = min(size, file.size)
        head = await storage.read_range(file.storage_key, 0, length) if length else b""
        complete = length >= file.size
        try:
            return await run_preview(
                file.name,
                previews.preview_csv_head,
                head,
                name=file.name,
                complete=complete,
                row_count=file.row_count,
                header_row=header_row,
                # Read when called, so that tests can decide over fewer rows.
                type_rows=preview_table.CSV_TYPE_ROWS,
            )
        except previews.NeedMoreBytes:
            if size >= CSV_HEAD_MAX:
                raise previews.TooCostly(
                    f"{file.name}: its first 50 rows take more than 64 MB; no preview is shown."
                ) from None
            size *= 2
