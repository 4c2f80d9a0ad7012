"""Previews of every sheet of a workbook, CSVs with decimal commas and dates, and column
profiles: through the API, on both stacks."""

from __future__ import annotations

import dataclasses
import io
import shutil
import uuid
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import update

from app.models import File
from tests.api.test_query import ask, finished, of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer

EUROPEAN = b"ville;montant;jour\nLyon;1.234,56;31/01/2026\nMetz;12,5;01/02/2026\nLyon;-3;\n"


def workbook() -> bytes:
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer) as writer:
        pd.DataFrame({"region": ["North", "South"], "sales": [10, 30]}).to_excel(
            writer, sheet_name="Sales", index=False
        )
        pd.DataFrame({"item": ["pen", "ink", "pen"], "cost": [1.5, 2.0, 4.0]}).to_excel(
            writer, sheet_name="Costs", index=False
        )
    return buffer.getvalue()


def uploaded(api: Api, project_id: str, name: str, content: bytes) -> dict[str, Any]:
    response = api.upload(project_id, name, content)
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_every_sheet_of_a_workbook_previews(alice: Api) -> None:
    project = alice.project()
    book = uploaded(alice, project["id"], "book.xlsx", workbook())
    assert book["check"] == "ok"
    first = alice.get(f"/files/{book['id']}/preview").json()
    assert (first["sheets"], first["sheet"], first["format"]) == (["Sales", "Costs"], "Sales", None)
    assert first["rows"] == [["North", 10], ["South", 30]]
    costs = alice.get(f"/files/{book['id']}/preview", params={"sheet": "Costs"}).json()
    assert (costs["sheets"], costs["sheet"]) == (["Sales", "Costs"], "Costs")
    assert [c["name"] for c in costs["columns"]] == ["item", "cost"]
    assert costs["rows"] == [["pen", 1.5], ["ink", 2.0], ["pen", 4.0]]
    assert costs["row_count"] == 3
    # Asked again (now from the row), and the first sheet by name, answer the same.
    assert alice.get(f"/files/{book['id']}/preview", params={"sheet": "Costs"}).json() == costs
    assert alice.get(f"/files/{book['id']}/preview", params={"sheet": "Sales"}).json() == first


def test_a_sheet_that_is_not_there_is_a_sentence_not_a_500(alice: Api) -> None:
    project = alice.project()
    book = uploaded(alice, project["id"], "book.xlsx", workbook())
    for path in ("preview", "profile"):
        missing = alice.get(f"/files/{book['id']}/{path}", params={"sheet": "Nope"})
        assert missing.status_code == 404, path
        assert missing.json() == {
            "detail": 'book.xlsx has no sheet named "Nope". Its sheets: "Sales", "Costs".',
            "code": "sheet_not_found",
        }
        empty = alice.get(f"/files/{book['id']}/{path}", params={"sheet": ""})
        assert empty.status_code == 422 and empty.json()["code"] == "validation_error"
    sales = uploaded(alice, project["id"], "sales.csv", EUROPEAN)
    for path in ("preview", "profile"):
        response = alice.get(f"/files/{sales['id']}/{path}", params={"sheet": "Sheet1"})
        assert response.status_code == 422
        assert response.json() == {
            "detail": "sales.csv has no sheets: only Excel workbooks do.",
            "code": "not_a_workbook",
        }


def test_decimal_commas_and_dates_are_read_as_numbers_and_dates(alice: Api) -> None:
    project = alice.project()
    file = uploaded(alice, project["id"], "ventes.csv", EUROPEAN)
    preview = alice.get(f"/files/{file['id']}/preview").json()
    plain = {"unit": None, "decimal": None, "true_values": None, "false_values": None}
    plain |= {"currency": None, "currencies": None, "decimals": None}
    mixed = ("mixed", "reading", "unreadable", "day_first", "settled_by", "decimal_separator")
    plain |= dict.fromkeys(mixed)  # none of these columns mixes kinds
    plain["missing_values"] = None
    assert preview["columns"] == [
        {"name": "ville", "dtype": "str", "type": "text", "date_format": None} | plain,
        {"name": "montant", "dtype": "float64", "type": "number", "date_format": None} | plain,
        {"name": "jour", "dtype": "datetime64[us]", "type": "date", "date_format": "%d/%m/%Y"}
        | plain,
    ]
    assert preview["rows"] == [
        ["Lyon", 1234.56, "2026-01-31"],
        ["Metz", 12.5, "2026-02-01"],
        ["Lyon", -3.0, None],
    ]
    assert preview["format"] == {
        "delimiter": ";",
        "decimal": ",",
        "thousands": ".",
        "encoding": "utf-8",
    }
    assert (preview["sheets"], preview["sheet"]) == (None, None)


def test_a_profile_of_each_column(alice: Api) -> None:
    project = alice.project()
    file = uploaded(alice, project["id"], "ventes.csv", EUROPEAN)
    profile = alice.get(f"/files/{file['id']}/profile")
    assert profile.status_code == 200, profile.text
    # Read as the preview reads every row: no currency or decimals in this file.
    formats = dict.fromkeys(("unit", "currency", "currencies", "decimals"))
    assert profile.json() == {
        "sheet": None,
        "header_row": 0,
        "row_count": 3,
        "rows_profiled": 3,
        "complete": True,
        "sampled": None,
        "columns": [
            {
                "name": "ville",
                "dtype": "str",
                "kind": "text",
                "type": "text",
                "missing": 0,
                "unreadable": 0,
                "distinct": 2,
                "min": None,
                "max": None,
                "mean": None,
                "top": [{"value": "Lyon", "count": 2}, {"value": "Metz", "count": 1}],
            }
            | formats,
            {
                "name": "montant",
                "dtype": "float64",
                "kind": "number",
                "type": "number",
                "missing": 0,
                "unreadable": 0,
                "distinct": 3,
                "min": -3.0,
                "max": 1234.56,
                "mean": pytest.approx((1234.56 + 12.5 - 3) / 3),
                "top": None,
            }
            | formats,
            {
                "name": "jour",
                "dtype": "datetime64[us]",
                "kind": "datetime",
                "type": "date",
                "missing": 1,
                "unreadable": 0,
                "distinct": 2,
                "min": "2026-01-31",
                "max": "2026-02-01",
                "mean": "2026-01-31T12:00:00",
                "top": None,
            }
            | formats,
        ],
    }
    book = uploaded(alice, project["id"], "book.xlsx", workbook())
    costs = alice.get(f"/files/{book['id']}/profile", params={"sheet": "Costs"}).json()
    assert (costs["sheet"], costs["row_count"], costs["complete"]) == ("Costs", 3, True)
    item, cost = costs["columns"]
    assert item["top"] == [{"value": "pen", "count": 2}, {"value": "ink", "count": 1}]
    assert (cost["min"], cost["max"], cost["mean"]) == (1.5, 4.0, 2.5)
    sales = alice.get(f"/files/{book['id']}/profile").json()
    assert sales["sheet"] == "Sales" and sales["columns"][1]["mean"] == 20.0


def test_what_cannot_be_profiled_says_why(alice: Api, bob: Api) -> None:
    project = alice.project()
    notes = uploaded(alice, project["id"], "notes.md", b"# notes")
    response = alice.get(f"/files/{notes['id']}/profile")
    assert response.status_code == 415 and response.json()["code"] == "preview_unsupported"
    random = uploaded(alice, project["id"], "random.csv", bytes(range(256)) * 16)
    response = alice.get(f"/files/{random['id']}/profile")
    assert response.status_code == 422
    assert response.json() == {
        "detail": "random.csv does not look like a text file",
        "code": "unreadable_file",
    }
    fake = uploaded(alice, project["id"], "fake.xlsx", b"not a workbook")
    response = alice.get(f"/files/{fake['id']}/profile")
    assert response.status_code == 422 and "fake.xlsx could not be read as Excel" in response.text
    assert bob.get(f"/files/{notes['id']}/profile").status_code == 404
    assert bob.get(f"/files/{uuid.uuid4()}/profile").status_code == 404


def test_profiles_and_sheet_previews_are_kept_on_the_row(alice: Api, live: LiveServer) -> None:
    project = alice.project()
    book = uploaded(alice, project["id"], "book.xlsx", workbook())
    profile = alice.get(f"/files/{book['id']}/profile", params={"sheet": "Costs"}).json()
    costs = alice.get(f"/files/{book['id']}/preview", params={"sheet": "Costs"}).json()
    # With the bytes gone, what was computed is still answered; what was not says so.
    storage = live.state.storage
    for key in live.call(storage.list_keys()):
        live.call(storage.delete(key))
    shutil.rmtree(Path(live.settings.DATA_DIR) / "cache", ignore_errors=True)
    assert alice.get(f"/files/{book['id']}/profile", params={"sheet": "Costs"}).json() == profile
    assert alice.get(f"/files/{book['id']}/preview", params={"sheet": "Costs"}).json() == costs
    response = alice.get(f"/files/{book['id']}/profile", params={"sheet": "Sales"})
    assert response.status_code == 404 and response.json()["code"] == "content_missing"


def test_a_preview_stored_in_the_old_shape_is_read_again(alice: Api, live: LiveServer) -> None:
    project = alice.project()
    book = uploaded(alice, project["id"], "book.xlsx", workbook())
    old = {"columns": [{"name": "region", "dtype": "str"}], "rows": [["North"]], "row_count": 2}

    async def store_old() -> None:
        async with live.state.session_factory() as db:
            await db.execute(
                update(File).where(File.id == uuid.UUID(book["id"])).values(preview=old)
            )
            await db.commit()

    live.call(store_old())
    preview = alice.get(f"/files/{book['id']}/preview").json()
    assert preview["sheets"] == ["Sales", "Costs"]
    assert preview["rows"] == [["North", 10], ["South", 30]]


def test_the_agent_is_told_how_to_read_such_files_and_its_code_gets_the_numbers(
    alice: Api, llm: ScriptedLLM, live: LiveServer
) -> None:
    pool = live.state.sandboxes
    limits = pool.limits  # reading a workbook imports openpyxl: not a test of speed
    pool.limits = dataclasses.replace(limits, step_timeout_seconds=60)
    try:
        _told_how_to_read(alice, llm)
    finally:
        pool.limits = limits


def _told_how_to_read(alice: Api, llm: ScriptedLLM) -> None:
    project = alice.project()
    uploaded(alice, project["id"], "ventes.csv", EUROPEAN)
    uploaded(alice, project["id"], "book.xlsx", workbook())
    session = alice.post(f"/projects/{project['id']}/sessions", json={}).json()
    code = (
        "import pandas as pd\n"
        "df = pd.read_csv('ventes.csv', sep=';', decimal=',', thousands='.')\n"
        "df['jour'] = pd.to_datetime(df['jour'], format='%d/%m/%Y')\n"
        "costs = pd.read_excel('book.xlsx', sheet_name='Costs')\n"
        "print(df['montant'].sum(), df['jour'].max().date(), costs['cost'].sum())"
    )
    llm.script(code_reply(code), final_reply("'done'"))
    events = ask(alice, session["id"], "Total amount, last day and total cost?")
    assert finished(events)["status"] == "succeeded"
    assert of(events, "step.output")[0]["output"].strip() == "1244.06 2026-02-01 7.5"
    prompt = str(llm.requests[0]["messages"][0]["content"])
    assert (
        "  read with pd.read_csv(name, sep=';', decimal=',', thousands='.'); then convert text "
        "dates with pd.to_datetime(df[column], format=...) for {'jour': '%d/%m/%Y'}"
    ) in prompt.splitlines()
    sheets = (
        "  sheets: Sales, Costs (the columns are the first's; pd.read_excel(name, "
        "sheet_name=...) reads another)"
    )
    assert sheets in prompt.splitlines()
