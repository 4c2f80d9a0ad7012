"""Previews over the whole file, through the API on both stacks: pages of any rows, sorted
over all rows, the header row under title rows (detected, or chosen), and real-world
workbooks whose amounts, percents, yes/no and dates are read as such."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import random
from typing import Any

from openpyxl import Workbook

from tests.api.test_query import ask, finished, of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer


def prices_csv(rows: int = 240, seed: int = 7) -> tuple[bytes, list[float]]:
    """A CSV of `rows` products with random prices; the prices in file order."""
    rng = random.Random(seed)
    prices = [round(rng.uniform(1, 120), 2) for _ in range(rows)]
    lines = ["id,product,price,sold_on"]
    lines += [
        f"{i},item {i:03d},{price},{dt.date(2024, 1, 1) + dt.timedelta(days=i)}"
        for i, price in enumerate(prices)
    ]
    return ("\n".join(lines) + "\n").encode(), prices


def uploaded(api: Api, name: str, content: bytes) -> dict[str, Any]:
    project = api.project()
    response = api.upload(project["id"], name, content)
    assert response.status_code == 201, response.text
    return dict(response.json())


def page(api: Api, file: dict[str, Any], **params: Any) -> dict[str, Any]:
    response = api.get(f"/files/{file['id']}/preview", params=params)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_page_three_of_a_240_row_csv_shows_rows_100_to_149(alice: Api) -> None:
    content, prices = prices_csv()
    file = uploaded(alice, "prices.csv", content)
    third = page(alice, file, offset=100, limit=50)
    assert third["row_count"] == 240
    assert (third["offset"], third["limit"], third["sort"]) == (100, 50, None)
    assert [row[0] for row in third["rows"]] == list(range(100, 150))
    assert [row[2] for row in third["rows"]] == prices[100:150]
    assert third["rows"][0][3] == "2024-04-10"  # a date, shown as a date
    last = page(alice, file, offset=200, limit=50)
    assert [row[0] for row in last["rows"]] == list(range(200, 240))
    assert page(alice, file, offset=240)["rows"] == []
    # The first page, from the head kept on the row, reads the same as a page read whole.
    assert page(alice, file, limit=50)["rows"] == page(alice, file, offset=0, limit=51)["rows"][:50]


def test_sorting_sorts_every_row_not_the_page(alice: Api) -> None:
    content, prices = prices_csv()
    file = uploaded(alice, "prices.csv", content)
    top = page(alice, file, sort="price", order="desc")
    assert top["row_count"] == 240 and (top["sort"], top["order"]) == ("price", "desc")
    assert top["rows"][0][2] == max(prices)
    assert max(prices) != max(prices[:50])  # the old preview's sort would have missed it
    assert [row[2] for row in top["rows"]] == sorted(prices, reverse=True)[:50]
    # The pages of a sort cover every row once.
    seen = []
    for offset in range(0, 240, 100):
        seen += [
            row[0] for row in page(alice, file, sort="price", offset=offset, limit=100)["rows"]
        ]
    assert sorted(seen) == list(range(240))
    ascending = [row[2] for row in page(alice, file, sort="price", limit=500)["rows"]]
    assert ascending == sorted(prices)
    by_name = page(alice, file, sort="product", order="desc", limit=3)["rows"]
    assert [row[1] for row in by_name] == ["item 239", "item 238", "item 237"]


def test_bad_page_requests_say_what_is_wrong(alice: Api) -> None:
    content, _ = prices_csv(60)
    file = uploaded(alice, "prices.csv", content)
    response = alice.get(f"/files/{file['id']}/preview", params={"sort": "colour"})
    assert response.status_code == 422 and response.json()["code"] == "unknown_column"
    assert 'no column named "colour"' in response.json()["detail"]
    assert alice.get(f"/files/{file['id']}/preview", params={"limit": 501}).status_code == 422
    assert alice.get(f"/files/{file['id']}/preview", params={"offset": -1}).status_code == 422
    too_far = alice.get(f"/files/{file['id']}/preview", params={"header_row": 70})
    assert too_far.status_code == 422 and too_far.json()["code"] == "bad_header_row"
    assert "row 70" in too_far.json()["detail"]


TITLED_CSV = (
    b"Sales report,,\n"
    b"Exported 2024-03-05,,\n"
    b"\n"
    b"region,amount,paid\n"
    b'North,"$1,200",Yes\n'
    b"South,$950.50,no\n"
    b'East,"$12,000.25",Y\n'
)


def test_a_csv_under_title_rows_has_its_header_found_and_chosen(alice: Api) -> None:
    file = uploaded(alice, "report.csv", TITLED_CSV)
    found = page(alice, file)
    assert found["header_row"] == 2
    columns = {c["name"]: c for c in found["columns"]}
    assert list(columns) == ["region", "amount", "paid"]
    assert (columns["amount"]["type"], columns["amount"]["unit"]) == ("number", "$")
    assert columns["paid"]["type"] == "yes/no"
    assert (columns["paid"]["true_values"], columns["paid"]["false_values"]) == (
        ["Y", "Yes"],
        ["no"],
    )
    assert found["rows"] == [
        ["North", 1200.0, True],
        ["South", 950.5, False],
        ["East", 12000.25, True],
    ]
    assert found["row_count"] == 3
    by_amount = page(alice, file, sort="amount", order="desc", offset=0, limit=2)
    assert by_amount["rows"] == [["East", 12000.25, True], ["North", 1200.0, True]]
    # The user's choice of header row wins, and says so.
    chosen = page(alice, file, header_row=0)
    assert chosen["header_row"] == 0
    assert chosen["columns"][0]["name"] == "Sales report"
    assert chosen["row_count"] == 5


def real_world_workbook() -> bytes:
    """What an analyst gets from finance: two title rows, amounts and percents typed as
    text, Y/N flags, real dates."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Q1"
    sheet.append(["ACME Corp: revenue by deal"])
    sheet.append(["Prepared by finance, March 2024"])
    sheet.append(["Deal", "Amount", "Margin", "Won", "Closed"])
    deals = [
        ("Alpha", "€1,058.58", "12.5%", "Y", dt.datetime(2024, 3, 1)),
        ("Beta", "€2,400.00", "7%", "N", dt.datetime(2024, 3, 2)),
        ("Gamma", "€310.10", "30%", "Yes", dt.datetime(2024, 3, 15)),
        ("Delta", "€12,999.99", "2.25%", "no", dt.datetime(2024, 2, 28)),
    ]
    for deal in deals:
        sheet.append(list(deal))
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def test_a_real_world_workbook_reads_as_a_person_reads_it(alice: Api) -> None:
    file = uploaded(alice, "deals.xlsx", real_world_workbook())
    assert file["check"] == "ok"
    shown = page(alice, file)
    assert (shown["sheet"], shown["header_row"], shown["row_count"]) == ("Q1", 2, 4)
    columns = {c["name"]: c for c in shown["columns"]}
    assert list(columns) == ["Deal", "Amount", "Margin", "Won", "Closed"]
    assert {name: c["type"] for name, c in columns.items()} == {
        "Deal": "text",
        "Amount": "number",
        "Margin": "number",
        "Won": "yes/no",
        "Closed": "date",
    }
    assert (columns["Amount"]["unit"], columns["Margin"]["unit"]) == ("€", "%")
    assert shown["rows"][0] == ["Alpha", 1058.58, 0.125, True, "2024-03-01"]
    assert shown["rows"][3] == ["Delta", 12999.99, 0.0225, False, "2024-02-28"]
    biggest = page(alice, file, sort="Amount", order="desc", limit=2)
    assert [row[0] for row in biggest["rows"]] == ["Delta", "Beta"]
    latest = page(alice, file, sort="Closed", order="desc", offset=1, limit=1)
    assert latest["rows"] == [["Beta", 2400.0, 0.07, False, "2024-03-02"]]
    profile = alice.get(f"/files/{file['id']}/profile").json()
    assert profile["header_row"] == 2
    assert [c["type"] for c in profile["columns"]] == ["text", "number", "number", "yes/no", "date"]
    assert profile["columns"][4]["min"] == "2024-02-28"
    # Choosing the first row as the header shows the sheet as it is, title rows and all.
    raw = page(alice, file, header_row=0)
    assert raw["header_row"] == 0 and raw["row_count"] == 6
    assert raw["columns"][0]["name"] == "ACME Corp: revenue by deal"


def test_the_agent_reads_such_files_as_the_preview_did(
    alice: Api, llm: ScriptedLLM, live: LiveServer
) -> None:
    pool = live.state.sandboxes
    limits = pool.limits  # reading a workbook imports openpyxl: not a test of speed
    pool.limits = dataclasses.replace(limits, step_timeout_seconds=60)
    try:
        _reads_as_the_preview_did(alice, llm)
    finally:
        pool.limits = limits


def _reads_as_the_preview_did(alice: Api, llm: ScriptedLLM) -> None:
    project = alice.project()
    for name, content in (("deals.xlsx", real_world_workbook()), ("report.csv", TITLED_CSV)):
        assert alice.upload(project["id"], name, content).status_code == 201
    session = alice.post(f"/projects/{project['id']}/sessions", json={}).json()
    # The code an agent writes from what it is told below, word for word.
    number = (
        "pd.to_numeric(df[c].astype(str).str.replace(r'[^0-9.eE+-]', '', regex=True),"
        " errors='coerce')"
    )
    code = (
        "import pandas as pd\n"
        "df = pd.read_excel('deals.xlsx', header=2, true_values=['Y', 'Yes'],"
        " false_values=['N', 'no'])\n"
        f"for c in ['Amount']:\n    df[c] = {number}\n"
        f"for c in ['Margin']:\n    df[c] = {number} / 100\n"
        "deals = df\n"
        "df = pd.read_csv('report.csv', header=2, true_values=['Y', 'Yes'], false_values=['no'])\n"
        f"for c in ['amount']:\n    df[c] = {number}\n"
        "print(round(deals['Amount'].sum(), 2), round(deals['Margin'].max(), 4),"
        " int(deals['Won'].sum()), deals['Closed'].max().date(), df['amount'].sum(),"
        " int(df['paid'].sum()))"
    )
    llm.script(code_reply(code), final_reply("'done'"))
    events = ask(alice, session["id"], "Total won and paid?")
    assert finished(events)["status"] == "succeeded", events
    assert of(events, "step.output")[0]["output"].strip() == "16768.67 0.3 2 2024-03-15 14150.75 2"
    prompt = str(llm.requests[0]["messages"][0]["content"]).splitlines()
    to_number = number.replace("df[c]", "df[column]")
    assert (
        "  read with pd.read_excel(name, header=2, true_values=['Y', 'Yes'],"
        " false_values=['N', 'no'])"
        f"; then turn text amounts in € into numbers with {to_number} for ['Amount']"
        f"; then turn text percents into fractions with {to_number} / 100 for ['Margin']"
    ) in prompt
    assert (
        "  read with pd.read_csv(name, header=2, true_values=['Y', 'Yes'], false_values=['no'])"
        f"; then turn text amounts in $ into numbers with {to_number} for ['amount']"
    ) in prompt
