"""Filters in the preview, through the API on both stacks: conditions over the whole file
(typed: numbers as numbers, dates as dates, text case-blind), with sort and paging, the
matching rows counted; bad filters refused with a sentence and a code; the mixed workbook
read and paged alike; and the dataset list showing each file's rows, columns and sheets."""

from __future__ import annotations

import json
from typing import Any

from tests.api.test_preview_pages import page, prices_csv, uploaded
from tests.conftest import Api
from tests.support.mixed_files import expected, mixed_workbook, order_rows


def filtered(api: Api, file: dict[str, Any], conditions: list[dict[str, Any]], **params: Any):  # type: ignore[no-untyped-def]
    return page(api, file, filter=json.dumps(conditions), **params)


def test_a_filter_keeps_the_matching_rows_of_the_whole_file(alice: Api) -> None:
    content, prices = prices_csv(rows=240)
    file = uploaded(alice, "prices.csv", content)
    over = filtered(alice, file, [{"column": "price", "op": "gt", "value": 100}], limit=500)
    want = [i for i, price in enumerate(prices) if price > 100]
    assert over["row_count"] == len(want) and over["unfiltered_row_count"] == 240
    assert [row[0] for row in over["rows"]] == want
    assert over["filter"] == [{"column": "price", "op": "gt", "value": 100}]
    # All conditions hold; with a sort and a page of the matching rows.
    both = [
        {"column": "price", "op": "ge", "value": 50},
        {"column": "sold_on", "op": "lt", "value": "2024-05-01"},
    ]
    want = sorted(
        (i for i, price in enumerate(prices) if price >= 50 and i < 121), key=lambda i: -prices[i]
    )
    second = filtered(alice, file, both, sort="price", order="desc", offset=5, limit=5)
    assert second["row_count"] == len(want)
    assert [row[0] for row in second["rows"]] == want[5:10]
    day = filtered(alice, file, [{"column": "sold_on", "op": "eq", "value": "2024-01-11"}])
    assert [row[0] for row in day["rows"]] == [10] and day["row_count"] == 1
    text = filtered(alice, file, [{"column": "product", "op": "contains", "value": "ITEM 23"}])
    assert [row[1] for row in text["rows"]] == [f"item 23{i}" for i in range(10)]
    none = filtered(alice, file, [{"column": "product", "op": "empty"}])
    assert (none["row_count"], none["rows"]) == (0, [])
    every = filtered(alice, file, [{"column": "product", "op": "not_empty"}])
    assert every["row_count"] == 240


def test_a_mixed_workbook_filters_and_pages_as_it_reads(alice: Api) -> None:
    file = uploaded(alice, "orders.xlsx", mixed_workbook())
    assert file["table"] == {"rows": 600, "columns": 4, "sheets": ["Orders"]}
    first = page(alice, file)
    rows = order_rows()
    assert first["rows"] == [expected(row) for row in rows[:50]]
    date = next(c for c in first["columns"] if c["name"] == "Order date")
    assert date["type"] == "date"
    assert date["reading"] == "dates read day-first (from 13/01/2025); 2 cells could not be read"
    assert page(alice, file, offset=440, limit=20)["rows"] == [
        expected(row) for row in rows[440:460]
    ]
    july = filtered(
        alice,
        file,
        [
            {"column": "Order date", "op": "ge", "value": "2025-07-01"},
            {"column": "Order date", "op": "le", "value": "2025-07-31"},
            {"column": "Amount", "op": "gt", "value": "€10,000"},
        ],
        limit=500,
    )
    assert july["row_count"] == 31 and july["unfiltered_row_count"] == 600
    assert {row[1][:7] for row in july["rows"]} == {"2025-07"}
    unread = filtered(alice, file, [{"column": "Order date", "op": "empty"}])
    assert unread["row_count"] == 0  # "soon" and "tbd" are not empty: they are unreadable
    listed = alice.get(f"/projects/{file['project_id']}/files").json()["items"]
    assert listed[0]["table"] == {"rows": 600, "columns": 4, "sheets": ["Orders"]}


def test_bad_filters_say_what_is_wrong(alice: Api) -> None:
    content, _ = prices_csv(rows=20)
    file = uploaded(alice, "prices.csv", content)
    bad = {
        "not json": ("bad_filter", "The filter is not valid JSON"),
        json.dumps({"column": "price"}): ("bad_filter", "The filter should be a JSON list"),
        json.dumps([{"column": "nope", "op": "eq", "value": 1}]): (
            "unknown_column",
            'prices.csv has no column named "nope".',
        ),
        json.dumps([{"column": "price", "op": "like", "value": 1}]): (
            "bad_filter",
            'Condition 1 of the filter has an unknown op "like"',
        ),
        json.dumps([{"column": "price", "op": "gt"}]): (
            "bad_filter",
            'Condition 1 of the filter ("gt") needs a value.',
        ),
        json.dumps([{"column": "price", "op": "gt", "value": "lots"}]): (
            "bad_filter",
            "\"price\" holds numbers: 'lots' is not one.",
        ),
        json.dumps([{"column": "sold_on", "op": "lt", "value": "yesterday"}]): (
            "bad_filter",
            '"sold_on" holds dates',
        ),
        json.dumps([{"column": "price", "op": "contains", "value": "1"}]): (
            "bad_filter",
            '"contains" applies to text columns',
        ),
        json.dumps([{"column": "price", "op": "empty"}] * 21): (
            "bad_filter",
            "A filter holds at most 20 conditions; this has 21.",
        ),
    }
    for text, (code, sentence) in bad.items():
        response = alice.get(f"/files/{file['id']}/preview", params={"filter": text})
        assert response.status_code == 422, text
        assert response.json()["code"] == code, response.json()
        assert response.json()["detail"].startswith(sentence), response.json()
