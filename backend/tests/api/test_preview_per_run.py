"""A file's preview is computed once per content, not once per question: the upload's
check computes it and keeps it on the file's row; every question over the file (the first
and a follow-up) describes the file to the model from that kept preview, with no preview
child started (counted by the app's own metric, workbench_preview_jobs_total)."""

from __future__ import annotations

from typing import Any

from app.observability import metrics
from tests.api.test_query import ask, finished
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply

OUTCOMES = ("ok", "too_costly", "failed", "busy")


def preview_jobs() -> float:
    """Preview children started by this process so far, whatever their outcome."""
    return sum(
        metrics.REGISTRY.get_sample_value("workbench_preview_jobs_total", {"outcome": o}) or 0.0
        for o in OUTCOMES
    )


def test_questions_over_a_previewed_file_compute_no_preview(alice: Api, llm: ScriptedLLM) -> None:
    project = alice.project()
    before_upload = preview_jobs()
    uploaded = alice.upload(project["id"], "sales data.csv", b"region,revenue\nNorth,10\nSouth,7\n")
    assert uploaded.status_code == 201, uploaded.text
    assert uploaded.json()["check"] == "ok"  # the upload's own preview, kept on the row
    assert preview_jobs() - before_upload >= 1
    session: dict[str, Any] = alice.post(
        f"/projects/{project['id']}/sessions", json={"title": "Sales"}
    ).json()
    llm.script(
        code_reply("print(1)", "Look."),
        final_reply("'North.'"),
        code_reply("print(2)", "Look again."),
        final_reply("'South.'"),
    )
    before = preview_jobs()
    for question in ("Which region sells most?", "And least?"):
        assert finished(ask(alice, session["id"], question))["status"] == "succeeded"
    assert preview_jobs() == before, "a question computed the file's preview again"
    # The model was told the file's columns each time, from the kept preview.
    prompts = llm.prompts()
    assert len(prompts) == 4
    for text in prompts:
        assert "sales data.csv" in text and "region" in text and "revenue" in text


def test_a_file_its_upload_could_not_preview_is_not_previewed_again_per_question(
    alice: Api, llm: ScriptedLLM
) -> None:
    project = alice.project()
    uploaded = alice.upload(project["id"], "broken.xlsx", b"not a workbook at all")
    assert uploaded.status_code == 201, uploaded.text
    assert uploaded.json()["check"] == "unreadable"
    problem = uploaded.json()["problem"]
    session: dict[str, Any] = alice.post(
        f"/projects/{project['id']}/sessions", json={"title": "Broken"}
    ).json()
    llm.script(code_reply("print(1)", "Look."), final_reply("'Nothing.'"))
    before = preview_jobs()
    assert finished(ask(alice, session["id"], "What is in it?"))["status"] == "succeeded"
    assert preview_jobs() == before, "a question tried the failed preview again"
    # The model is told why the file has no description, as the upload said it.
    prompts = llm.prompts()
    assert len(prompts) == 2
    assert all(f"(could not be previewed: {problem})" in prompt for prompt in prompts)
