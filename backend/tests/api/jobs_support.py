"""Helpers of the jobs' tests: a two-question session made into a job, job runs waited for."""

from __future__ import annotations

import time
from typing import Any

from tests.api.test_query import ask, finished
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply

ENDED = ("succeeded", "failed", "skipped")
# The checks the scripted model writes for the job (one on its outputs).
CHECKS = """```python
import pandas as pd


def test_sales_has_the_columns_the_job_reads(params):
    sales = pd.read_csv(params["sales_data_csv"])
    missing = [c for c in ("region", "revenue") if c not in sales.columns]
    assert not missing, f"sales data.csv lacks the columns {missing}; the job reads them"


def test_revenue_has_no_missing_values(params):
    sales = pd.read_csv(params["sales_data_csv"])
    missing = int(sales["revenue"].isna().sum())
    assert missing == 0, f"sales.revenue has {missing} missing values; the job expects none"


def test_each_region_once(params, results):
    regions = list(results["by_region"]["region"])
    assert len(regions) == len(set(regions)), f"by_region lists a region twice: {regions}"
```"""
QUESTIONS = (
    code_reply(
        "import pandas as pd\nsales = pd.read_csv('sales data.csv')\n"
        "total = float(sales['revenue'].sum())\nprint(total)",
        "Sum the revenue.",
    ),
    final_reply("round(total, 2)"),
    code_reply(
        "by_region = sales.groupby('region', as_index=False)['revenue'].sum()\ndisplay(by_region)",
        "Revenue by region.",
    ),
    final_reply("float(by_region['revenue'].max())"),
)


def two_questions(api: Api, session_id: str, llm: ScriptedLLM, *more: Any) -> None:
    """Ask the two questions (the model's replies after them: `more`, e.g. the checks)."""
    llm.script(*QUESTIONS, *more)
    for question in ("What is the total revenue?", "Which region earns most?"):
        events = ask(api, session_id, question)
        assert finished(events)["status"] == "succeeded", events


def when(api: Api, path: str, done: Any, timeout: float = 180.0) -> dict[str, Any]:
    """GET `path` until `done(body)` holds."""
    deadline = time.monotonic() + timeout
    while True:
        found = api.get(path)
        assert found.status_code == 200, found.text
        if done(found.json()):
            return dict(found.json())
        assert time.monotonic() < deadline, f"still {found.json()}"
        time.sleep(0.1)


def make_job(api: Api, project_id: str, session_id: str, **body: Any) -> dict[str, Any]:
    """A job of the session, once its checks are written."""
    response = api.post(
        f"/projects/{project_id}/jobs", json={"session_id": session_id, "name": "Revenue", **body}
    )
    assert response.status_code == 201, response.text
    job = response.json()
    assert job["checks"]["status"] == "writing"
    return when(api, f"/jobs/{job['id']}", lambda j: j["checks"]["status"] != "writing")


def run_job(api: Api, job_id: str, **body: Any) -> dict[str, Any]:
    response = api.post(f"/jobs/{job_id}/runs", json=body)
    assert response.status_code == 202, response.text
    assert response.json()["status"] in ("queued", "running")
    return when(api, f"/job-runs/{response.json()['id']}", lambda r: r["status"] in ENDED)
