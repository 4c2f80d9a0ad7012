"""A big CSV is copied once, after its upload, into Parquet with its columns typed as its
preview reads them; its pages and sorts then read that copy (paging.build_table_copy),
on both stacks."""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import Path

import duckdb

from app.files import whole_file_work
from app.files.preview.paging import DEEP_PAGE_ROWS, TABLE_COPY_MIN_BYTES
from tests.api.test_preview_pages import page, uploaded
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api, stack_settings
from tests.support.llm import ScriptedLLM
from tests.support.server import LiveServer

ROWS = 700_000
MIB = 1 << 20


def big_csv() -> tuple[bytes, list[tuple[int, str, float]]]:
    """A CSV just over the size that is copied: ids, products in mixed case, prices."""
    rows = [(i, f"{'Item' if i % 3 else 'item'} {(i * 7919) % ROWS:06d}", (i * 37) % 1000 / 4)
            for i in range(ROWS)]  # fmt: skip
    text = "id,product,price\n" + "".join(f"{i},{p},{x}\n" for i, p, x in rows)
    content = text.encode()
    assert len(content) > TABLE_COPY_MIN_BYTES
    return content, rows


def copies(live: LiveServer, content: bytes) -> list[Path]:
    digest = hashlib.sha256(content).hexdigest()
    folder = Path(live.settings.DATA_DIR) / "cache" / "files"
    return sorted(folder.glob(f"{digest}.table.*.parquet"))


def test_a_big_csv_pages_and_sorts_from_its_typed_copy(alice: Api, live: LiveServer) -> None:
    content, rows = big_csv()
    file = uploaded(alice, "big.csv", content)
    assert file["check"] == "ok"
    # The copy is made in the background after the upload (a few seconds at most here).
    deadline = time.monotonic() + 120
    while not copies(live, content) and time.monotonic() < deadline:
        time.sleep(0.2)
    [copy] = copies(live, content)

    deep = DEEP_PAGE_ROWS * 3
    by_price = sorted(rows, key=lambda r: (-r[2], r[0]))
    shown = page(alice, file, offset=deep, limit=20, sort="price", order="desc")
    assert shown["row_count"] == ROWS
    assert [tuple(row) for row in shown["rows"]] == by_price[deep : deep + 20]
    by_product = sorted(rows, key=lambda r: (r[1].lower(), r[1], r[0]))
    shown = page(alice, file, offset=deep, limit=20, sort="product")
    assert [tuple(row) for row in shown["rows"]] == by_product[deep : deep + 20]
    middle = page(alice, file, offset=ROWS // 2, limit=5)
    assert [tuple(row) for row in middle["rows"]] == rows[ROWS // 2 : ROWS // 2 + 5]

    # What the pages read is that copy: changed under them, they show the change.
    con = duckdb.connect()
    quoted = "'" + str(copy).replace("'", "''") + "'"
    con.execute(f"CREATE TABLE t AS SELECT * REPLACE ('changed' AS c1) FROM read_parquet({quoted})")
    con.execute(f"COPY t TO {quoted} (FORMAT parquet)")
    con.close()
    again = page(alice, file, offset=ROWS // 2, limit=5)
    assert [row[1] for row in again["rows"]] == ["changed"] * 5
    assert copies(live, content) == [copy]  # made once

    # The copy counts against the project's and the uploader's storage.
    usage = alice.get(f"/projects/{file['project_id']}/usage").json()
    assert usage["copies_bytes"] == copy.stat().st_size > 0
    assert usage["used_bytes"] == len(content) + copy.stat().st_size
    assert alice.get("/auth/me/usage").json()["copies_bytes"] == copy.stat().st_size


def test_a_small_csv_is_not_copied(alice: Api, live: LiveServer) -> None:
    content = b"a,b\n" + b"".join(b"%d,x\n" % i for i in range(300))
    file = uploaded(alice, "small.csv", content)
    assert page(alice, file, offset=250, limit=5, sort="a")["rows"][0] == [250, "x"]
    assert copies(live, content) == []


def test_a_file_deleted_while_it_is_copied_leaves_no_copy(alice: Api, live: LiveServer) -> None:
    content, _ = big_csv()
    file = uploaded(alice, "gone.csv", content)
    assert alice.delete(f"/files/{file['id']}").status_code == 204

    async def copied() -> None:
        await asyncio.gather(*whole_file_work._copies.values(), return_exceptions=True)

    live.call(copied())
    digest = hashlib.sha256(content).hexdigest()
    folder = Path(live.settings.DATA_DIR) / "cache" / "files"
    assert sorted(p.name for p in folder.glob(f"{digest}*")) == []


def test_a_typed_copy_past_the_storage_quota_is_not_made_and_the_page_says_so(
    llm: ScriptedLLM, tmp_path: Path
) -> None:
    """The copy would take the project past its quota: none is made, the upload and its pages
    work all the same (read from the text), and the page says why they are slower."""
    content, rows = big_csv()
    quota_mb = len(content) // MIB + 2  # the file fits, a copy as big as it would not
    settings = stack_settings(
        "embedded", tmp_path / "data", LLM_API_BASE=llm.api_base, PROJECT_STORAGE_QUOTA_MB=quota_mb
    )
    live = LiveServer(settings).start()
    try:
        with Api(live).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as api:
            file = uploaded(api, "big.csv", content)
            assert file["check"] == "ok"
            shown = page(api, file, offset=ROWS // 2, limit=5)
            assert [tuple(row) for row in shown["rows"]] == rows[ROWS // 2 : ROWS // 2 + 5]
            assert shown["notice"] == (
                "Pages of big.csv are read from its text, more slowly: a typed copy would take "
                "its project past its storage quota."
            )
            assert copies(live, content) == []
            assert page(api, file, limit=5)["notice"] is None  # the head needs no copy
    finally:
        live.stop()
