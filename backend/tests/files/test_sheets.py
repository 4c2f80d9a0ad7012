"""Every worksheet of a workbook is listed and can be previewed, within the same bounds."""

from __future__ import annotations

import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from openpyxl.chart import BarChart, Reference

from app.api.errors import status_of
from app.files.preview import (
    NotAWorkbook,
    SheetNotFound,
    TooCostly,
    preview_file,
    workbook,
)


def two_sheets(path: Path) -> None:
    with pd.ExcelWriter(path) as writer:
        pd.DataFrame({"region": ["North", "South"], "sales": [10, 20]}).to_excel(
            writer, sheet_name="Sales", index=False
        )
        pd.DataFrame({"item": ["pen", "ink", "pad"], "cost": [1.5, 2.25, 3.0]}).to_excel(
            writer, sheet_name="Costs 2026", index=False
        )


def test_the_first_sheet_by_default_and_any_other_by_name(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    two_sheets(path)
    first = preview_file(path, name="book.xlsx")
    assert (first.sheets, first.sheet) == (["Sales", "Costs 2026"], "Sales")
    assert first.rows == [["North", 10], ["South", 20]] and first.row_count == 2
    assert first.format is None
    second = preview_file(path, name="book.xlsx", sheet="Costs 2026")
    assert (second.sheets, second.sheet) == (["Sales", "Costs 2026"], "Costs 2026")
    assert second.columns == [
        {"name": "item", "dtype": "str"},
        {"name": "cost", "dtype": "float64"},
    ]
    assert second.rows == [["pen", 1.5], ["ink", 2.25], ["pad", 3.0]] and second.row_count == 3
    assert preview_file(path, name="book.xlsx", sheet="Sales") == first


def test_a_sheet_that_does_not_exist(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    two_sheets(path)
    with pytest.raises(SheetNotFound) as caught:
        preview_file(path, name="book.xlsx", sheet="sales")
    assert status_of(caught.value) == 404
    assert str(caught.value) == (
        'book.xlsx has no sheet named "sales". Its sheets: "Sales", "Costs 2026".'
    )


def test_a_sheet_of_a_file_that_is_not_a_workbook(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_bytes(b"a\n1\n")
    with pytest.raises(NotAWorkbook, match=r"^a\.csv has no sheets: only Excel workbooks do\.$"):
        preview_file(path, name="a.csv", sheet="Sheet1")


def test_chart_sheets_are_not_listed(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    book.active.title = "Data"
    book.active.append(["x"])
    book.active.append([1])
    chart = BarChart()
    chart.add_data(Reference(book.active, min_col=1, min_row=1, max_row=2), titles_from_data=True)
    book.create_chartsheet("Chart").add_chart(chart)
    book.create_sheet("More").append(["y"])
    path = tmp_path / "charts.xlsx"
    book.save(path)
    assert preview_file(path, name="charts.xlsx").sheets == ["Data", "More"]


def test_a_later_sheet_without_its_size_is_counted_by_walking_its_rows(tmp_path: Path) -> None:
    book = openpyxl.Workbook(write_only=True)
    book.create_sheet("small").append(["a"])
    big = book.create_sheet("big")
    big.append(["n"])
    for i in range(1200):
        big.append([i])
    source, stripped = tmp_path / "b.xlsx", tmp_path / "nodim.xlsx"
    book.save(source)
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(stripped, "w") as zout:
        for item in zin.infolist():
            content = zin.read(item)
            if item.filename == "xl/worksheets/sheet2.xml":
                content = content.replace(b'<dimension ref="A1:A1201"/>', b"")
                assert b"<dimension" not in content
            zout.writestr(item, content)
    assert preview_file(stripped, name="nodim.xlsx", sheet="big").row_count == 1200


def test_the_bounds_hold_whichever_sheet_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A packed-tight second sheet refuses the workbook, even a preview of its first sheet."""
    # The dense sheet packs about 16 times: over this test's ratio (real bounds: 100, 1 MB).
    monkeypatch.setattr(workbook, "EXCEL_MAX_RATIO", 10)
    monkeypatch.setattr(workbook, "EXCEL_RATIO_MIN_BYTES", 100_000)
    book = openpyxl.Workbook(write_only=True)
    book.create_sheet("fine").append(["a"])
    dense = book.create_sheet("dense")
    for _ in range(2000):
        dense.append([1] * 20)
    path = tmp_path / "bomb.xlsx"
    book.save(path)
    for sheet in (None, "fine", "dense"):
        with pytest.raises(TooCostly, match=r"sheet2\.xml unpacks to .* real workbooks never do"):
            preview_file(path, name="bomb.xlsx", sheet=sheet)
