"""Previews cost bounded work: costly workbooks are refused before parsing, and the parse
itself runs in a child process that is killed past its time or memory limit."""

from __future__ import annotations

import io
import multiprocessing
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import openpyxl
import pytest

from app.files.preview import PreviewUnsupported, UnreadableFile, preview_file
from app.files.preview.workbook import EXCEL_UNSIZED_SHEET_MAX_BYTES, filled_row_span
from app.files.preview_process import run_preview

SHEET_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
)


def workbook_with_sheet(path: Path, sheet_xml: Iterator[bytes]) -> Path:
    """A real workbook (openpyxl's package) whose first sheet's XML is `sheet_xml`."""
    book = openpyxl.Workbook()
    book.active.append(["a", "b"])
    template = io.BytesIO()
    book.save(template)
    with (
        zipfile.ZipFile(template) as source,
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for item in source.infolist():
            if item.filename == "xl/worksheets/sheet1.xml":
                with out.open(item.filename, "w", force_zip64=True) as sheet:
                    for part in sheet_xml:
                        sheet.write(part)
            else:
                out.writestr(item.filename, source.read(item))
    return path


def numbered_rows(rows: int, *, dimension: str | None) -> Iterator[bytes]:
    yield SHEET_HEAD
    if dimension:
        yield f'<dimension ref="{dimension}"/>'.encode()
    yield b'<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>n</t></is></c>'
    yield b'<c r="B1" t="inlineStr"><is><t>square</t></is></c></row>'
    batch = []
    for number in range(2, rows + 2):
        batch.append(
            f'<row r="{number}"><c r="A{number}"><v>{number - 1}</v></c>'
            f'<c r="B{number}"><v>{(number - 1) ** 2}</v></c></row>'
        )
        if len(batch) == 10_000:
            yield "".join(batch).encode()
            batch = []
    yield "".join(batch).encode() + b"</sheetData></worksheet>"


# Counting rows by scanning the XML -----------------------------------------------------


@pytest.mark.parametrize("chunk_size", [1, 7, 64, 1 << 20])
def test_the_row_scan_counts_filled_rows_across_any_chunking(chunk_size: int) -> None:
    xml = (
        SHEET_HEAD + b"<sheetData>"
        b'<row r="2" spans="1:2"><c r="A2" t="s"><v>0</v></c></row>'  # header on row 2
        b'<row r="3"><c r="A3"><v>1</v></c></row>'
        b'<row r="4" s="3" customFormat="1"/>'  # styled, empty
        b'<row r="5"><c r="A5" s="1"/></row>'  # a cell without a value
        b'<row r="9"><c r="A9" t="inlineStr"><is><t>x</t></is></c></row>'
        b'<row r="10" ht="20"/>'
        b"</sheetData></worksheet>"
    )
    assert filled_row_span(io.BytesIO(xml), chunk_size) == 7  # rows 3..9 under the header


def test_the_row_scan_numbers_rows_without_r_and_with_a_prefix() -> None:
    xml = (
        b'<x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        b"<x:sheetData>"
        + b"<x:row><x:c><x:v>1</x:v></x:c></x:row>" * 5
        + b"<x:row/><x:row><x:c/></x:row>"
        + b"</x:sheetData><x:rowBreaks/></x:worksheet>"
    )
    assert filled_row_span(io.BytesIO(xml), 5) == 4
    assert filled_row_span(io.BytesIO(SHEET_HEAD + b"<sheetData/></worksheet>")) == 0


def test_a_sheet_with_a_wrong_dimension_is_counted(tmp_path: Path) -> None:
    path = workbook_with_sheet(tmp_path / "wrong.xlsx", numbered_rows(1500, dimension="A1:B2"))
    preview = preview_file(path, name="wrong.xlsx")
    assert preview.row_count == 1500
    assert preview.rows[2] == [3, 9]


def test_a_sheet_without_a_dimension_is_counted(tmp_path: Path) -> None:
    path = workbook_with_sheet(tmp_path / "nodim.xlsx", numbered_rows(1200, dimension=None))
    assert preview_file(path, name="nodim.xlsx").row_count == 1200


# Refused before parsing ----------------------------------------------------------------


def test_a_workbook_that_unpacks_absurdly_is_refused_before_parsing(tmp_path: Path) -> None:
    def bomb() -> Iterator[bytes]:
        yield SHEET_HEAD + b"<sheetData>"
        for _ in range(64):
            yield b"<row><c><v>0</v></c></row>" * 40_000  # 1 MB of one repeated row
        yield b"</sheetData></worksheet>"

    path = workbook_with_sheet(tmp_path / "bomb.xlsx", bomb())
    assert path.stat().st_size < 1 << 20
    with pytest.raises(UnreadableFile) as caught:
        preview_file(path, name="bomb.xlsx")
    message = str(caught.value)
    assert message.startswith("bomb.xlsx is too large to preview: xl/worksheets/sheet1.xml")
    assert "times" in message and "can still be downloaded" in message


def test_a_large_sheet_that_does_not_state_its_size_is_refused(tmp_path: Path) -> None:
    rows = EXCEL_UNSIZED_SHEET_MAX_BYTES // 60 + 1000  # about 60 bytes a row
    path = workbook_with_sheet(tmp_path / "big.xlsx", numbered_rows(rows, dimension=None))
    with zipfile.ZipFile(path) as archive:
        assert archive.getinfo("xl/worksheets/sheet1.xml").file_size > EXCEL_UNSIZED_SHEET_MAX_BYTES
    with pytest.raises(UnreadableFile) as caught:
        preview_file(path, name="big.xlsx")
    assert "too large to preview" in str(caught.value)
    assert "does not state its size" in str(caught.value)


def test_the_same_sheet_stating_its_size_previews_from_its_first_rows(tmp_path: Path) -> None:
    rows = EXCEL_UNSIZED_SHEET_MAX_BYTES // 60 + 1000
    path = workbook_with_sheet(
        tmp_path / "big.xlsx", numbered_rows(rows, dimension=f"A1:B{rows + 1}")
    )
    preview = preview_file(path, name="big.xlsx")
    assert preview.row_count == rows
    assert preview.rows[0] == [1, 1]


# The child process ---------------------------------------------------------------------


async def test_a_preview_past_its_time_limit_is_killed() -> None:
    before = set(multiprocessing.active_children())
    with pytest.raises(UnreadableFile) as caught:
        await run_preview("slow.xlsx", time.sleep, 60, time_limit=1)
    assert str(caught.value).startswith("slow.xlsx is too large or complex to preview")
    assert "more than 1 seconds" in str(caught.value)
    # The child is gone, not left running (or sleeping) on its own.
    assert set(multiprocessing.active_children()) <= before


async def test_a_preview_past_its_memory_limit_is_refused() -> None:
    with pytest.raises(UnreadableFile) as caught:
        await run_preview("huge.json", bytearray, 4 << 30, memory_bytes=256 << 20)
    assert str(caught.value).startswith("huge.json is too large to preview")
    assert "256 MB of memory" in str(caught.value)


async def test_a_preview_returns_its_result_and_raises_its_errors(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text("name,age\nAda,36\nAlan,41\n")
    preview = await run_preview("people.csv", preview_file, path, name="people.csv")
    assert preview.row_count == 2 and preview.rows[1] == ["Alan", 41]
    with pytest.raises(PreviewUnsupported):
        await run_preview("notes.pdf", preview_file, path, name="notes.pdf")
