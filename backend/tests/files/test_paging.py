"""Pages of the whole table read by DuckDB: every kind of file, the same cells as the
preview of its head, sorts over all rows, and a DuckDB that reads nothing but the file."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from app.files.preview import UnknownColumn, UnreadableFile, paging, preview_file
from app.files.preview.paging import Window, connect, read_page


def pages(path: Path, window: Window, *, header_row: int | None = None) -> dict:  # type: ignore[type-arg]
    shown = preview_file(path, name=path.name, header_row=header_row).to_dict()
    return read_page(path, name=path.name, shown=shown, window=window, work=path.parent / "work")


def numbers_csv(tmp_path: Path, name: str = "n.csv", rows: int = 300, **kwargs: str) -> Path:
    frame = pd.DataFrame({"i": range(rows), "x": [(i * 37) % 101 for i in range(rows)]})
    path = tmp_path / name
    frame.to_csv(path, index=False, **kwargs)  # type: ignore[call-overload]
    return path


def test_a_page_beyond_the_head_matches_the_file(tmp_path: Path) -> None:
    path = numbers_csv(tmp_path)
    shown = pages(path, Window(offset=250, limit=10))
    assert shown["row_count"] == 300
    assert shown["rows"] == [[i, (i * 37) % 101] for i in range(250, 260)]


def test_the_first_page_read_whole_equals_the_preview_of_the_head(tmp_path: Path) -> None:
    data = (
        "ville;montant;jour;payé;part\n"
        + "".join(
            f"V{i};{i}.234,5;0{1 + i % 9}/02/2026;{'Oui' if i % 2 else 'no'};{i}%\n"
            for i in range(5)
        )
    ).encode()
    path = tmp_path / "v.csv"
    path.write_bytes(data)
    head = preview_file(path, name="v.csv")
    assert pages(path, Window(offset=0, limit=51))["rows"] == head.rows


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "cp1252"])
def test_text_in_any_encoding_pages(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "e.csv"
    rows = "".join(f"café {i},{i}\n" for i in range(120))
    path.write_bytes(("nom,n\n" + rows).encode(encoding))
    shown = pages(path, Window(offset=100, limit=2, sort="n", descending=True))
    assert shown["rows"] == [["café 19", 19], ["café 18", 18]]


def test_rows_shorter_than_the_header_and_quoted_line_breaks(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes(
        b'a,b,c\n1,"two\nlines",x\n2,y\n' + b"".join(b"%d,z,w\n" % i for i in range(3, 80))
    )
    shown = pages(path, Window(offset=0, limit=3, sort="a"))
    assert shown["rows"] == [[1, "two\nlines", "x"], [2, "y", None], [3, "z", "w"]]


def test_parquet_json_and_json_lines_page_and_sort(tmp_path: Path) -> None:
    frame = pd.DataFrame({"k": [f"K{i % 7}" for i in range(200)], "v": range(200)})
    frame.to_parquet(tmp_path / "t.parquet")
    (tmp_path / "t.json").write_text(frame.to_json(orient="records"))
    (tmp_path / "t.jsonl").write_text(frame.to_json(orient="records", lines=True))
    for name in ("t.parquet", "t.json", "t.jsonl"):
        shown = pages(tmp_path / name, Window(offset=0, limit=3, sort="v", descending=True))
        assert shown["rows"] == [["K3", 199], ["K2", 198], ["K1", 197]], name
        assert shown["row_count"] == 200, name
        # Ties keep the file's order.
        ties = pages(tmp_path / name, Window(offset=0, limit=3, sort="k"))
        assert ties["rows"] == [["K0", 0], ["K0", 7], ["K0", 14]], name


def test_nested_json_cells_page_as_their_json(tmp_path: Path) -> None:
    path = tmp_path / "n.jsonl"
    path.write_text("".join(json.dumps({"id": i, "tags": ["a", i]}) + "\n" for i in range(60)))
    shown = pages(path, Window(offset=55, limit=1))
    assert shown["rows"] == [[55, '["a", 55]']]


def test_sorting_by_a_column_that_is_not_there_is_refused(tmp_path: Path) -> None:
    path = numbers_csv(tmp_path)
    with pytest.raises(UnknownColumn, match='no column named "y"'):
        pages(path, Window(sort="y"))


def test_duckdb_reads_the_file_asked_for_and_nothing_else(tmp_path: Path) -> None:
    path = numbers_csv(tmp_path, "it's.csv")  # a quote in the name is no way out either
    secret = tmp_path / "secret.txt"
    secret.write_text("password")
    con = connect(path)
    quoted = "'" + str(path).replace("'", "''") + "'"
    assert con.execute(f"SELECT count(*) FROM read_csv({quoted})").fetchone() == (300,)
    for sql in (
        f"SELECT * FROM read_text('{secret}')",
        f"SELECT * FROM read_csv('{secret}')",
        "SELECT * FROM read_csv('/etc/passwd')",
        f"COPY (SELECT 1) TO '{tmp_path / 'out.csv'}'",
        f"ATTACH '{tmp_path / 'x.db'}'",
        "SET enable_external_access = true",
        "SET allowed_paths = ['/']",
        "INSTALL httpfs",
        "SELECT * FROM read_csv('https://example.com/x.csv')",
    ):
        with pytest.raises(duckdb.Error):
            con.execute(sql).fetchall()
    assert not (tmp_path / "out.csv").exists()


def test_a_bad_row_beyond_the_head_is_named(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_bytes(b"a,b\n" + b"".join(b"%d,x\n" % i for i in range(100)) + b"1,2,3,4\n")
    with pytest.raises(
        UnreadableFile, match=r"r\.csv could not be read as CSV: line \d+ has 4 fields, expected 2"
    ):
        pages(path, Window(offset=90, limit=20))


def test_a_sorted_page_deep_in_the_order_is_the_same_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = numbers_csv(tmp_path)
    windows = [
        Window(offset, 40, "x", descending)
        for offset in (0, 37, 260)
        for descending in (False, True)
    ]
    shallow = [pages(path, window)["rows"] for window in windows]
    monkeypatch.setattr(paging, "DEEP_PAGE_ROWS", 0)
    assert [pages(path, window)["rows"] for window in windows] == shallow
    # Every row once, in the order of x and then of the file.
    whole = [
        row for offset in range(0, 300, 40) for row in pages(path, Window(offset, 40, "x"))["rows"]
    ]
    assert whole == sorted(([i, (i * 37) % 101] for i in range(300)), key=lambda r: (r[1], r[0]))


def _mixed_csv(tmp_path: Path) -> Path:
    """Decimal commas, amounts, percents, yes/no, dates, missing cells, text in mixed case."""
    path = tmp_path / "m.csv"
    words = ["b", "A", "a", "", "B", "c", "NA"]
    path.write_bytes(
        (
            "city;amount;day;paid;share;word\n"
            + "".join(
                f"C{i % 11};{i % 17}.234,5;0{1 + i % 9}/02/2026;{'Oui' if i % 2 else 'no'};"
                f"{i % 9}%;{words[i % len(words)]}\n"
                for i in range(260)
            )
        ).encode()
    )
    return path


def _table_copy_cases(tmp_path: Path) -> list[Path]:
    short = tmp_path / "s.csv"
    short.write_bytes(
        b'a,b,c\n1,"two\nlines",x\n2,y\n' + b"".join(b"%d,z,w\n" % i for i in range(3, 80))
    )
    cp1252 = tmp_path / "e.csv"
    cp1252.write_bytes(
        ("nom,n\n" + "".join(f"café {i},{i}\n" for i in range(120))).encode("cp1252")
    )
    return [numbers_csv(tmp_path), _mixed_csv(tmp_path), short, cp1252]


def test_a_typed_copy_pages_and_sorts_as_the_text_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Deep pages too (sorting the keys alone, text by the rank of its values).
    monkeypatch.setattr(paging, "DEEP_PAGE_ROWS", 60)
    for path in _table_copy_cases(tmp_path):
        shown = preview_file(path, name=path.name).to_dict()
        work = path.parent / f"work-{path.stem}"
        names = [str(column["name"]) for column in shown["columns"]]
        windows = [Window(offset, 40) for offset in (0, 45, 230)] + [
            Window(offset, 45, name, descending)
            for name in names
            for offset in (0, 200)  # a shallow page and a deep one
            for descending in (False, True)
        ]

        def read(window: Window, path: Path = path, shown: dict = shown, work: Path = work) -> dict:  # type: ignore[type-arg]
            return read_page(path, name=path.name, shown=shown, window=window, work=work)

        from_text = [read(window) for window in windows]
        copy = paging.table_copy_path(shown, work)
        assert not copy.exists()
        assert paging.build_table_copy(path, shown=shown, work=work) is True
        assert copy.exists() and not list(copy.parent.glob("*.part"))
        from_copy = [read(window) for window in windows]
        for window, text, typed in zip(windows, from_text, from_copy, strict=True):
            assert typed == text, (path.name, window)
        # Made once.
        assert paging.build_table_copy(path, shown=shown, work=work) is False


def test_the_typed_copy_is_what_pages_read_once_it_is_there(tmp_path: Path) -> None:
    path = numbers_csv(tmp_path)
    shown = preview_file(path, name=path.name).to_dict()
    work = tmp_path / "work"
    paging.build_table_copy(path, shown=shown, work=work)
    # The text changes under the copy (it never does: a file's bytes are its digest's):
    # the pages come from the copy.
    path.write_text("i,x\n" + "".join(f"{i},0\n" for i in range(300)))
    window = Window(0, 2, "x", descending=True)
    page = read_page(path, name=path.name, shown=shown, window=window, work=work)
    assert [row[1] for row in page["rows"]] == [100, 100]


def test_the_copy_s_duckdb_writes_its_copy_and_nothing_else(tmp_path: Path) -> None:
    path = numbers_csv(tmp_path)
    partial = tmp_path / "n.table.part"
    con = connect(path, partial)
    quoted = "'" + str(path).replace("'", "''") + "'"
    con.execute(f"COPY (SELECT * FROM read_csv({quoted})) TO '{partial}' (FORMAT parquet)")
    assert partial.stat().st_size > 0
    for sql in (
        f"COPY (SELECT 1) TO '{tmp_path / 'other.parquet'}' (FORMAT parquet)",
        f"COPY (SELECT 1) TO '{partial}.x' (FORMAT parquet)",
        f"SELECT * FROM read_text('{tmp_path}/*')",
        "SET allowed_paths = ['/']",
    ):
        with pytest.raises(duckdb.Error):
            con.execute(sql).fetchall()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.csv", "n.table.part"]
