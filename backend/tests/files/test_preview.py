"""Tests for app.files.preview: previews of real-world tabular files."""

from __future__ import annotations

import datetime as dt
import io
import json
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from app.api.errors import status_of
from app.files.preview import (
    PREVIEW_ROWS,
    TABULAR_KINDS,
    CsvRowCounter,
    NeedMoreBytes,
    Preview,
    PreviewUnsupported,
    UnreadableFile,
    delimited,
    json_tables,
    preview_csv_head,
    preview_file,
    preview_kind,
)


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def dtypes(preview: Preview) -> dict[str, str]:
    return {column["name"]: column["dtype"] for column in preview.columns}


def count(data: bytes, chunk: int) -> int:
    counter = CsvRowCounter()
    for start in range(0, len(data), chunk):
        counter.feed(data[start : start + chunk])
    return counter.finish()


def counts(data: bytes) -> set[int]:
    """Row counts for 1-byte, 7-byte and 1 MB chunks: one element when they agree."""
    return {count(data, size) for size in (1, 7, 1 << 20)}


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("a.csv", "csv"),
        ("A.TSV", "csv"),
        ("x.tab", "csv"),
        ("notes.txt", "csv"),
        ("b.XLSX", "excel"),
        ("b.xlsm", "excel"),
        ("old.xls", "excel"),
        ("c.parquet", "parquet"),
        ("c.pq", "parquet"),
        ("d.json", "json"),
        ("e.jsonl", "jsonl"),
        ("e.NDJSON", "jsonl"),
        ("report.pdf", "None"),
        ("bundle.zip", "None"),
        ("sheet.ods", "None"),
        ("csv", "None"),
    ],
)
def test_preview_kind_by_extension(name: str, kind: str) -> None:
    assert str(preview_kind(name)) == kind
    assert preview_kind(name) in (*TABULAR_KINDS, None)


def test_plain_csv(tmp_path: Path) -> None:
    path = write(
        tmp_path, "sales.csv", b"id,product,price,in_stock\n1,apple,1.5,true\n2,pear,,false\n"
    )
    preview = preview_file(path, name="sales.csv")
    assert preview.columns == [
        {"name": "id", "dtype": "int64"},
        {"name": "product", "dtype": "str"},
        {"name": "price", "dtype": "float64"},
        {"name": "in_stock", "dtype": "bool"},
    ]
    assert preview.rows == [[1, "apple", 1.5, True], [2, "pear", None, False]]
    assert preview.row_count == 2
    assert preview.to_dict() == {
        "columns": preview.columns,
        "rows": preview.rows,
        "row_count": 2,
        "sheets": None,
        "sheet": None,
        "format": {"delimiter": ",", "decimal": ".", "thousands": None, "encoding": "utf-8"},
        "header_row": 0,
        "decided_rows": 2,
        "kinds_pending": False,
    }


def test_utf8_bom_is_not_part_of_the_first_column(tmp_path: Path) -> None:
    path = write(tmp_path, "bom.csv", b"\xef\xbb\xbfname,n\nZo\xc3\xab,1\n")
    preview = preview_file(path, name="bom.csv")
    assert [column["name"] for column in preview.columns] == ["name", "n"]
    assert preview.rows == [["Zoë", 1]]


@pytest.mark.parametrize("newline", [b"\r", b"\r\n"])
def test_old_mac_and_windows_line_endings(tmp_path: Path, newline: bytes) -> None:
    data = newline.join([b"a,b", b"1,x", b"2,y", b"3,z"]) + newline
    preview = preview_file(write(tmp_path, "e.csv", data), name="e.csv")
    assert preview.rows == [[1, "x"], [2, "y"], [3, "z"]]
    assert dtypes(preview) == {"a": "int64", "b": "str"}
    assert preview.row_count == 3
    assert counts(data) == {3}


def test_cp1252_text(tmp_path: Path) -> None:
    data = "name;price;note\nCafé;€ 3,50;crème brûlée\nNaïve;€ 4,00;déjà vu\n".encode("cp1252")
    preview = preview_file(write(tmp_path, "menu.csv", data), name="menu.csv")
    assert preview.rows == [["Café", 3.5, "crème brûlée"], ["Naïve", 4.0, "déjà vu"]]
    assert preview.row_count == 2


def test_cp1251_text_is_not_mistaken_for_cp1252(tmp_path: Path) -> None:
    data = "город,жители\nМосква,13000000\nСанкт-Петербург,5600000\n".encode("cp1251")  # noqa: RUF001
    preview = preview_file(write(tmp_path, "cities.csv", data), name="cities.csv")
    assert dtypes(preview) == {"город": "str", "жители": "int64"}
    assert preview.rows[1] == ["Санкт-Петербург", 5600000]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_utf16_with_bom(tmp_path: Path, encoding: str) -> None:
    text = "ville\tprix\r\nSão Paulo\t2\r\nZürich\t3\r\n"
    data = text.encode("utf-16") if encoding == "utf-16" else b"\xfe\xff" + text.encode(encoding)
    preview = preview_file(write(tmp_path, "u16.tsv", data), name="u16.tsv")
    assert preview.columns == [
        {"name": "ville", "dtype": "str"},
        {"name": "prix", "dtype": "int64"},
    ]
    assert preview.rows == [["São Paulo", 2], ["Zürich", 3]]
    assert preview.row_count == 2
    assert counts(data) == {2}


def test_utf16_without_tsv_extension_sniffs_the_delimiter(tmp_path: Path) -> None:
    data = "a;b\n1;2\n".encode("utf-16")
    preview = preview_file(write(tmp_path, "u16.csv", data), name="u16.csv")
    assert preview.rows == [[1, 2]]


@pytest.mark.parametrize("delimiter", [b"\t", b"|"])
def test_tab_and_pipe_delimiters_are_sniffed(tmp_path: Path, delimiter: bytes) -> None:
    data = delimiter.join([b"a", b"b"]) + b"\n" + delimiter.join([b"1,5", b"x;y"]) + b"\n"
    preview = preview_file(write(tmp_path, "d.csv", data), name="d.csv")
    # "1,5" is one field: a number with a decimal comma, which a tab or pipe allows.
    assert preview.rows == [[1.5, "x;y"]]
    assert preview.format is not None and preview.format["delimiter"] == delimiter.decode()


def test_quoted_delimiters_do_not_confuse_the_sniffer(tmp_path: Path) -> None:
    data = b'name;comment\n"Smith, J.";"a, b, c"\n"Doe, K.";"d, e"\n'
    preview = preview_file(write(tmp_path, "q.csv", data), name="q.csv")
    assert preview.rows == [["Smith, J.", "a, b, c"], ["Doe, K.", "d, e"]]


def test_quoted_newlines(tmp_path: Path) -> None:
    data = b'id,comment,score\r\n1,"line one\r\nline two",5\r\n2,"say ""hi""\nbye",6\r\n3,"",7\r\n'
    preview = preview_file(write(tmp_path, "notes.csv", data), name="notes.csv")
    assert preview.rows == [
        [1, "line one\r\nline two", 5],
        [2, 'say "hi"\nbye', 6],
        [3, None, 7],
    ]
    assert preview.row_count == 3
    assert counts(data) == {3}


def test_tsv_by_extension(tmp_path: Path) -> None:
    data = b"city\tpopulation, millions\nParis, FR\t2.1\nRome, IT\t2.8\n"
    preview = preview_file(write(tmp_path, "c.tsv", data), name="c.tsv")
    assert preview.columns == [
        {"name": "city", "dtype": "str"},
        {"name": "population, millions", "dtype": "float64"},
    ]
    assert preview.rows == [["Paris, FR", 2.1], ["Rome, IT", 2.8]]


def test_wide_table(tmp_path: Path) -> None:
    header = ",".join(f"c{i}" for i in range(2000))
    rows = [",".join(str(r * 10_000 + i) for i in range(2000)) for r in range(60)]
    data = "\n".join([header, *rows]).encode()
    preview = preview_file(write(tmp_path, "wide.csv", data), name="wide.csv")
    assert len(preview.columns) == 2000
    assert preview.columns[1999] == {"name": "c1999", "dtype": "int64"}
    assert len(preview.rows) == PREVIEW_ROWS
    assert preview.rows[49][:3] == [490_000, 490_001, 490_002]
    assert preview.row_count == 60


def test_empty_file(tmp_path: Path) -> None:
    assert preview_file(write(tmp_path, "e.csv", b""), name="e.csv") == Preview([], [], 0)
    assert preview_file(write(tmp_path, "b.csv", b"\n\r\n  \n"), name="b.csv") == Preview([], [], 0)
    assert counts(b"") == {0}


def test_header_only(tmp_path: Path) -> None:
    for data in (b"a,b,c\n", b"a,b,c"):
        preview = preview_file(write(tmp_path, "h.csv", data), name="h.csv")
        assert [column["name"] for column in preview.columns] == ["a", "b", "c"]
        assert preview.rows == []
        assert preview.row_count == 0
        assert counts(data) == {0}


def test_ragged_row(tmp_path: Path) -> None:
    data = b"a,b,c\n1,2,3\n4,5,6\n7,8,9\n1,2,3,4\n"
    with pytest.raises(UnreadableFile) as caught:
        preview_file(write(tmp_path, "sales.csv", data), name="sales.csv")
    assert status_of(caught.value) == 422
    assert caught.value.code == "unreadable_file"
    assert (
        str(caught.value) == "sales.csv could not be read as CSV: line 5 has 4 fields, expected 3"
    )


def test_first_data_row_longer_than_header(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile, match="the first data row has 3 fields, the header 2"):
        preview_file(write(tmp_path, "r.csv", b"a,b\n1,2,3\n4,5,6\n"), name="r.csv")


def test_trailing_delimiters_on_data_rows_are_tolerated(tmp_path: Path) -> None:
    preview = preview_file(write(tmp_path, "t.csv", b"a,b\n1,x,\n3,y,\n"), name="t.csv")
    assert dtypes(preview) == {"a": "int64", "b": "str"}
    assert preview.rows == [[1, "x"], [3, "y"]]


def test_binary_garbage(tmp_path: Path) -> None:
    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8
    with pytest.raises(UnreadableFile, match=r"^photo\.csv does not look like a text file$"):
        preview_file(write(tmp_path, "photo.csv", data), name="photo.csv")


def test_control_characters_without_nul(tmp_path: Path) -> None:
    data = bytes(range(1, 32)) * 40
    with pytest.raises(UnreadableFile, match="does not look like a text file"):
        preview_file(write(tmp_path, "ctl.csv", data), name="ctl.csv")


def make_csv(rows: int) -> bytes:
    lines = ["id,name,amount"] + [f"{i},Jürgen {i},{i}.5" for i in range(rows)]
    return ("\n".join(lines) + "\n").encode()


def test_incomplete_head_parses_complete_rows_only() -> None:
    data = make_csv(200)
    # Cut inside the "ü" of row 120 (the cut row would otherwise become a bogus record).
    cut = data.index("Jürgen 120".encode()) + 2
    head = data[:cut]
    with pytest.raises(UnicodeDecodeError):
        head.decode()
    preview = preview_csv_head(head, name="big.csv", complete=False, row_count=200)
    assert preview.row_count == 200
    assert len(preview.rows) == PREVIEW_ROWS
    assert preview.rows[0] == [0, "Jürgen 0", 0.5]
    assert preview.rows[49] == [49, "Jürgen 49", 49.5]
    assert dtypes(preview) == {"id": "int64", "name": "str", "amount": "float64"}


def test_incomplete_head_cut_inside_a_quoted_field() -> None:
    body = "".join(f'{i},"multi\nline {i}"\n' for i in range(60))
    data = ("n,text\n" + body).encode()
    head = data[: data.index(b"line 55") + 2]  # inside the quotes of row 55
    preview = preview_csv_head(head, name="q.csv", complete=False, row_count=60)
    assert preview.rows[49] == [49, "multi\nline 49"]
    assert preview.row_count == 60


def test_incomplete_head_with_too_few_rows_needs_more_bytes() -> None:
    data = make_csv(200)
    head = data[: data.index(b"\n40,") + 3]
    with pytest.raises(NeedMoreBytes):
        preview_csv_head(head, name="big.csv", complete=False, row_count=200)
    with pytest.raises(NeedMoreBytes):
        preview_csv_head(data[:5], name="big.csv", complete=False, row_count=200)


def test_incomplete_head_requires_a_row_count() -> None:
    with pytest.raises(ValueError, match="row_count"):
        preview_csv_head(make_csv(100), name="big.csv", complete=False, row_count=None)


def test_complete_head_counts_rows_itself() -> None:
    data = make_csv(2500)
    preview = preview_csv_head(data, name="c.csv", complete=True, row_count=None)
    assert preview.row_count == 2500
    assert preview_csv_head(data, name="c.csv", complete=True, row_count=7).row_count == 2500


def test_big_csv_is_previewed_from_its_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(delimited, "CSV_HEAD_BYTES", 1024)
    path = write(tmp_path, "big.csv", make_csv(20_000))
    preview = preview_file(path, name="big.csv")
    assert preview.row_count == 20_000
    assert preview.rows[-1] == [49, "Jürgen 49", 49.5]


def test_head_grows_until_50_rows_fit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delimited, "CSV_HEAD_BYTES", 1024)
    monkeypatch.setattr(delimited, "CSV_HEAD_MAX_BYTES", 64 * 1024)
    rows = "".join(f"{i},{'x' * 500}\n" for i in range(80))
    path = write(tmp_path, "long.csv", f"n,text\n{rows}".encode())
    preview = preview_file(path, name="long.csv")
    assert len(preview.rows) == PREVIEW_ROWS
    assert preview.row_count == 80
    monkeypatch.setattr(delimited, "CSV_HEAD_MAX_BYTES", 4096)
    with pytest.raises(UnreadableFile, match="first 50 rows take more than"):
        preview_file(path, name="long.csv")


def test_counter_chunking_quotes_and_line_endings() -> None:
    data = (
        b'id,text\r\n1,"a ""quoted"" word, and a\r\nnewline"\r\n2,plain\r\n3,"x\r\n\r\ny"\r\n'
        b"4,last without newline"
    )
    assert counts(data) == {4}
    quote_at = data.index(b'""quoted') + 1
    for cut in (quote_at, data.index(b"\r\n") + 1, data.index(b"\r\n\r\ny") + 3):
        counter = CsvRowCounter()
        counter.feed(data[:cut])
        counter.feed(data[cut:])
        assert counter.finish() == 4


def test_counter_skips_blank_lines_like_pandas() -> None:
    assert counts(b"a\n1\n\n2\n\n\n") == {2}
    assert counts(b"\na\n1\n") == {1}
    assert counts(b"a\r\n1\r\n\r\n2\r\n\r\n") == {2}
    assert counts(b"a\r1\r\r2\r\r") == {2}
    assert counts(b"a") == {0}


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("quoted", [True, False])
def test_counter_on_big_chunks_matches_pandas(newline: str, quoted: bool) -> None:
    def row(i: int) -> str:
        if not quoted:
            return f"{i},v{i}\n" if i % 7 else f"{i},v{i}\n\n"
        return f'{i},"v{i}"\n' if i % 3 else f'{i},"multi\nline ""{i}"""\n\n'

    text = ("n,text\n" + "".join(row(i) for i in range(100_000))).replace("\n", newline)
    expected = len(pd.read_csv(io.StringIO(text)))
    assert expected == 100_000
    data = text.encode()
    assert {count(data, size) for size in (4096, 65_537, 1 << 20)} == {expected}


def test_counter_plain_path_on_many_chunks() -> None:
    line = b"12345,2024-01-01,some text,3.14\n"
    chunk = line * 32_768
    counter = CsvRowCounter()
    counter.feed(b"h1,h2,h3,h4\n")
    for _ in range(8):
        counter.feed(chunk)
    assert counter.finish() == 8 * 32_768


def test_xlsx(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "name": ["Ann", "Bob", None],
            "age": [31, 42, 27],
            "score": [1.5, float("nan"), 3.0],
            "joined": [dt.datetime(2024, 1, 2), dt.datetime(2023, 6, 30, 12, 30), None],
        }
    )
    path = tmp_path / "people.xlsx"
    frame.to_excel(path, index=False)
    preview = preview_file(path, name="people.xlsx")
    assert dtypes(preview) == {
        "name": "str",
        "age": "int64",
        "score": "float64",
        "joined": "datetime64[us]",
    }
    assert preview.rows == [
        ["Ann", 31, 1.5, "2024-01-02"],
        ["Bob", 42, None, "2023-06-30T12:30:00"],
        [None, 27, 3.0, None],
    ]
    assert preview.row_count == 3


def big_workbook(path: Path, rows: int) -> None:
    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("data")
    sheet.append(["n", "square"])
    for i in range(rows):
        sheet.append([i, i * i])
    book.save(path)


def test_xlsx_row_count_beyond_the_parsed_rows(tmp_path: Path) -> None:
    path = tmp_path / "big.xlsx"
    big_workbook(path, 1500)
    preview = preview_file(path, name="big.xlsx")
    assert preview.row_count == 1500
    assert preview.rows[49] == [49, 2401]


def test_xlsx_without_dimension_counts_by_walking_rows(tmp_path: Path) -> None:
    path = tmp_path / "big.xlsx"
    big_workbook(path, 1200)
    stripped = tmp_path / "nodim.xlsx"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(stripped, "w") as target:
        for item in source.infolist():
            content = source.read(item)
            if item.filename.startswith("xl/worksheets/"):
                content = content.replace(b'<dimension ref="A1:B1201"/>', b"")
                assert b"<dimension" not in content
            target.writestr(item, content)
    assert openpyxl.load_workbook(stripped, read_only=True).worksheets[0].max_row is None
    assert preview_file(stripped, name="nodim.xlsx").row_count == 1200


def test_corrupt_xlsx(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.xlsx", b"PK\x03\x04 this is not really a zip archive")
    with pytest.raises(UnreadableFile) as caught:
        preview_file(path, name="broken.xlsx")
    assert str(caught.value).startswith("broken.xlsx could not be read as Excel: ")


def test_parquet_row_groups(tmp_path: Path) -> None:
    table = pa.table(
        {
            "id": pa.array(range(1000), pa.int64()),
            "label": [f"row {i}" for i in range(1000)],
            "ratio": [i / 4 if i % 10 else None for i in range(1000)],
        }
    )
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=100)
    assert pq.ParquetFile(path).metadata.num_row_groups == 10
    preview = preview_file(path, name="t.parquet")
    assert preview.row_count == 1000
    assert len(preview.rows) == PREVIEW_ROWS
    assert dtypes(preview) == {"id": "int64", "label": "str", "ratio": "float64"}
    assert preview.rows[:2] == [[0, "row 0", None], [1, "row 1", 0.25]]


def test_empty_parquet(tmp_path: Path) -> None:
    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({"x": pa.array([], pa.int32())}), path)
    assert preview_file(path, name="e.parquet") == Preview([{"name": "x", "dtype": "int32"}], [], 0)


def test_corrupt_parquet(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.parquet", b"PAR1" + b"\x00garbage" * 10)
    with pytest.raises(UnreadableFile, match=r"^bad\.parquet could not be read as Parquet: "):
        preview_file(path, name="bad.parquet")


def test_nan_and_timestamps_serialise(tmp_path: Path) -> None:
    table = pa.table(
        {
            "when": pa.array([dt.datetime(2024, 5, 1, 8, 30), None], pa.timestamp("us")),
            "day": pa.array([dt.date(2024, 5, 1), None], pa.date32()),
            "value": [float("nan"), 2.5],
            "tags": [["a", "b"], None],
            "blob": [b"\x00\x01", b"ok"],
        }
    )
    path = tmp_path / "mixed.parquet"
    pq.write_table(table, path)
    preview = preview_file(path, name="mixed.parquet")
    body = json.loads(json.dumps(preview.to_dict(), allow_nan=False))
    assert body["rows"] == [
        ["2024-05-01T08:30:00", "2024-05-01", None, ["a", "b"], "\x00\x01"],
        [None, None, 2.5, None, "ok"],
    ]
    assert body["columns"][0] == {"name": "when", "dtype": "datetime64[us]"}


def test_json_records(tmp_path: Path) -> None:
    data = json.dumps([{"a": 1, "b": "x"}, {"a": 2, "b": None, "c": True}]).encode()
    preview = preview_file(write(tmp_path, "r.json", data), name="r.json")
    assert [column["name"] for column in preview.columns] == ["a", "b", "c"]
    assert preview.rows == [[1, "x", None], [2, None, True]]
    assert preview.row_count == 2


def test_nested_json_records(tmp_path: Path) -> None:
    records = [
        {"id": 1, "user": {"name": "Ann", "address": {"city": "Oslo"}}, "tags": ["a"]},
        {"id": 2, "user": {"name": "Bob", "address": {"city": "Rome"}}, "tags": []},
    ]
    path = write(tmp_path, "n.json", json.dumps(records).encode())
    preview = preview_file(path, name="n.json")
    assert dtypes(preview) == {
        "id": "int64",
        "tags": "object",
        "user.name": "str",
        "user.address.city": "str",
    }
    assert preview.rows == [[1, ["a"], "Ann", "Oslo"], [2, [], "Bob", "Rome"]]


def test_json_dict_of_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "c.json", b'{"x": [1, 2, 3], "y": ["a", "b", "c"]}')
    preview = preview_file(path, name="c.json")
    assert preview.rows == [[1, "a"], [2, "b"], [3, "c"]]
    assert preview.row_count == 3


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"42", "it is not a table"),
        (b'{"x": [1, 2], "y": [1]}', "it is not a table"),
        (b"[1, 2, 3]", "it is not a table"),
        (b'[{"a": 1},\n {"a": 2,]', "invalid JSON at line 2, column 10"),
    ],
)
def test_json_that_is_not_a_table(tmp_path: Path, data: bytes, message: str) -> None:
    with pytest.raises(UnreadableFile, match=r"^x\.json could not be read as JSON: ") as caught:
        preview_file(write(tmp_path, "x.json", data), name="x.json")
    assert message in str(caught.value)


def test_json_too_large(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json_tables, "JSON_MAX_BYTES", 10)
    with pytest.raises(UnreadableFile, match="too large to preview"):
        preview_file(write(tmp_path, "x.json", b'[{"a": 1}, {"a": 2}]'), name="x.json")


def test_json_lines(tmp_path: Path) -> None:
    lines = [json.dumps({"n": i, "meta": {"even": i % 2 == 0}}) for i in range(1500)]
    data = ("\ufeff" + "\n".join(lines[:3]) + "\n\n" + "\r\n".join(lines[3:])).encode()
    preview = preview_file(write(tmp_path, "l.jsonl", data), name="l.jsonl")
    assert dtypes(preview) == {"n": "int64", "meta.even": "bool"}
    assert preview.rows[:2] == [[0, True], [1, False]]
    assert preview.row_count == 1500


def test_json_lines_with_a_bad_line(tmp_path: Path) -> None:
    data = b'{"a": 1}\n\n{"a": 2\n'
    with pytest.raises(UnreadableFile, match="line 3 is not valid JSON"):
        preview_file(write(tmp_path, "l.ndjson", data), name="l.ndjson")
    with pytest.raises(UnreadableFile, match="line 2 is not a JSON object"):
        preview_file(write(tmp_path, "l.jsonl", b'{"a": 1}\n[1]\n'), name="l.jsonl")


@pytest.mark.parametrize("name", ["report.pdf", "archive.zip", "sheet.ods", "README"])
def test_unsupported_type(tmp_path: Path, name: str) -> None:
    with pytest.raises(PreviewUnsupported) as caught:
        preview_file(write(tmp_path, "f", b"%PDF-1.4"), name=name)
    assert status_of(caught.value) == 415
    assert caught.value.code == "preview_unsupported"
    assert name in str(caught.value)
