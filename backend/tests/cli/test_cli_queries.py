"""`workbench ask` shows the queries a step ran on the project's data sources (issue 25,
point 5): each under its step, with its source, its SQL, and its rows or its error."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.test_source_queries import TOTALS, shop  # noqa: F401
from tests.cli.test_cli import Cli, cli  # noqa: F401
from tests.support.llm import ScriptedLLM, code_reply, final_reply

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)


def test_ask_shows_each_query_under_its_step(
    cli: Cli,  # noqa: F811
    shop: dict[str, Any],  # noqa: F811
    llm: ScriptedLLM,
) -> None:
    llm.script(
        code_reply(
            f'df = sql("{TOTALS}", source="shop")\nprint(len(df))\n'
            "try:\n    sql('SELECT * FROM nowhere', source='shop')\n"
            "except Exception as e:\n    print('no such table')",
            "Sum in the database.",
        ),
        final_reply("'Done.'"),
    )
    asked = cli.run("ask", "--session", shop["session"]["id"], "Sales by region?")
    assert asked.code == 0, asked.stderr
    lines = asked.stdout.splitlines()
    [first] = [line for line in lines if line.startswith("⛁ shop: SELECT region")]
    assert first == f"⛁ shop: {TOTALS}  2 rows · " + first.rsplit(" · ", 1)[1]
    assert first.endswith(" ms")
    [second] = [line for line in lines if line.startswith("⛁ shop: SELECT * FROM nowhere")]
    assert "  failed after " in second and "nowhere" in second.split("failed after", 1)[1]
    out = asked.stdout
    assert out.index("Sum in the database.") < out.index("⛁ shop:") < out.index("Done.")
