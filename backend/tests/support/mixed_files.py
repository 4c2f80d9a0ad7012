"""Files whose columns mix kinds, as hand-kept workbooks and exported CSVs do: an Amount
column of real numbers and amount texts ("€22,729.58", "(1,200.00)"), an Order date column
of real dates and date texts ("02/07/2025"), and a few cells that are neither."""

from __future__ import annotations

import csv
import datetime as dt
import io

from openpyxl import Workbook

# Rows whose cells cannot be read as their column's kind: (row, column) -> text.
UNREADABLE = {(7, "Order date"): "soon", (20, "Amount"): "ask Bob", (350, "Order date"): "tbd"}


def order_rows(rows: int = 600) -> list[dict[str, object]]:
    """The orders in file order: each cell as a workbook holds it (a date or a text)."""
    out = []
    for i in range(rows):
        day = dt.date(2025, 1, 1) + dt.timedelta(days=i % 300)
        amount = round(1000 + i * 37.13, 2)
        when: object = (
            day.strftime("%d/%m/%Y") if i % 3 == 0 else dt.datetime(day.year, day.month, day.day)
        )
        money: object = f"€{amount:,.2f}" if i % 4 == 0 else amount
        if i == 5:
            money = "(1,200.00)"
        row = {"Order": i + 1, "Order date": when, "Amount": money, "Region": "NSEW"[i % 4]}
        for (at, column), text in UNREADABLE.items():
            if at == i:
                row[column] = text
        out.append(row)
    return out


def expected(row: dict[str, object]) -> list[object]:
    """A row as the preview shows it: dates as ISO dates, amounts as numbers, cells that
    cannot be read as `{"unreadable": text}`."""
    shown: list[object] = [row["Order"]]
    when = row["Order date"]
    if isinstance(when, dt.datetime):
        shown.append(when.date().isoformat())
    elif when in ("soon", "tbd"):
        shown.append({"unreadable": when})
    else:
        day, month, year = str(when).split("/")
        shown.append(f"{year}-{month}-{day}")
    money = row["Amount"]
    if money == "ask Bob":
        shown.append({"unreadable": money})
    elif money == "(1,200.00)":
        shown.append(-1200.0)
    elif isinstance(money, str):
        shown.append(float(money.strip("€").replace(",", "")))
    else:
        shown.append(money)
    shown.append(row["Region"])
    return shown


def mixed_workbook(rows: int = 600) -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Orders"
    sheet.append(["Order", "Order date", "Amount", "Region"])
    for row in order_rows(rows):
        sheet.append(list(row.values()))
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def mixed_csv(rows: int = 600) -> bytes:
    """The same orders exported as CSV: real dates written as ISO dates."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["Order", "Order date", "Amount", "Region"])
    for row in order_rows(rows):
        when = row["Order date"]
        if isinstance(when, dt.datetime):
            row["Order date"] = when.date().isoformat()
        writer.writerow(row.values())
    return buffer.getvalue().encode()
