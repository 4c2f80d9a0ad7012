"""Preview benchmark: pages and sorts over the whole of a ~1 GB CSV.

Writes a CSV of about `--size-mb` MB in a temporary directory and times what
`GET /files/{id}/preview` runs for it, in the preview child process with its limits
(app.files.preview_process), without HTTP and storage around it:

- the head (the first 50 rows, kept on the file's row once computed; its row count comes
  from the upload, so it is counted apart here and not timed),
- each column's kind decided over the whole file (what the server does in the background
  after the upload: whole_kinds.decide_whole); the pages below read that decision,
- the first page read from the whole file (offset 0, limit 51, as a page past the head is),
- a page in the middle (offset: half the rows),
- the first page sorted by a numeric column, descending, over every row,
- the same sort, a page in the middle,
- sorted by a text column, the first page and one in the middle;
- filtered (price over 900 and region containing "-1", over every row, its matching rows
  counted): the first page, and the same sorted by price;

then makes the file's typed copy in Parquet (what the server makes in the background after
the upload: paging.build_table_copy) and times the same pages read from it.

    cd backend && uv run python -m benchmarks.preview [--size-mb 1024]

Run it on a quiet machine: the figures are wall-clock seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from app.files.preview import CsvRowCounter, TooCostly, preview_csv_head
from app.files.preview.filters import Condition, check_filter
from app.files.preview.paging import Window, build_table_copy, read_page
from app.files.preview.whole_kinds import decide_whole, settled
from app.files.preview_process import run_preview


def make_csv(path: Path, size_mb: int) -> None:
    """A CSV of about `size_mb` MB: ids, dates, regions, prices and quoted notes."""
    rows = [
        f"{i},2026-{1 + i % 12:02d}-{1 + i % 28:02d},region-{i % 17},"
        f'{(i * 7919) % 100_000 / 100:.2f},"note {i % 13}, checked"\n'
        for i in range(50_000)
    ]
    block = "".join(rows).encode()
    with path.open("wb") as out:
        out.write(b"id,date,region,price,note\n")
        for _ in range(max(1, (size_mb << 20) // len(block))):
            out.write(block)


async def timed(label: str, call: Callable[[], Awaitable[Any]]) -> Any:
    """What `call` returns, its time printed; None when it passed the server's time limit."""
    start = time.perf_counter()
    try:
        result = await call()
    except TooCostly:
        print(f"{label:<44} {time.perf_counter() - start:6.2f} s: over the time limit (422)")
        return None
    print(f"{label:<44} {time.perf_counter() - start:6.2f} s")
    return result


async def main(size_mb: int) -> None:
    # Imported here: each preview child imports this module again, and the app's modules
    # behind previewing would add seconds to every page timed.
    from app.files.previewing import page_time_limit

    with tempfile.TemporaryDirectory(prefix="bench-preview-") as tmp:
        path = Path(tmp) / "big.csv"
        start = time.perf_counter()
        make_csv(path, size_mb)
        size = path.stat().st_size
        print(f"wrote {size / (1 << 30):.2f} GB in {time.perf_counter() - start:.1f} s")
        counter = CsvRowCounter()
        with path.open("rb") as file:
            while chunk := file.read(8 << 20):
                counter.feed(chunk)
            file.seek(0)
            head_bytes = file.read(4 << 20)
        rows = counter.finish()
        print(f"{rows:,} rows (counted as the upload counts them)")

        def head() -> Awaitable[Any]:
            return run_preview(
                path.name, preview_csv_head, head_bytes, name=path.name, complete=False,
                row_count=rows,
            )  # fmt: skip

        shown = (await timed("head (first 50 rows, kept on the row)", head)).to_dict()

        def decide() -> Awaitable[Any]:
            return run_preview(
                path.name, decide_whole, path, name=path.name, shown=shown,
                work=Path(tmp) / "work", time_limit=600,
            )  # fmt: skip

        decision = await timed("kinds decided over the whole file (background)", decide)
        if decision is not None:
            shown = settled(shown, decision)

        def page(window: Window) -> Callable[[], Awaitable[Any]]:
            return lambda: run_preview(
                path.name, read_page, path, name=path.name, shown=shown, window=window,
                work=Path(tmp) / "work", time_limit=page_time_limit(size),
            )  # fmt: skip

        middle = rows // 2
        asked = [Condition("price", "gt", 900), Condition("region", "contains", "-1")]
        conditions = tuple(check_filter(asked, shown["columns"], path.name))
        windows = [
            ("first page, read from the whole file", Window(0, 51)),
            (f"middle page (offset {middle:,})", Window(middle, 50)),
            ("sorted by price, descending: first page", Window(0, 50, "price", True)),
            ("sorted by price, descending: middle page", Window(middle, 50, "price", True)),
            ("sorted by region (text): first page", Window(0, 50, "region")),
            ("sorted by region (text): middle page", Window(middle, 50, "region")),
            (
                "filtered (price > 900, region ~ -1): first page",
                Window(0, 50, conditions=conditions),
            ),
            (
                "filtered, sorted by price: first page",
                Window(0, 50, "price", True, conditions=conditions),
            ),
        ]
        print("-- read from the CSV's text")
        from_text = [await timed(label, page(window)) for label, window in windows]
        assert from_text[1]["rows"][0][0] == middle % 50_000, from_text[1]["rows"][0]
        if from_text[2] is not None:
            print(f"{'':<44} top price {from_text[2]['rows'][0][3]}")
        if from_text[6] is not None:
            print(f"{'':<44} {from_text[6]['row_count']:,} of {rows:,} rows match the filter")

        def copy() -> Awaitable[Any]:
            return run_preview(
                path.name, build_table_copy, path, shown=shown, work=Path(tmp) / "work",
                time_limit=600,
            )  # fmt: skip

        await timed("-- typed copy made (once, in the background)", copy)
        from_copy = [await timed(label, page(window)) for label, window in windows]
        # The same pages: the copy keeps the rows' order and their values.
        for text, typed in zip(from_text, from_copy, strict=True):
            assert text is None or typed == text, "the copy's pages differ from the text's"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    asyncio.run(main(parser.parse_args().size_mb))
