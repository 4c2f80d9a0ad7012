"""Questions answered from a project's database (issue 25, point 2), end to end on both
stacks: a real MariaDB, the real sandbox, a scripted LLM over HTTP. The agent's code calls
sql(); the backend runs the statement read-only with the source's credentials, which never
reach the code, the events, the log or an export; each query is kept with its step."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import aiomysql
import nbformat
import pytest
from nbclient import NotebookClient

from tests.api.test_query import ask, finished, of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.source_databases import ROWS, ServerSource

TOTALS = (
    "SELECT region, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY region ORDER BY region"
)


def expected_totals() -> dict[str, float]:
    totals: dict[str, float] = {}
    for _, region, amount, _ in ROWS:
        totals[region] = totals.get(region, 0.0) + amount
    return totals


@pytest.fixture
def shop(alice: Api, mysql_source: ServerSource) -> dict[str, Any]:
    """A session on a project whose source `shop` is the MariaDB database (a writing user)."""
    project = alice.project("Shop")
    created = alice.post(
        f"/projects/{project['id']}/sources",
        json={"name": "shop", "url": mysql_source.url(), "description": "The web shop"},
    )
    assert created.status_code == 201, created.text
    source = created.json()
    assert source["status"] == "ready", source
    response = alice.post(f"/projects/{project['id']}/sessions", json={"title": "Orders"})
    return {"session": response.json(), "source": source, "project": project}


def count_orders(server: ServerSource) -> int:
    async def count() -> int:
        conn = await aiomysql.connect(
            host=server.host,
            port=server.port,
            user=server.writer,
            password=server.password,
            db=server.database,
        )
        try:
            async with conn.cursor() as cursor:
                await cursor.execute("SELECT COUNT(*) FROM orders")
                (found,) = await cursor.fetchone()
                return int(found)
        finally:
            conn.close()

    return asyncio.run(count())


def test_the_agent_answers_from_the_database_and_the_query_is_kept_with_its_step(
    alice: Api,
    shop: dict[str, Any],
    llm: ScriptedLLM,
    mysql_source: ServerSource,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    llm.script(
        code_reply(
            f'df = sql("{TOTALS}", source="shop")\n'
            "for row in df.itertuples():\n"
            "    print(row.region, float(row.total), int(row.n))",
            "Sum the orders by region in the database.",
        ),
        final_reply("'North and south, summed in the database.'"),
    )
    events = ask(alice, shop["session"]["id"], "What are the sales by region?")
    assert finished(events)["status"] == "succeeded", of(events, "step.error")
    totals = expected_totals()
    printed = "".join(e["output"] for e in of(events, "step.output"))
    assert printed.splitlines() == [
        f"north {totals['north']} 50",
        f"south {totals['south']} 50",
    ]
    # The prompt described the source and its table, as data.
    prompt = llm.prompts()[0]
    assert "- source shop (mysql): The web shop" in prompt
    assert f"table {mysql_source.database}.orders (~" in prompt
    assert "columns: id " in prompt and "; region " in prompt
    # The query, live and stored with its step.
    [live] = of(events, "step.queries")
    assert live["step"] == 1
    [query] = live["queries"]
    assert query["source"] == "shop" and query["sql"] == TOTALS
    assert query["rows"] == 2 and query["error"] is None and query["duration_ms"] >= 0
    run_id = events[0].data["run_id"]
    run = alice.get(f"/runs/{run_id}").json()
    assert run["steps"][0]["queries"] == [query]
    # The credentials are nowhere the user, the code or the logs can see.
    password = mysql_source.password
    assert password not in json.dumps([e.data for e in events])
    assert password not in json.dumps(run)
    assert password not in alice.get(f"/sources/{shop['source']['id']}").text
    assert password not in caplog.text
    for kind in ("md", "html", "ipynb"):
        exported = alice.get(f"/sessions/{shop['session']['id']}/export", params={"format": kind})
        assert exported.status_code == 200, exported.text
        assert password not in exported.text and TOTALS in exported.text


def test_the_code_never_holds_the_credentials(
    alice: Api, shop: dict[str, Any], llm: ScriptedLLM, mysql_source: ServerSource
) -> None:
    # Right after a query ran, the code looks everywhere it can in its own process: its
    # helpers, its environment and its command line. No password, user or port is there
    # (the worker is never sent any; tests/sandbox/test_data_asks.py checks the channel).
    llm.script(
        code_reply(
            "import io\n"
            "n = len(sql('SELECT id FROM orders', source='shop'))\n"
            "print(n, sql, tables, columns)\n"
            "for name in ('environ', 'cmdline'):\n"
            "    print(io.open('/proc/self/' + name, 'rb').read().decode('utf-8', 'replace'))"
        ),
        final_reply("'done'"),
    )
    events = ask(alice, shop["session"]["id"], "What do you have?")
    assert not of(events, "step.error")
    printed = "".join(e["output"] for e in of(events, "step.output"))
    assert f"{len(ROWS)} <function sql> <function tables> <function columns>" in printed
    assert "PATH=" in printed  # the environment was read
    for secret in (mysql_source.password, mysql_source.writer, str(mysql_source.port)):
        assert secret not in printed


def test_a_statement_that_writes_is_refused_and_the_table_stays_whole(
    alice: Api, shop: dict[str, Any], llm: ScriptedLLM, mysql_source: ServerSource
) -> None:
    before = count_orders(mysql_source)
    llm.script(
        code_reply('sql("DELETE FROM orders", source="shop")'),
        code_reply(
            "try:\n"
            "    sql(\"SELECT 1; DROP TABLE orders\", source='shop')\n"
            "except Exception as e:\n"
            "    print('refused:', e)"
        ),
        final_reply("'Nothing was changed.'"),
    )
    events = ask(alice, shop["session"]["id"], "Delete every order.")
    assert finished(events)["status"] == "succeeded"
    [error] = of(events, "step.error")
    assert error["step"] == 1 and "DELETE" in error["error"]
    queries = [q for e in of(events, "step.queries") for q in e["queries"]]
    assert [q["error"] is not None for q in queries] == [True, True]
    assert [q["rows"] for q in queries] == [0, 0]
    printed = "".join(e["output"] for e in of(events, "step.output"))
    assert printed.startswith("refused:")
    assert count_orders(mysql_source) == before


def test_a_big_result_goes_into_a_parquet_file_of_the_workspace(
    alice: Api, shop: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.script(
        code_reply(
            "path = sql('SELECT * FROM orders ORDER BY id', source='shop', into='orders.parquet')\n"
            "import pandas as pd\n"
            "back = pd.read_parquet(path)\n"
            "print(path, len(back), list(back.columns))"
        ),
        final_reply("'Saved.'"),
    )
    events = ask(alice, shop["session"]["id"], "Export the orders.")
    assert finished(events)["status"] == "succeeded", of(events, "step.error")
    printed = "".join(e["output"] for e in of(events, "step.output"))
    assert printed.startswith(f"orders.parquet {len(ROWS)} ['id', 'region', 'amount'")
    files = [a["artifact"]["name"] for a in of(events, "artifact")]
    assert "orders.parquet" in files  # offered for download like any file the code wrote


def test_mariadb_decimals_arrive_as_numbers(
    alice: Api, shop: dict[str, Any], llm: ScriptedLLM
) -> None:
    # orders.amount is DECIMAL(10, 2) in MariaDB: a number column, as PostgreSQL's numeric.
    llm.script(
        code_reply(
            "df = sql('SELECT id, amount FROM orders ORDER BY id', source='shop')\n"
            "print(df['amount'].dtype, df['amount'].sum(), df['amount'].round(1).iloc[0])\n"
            "sql('SELECT amount FROM orders', source='shop', into='amounts.parquet')\n"
            "import pandas as pd\nprint(pd.read_parquet('amounts.parquet')['amount'].dtype)"
        ),
        final_reply("'Summed.'"),
    )
    events = ask(alice, shop["session"]["id"], "What is the total amount?")
    assert finished(events)["status"] == "succeeded", of(events, "step.error")
    printed = "".join(e["output"] for e in of(events, "step.output"))
    total = sum(amount for _, _, amount, _ in ROWS)
    assert printed.splitlines() == [f"float64 {total} 1.5", "float64"]


def test_without_a_usable_source_sql_says_why(
    alice: Api, llm: ScriptedLLM, mysql_source: ServerSource
) -> None:
    project = alice.project("Broken")
    created = alice.post(
        f"/projects/{project['id']}/sources",
        json={"name": "shop", "url": mysql_source.url(password="not-the-password")},
    )
    assert created.status_code == 201 and created.json()["status"] == "failed", created.text
    session = alice.post(f"/projects/{project['id']}/sessions", json={"title": "x"}).json()
    llm.script(code_reply("sql('SELECT 1', source='shop')"), final_reply("'no'"))
    events = ask(alice, session["id"], "Anything?")
    [error] = of(events, "step.error")
    assert "the source 'shop' cannot be queried now" in error["error"]
    # An unusable source is not offered to the agent in its prompt.
    assert "- source shop" not in llm.prompts()[0]


def test_the_exported_notebook_reruns_the_queries_on_the_readers_own_connection(
    alice: Api,
    shop: dict[str, Any],
    llm: ScriptedLLM,
    mysql_source: ServerSource,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llm.script(
        code_reply(
            f'df = sql("{TOTALS}", source="shop")\n'
            "for row in df.itertuples():\n"
            "    print(row.region, float(row.total), int(row.n))"
        ),
        final_reply("'Summed.'"),
    )
    events = ask(alice, shop["session"]["id"], "Sales by region?")
    printed_then = "".join(e["output"] for e in of(events, "step.output"))
    body = alice.get(f"/sessions/{shop['session']['id']}/export", params={"format": "ipynb"})
    assert body.status_code == 200
    notebook = nbformat.reads(body.text, as_version=4)
    queries = [c for c in notebook.cells if c.cell_type == "markdown" and "```sql" in c.source]
    assert len(queries) == 1 and TOTALS in queries[0].source and "2 rows" in queries[0].source
    # Run with the reader's own connection (the export holds none).
    monkeypatch.setenv("WORKBENCH_RUN_UNSANDBOXED", "1")
    monkeypatch.setenv(
        "WORKBENCH_SOURCE_SHOP",
        f"mysql+pymysql://{mysql_source.reader}:{mysql_source.password}@"
        f"{mysql_source.host}:{mysql_source.port}/{mysql_source.database}",
    )
    NotebookClient(notebook, timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    printed_now = "".join(o.get("text", "") for o in code[1].outputs)
    assert printed_now == printed_then
