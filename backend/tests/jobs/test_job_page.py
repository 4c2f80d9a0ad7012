"""The page a job's share link shows to anyone (app.shares.job_page): what the job's code
made (hostile: its values, table cells, check messages, a name) is text on it, never
markup, and the page runs no script (its policy allows none)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime

from app.models.jobs import Job, JobRun
from app.shares.job_page import PAGE_POLICY, JobView, as_html, as_json

EVIL = '<script>alert(1)</script><img src=x onerror="alert(2)">'


def test_what_the_code_made_is_text_on_the_page() -> None:
    job = Job(id=uuid.uuid4(), name=f"Revenue {EVIL}")
    run = JobRun(
        status="succeeded",
        error=None,
        finished_at=datetime(2026, 11, 30, 8, 0, tzinfo=UTC),
        results={
            "answer_1": EVIL,
            "by_region": {"columns": [EVIL], "rows": [[EVIL]], "row_count": 1},
        },
        change={"answer_1": {"before": EVIL, "after": EVIL, "pct": None}},
        checks=[{"name": EVIL, "passed": False, "message": EVIL}],
    )
    view = JobView(job, run, charts=[(EVIL, b'{"data": "not a chart"}')])
    page = asyncio.run(as_html(view))
    assert "<script" not in page and "<img src=x" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 6
    assert "script-src" not in PAGE_POLICY and "default-src 'none'" in PAGE_POLICY
    assert as_json(view)["latest_run"]["results"]["answer_1"] == EVIL  # (JSON: as it was)
