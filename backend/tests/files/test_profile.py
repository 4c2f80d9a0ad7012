"""Tests for app.files.profile: column profiles over a bounded sample, numbers exact."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from app.files import profile as profile_module
from app.files.preview import NotAWorkbook, PreviewUnsupported, SheetNotFound, UnreadableFile
from app.files.profile import profile_csv_head, profile_file, sample_rows

SHOP = (
    b"city;amount;day;paid;note\n"
    b"Lyon;1.234,5;31/01/2026;true;a\n"
    b"Metz;12,5;01/02/2026;false;\n"
    b"Lyon;2,5;;true;b\n"
    b"Nice;;03/02/2026;true;a\n"
)


def by_name(profile: dict[str, object]) -> dict[str, dict[str, object]]:
    return {c["name"]: c for c in profile["columns"]}  # type: ignore[attr-defined,index]


def test_a_small_csv_profiled_exactly(tmp_path: Path) -> None:
    path = tmp_path / "shop.csv"
    path.write_bytes(SHOP)
    profile = profile_file(path, name="shop.csv")
    assert (profile["rows_profiled"], profile["complete"]) == (4, True)
    columns = by_name(profile)
    assert columns["city"] == {
        "name": "city",
        "dtype": "str",
        "kind": "text",
        "missing": 0,
        "unreadable": 0,
        "distinct": 3,
        "min": None,
        "max": None,
        "mean": None,
        "top": [
            {"value": "Lyon", "count": 2},
            {"value": "Metz", "count": 1},
            {"value": "Nice", "count": 1},
        ],
    }
    assert columns["amount"] == {
        "name": "amount",
        "dtype": "float64",
        "kind": "number",
        "missing": 1,
        "unreadable": 0,
        "distinct": 3,
        "min": 2.5,
        "max": 1234.5,
        "mean": 416.5,
        "top": None,
    }
    assert columns["day"] == {
        "name": "day",
        "dtype": "datetime64[us]",
        "kind": "datetime",
        "missing": 1,
        "unreadable": 0,
        "distinct": 3,
        "min": "2026-01-31",
        "max": "2026-02-03",
        "mean": "2026-02-01T08:00:00",
        "top": None,
    }
    assert (columns["paid"]["kind"], columns["paid"]["top"]) == (
        "boolean",
        [{"value": True, "count": 3}, {"value": False, "count": 1}],
    )
    assert (columns["note"]["missing"], columns["note"]["distinct"]) == (1, 2)
    assert columns["note"]["top"] == [{"value": "a", "count": 2}, {"value": "b", "count": 1}]
    # The same bytes given as a head (as the service reads CSVs) give the same profile.
    assert profile_csv_head(SHOP, name="shop.csv", complete=True) == profile


def test_top_values_are_the_five_most_frequent_ties_by_text(tmp_path: Path) -> None:
    words = ["f"] * 3 + ["e"] * 3 + ["d"] * 2 + ["c"] * 2 + ["b"] * 2 + ["a"] * 2 + ["z"]
    path = tmp_path / "w.csv"
    path.write_text("word\n" + "\n".join(words) + "\n")
    column = profile_file(path, name="w.csv")["columns"][0]
    assert column["distinct"] == 7
    assert column["top"] == [
        {"value": "e", "count": 3},
        {"value": "f", "count": 3},
        {"value": "a", "count": 2},
        {"value": "b", "count": 2},
        {"value": "c", "count": 2},
    ]


def test_a_cut_head_is_not_the_whole_file() -> None:
    head = b"n\n" + b"".join(f"{i}\n".encode() for i in range(10)) + b"1"
    profile = profile_csv_head(head, name="n.csv", complete=False)
    assert (profile["rows_profiled"], profile["complete"]) == (10, False)
    assert profile["columns"][0]["max"] == 9


def test_the_sample_is_bounded_by_rows_and_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert sample_rows(1) == 100_000
    assert sample_rows(500) == 10_000
    assert sample_rows(10**9) == 100
    monkeypatch.setattr(profile_module, "PROFILE_MAX_ROWS", 150)
    path = tmp_path / "n.csv"
    path.write_text("n\n" + "".join(f"{i}\n" for i in range(400)))
    profile = profile_file(path, name="n.csv")
    assert (profile["rows_profiled"], profile["complete"]) == (150, False)
    assert profile["columns"][0]["max"] == 149


def test_each_sheet_of_a_workbook(tmp_path: Path) -> None:
    path = tmp_path / "book.xlsx"
    with pd.ExcelWriter(path) as writer:
        pd.DataFrame({"a": [1, 2, 3]}).to_excel(writer, sheet_name="One", index=False)
        pd.DataFrame({"b": ["x", None, "y", "x"]}).to_excel(writer, sheet_name="Two", index=False)
    first = profile_file(path, name="book.xlsx")
    assert by_name(first)["a"] == {
        "name": "a",
        "dtype": "int64",
        "kind": "number",
        "missing": 0,
        "unreadable": 0,
        "distinct": 3,
        "min": 1,
        "max": 3,
        "mean": 2.0,
        "top": None,
    }
    second = profile_file(path, name="book.xlsx", sheet="Two")
    assert (second["rows_profiled"], second["complete"]) == (4, True)
    assert by_name(second)["b"]["missing"] == 1
    assert by_name(second)["b"]["top"] == [{"value": "x", "count": 2}, {"value": "y", "count": 1}]
    with pytest.raises(SheetNotFound):
        profile_file(path, name="book.xlsx", sheet="Three")
    with pytest.raises(NotAWorkbook):
        profile_file(tmp_path / "book.xlsx", name="book.csv", sheet="One")


def test_parquet_and_json(tmp_path: Path) -> None:
    table = pa.table(
        {
            "when": pa.array([dt.datetime(2026, 1, 1), None, dt.datetime(2026, 1, 3)]),
            "tags": [["a"], ["a"], None],
            "v": [1.0, float("nan"), 4.0],
        }
    )
    pq.write_table(table, tmp_path / "t.parquet")
    columns = by_name(profile_file(tmp_path / "t.parquet", name="t.parquet"))
    assert columns["when"]["mean"] == "2026-01-02T00:00:00"
    assert columns["tags"]["top"] == [{"value": '["a"]', "count": 2}]
    assert (columns["v"]["missing"], columns["v"]["mean"]) == (1, 2.5)

    records = [{"day": "2026-03-01", "n": 1}, {"day": "2026-03-03", "n": 2}]
    (tmp_path / "r.json").write_text(json.dumps(records))
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    for name in ("r.json", "r.jsonl"):
        profile = profile_file(tmp_path / name, name=name)
        assert by_name(profile)["day"]["mean"] == "2026-03-02T00:00:00", name
        assert profile["complete"] is True


def test_what_cannot_be_profiled(tmp_path: Path) -> None:
    (tmp_path / "x").write_bytes(b"\x00\x01garbage")
    with pytest.raises(PreviewUnsupported):
        profile_file(tmp_path / "x", name="notes.md")
    with pytest.raises(UnreadableFile, match=r"^x\.csv does not look like a text file$"):
        profile_file(tmp_path / "x", name="x.csv")
    with pytest.raises(UnreadableFile, match=r"^x\.xlsx could not be read as Excel: "):
        profile_file(tmp_path / "x", name="x.xlsx")
