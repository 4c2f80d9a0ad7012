"""A file the code wrote previews like a dataset (issue 42, point 4): GET
/artifacts/{id}/preview reads it with the datasets' own preview: a table's first rows and
columns with their types, a workbook's sheets to switch, pages of the whole table; it
carries its real mime type; another user's artifact is not found."""

from __future__ import annotations

import hashlib
from typing import Any

from tests.api.test_query import ask, finished, of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer

WRITES = (
    "import pandas as pd\n"
    "orders = pd.DataFrame({'day': pd.to_datetime(['2025-07-31', '2025-08-07', '2025-08-14']),"
    " 'amount': [14856.76, 18303.97, 120.5]})\n"
    "regions = pd.DataFrame({'region': ['North', 'South'], 'share': [0.6, 0.4]})\n"
    "with pd.ExcelWriter('report.xlsx') as book:\n"
    "    orders.to_excel(book, sheet_name='Orders', index=False)\n"
    "    regions.to_excel(book, sheet_name='Regions', index=False)\n"
    "orders.to_csv('orders.csv', index=False)\n"
    "orders.to_parquet('orders.parquet')\n"
    "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig('chart.png')\n"
)


def artifact_digests(files: dict[str, dict[str, Any]]) -> tuple[str, ...]:
    return tuple(hashlib.sha256(f"artifact:{a['id']}".encode()).hexdigest() for a in files.values())


def written(api: Api, session: dict[str, Any], llm: ScriptedLLM) -> dict[str, dict[str, Any]]:
    llm.script(code_reply(WRITES), final_reply("'Written.'"))
    events = ask(api, session["id"], "Write the report.")
    assert finished(events)["status"] == "succeeded", of(events, "step.error")
    return {a["artifact"]["name"]: a["artifact"] for a in of(events, "artifact")}


def preview(api: Api, artifact: dict[str, Any], **params: Any) -> Any:
    return api.get(f"/artifacts/{artifact['id']}/preview", params=params)


def test_a_workbook_the_code_wrote_previews_with_its_sheets(
    alice: Api, bob: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    files = written(alice, session, llm)
    book = files["report.xlsx"]
    assert book["mime"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    assert files["orders.parquet"]["mime"] == "application/vnd.apache.parquet"
    assert files["orders.csv"]["mime"] == "text/csv"

    first = preview(alice, book)
    assert first.status_code == 200, first.text
    shown = first.json()
    assert shown["sheets"] == ["Orders", "Regions"] and shown["sheet"] == "Orders"
    assert [c["name"] for c in shown["columns"]] == ["day", "amount"]
    assert shown["row_count"] == 3 and shown["rows"][0][1] == 14856.76
    other = preview(alice, book, sheet="Regions").json()
    assert other["sheet"] == "Regions" and other["rows"] == [["North", 0.6], ["South", 0.4]]
    missing = preview(alice, book, sheet="Nope")
    assert missing.status_code == 404, missing.text

    for name in ("orders.csv", "orders.parquet"):
        page = preview(alice, files[name], offset=1, limit=1, sort="amount", order="desc")
        assert page.status_code == 200, page.text
        assert page.json()["row_count"] == 3 and page.json()["rows"][0][1] == 14856.76, name

    # Nothing of the artifacts stays in the previews' cache (S3's local copies, pages' tables).
    cache = live.settings.previews_cache
    left = [p.name for p in cache.glob("*")] if cache.exists() else []
    assert not [n for n in left if n.startswith(artifact_digests(files))], left

    # Not a table: said so; someone else's artifact: not found, as for any artifact.
    image = preview(alice, files["chart.png"])
    assert image.status_code == 415 and image.json()["code"] == "preview_unsupported"
    assert preview(bob, book).status_code == 404
    assert preview(alice, book, limit=0).status_code == 422
