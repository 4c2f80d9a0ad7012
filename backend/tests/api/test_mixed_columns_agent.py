"""The agent reads a column that mixes kinds as the preview does: its description of the
file states the reading (kind, date order and what settled it, unreadable cells) and gives
the code that reproduces it; that code, run in a real sandbox, gives the preview's values."""

from __future__ import annotations

import dataclasses
import json
import re

from tests.api.test_preview_pages import page, uploaded
from tests.api.test_query import ask, finished, of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.mixed_files import mixed_workbook
from tests.support.server import LiveServer

_CODE = re.compile(r"Read them as the workbench's preview does.*?\n<code>\n(.*?)\n</code>", re.S)
_CALL = re.compile(r"(df\[[^\]]+\] = read_(?:dates|numbers)\([^)]*\))")


def test_the_agent_is_told_the_reading_and_its_code_gives_the_preview(
    alice: Api, llm: ScriptedLLM, live: LiveServer
) -> None:
    pool = live.state.sandboxes
    limits = pool.limits  # reading a workbook imports openpyxl: not a test of speed
    pool.limits = dataclasses.replace(limits, step_timeout_seconds=60)
    try:
        file = uploaded(alice, "orders.xlsx", mixed_workbook())
        session = alice.post(f"/projects/{file['project_id']}/sessions", json={}).json()
        llm.script(final_reply("'ok'"))
        assert finished(ask(alice, session["id"], "What is in it?"))["status"] == "succeeded"
        prompt = str(llm.requests[0]["messages"][0]["content"])
        line = next(ln for ln in prompt.splitlines() if "read_dates(" in ln)
        assert "dates mixed with date texts, read day-first (from 13/01/2025)" in line
        assert "2 cells cannot be read and become NaN" in line
        amounts = next(ln for ln in prompt.splitlines() if "read_numbers(" in ln)
        assert "numbers mixed with amount texts (amounts in €); 1 cell cannot be read" in amounts
        functions = _CODE.search(prompt)
        assert functions is not None, prompt
        calls = _CALL.findall(prompt)
        assert len(calls) == 2, calls
        # The code an agent writes from what it is told: the functions, then the calls.
        code = "\n".join(
            [
                functions[1],
                "df = pd.read_excel('orders.xlsx')",
                *calls,
                "out = [[None if pd.isna(d) else d.date().isoformat(),"
                " None if pd.isna(a) else float(a)]"
                " for d, a in zip(df['Order date'], df['Amount'])]",
                "print(json.dumps(out))",
            ]
        )
        llm.script(code_reply("import json\n" + code), final_reply("'done'"))
        events = ask(alice, session["id"], "Read the orders.")
        assert finished(events)["status"] == "succeeded", events
        computed = json.loads(of(events, "step.output")[0]["output"].strip())
    finally:
        pool.limits = limits
    shown = page(alice, file, limit=500)["rows"] + page(alice, file, offset=500, limit=500)["rows"]
    preview = [
        [None if isinstance(row[1], dict) else row[1], None if isinstance(row[2], dict) else row[2]]
        for row in shown
    ]
    assert computed == preview
