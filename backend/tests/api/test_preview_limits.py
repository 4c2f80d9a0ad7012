"""A workbook too costly to preview answers 422 at once, and still downloads."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator

import openpyxl
import pandas as pd

from tests.conftest import Api


def workbook(sheet_xml: Iterator[bytes]) -> bytes:
    """A real workbook (openpyxl's package) whose first sheet's XML is `sheet_xml`."""
    book = openpyxl.Workbook()
    book.active.append(["a"])
    template, out = io.BytesIO(), io.BytesIO()
    book.save(template)
    with zipfile.ZipFile(template) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for item in source.infolist():
            if item.filename == "xl/worksheets/sheet1.xml":
                with z.open(item.filename, "w", force_zip64=True) as sheet:
                    for part in sheet_xml:
                        sheet.write(part)
            else:
                z.writestr(item.filename, source.read(item))
    return out.getvalue()


def million_cells() -> Iterator[bytes]:
    """About 1.2 million numbered cells and no <dimension>: about 2 MB packed."""
    yield (
        b'<?xml version="1.0" encoding="UTF-8"?>'
        b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
    )
    for start in range(1, 400_001, 10_000):
        yield "".join(
            f'<row r="{r}"><c r="A{r}"><v>{r % 7}</v></c><c r="B{r}"><v>1</v></c>'
            f'<c r="C{r}"><v>2</v></c></row>'
            for r in range(start, start + 10_000)
        ).encode()
    yield b"</sheetData></worksheet>"


def one_row_repeated() -> Iterator[bytes]:
    yield b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    yield b"<sheetData>"
    for _ in range(200):
        yield b"<row><c><v>0</v></c></row>" * 40_000
    yield b"</sheetData></worksheet>"


def test_a_workbook_with_millions_of_cells_is_refused_and_still_downloads(alice: Api) -> None:
    data = workbook(million_cells())
    assert len(data) < 5 << 20
    project = alice.project()
    file = alice.upload(project["id"], "cells.xlsx", data).json()
    preview = alice.get(f"/files/{file['id']}/preview")
    assert preview.status_code == 422, preview.text
    body = preview.json()
    assert body["code"] == "unreadable_file"
    assert body["detail"].startswith("cells.xlsx is too large to preview")
    assert "can still be downloaded" in body["detail"]
    assert alice.get(f"/files/{file['id']}/content").content == data


def test_a_zip_bomb_workbook_is_refused_and_still_downloads(alice: Api) -> None:
    data = workbook(one_row_repeated())  # 200 MB of XML in well under 1 MB
    project = alice.project()
    file = alice.upload(project["id"], "bomb.xlsx", data).json()
    preview = alice.get(f"/files/{file['id']}/preview")
    assert preview.status_code == 422, preview.text
    assert preview.json()["code"] == "unreadable_file"
    assert preview.json()["detail"].startswith("bomb.xlsx is too large to preview")
    assert alice.get(f"/files/{file['id']}/content").content == data


def test_an_ordinary_workbook_still_previews(alice: Api) -> None:
    frame = pd.DataFrame({"n": range(1500), "square": [n * n for n in range(1500)]})
    excel = io.BytesIO()
    frame.to_excel(excel, index=False)
    project = alice.project()
    file = alice.upload(project["id"], "squares.xlsx", excel.getvalue()).json()
    preview = alice.get(f"/files/{file['id']}/preview")
    assert preview.status_code == 200, preview.text
    assert preview.json()["row_count"] == 1500
    assert preview.json()["rows"][3] == [3, 9]
