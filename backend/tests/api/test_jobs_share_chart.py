"""A job's share link and its alert email's chart (issue 45, point 5), on both stacks: an
alert delivering by email and to the share link mails the run's chart as a PNG (a real SMTP
server) with the link, and the link always shows the job's latest run (values, change,
checks, the chart) until it is revoked; a chart of a kind not drawn mails no image and says
so."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image

from tests.api.jobs_support import make_job, run_job, when
from tests.api.test_jobs_alerts import LOWER
from tests.api.test_query import ask, finished
from tests.conftest import Api
from tests.jobs.receivers import Inbox, smtp_server
from tests.support.llm import ScriptedLLM, code_reply, final_reply

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHECKS = """```python
import pandas as pd


def test_sales_has_revenue(params):
    sales = pd.read_csv(params["sales_data_csv"])
    assert "revenue" in sales.columns, "sales data.csv has no revenue column; the job reads it"
```"""


def chart_question(chart: str) -> tuple[str, ...]:
    return (
        code_reply(
            "import pandas as pd\nimport plotly.express as px\nimport plotly.graph_objects as go\n"
            "sales = pd.read_csv('sales data.csv')\n"
            "total = float(sales['revenue'].sum())\n"
            "by_region = sales.groupby('region', as_index=False)['revenue'].sum()\n"
            f"fig = {chart}\n"
            "fig.update_layout(title='Revenue by region')\nfig.show()\nprint(total)",
            "Sum and chart the revenue.",
        ),
        final_reply("round(total, 2)"),
    )


# Plotly writes a DataFrame's columns as typed arrays ({dtype, bdata}): drawn too.
BAR = "px.bar(by_region, x='region', y='revenue')"
HEATMAP = "go.Figure(go.Heatmap(z=[[1, 2], [3, 4]]))"


@pytest.fixture
def smtp(live: Any) -> Iterator[Inbox]:
    for inbox, port in smtp_server():
        worker = live.state.jobs_background.deliveries
        settings = worker.settings
        worker.settings = settings.model_copy(
            update={"SMTP_HOST": "127.0.0.1", "SMTP_PORT": port, "SMTP_STARTTLS": False}
        )
        try:
            yield inbox
        finally:
            worker.settings = settings


def _job_with_chart(alice: Api, session: dict[str, Any], llm: ScriptedLLM, chart: str) -> Any:
    llm.script(*chart_question(chart), CHECKS)
    events = ask(alice, session["id"], "What is the total revenue? Chart it by region.")
    assert finished(events)["status"] == "succeeded", events
    job = make_job(alice, session["project_id"], session["id"])
    assert {"name": "fig", "kind": "chart"} in job["results"], job["results"]
    return job


def _sent(alice: Api, job_run: dict[str, Any], count: int) -> dict[str, Any]:
    return when(
        alice,
        f"/job-runs/{job_run['id']}",
        lambda r: (
            len(r["deliveries"]) == count and all(d["status"] != "queued" for d in r["deliveries"])
        ),
    )


def test_the_share_link_shows_the_latest_run_and_the_email_carries_chart_and_link(
    alice: Api, anon: Api, session: dict[str, Any], llm: ScriptedLLM, smtp: Inbox
) -> None:
    job = _job_with_chart(alice, session, llm, BAR)
    none = alice.get(f"/jobs/{job['id']}/share")
    assert none.status_code == 200 and none.json() is None
    deliver = [{"channel": "email", "to": ["team@example.com"]}, {"channel": "share"}]
    alerts = [{"when": "above", "result": "answer_1", "value": 0, "deliver": deliver}]
    saved = alice.patch(f"/jobs/{job['id']}", json={"alerts": alerts})
    assert saved.status_code == 200, saved.text
    link = alice.get(f"/jobs/{job['id']}/share")
    assert link.status_code == 200, link.text
    url = link.json()["url"]
    path = url.split("/api/v1", 1)[1]
    assert path.startswith("/shared/")

    first = run_job(alice, job["id"])
    assert first["status"] == "succeeded", first
    done = _sent(alice, first, 2)
    by_channel = {d["channel"]: d for d in done["deliveries"]}
    assert by_channel["share"]["status"] == "sent" and by_channel["share"]["target"] == url
    assert by_channel["email"]["status"] == "sent", by_channel["email"]

    [(to, message)] = smtp.messages
    assert to == ["team@example.com"]
    text = message.get_body(preferencelist=("plain",))
    assert text is not None and f"Its latest run: {url}" in text.get_content()
    [image] = [part for part in message.walk() if part.get_content_type() == "image/png"]
    png = image.get_payload(decode=True)
    assert png.startswith(PNG_SIGNATURE)
    with Image.open(io.BytesIO(png)) as drawn:
        assert drawn.format == "PNG" and drawn.size[0] >= 400
    html_part = message.get_body(preferencelist=("html",))
    assert html_part is not None and f'href="{url}"' in html_part.get_content()

    page = anon.get(path, headers={"Accept": "text/html"})
    assert page.status_code == 200, page.text
    assert "Revenue" in page.text and "4,490.75" in page.text
    assert 'src="data:image/png;base64,' in page.text
    assert "script" not in page.headers["content-security-policy"].split("sandbox")[0]
    shown = anon.get(path, params={"format": "json"}).json()
    assert shown["latest_run"]["results"]["answer_1"] == 4490.75
    assert shown["charts"][0]["figure"]["data"][0]["type"] == "bar"

    assert alice.upload(session["project_id"], "sales data.csv", LOWER).status_code == 201
    second = run_job(alice, job["id"])
    assert second["status"] == "succeeded", second
    latest = anon.get(path, params={"format": "json"}).json()["latest_run"]
    assert latest["results"]["answer_1"] == 3951.86
    assert round(latest["change"]["answer_1"]["pct"], 1) == -12.0
    assert "3,951.86" in anon.get(path, headers={"Accept": "text/html"}).text

    share_id = link.json()["id"]
    assert alice.delete(f"/shares/{share_id}").status_code == 204
    assert anon.get(path, params={"format": "json"}).status_code == 404
    assert alice.get(f"/jobs/{job['id']}/share").json() is None
    newer = alice.upload(session["project_id"], "sales data.csv", LOWER + b"West,2026-03,5\n")
    assert newer.status_code == 201, newer.text
    third = run_job(alice, job["id"])
    revoked = {d["channel"]: d for d in _sent(alice, third, 2)["deliveries"]}["share"]
    assert revoked["status"] == "failed" and "no share link that opens" in revoked["last_error"]

    assert alice.patch(f"/jobs/{job['id']}", json={"alerts": alerts}).status_code == 200
    again = alice.get(f"/jobs/{job['id']}/share").json()["url"]
    assert again != url
    assert anon.get(again.split("/api/v1", 1)[1], params={"format": "json"}).status_code == 200


def test_a_chart_not_drawn_mails_no_image_and_says_so(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, smtp: Inbox
) -> None:
    job = _job_with_chart(alice, session, llm, HEATMAP)
    deliver = [{"channel": "email", "to": ["team@example.com"]}]
    alerts = [{"when": "above", "result": "answer_1", "value": 0, "deliver": deliver}]
    assert alice.patch(f"/jobs/{job['id']}", json={"alerts": alerts}).status_code == 200
    done = _sent(alice, run_job(alice, job["id"]), 1)
    assert done["deliveries"][0]["status"] == "sent", done
    [(_, message)] = smtp.messages
    assert not [p for p in message.walk() if p.get_content_type() == "image/png"]
    text = message.get_body(preferencelist=("plain",))
    assert text is not None
    assert "alert emails draw bar, line, scatter and pie charts, not heatmap" in text.get_content()
