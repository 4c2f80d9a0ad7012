"""A table's "Excel" download: all its rows (from the CSV that came with it) in a workbook
whose cells are data, never formulas; a CSV the code wrote converts too."""

from __future__ import annotations

import io

from openpyxl import load_workbook

from tests.api.test_query import READ, ask, finished, of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply


def test_tables_and_csv_files_download_as_excel(alice: Api, session, llm: ScriptedLLM) -> None:  # type: ignore[no-untyped-def]
    llm.script(
        code_reply(
            f"{READ}\nimport pandas as pd\n"
            "big = pd.DataFrame({'n': range(1500), 'note': ['=HYPERLINK(\"http://x\")'] * 1500})\n"
            "display(big)\n"
            "df.to_csv('copy.csv', index=False)\n"
            "import plotly.express as px\npx.bar(df, x='region', y='revenue').show()"
        ),
        final_reply("'Done.'"),
    )
    events = ask(alice, session["id"], "Make a table.")
    assert finished(events)["status"] == "succeeded"
    by_name = {a["artifact"]["name"]: a["artifact"] for a in of(events, "artifact")}

    table = by_name["big.json"]
    response = alice.get(table["url"].removeprefix("/api/v1"), params={"format": "xlsx"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == (
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    )
    assert 'filename="big.xlsx"' in response.headers["content-disposition"]
    sheet = load_workbook(io.BytesIO(response.content)).active
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0] == ("n", "note") and len(rows) == 1501  # every row, not the 1000 shown
    assert rows[1500] == (1499, '\'=HYPERLINK("http://x")')  # escaped, as OWASP advises
    assert sheet.cell(2, 2).data_type == "s"  # text, not a formula Excel would run

    written = alice.get(
        by_name["copy.csv"]["url"].removeprefix("/api/v1"), params={"format": "xlsx"}
    )
    rows = list(load_workbook(io.BytesIO(written.content)).active.iter_rows(values_only=True))
    assert rows[:2] == [("region", "month", "revenue"), ("North", "2026-01", 1200.5)]

    for name in ("figure-1.json",):
        refused = alice.get(by_name[name]["url"].removeprefix("/api/v1"), params={"format": "xlsx"})
        assert refused.status_code == 400 and refused.json()["code"] == "not_a_table"
