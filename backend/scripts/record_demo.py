"""Record the demo's session again: `cd backend && uv run python -m scripts.record_demo`.

Writes app/demo/data/monthly_sales.csv (app.demo.dataset) and app/demo/data/recording.json
from a real run: the app served on loopback (embedded stack, a data folder of its own),
the scripted model over HTTP (tests/support/llm.py) writing the demo's code, the real
sandbox running it. The recording keeps what the history shows (the run, its steps, its
artifacts' bytes) and every event of its stream, for the browser's replay.
"""

from __future__ import annotations

import base64
import json
import tempfile
from pathlib import Path
from typing import Any

from app.demo import dataset, recording
from tests.conftest import Api, stack_settings
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import collect

QUESTION = "Which region grew the most from 2024 to 2025, and how did monthly revenue move?"
STEP = """
import pandas as pd
import plotly.express as px
sales = pd.read_csv("monthly_sales.csv")
fig = px.line(sales, x="month", y="revenue", color="region", markers=True,
              title="Monthly revenue by region, 2024-2025")
fig.show()
sales["year"] = sales["month"].str[:4]
growth = sales.pivot_table(index="region", columns="year", values="revenue", aggfunc="sum")
growth["growth %"] = ((growth["2025"] / growth["2024"] - 1) * 100).round(1)
growth = growth.sort_values("growth %", ascending=False)
display(growth)
print(growth.to_string())
"""
ANSWER = (
    "f\"**{growth.index[0]}** grew the most: revenue rose {growth['growth %'].iloc[0]}% from "
    "2024 to 2025, while **{growth.index[-1]}** changed least ({growth['growth %'].iloc[-1]}%). "
    'Every region peaks in December and dips in February (see the chart)."'
)


def record() -> dict[str, Any]:
    llm = ScriptedLLM().start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            settings = stack_settings("embedded", Path(folder), LLM_API_BASE=llm.api_base)
            live = LiveServer(settings).start()
            try:
                return _ask(live, llm, settings.ADMIN_EMAIL, settings.ADMIN_PASSWORD)
            finally:
                live.stop()
    finally:
        llm.stop()


def _ask(live: LiveServer, llm: ScriptedLLM, email: str, password: str) -> dict[str, Any]:
    with Api(live) as anon, anon.as_user(email, password) as api:
        project = api.project("Demo")
        assert api.upload(project["id"], dataset.NAME, dataset.content()).status_code == 201
        session = api.post(f"/projects/{project['id']}/sessions", json={"title": "Demo"}).json()
        llm.script(
            code_reply(STEP, "I will chart the monthly revenue and compare each region's years."),
            final_reply(ANSWER, "The table shows each region's growth."),
        )
        path = f"/sessions/{session['id']}/query"
        with api.stream("POST", path, json={"query": QUESTION}) as response:
            events = collect(response)
        assert events[-1].data["status"] == "succeeded", events[-1].data
        run = api.get(f"/runs/{events[0].data['run_id']}").json()
        run.pop("asked_by", None)  # the recorder's account: each copy is asked by its user
        artifacts = []
        for artifact in run["artifacts"]:
            content = api.get(f"/artifacts/{artifact['id']}/content").content
            artifacts.append({**artifact, "content": base64.b64encode(content).decode()})
        return {
            "question": QUESTION,
            "dataset": dataset.NAME,
            "run": {**run, "artifacts": artifacts},
            "events": [{"event": e.event, "data": e.data} for e in events],
        }


def main() -> None:
    dataset.PATH.write_bytes(dataset.make())
    recorded = record()
    recording.PATH.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n")
    print(f"recorded {len(recorded['events'])} events into {recording.PATH}")


if __name__ == "__main__":
    main()
