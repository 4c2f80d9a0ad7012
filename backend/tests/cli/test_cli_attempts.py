"""`workbench ask --attempts N` (issue 44): the attempts and the verdict in the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.attempts_script import FIRST, SECOND, THIRD, responder
from tests.cli.test_cli import Cli, cli, sales  # noqa: F401
from tests.support.llm import ScriptedLLM, code_reply, final_reply

pytestmark = pytest.mark.parametrize("server", ["embedded"], indirect=True)

READ = "import pandas as pd\ndf = pd.read_csv('sales.csv')"


def test_ask_with_attempts_prints_each_attempt_and_the_verdict(
    cli: Cli,  # noqa: F811
    sales: Path,  # noqa: F811
    llm: ScriptedLLM,
) -> None:
    step = code_reply(f"{READ}\ntotal = df['revenue'].sum()\nprint(total)")
    llm.responder = responder(
        {
            FIRST: [step, final_reply("f'Total revenue is {total}.'")],
            SECOND: [step, final_reply("total")],
            THIRD: [step, final_reply("total + 1")],
        }
    )
    asked = cli.run("ask", "--file", str(sales), "--attempts", "3", "Total revenue?")
    assert asked.code == 0, asked.stderr
    out = asked.stdout
    assert "Attempt 1: pandas" in out and "Attempt 3: cross-check" in out
    assert "Attempt 3 succeeded — 4491.75" in out
    verdict = "Verdict (2/3, majority): 2 of 3 agree — attempt 3 (cross-check) found 4491.75."
    assert verdict in out
    # The run's answer once after the verdict (before it: attempt 1's line only).
    answer = "Total revenue is 4490.75."
    assert "Attempt 1 succeeded — " + answer in out and out.count(answer) == 2
    assert out.index(verdict) < out.rindex(answer)
    refused = cli.run("ask", "--attempts", "6", "Total?")
    assert refused.code == 2 and "--attempts" in refused.stderr
