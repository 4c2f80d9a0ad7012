"""Tests for what text files do not state: decimal commas and dates (app.files.detect), as
the preview reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.files.detect import find_header_row
from app.files.preview import Preview, preview_file


def read(tmp_path: Path, name: str, data: bytes) -> Preview:
    path = tmp_path / name
    path.write_bytes(data)
    return preview_file(path, name=name)


def dtypes(preview: Preview) -> dict[str, str]:
    return {column["name"]: column["dtype"] for column in preview.columns}


def test_semicolons_with_decimal_commas_and_thousands_dots_are_numbers(tmp_path: Path) -> None:
    data = (
        "région;montant;prix;jour;code\n"
        "Nord;1.234,56;12,5;31/01/2026;007\n"
        "Sud;-2,5;3;01/02/2026;010\n"
        "Est;1.000.000;0,25;15/02/2026;011\n"
    ).encode("cp1252")
    preview = read(tmp_path, "ventes.csv", data)
    assert dtypes(preview) == {
        "région": "str",
        "montant": "float64",
        "prix": "float64",
        "jour": "datetime64[us]",
        "code": "int64",
    }
    assert preview.rows == [
        ["Nord", 1234.56, 12.5, "2026-01-31", 7],
        ["Sud", -2.5, 3.0, "2026-02-01", 10],
        ["Est", 1000000.0, 0.25, "2026-02-15", 11],
    ]
    assert preview.format == {
        "delimiter": ";",
        "decimal": ",",
        "thousands": ".",
        "encoding": "cp1252",
    }
    assert preview.columns[3]["date_format"] == "%d/%m/%Y"
    assert "date_format" not in preview.columns[1]


def test_decimal_commas_without_thousands(tmp_path: Path) -> None:
    preview = read(tmp_path, "t.tsv", b"x\ty\n12,5\ta\n3\tb\n")
    assert dtypes(preview) == {"x": "float64", "y": "str"}
    assert preview.rows == [[12.5, "a"], [3.0, "b"]]
    assert preview.format == {
        "delimiter": "\t",
        "decimal": ",",
        "thousands": None,
        "encoding": "utf-8",
    }


@pytest.mark.parametrize(
    ("data", "first"),
    [
        # Not the file's decimal: in a comma-separated file a quoted "1,234" may as well be a
        # thousand. Its column is read as numbers written the European way ("1,5" cannot be
        # a thousand), and so are prices with a currency sign; a column that is not all
        # numbers stays text.
        (b'a,b\n"1,5",x\n"2,25",y\n', 1.5),
        ("a;b\n€ 3,50;x\n€ 4,00;y\n".encode(), 3.5),
        (b"a;b\n1,5;x\nabout 2;y\n", "1,5"),
        # Decimal points in a semicolon file are decimal points.
        (b"a;b\n1.5;x\n2.25;y\n", 1.5),
    ],
)
def test_what_is_not_a_decimal_comma(tmp_path: Path, data: bytes, first: object) -> None:
    preview = read(tmp_path, "n.csv", data)
    assert preview.format is not None and preview.format["decimal"] == "."
    assert preview.rows[0][0] == first


@pytest.mark.parametrize(
    ("values", "fmt", "first"),
    [
        (["2026-01-31", "2026-02-01"], "ISO8601", "2026-01-31"),
        (["2026-01-31 10:30:00", "2026-02-01T08:00:00"], "ISO8601", "2026-01-31T10:30:00"),
        (["31/01/2026", "01/02/2026"], "%d/%m/%Y", "2026-01-31"),
        (["01/31/2026", "02/01/2026"], "%m/%d/%Y", "2026-01-31"),
        (["01.02.2026", "28.02.2026"], "%d.%m.%Y", "2026-02-01"),
        (["31-01-2026", "01-02-2026"], "%d-%m-%Y", "2026-01-31"),
        (["2026/01/31", "2026/02/01"], "%Y/%m/%d", "2026-01-31"),
        (["31/01/2026 14:05", "01/02/2026 09:00"], "%d/%m/%Y %H:%M", "2026-01-31T14:05:00"),
    ],
)
def test_date_spellings(tmp_path: Path, values: list[str], fmt: str, first: str) -> None:
    data = ("id,when\n" + "".join(f"{i},{v}\n" for i, v in enumerate(values))).encode()
    preview = read(tmp_path, "d.csv", data)
    assert preview.columns[1] == {"name": "when", "dtype": "datetime64[us]", "date_format": fmt}
    assert preview.rows[0][1] == first


def test_a_day_or_a_month_first_follows_the_file(tmp_path: Path) -> None:
    """01/02/2026 is the 2nd of January with commas and points, the 1st of February with
    semicolons and decimal commas."""
    us = read(tmp_path, "us.csv", b"when,n\n01/02/2026,1.5\n03/04/2026,2\n")
    eu = read(tmp_path, "eu.csv", b"when;n\n01/02/2026;1,5\n03/04/2026;2\n")
    assert us.rows[0][0] == "2026-01-02"
    assert eu.rows[0][0] == "2026-02-01"


@pytest.mark.parametrize(
    "values",
    [
        ["2026-01", "2026-02"],  # months, not days
        ["2026-01-31", "soon"],  # not every value
        ["31/02/2026", "30/02/2026"],  # no such days
        # Two spellings, or dates with and without a time, make a date column of mixed
        # spellings (tests/files/test_mixed_columns.py).
    ],
)
def test_what_is_not_a_date_column(tmp_path: Path, values: list[str]) -> None:
    data = ("when\n" + "".join(f"{v}\n" for v in values)).encode()
    preview = read(tmp_path, "d.csv", data)
    assert preview.columns == [{"name": "when", "dtype": "str"}]
    assert [row[0] for row in preview.rows] == values


def test_missing_values_in_a_date_column(tmp_path: Path) -> None:
    preview = read(tmp_path, "d.csv", b"when,n\n2026-01-31,1\n,2\n2026-02-02,3\n")
    assert dtypes(preview)["when"] == "datetime64[us]"
    assert [row[0] for row in preview.rows] == ["2026-01-31", None, "2026-02-02"]


def test_json_dates(tmp_path: Path) -> None:
    records = [{"day": "2026-03-01", "n": 1}, {"day": "2026-03-02", "n": 2}]
    preview = read(tmp_path, "r.json", json.dumps(records).encode())
    assert preview.columns[0] == {
        "name": "day",
        "dtype": "datetime64[us]",
        "date_format": "ISO8601",
    }
    assert preview.format is None
    lines = read(tmp_path, "r.jsonl", "\n".join(json.dumps(r) for r in records).encode())
    assert dtypes(lines)["day"] == "datetime64[us]"


def test_amounts_percents_and_thousands_are_numbers(tmp_path: Path) -> None:
    data = (
        "item,price,share,count,code\n"
        'a,"€1,058.58",12.5%,"1,200",A1\n'
        "b,€3,7%,15,B2\n"
        'c,-€0.5,100%,"12,000,000",C3\n'
    ).encode()
    preview = read(tmp_path, "a.csv", data)
    assert dtypes(preview) == {
        "item": "str", "price": "float64", "share": "float64", "count": "float64", "code": "str"
    }  # fmt: skip
    assert preview.rows == [
        ["a", 1058.58, 0.125, 1200.0, "A1"],
        ["b", 3.0, 0.07, 15.0, "B2"],
        ["c", -0.5, 1.0, 12000000.0, "C3"],
    ]
    units = {c["name"]: c.get("unit", "-") for c in preview.columns}
    assert units == {"item": "-", "price": "€", "share": "%", "count": None, "code": "-"}


def test_amounts_and_percents_written_the_european_way_are_numbers(tmp_path: Path) -> None:
    """`1.058,58 €` (a workbook's or a comma-separated file's text): a decimal comma, dots or
    non-breaking spaces between thousands; `1,200` beside them stays twelve hundred."""
    data = (
        "item,price,share,count\n"
        'a,"1.058,58 €","12,5 %","1,200"\n'
        'b,"3,5 €","7 %",15\n'
        'c,"-12.000 €","100 %","12,000"\n'
        'd,"1\u00a0200,75 €","0,5 %",3\n'
    ).encode()
    preview = read(tmp_path, "eu.csv", data)
    assert dtypes(preview) == {
        "item": "str", "price": "float64", "share": "float64", "count": "float64"
    }  # fmt: skip
    assert [row[1:] for row in preview.rows] == [
        [1058.58, 0.125, 1200.0],
        [3.5, 0.07, 15.0],
        [-12000.0, 1.0, 12000.0],
        [1200.75, 0.005, 3.0],
    ]
    written = {c["name"]: (c.get("unit", "-"), c.get("decimal")) for c in preview.columns}
    assert written == {
        "item": ("-", None), "price": ("€", ","), "share": ("%", ","), "count": (None, None)
    }  # fmt: skip


def test_amounts_in_two_currencies_are_numbers_without_a_symbol(tmp_path: Path) -> None:
    data = '"€3.10",1\n"$4.25",1\n"€5.00",1\n'
    preview = read(tmp_path, "n.csv", ("x,y\n" + data).encode())
    [x, _] = preview.columns
    assert x["dtype"] == "float64" and x["mixed"] == "number"
    assert x["currencies"] == ["€", "$"] and "currency" not in x
    assert x["reading"] == "numbers and amounts read as numbers; amounts in € and $"


@pytest.mark.parametrize(
    "values",
    [
        ["12%", "13"],  # some percents, some not
        ["€3", "about €4"],
        ["1,5", "2.25"],  # a decimal comma and a decimal point
        ["1.058,58 €", "€1,058.58"],  # the European way and the English way
    ],
)
def test_what_is_not_an_amount(tmp_path: Path, values: list[str]) -> None:
    data = ("x,y\n" + "".join(f'"{v}",1\n' for v in values)).encode()
    preview = read(tmp_path, "n.csv", data)
    assert dtypes(preview)["x"] == "str"


def test_yes_and_no_are_booleans(tmp_path: Path) -> None:
    preview = read(tmp_path, "y.csv", b"a,b,c\nY,yes,NO\nYes,x,no\nno,,no\nn,yes,\n")
    assert dtypes(preview) == {"a": "bool", "b": "str", "c": "str"}
    assert [row[0] for row in preview.rows] == [True, True, False, False]
    assert (preview.columns[0]["true_values"], preview.columns[0]["false_values"]) == (
        ["Y", "Yes"],
        ["n", "no"],
    )


@pytest.mark.parametrize(
    ("rows", "header"),
    [
        ([["Report"], ["Generated today"], [], ["a", "b", "c"], [1, 2, 3]], 3),
        ([["a", "b"], [1, 2]], 0),
        ([["only one column"], ["x"], ["y"]], 0),
        ([["Title"], [1, 2, 3], [4, 5, 6]], 0),  # no header at all: row 0 as pandas reads it
        ([["Title", None, None], ["region", "2023", "2024"], ["N", 1, 2]], 1),
    ],
)
def test_the_header_row_under_title_rows(rows: list[list[object]], header: int) -> None:
    assert find_header_row(rows) == header
