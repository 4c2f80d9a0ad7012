"""Columns that mix kinds (app.files.mixed_columns, app.files.reading): a workbook's and a
CSV's Amount of numbers and amount texts and Order date of dates and date texts are read as
numbers and dates from all their cells, with the day/month order settled and said, cells
that cannot be read kept as marked text, and every page (the head, later pages, sorted
pages, a CSV's typed copy) showing a column the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.files.preview import preview_file
from app.files.preview.paging import Window, build_table_copy, read_page, table_copy_path
from app.files.reading import date_of, number_of
from tests.support.mixed_files import expected, mixed_csv, mixed_workbook, order_rows


def written(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes(mixed_workbook() if name.endswith(".xlsx") else mixed_csv())
    return path


def page(path: Path, shown: dict[str, Any], window: Window) -> list[list[Any]]:
    found = read_page(path, name=path.name, shown=shown, window=window, work=path.parent / "w")
    return list(found["rows"])


@pytest.mark.parametrize("name", ["orders.xlsx", "orders.csv"])
def test_a_mixed_column_is_read_from_all_its_cells(tmp_path: Path, name: str) -> None:
    path = written(tmp_path, name)
    shown = preview_file(path, name=name).to_dict()
    columns = {c["name"]: c for c in shown["columns"]}
    assert columns["Amount"]["dtype"] == "float64"
    assert columns["Order date"]["dtype"].startswith("datetime64")
    date = columns["Order date"]
    assert (date["mixed"], date["day_first"], date["settled_by"]) == ("date", True, "13/01/2025")
    assert date["unreadable"] == 2  # "soon" on row 8, "tbd" on row 351: all cells were read
    assert date["reading"] == "dates read day-first (from 13/01/2025); 2 cells could not be read"
    assert columns["Amount"]["reading"] == (
        "numbers and amounts read as numbers; 1 cell could not be read"
    )
    rows = order_rows()
    assert shown["rows"] == [expected(row) for row in rows[:50]]
    assert shown["rows"][7][1] == {"unreadable": "soon"}
    assert shown["rows"][5][2] == -1200.0


@pytest.mark.parametrize("name", ["orders.xlsx", "orders.csv"])
def test_every_page_and_sort_shows_a_column_the_same_way(tmp_path: Path, name: str) -> None:
    path = written(tmp_path, name)
    shown = preview_file(path, name=name).to_dict()
    rows = order_rows()
    late = page(path, shown, Window(offset=300, limit=100))
    assert late == [expected(row) for row in rows[300:400]]
    assert late[50][1] == {"unreadable": "tbd"}
    by_amount = page(path, shown, Window(offset=0, limit=600, sort="Amount"))
    amounts = [row[2] for row in by_amount]
    readable = [a for a in amounts if not isinstance(a, dict)]
    assert readable == sorted(readable) and amounts[-1] == {"unreadable": "ask Bob"}
    assert sorted(map(str, by_amount)) == sorted(str(expected(row)) for row in rows)
    if name.endswith(".csv"):
        # A big CSV's later pages read its typed copy: the same cells again.
        assert build_table_copy(path, shown=shown, work=path.parent / "w")
        assert table_copy_path(shown, path.parent / "w").exists()
        assert page(path, shown, Window(offset=300, limit=100)) == late
        assert page(path, shown, Window(offset=0, limit=600, sort="Amount")) == by_amount


def test_without_a_date_that_settles_it_the_order_is_assumed_and_said(tmp_path: Path) -> None:
    path = tmp_path / "few.csv"
    path.write_text("when\n2025-07-31\n02/07/2025\n03/08/2025\n")
    column = preview_file(path, name="few.csv").columns[0]
    assert column["mixed"] == "date" and column["settled_by"] is None
    assert column["reading"] == "dates read month-first (assumed: no date settles the order)"


@pytest.mark.parametrize(
    ("text", "decimal", "number"),
    [
        ("€22,729.58", ".", 22729.58),
        ("22729.58", ".", 22729.58),
        ("(1,200.00)", ".", -1200.0),
        ("-3.5%", ".", -0.035),
        ("USD 12", ".", 12.0),
        ("1.058,58 €", ",", 1058.58),
        ("12,5", ",", 12.5),
        ("1 058", ".", None),  # a plain space is no thousands separator
        ("12abc", ".", None),
        ("(12", ".", None),
    ],
)
def test_amount_texts_read_as_numbers(text: str, decimal: str, number: float | None) -> None:
    assert number_of(text, decimal) == number


def test_date_texts_read_in_either_order() -> None:
    assert str(date_of("02/07/2025", day_first=True)) == "2025-07-02 00:00:00"
    assert str(date_of("02/07/2025", day_first=False)) == "2025-02-07 00:00:00"
    assert str(date_of("2025/07/31 10:30", day_first=True)) == "2025-07-31 10:30:00"
    assert date_of("31/02/2025", day_first=True) is None
