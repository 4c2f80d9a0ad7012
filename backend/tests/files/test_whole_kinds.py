"""Each column's kind decided over the whole file (whole_kinds.py): the head's decision
said to be provisional, then replaced by one every page, sort, filter and typed copy reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from app.agent.prompting import read_hint
from app.files.preview.delimited import preview_csv_head
from app.files.preview.filters import Condition, check_filter
from app.files.preview.paging import Window, build_table_copy, read_page, table_copy_path
from app.files.preview.whole_kinds import decide_whole, keep_head, settled, stored_decision

HEAD = 100


def head_of(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    return preview_csv_head(
        data, name=path.name, complete=True, row_count=None, type_rows=HEAD
    ).to_dict()


def whole(path: Path, tmp_path: Path) -> dict[str, Any]:
    head = head_of(path)
    return settled(head, decide_whole(path, name=path.name, shown=head, work=tmp_path / "w"))


def page(path: Path, shown: dict[str, Any], tmp_path: Path, **window: Any) -> list[list[Any]]:
    conditions = tuple(check_filter(list(window.pop("conditions", ())), shown["columns"], "x"))
    rows = read_page(
        path,
        name=path.name,
        shown=shown,
        window=Window(conditions=conditions, **window),
        work=tmp_path / "w",
    )["rows"]
    return list(rows)


def test_a_column_of_numbers_that_turns_to_text_past_the_head_is_text(tmp_path: Path) -> None:
    lines = ["id,amount"] + [f"{i},{i * 1.5 if i < 150 else f'ref {i}'}" for i in range(400)]
    path = tmp_path / "turns.csv"
    path.write_text("\n".join(lines) + "\n")

    head = head_of(path)
    assert head["kinds_pending"] is True and head["decided_rows"] == HEAD
    assert head["columns"][1]["dtype"] == "float64"

    final = whole(path, tmp_path)
    amount = final["columns"][1]
    assert final["kinds_pending"] is False and final["decided_rows"] == 400
    assert amount["dtype"] == "str"
    assert amount["reading"] == "text: 250 cells after row 100 are not numbers"
    # Every page shows the column as its text, the first rows too.
    assert final["rows"][1] == [1, "1.5"]
    assert page(path, final, tmp_path, offset=398, limit=5) == [[398, "ref 398"], [399, "ref 399"]]
    found = page(path, final, tmp_path, conditions=[Condition("amount", "contains", "ref 39")])
    assert [row[0] for row in found] == [39, *range(390, 400)][1:]


def test_a_mixed_head_with_a_reading_assumed_says_it_is_checked(tmp_path: Path) -> None:
    amount = '"€1,200.50"'
    rows = [f"{i},{amount if i % 3 else i}" if i != 5 else "5,unknown" for i in range(300)]
    path = tmp_path / "mixed.csv"
    path.write_text("id,amount\n" + "\n".join(rows) + "\n")
    amount = head_of(path)["columns"][1]
    assert amount["mixed"] == "number"
    assert amount["reading"].endswith("(decided over the first 100 rows; checking the whole file…)")
    final = whole(path, tmp_path)["columns"][1]
    assert final["reading"] == "numbers and amounts read as numbers; 1 cell could not be read"


def test_the_only_day_first_date_past_the_head_settles_the_order(tmp_path: Path) -> None:
    dates = [f"{1 + i % 12:02d}/{1 + i % 9:02d}/2025" for i in range(500)]
    dates[420] = "13/02/2025"  # the only date that can only be day-first
    path = tmp_path / "dates.csv"
    path.write_text("id,when\n" + "".join(f"{i},{d}\n" for i, d in enumerate(dates)))
    assert head_of(path)["columns"][1]["date_format"] == "%m/%d/%Y"

    final = whole(path, tmp_path)
    when = final["columns"][1]
    assert when["date_format"] == "%d/%m/%Y"
    assert when["reading"] == "dates read day-first (from 13/02/2025)"
    # 11/02/2025 is the 11th of February on every page, and row 420 is read.
    assert final["rows"][10] == [10, "2025-02-11"]
    assert page(path, final, tmp_path, offset=420, limit=1) == [[420, "2025-02-13"]]
    # The agent is told to read it day-first.
    assert "'%d/%m/%Y'" in read_hint(final)


def test_a_big_file_reads_one_decision_on_every_page_and_in_its_typed_copy(
    tmp_path: Path,
) -> None:
    """A few MB, its kinds decided over its first 100 rows, then over all of them."""
    count = 60_000

    def price(i: int) -> str:
        return "about 5" if i > HEAD and i % 1000 == 7 else f"{i % 997}.25"

    lines = ["id,price,code"] + [
        f"{i},{price(i)},{i if i < 5000 else f'K-{i}'}" for i in range(count)
    ]
    path = tmp_path / "big.csv"
    path.write_text("\n".join(lines) + "\n")
    final = whole(path, tmp_path)
    price_column, code = final["columns"][1], final["columns"][2]
    assert price_column["mixed"] == "number" and price_column["unreadable"] == 59
    assert (
        price_column["reading"] == "numbers and amounts read as numbers; 59 cells could not be read"
    )
    assert code["dtype"] == "str"
    assert code["reading"] == "text: 55,000 cells after row 100 are not numbers"

    def check(shown: dict[str, Any]) -> None:
        assert page(path, shown, tmp_path, limit=3) == [
            [0, 0.25, "0"],
            [1, 1.25, "1"],
            [2, 2.25, "2"],
        ]
        assert page(path, shown, tmp_path, offset=count - 1, limit=5) == [
            [count - 1, (count - 1) % 997 + 0.25, f"K-{count - 1}"]
        ]
        assert page(path, shown, tmp_path, offset=1007, limit=1) == [
            [1007, {"unreadable": "about 5"}, "1007"]
        ]
        top = page(path, shown, tmp_path, limit=2, sort="price", descending=True)
        assert [row[1] for row in top] == [996.25, 996.25]
        found = page(
            path, shown, tmp_path, limit=500, conditions=[Condition("code", "contains", "K-5999")]
        )
        assert [row[0] for row in found] == [5999, *range(59990, 60000)]

    check(final)  # read from the text
    assert build_table_copy(path, shown=final, work=tmp_path / "w")
    copy = table_copy_path(final, tmp_path / "w")
    described = duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{copy}')").fetchall()
    types = {row[0]: row[1] for row in described}
    assert (types["c1"], types["c2"]) == ("DOUBLE", "VARCHAR")
    check(final)  # read from the typed copy, the same


def test_a_file_that_cannot_be_checked_whole_keeps_its_head_s_decision(tmp_path: Path) -> None:
    amount = '"€1,200.50"'
    rows = [f"{i},{amount if i % 3 else i}" if i != 5 else "5,unknown" for i in range(300)]
    path = tmp_path / "mixed.csv"
    path.write_text("id,amount\n" + "\n".join(rows) + "\n")
    head = head_of(path)
    keep_head(head, tmp_path / "w")
    decision = stored_decision(head, tmp_path / "w")
    assert decision is not None
    final = settled(head, decision)
    assert (final["kinds_pending"], final["decided_rows"]) == (False, HEAD)
    assert final["columns"][1]["reading"].endswith("(over the first 100 rows)")
