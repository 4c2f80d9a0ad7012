"""A CSV's column kinds decided over the whole file after its upload, through the API on
both stacks: the decision replaces the head's on the file's row, and every page, sort,
filter and the typed copy read it."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest

from app.files.preview import paging, table
from tests.api.test_preview_pages import page, uploaded
from tests.conftest import Api
from tests.support.server import LiveServer

ROWS = 40_000


def settled(api: Api, file: dict[str, Any]) -> dict[str, Any]:
    """The first page once the whole file's decision is in (the background work's pace)."""
    deadline = time.monotonic() + 300
    while (shown := page(api, file))["kinds_pending"] and time.monotonic() < deadline:
        time.sleep(0.3)
    return shown


def test_a_csv_s_kinds_are_decided_over_the_whole_file(
    alice: Api, live: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(table, "CSV_TYPE_ROWS", 200)
    monkeypatch.setattr(paging, "TABLE_COPY_MIN_BYTES", 1 << 20)
    lines = ["id,amount,when"]
    for i in range(ROWS):
        amount = f"{i}.5" if i < 1000 else f"ref-{i}"
        when = f"{1 + i % 12:02d}/{1 + i % 9:02d}/2025" if i != 30_000 else "13/02/2025"
        lines.append(f"{i},{amount},{when}")
    content = ("\n".join(lines) + "\n").encode()
    assert len(content) > paging.TABLE_COPY_MIN_BYTES
    file = uploaded(alice, "late.csv", content)

    shown = settled(alice, file)
    assert shown["decided_rows"] == ROWS
    amount, when = shown["columns"][1], shown["columns"][2]
    assert (amount["type"], amount["reading"]) == (
        "text",
        "text: 39,000 cells after row 200 are not numbers",
    )
    assert (when["type"], when["date_format"]) == ("date", "%d/%m/%Y")
    assert when["reading"] == "dates read day-first (from 13/02/2025)"
    assert shown["rows"][10] == [10, "10.5", "2025-02-11"]

    last = page(alice, file, offset=ROWS - 1, limit=5)
    assert last["rows"] == [[ROWS - 1, f"ref-{ROWS - 1}", "2025-04-04"]]
    assert page(alice, file, offset=30_000, limit=1)["rows"] == [
        [30_000, "ref-30000", "2025-02-13"]
    ]
    latest = page(alice, file, limit=1, sort="when", order="desc")
    assert latest["rows"][0][2] == "2025-09-12"
    found = page(
        alice, file, filter='[{"column": "amount", "op": "contains", "value": "ref-3999"}]'
    )
    assert found["row_count"] == 11

    # The typed copy is made once, with the whole file's decision.
    digest = hashlib.sha256(content).hexdigest()
    folder = Path(live.settings.DATA_DIR) / "cache" / "files"
    deadline = time.monotonic() + 300
    while not list(folder.glob(f"{digest}.table.*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.3)
    [copy] = folder.glob(f"{digest}.table.*.parquet")
    described = duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{copy}')").fetchall()
    assert [row[1] for row in described][:3] == ["DOUBLE", "VARCHAR", "TIMESTAMP"]
    assert page(alice, file, offset=30_000, limit=1)["rows"] == [
        [30_000, "ref-30000", "2025-02-13"]
    ]

    # The decision is kept on the file's row: it holds without the cache beside the file.
    for kept in folder.glob(f"{digest}.kinds.*.json"):
        kept.unlink()
    again = page(alice, file)
    assert again["kinds_pending"] is False
    assert again["columns"] == shown["columns"]


def test_a_column_text_in_its_first_rows_is_read_from_the_whole_file(
    alice: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Words in its first rows, numbers after: numbers, the words read as missing; amounts
    take their currencies and decimals from every row; the profile reads every row so."""
    monkeypatch.setattr(table, "CSV_TYPE_ROWS", 200)
    rows = 10_000
    lines = ["id,amount,price,fee"]
    for i in range(rows):
        amount = ("—", "TBD")[i % 2] if i < 60 else str(i * 2)
        price = f'"${i:,}"' if i < 300 else f'"€{i:,}.50"'
        lines.append(f'{i},{amount},{price},"${i * 3:,}.25"')
    file = uploaded(alice, "words.csv", ("\n".join(lines) + "\n").encode())

    shown = settled(alice, file)
    amount, price, fee = shown["columns"][1:]
    assert (amount["type"], amount["missing_values"]) == (
        "number",
        [{"value": "TBD", "count": 30}, {"value": "—", "count": 30}],
    )
    assert amount["reading"] == 'numbers over the whole file; read as missing: "TBD" (30), "—" (30)'
    assert (price["currencies"], price["decimals"], price["currency"]) == (["€", "$"], 2, None)
    assert (fee["currency"], fee["decimals"]) == ("$", 2)
    assert shown["rows"][0][1] is None
    assert page(alice, file, offset=60, limit=1)["rows"] == [[60, 120, 60, 180.25]]
    found = page(alice, file, filter='[{"column": "amount", "op": "empty"}]', limit=100)
    assert found["row_count"] == 60 and found["rows"][0] == [0, None, 0, 0.25]

    profile = alice.get(f"/files/{file['id']}/profile")
    assert profile.status_code == 200, profile.text
    body = profile.json()
    assert (body["rows_profiled"], body["complete"], body["sampled"]) == (rows, True, None)
    by_name = {column["name"]: column for column in body["columns"]}
    assert (by_name["amount"]["type"], by_name["amount"]["missing"]) == ("number", 60)
    assert by_name["amount"]["min"] == 120
    assert (by_name["fee"]["currency"], by_name["fee"]["decimals"]) == ("$", 2)
    assert by_name["fee"]["mean"] == round(sum(i * 3 + 0.25 for i in range(rows)) / rows, 2)
    assert by_name["price"]["currencies"] == ["€", "$"]


def test_json_lines_kinds_are_decided_over_the_whole_file(alice: Api) -> None:
    records = [
        {"id": i, "code": i if i < 1200 else f"A-{i}", "amount": "n/a" if i < 5 else i / 2}
        for i in range(1500)
    ]
    content = "".join(json.dumps(record) + "\n" for record in records).encode()
    file = uploaded(alice, "late.jsonl", content)

    shown = settled(alice, file)
    code, amount = shown["columns"][1:]
    assert (code["type"], code["reading"]) == ("text", "text: 300 cells are not numbers")
    assert (amount["type"], amount["missing_values"]) == (
        "number",
        [{"value": "n/a", "count": 5}],
    )
    assert shown["rows"][0] == [0, "0", None]
    assert page(alice, file, offset=1499, limit=1)["rows"] == [[1499, "A-1499", 749.5]]
