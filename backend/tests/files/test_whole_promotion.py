"""A CSV's columns decided from all their cells (whole_csv.py), past what the head said: a
column that is text in its first rows becomes numbers or dates when nearly all its cells
read so (the rest read as missing, and listed), a column with a few words stays text, and
a column of amounts takes its currencies and decimals from all its cells."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from app.agent.prompting import read_hint
from app.files.preview import preview_file
from app.files.preview.filters import Condition
from app.files.preview.paging import build_table_copy, table_copy_path
from app.files.preview.whole_kinds import decide_whole, settled
from tests.files.test_whole_kinds import HEAD, head_of, page, whole

ROWS = 3000


def written(tmp_path: Path, name: str, header: str, rows: list[str]) -> Path:
    path = tmp_path / name
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def test_a_column_of_n_a_then_numbers_is_numbers_with_n_a_read_as_missing(
    tmp_path: Path,
) -> None:
    rows = [f"{i},{'n/a' if i < 2000 else f'{i}.5'}" for i in range(ROWS)]
    path = written(tmp_path, "late.csv", "id,amount", rows)
    final = whole(path, tmp_path)
    amount = final["columns"][1]
    assert amount["dtype"] == "float64"
    assert amount["missing_values"] == [{"value": "n/a", "count": 2000}]
    assert amount["reading"] == 'read as missing: "n/a" (2,000)'
    assert page(path, final, tmp_path, offset=1999, limit=2) == [[1999, None], [2000, 2000.5]]
    top = page(path, final, tmp_path, limit=1, sort="amount", descending=True)
    assert top == [[ROWS - 1, ROWS - 1 + 0.5]]


def test_a_column_of_words_then_numbers_is_promoted_and_its_words_listed(tmp_path: Path) -> None:
    """Its first rows ("—", "TBD", blanks) read as text; the whole file reads numbers."""

    def amount(i: int) -> str:
        if i < 60:
            return ("—", "TBD", "")[i % 3]
        return f"{i * 3}"

    rows = [f"{i},{amount(i)}" for i in range(10_000)]
    path = written(tmp_path, "words.csv", "id,amount", rows)
    assert head_of(path)["columns"][1]["dtype"] in ("object", "str")

    final = whole(path, tmp_path)
    column = final["columns"][1]
    assert column["dtype"] == "float64"
    assert column["missing_values"] == [
        {"value": "TBD", "count": 20},
        {"value": "—", "count": 20},
    ]
    assert column["reading"] == 'numbers over the whole file; read as missing: "TBD" (20), "—" (20)'
    assert final["rows"][:3] == [[0, None], [1, None], [2, None]]
    assert page(path, final, tmp_path, offset=60, limit=2) == [[60, 180.0], [61, 183.0]]
    found = page(path, final, tmp_path, conditions=[Condition("amount", "le", 190)])
    assert [row[0] for row in found] == [60, 61, 62, 63]
    empty = page(path, final, tmp_path, limit=100, conditions=[Condition("amount", "empty", None)])
    assert empty == [[i, None] for i in range(60)]  # missing, none of them marked
    # The typed copy reads the same decision: a DOUBLE column, the words missing.
    assert build_table_copy(path, shown=final, work=tmp_path / "w")
    copy = table_copy_path(final, tmp_path / "w")
    described = duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{copy}')").fetchall()
    assert described[1][1] == "DOUBLE"
    assert page(path, final, tmp_path, offset=0, limit=1) == [[0, None]]
    assert page(path, final, tmp_path, offset=61, limit=1) == [[61, 183.0]]
    # The agent is told to read the words as missing.
    assert "pd.to_numeric(df[column], errors='coerce') for ['amount']" in read_hint(final)


def test_a_column_of_n_a_then_dates_is_dates(tmp_path: Path) -> None:
    rows = [
        f"{i},{'n/a' if i < 2000 else f'2025-{1 + i % 12:02d}-{1 + i % 28:02d}'}"
        for i in range(ROWS)
    ]
    path = written(tmp_path, "dates.csv", "id,when", rows)
    final = whole(path, tmp_path)
    when = final["columns"][1]
    assert (when["dtype"], when["date_format"]) == ("datetime64[ns]", "ISO8601")
    assert when["missing_values"] == [{"value": "n/a", "count": 2000}]
    assert "read as missing" in when["reading"]
    assert page(path, final, tmp_path, offset=2000, limit=1) == [[2000, "2025-09-13"]]


def test_a_column_of_words_then_day_first_date_texts_is_mixed_dates(tmp_path: Path) -> None:
    def when(i: int) -> str:
        if i < 30:
            return "TBD"
        return f"{1 + i % 28:02d}/{1 + i % 12:02d}/2025"

    rows = [f"{i},{when(i)}" for i in range(10_000)]
    path = written(tmp_path, "texts.csv", "id,when", rows)
    final = whole(path, tmp_path)
    column = final["columns"][1]
    assert (column["mixed"], column["day_first"]) == ("date", True)
    assert column["settled_by"] is not None and int(column["settled_by"][:2]) > 12
    assert column["missing_values"] == [{"value": "TBD", "count": 30}]
    assert column["reading"].startswith("dates read day-first (from ")
    assert column["reading"].endswith('; read as missing: "TBD" (30)')
    assert page(path, final, tmp_path, offset=0, limit=1) == [[0, None]]
    assert page(path, final, tmp_path, offset=40, limit=1) == [[40, "2025-05-13"]]
    # The agent reads it the same way: day-first, the rest missing.
    assert "read_dates(df['when'], day_first=True)" in read_hint(final)


def test_a_column_with_two_percent_words_stays_text(tmp_path: Path) -> None:
    rows = [f"{i},{'pending' if i % 50 == 7 else i}" for i in range(ROWS)]
    path = written(tmp_path, "words.csv", "id,code", rows)
    final = whole(path, tmp_path)
    code = final["columns"][1]
    assert code["dtype"] == "str"
    assert code["reading"] == "text: 58 cells after row 100 are not numbers"
    assert "missing_values" not in code
    assert page(path, final, tmp_path, offset=7, limit=2) == [[7, "pending"], [8, "8"]]


def test_amounts_take_currencies_and_decimals_from_the_whole_column(tmp_path: Path) -> None:
    def price(i: int) -> str:
        return f'"${i:,}"' if i < HEAD * 2 else f'"€{i:,}.25"'

    rows = [f"{i},{price(i)}" for i in range(ROWS)]
    path = written(tmp_path, "prices.csv", "id,price", rows)
    head = head_of(path)["columns"][1]
    assert (head["currency"], head["decimals"]) == ("$", 0)

    final = whole(path, tmp_path)
    column = final["columns"][1]
    assert column["currencies"] == ["€", "$"]  # the commonest first
    assert "currency" not in column and column.get("unit") is None
    assert column["decimals"] == 2  # most of its cells, written past the head
    assert page(path, final, tmp_path, offset=ROWS - 1, limit=1) == [[ROWS - 1, 2999.25]]


def test_one_currency_past_the_head_and_its_decimals(tmp_path: Path) -> None:
    rows = [f'{i},"€{i:,}{"" if i < HEAD else ".5"}"' for i in range(ROWS)]
    path = written(tmp_path, "euro.csv", "id,price", rows)
    final = whole(path, tmp_path)
    column: dict[str, Any] = final["columns"][1]
    assert (column["currency"], column["unit"], column["decimals"]) == ("€", "€", 1)


def test_json_lines_are_decided_over_all_their_records(tmp_path: Path) -> None:
    """The head reads its first 1,000 records; the whole file reads a late type change."""

    def record(i: int) -> dict[str, Any]:
        return {
            "id": i,
            "code": i if i < 1500 else f"A-{i}",
            "amount": "TBD" if i < 20 else i * 1.5,
            "price": f"${i:,}" if i < 1100 else f"€{i:,}.25",
        }

    path = tmp_path / "late.jsonl"
    path.write_text("".join(json.dumps(record(i)) + "\n" for i in range(ROWS)))
    head = preview_file(path, name=path.name).to_dict()
    assert (head["kinds_pending"], head["decided_rows"]) == (True, 1000)
    assert [column["dtype"] for column in head["columns"][1:3]] == ["int64", "float64"]

    final = settled(head, decide_whole(path, name=path.name, shown=head, work=tmp_path / "w"))
    code, amount, price = final["columns"][1:]
    assert (code["dtype"], code["reading"]) == ("str", "text: 1,500 cells are not numbers")
    assert (amount["mixed"], amount["missing_values"]) == (
        "number",
        [{"value": "TBD", "count": 20}],
    )
    assert amount["reading"] == 'numbers and amounts read as numbers; read as missing: "TBD" (20)'
    assert (price["currencies"], price["decimals"]) == (["€", "$"], 2)
    # Every page shows one format per column, the first rows too.
    assert final["rows"][0] == [0, "0", None, 0.0]
    assert page(path, final, tmp_path, offset=1999, limit=1) == [[1999, "A-1999", 2998.5, 1999.25]]
    assert page(path, final, tmp_path, offset=19, limit=2) == [
        [19, "19", None, 19.0],
        [20, "20", 30.0, 20.0],
    ]


def test_a_text_read_as_missing_is_data_in_the_sql_that_reads_it(tmp_path: Path) -> None:
    """The texts listed as missing come from the file: quoted in every reading's SQL."""
    hostile = "x'); SELECT 1; --"
    rows = [f'{i},"{hostile if i < 30 else i}"' for i in range(10_000)]
    path = written(tmp_path, "hostile.csv", "id,amount", rows)
    final = whole(path, tmp_path)
    column = final["columns"][1]
    assert (column["dtype"], column["missing_values"]) == (
        "float64",
        [{"value": hostile, "count": 30}],
    )
    assert page(path, final, tmp_path, offset=29, limit=2) == [[29, None], [30, 30.0]]
    assert "SELECT" not in read_hint(final)
