"""What an alert says: the payload kept with each delivery (job, run, sentences, values and
their change, maybe a chart), and the email and webhook body made from it."""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any

from app.jobs.alerts import MINUS, Triggered, number_text
from app.jobs.compare import table_rows

# Items of a list result kept in a message; characters of a text result.
MAX_LIST_ITEMS = 20
MAX_TEXT = 500


def _shown(value: object) -> object:
    """A result as a message carries it: a table as its row count, long things cut."""
    table = table_rows(value)
    if table is not None:
        return {"table": True, "columns": table[0][:50], "rows": len(table[1])}
    if isinstance(value, list):
        return [_shown(item) for item in value[:MAX_LIST_ITEMS]]
    if isinstance(value, str) and len(value) > MAX_TEXT:
        return value[: MAX_TEXT - 1] + "…"
    if isinstance(value, Mapping):
        return {str(k): _shown(v) for k, v in list(value.items())[:MAX_LIST_ITEMS]}
    return value


@dataclass(frozen=True)
class RunReport:
    """What a job run gives its alerts to say: plain values, as the jobs' code has them."""

    job_id: str
    job_name: str
    job_run_id: str
    run_status: str
    results: Mapping[str, Any]
    change: Mapping[str, Mapping[str, Any]] | None
    chart_png: bytes | None = None
    chart_name: str | None = None
    # Why the run's chart has no image (a kind of chart not drawn, too large, ...).
    chart_note: str | None = None


def build_payload(
    report: RunReport,
    triggered: Sequence[Triggered],
    chart_max_bytes: int = 2_000_000,
    share_url: str | None = None,
) -> dict[str, Any]:
    """The payload a delivery keeps (JSON): everything its message says, no secret; with
    `share_url`, the job's link (its latest run), in `share_url` and at the end of `text`."""
    sentences = [t.sentence for t in triggered]
    payload: dict[str, Any] = {
        "job": {"id": report.job_id, "name": report.job_name},
        "run": {"id": report.job_run_id, "status": report.run_status},
        "alerts": [
            {
                "when": t.alert.when,
                "result": t.alert.result,
                "value": t.alert.value,
                "sentence": t.sentence,
            }
            for t in triggered
        ],
        "text": f"{report.job_name}: " + " ".join(sentences),
        "results": {name: _shown(value) for name, value in report.results.items()},
        "change": {name: dict(entry) for name, entry in (report.change or {}).items()},
    }
    if share_url is not None:
        payload["share_url"] = share_url
        payload["text"] += f" Latest run: {share_url}"
    chart = report.chart_png
    if chart is None and report.chart_note:
        payload["chart_left_out"] = report.chart_note.rstrip(".")
    if chart is not None:
        if len(chart) <= chart_max_bytes:
            payload["chart"] = {
                "name": report.chart_name or "chart.png",
                "png_base64": base64.b64encode(chart).decode(),
            }
        else:
            payload["chart_left_out"] = f"the chart ({len(chart):,} bytes) was too large"
    return payload


def webhook_body(payload: Mapping[str, Any]) -> bytes:
    """The JSON a webhook receives: Slack's `text`, and the rest for programs (no image)."""
    body = {key: value for key, value in payload.items() if key != "chart"}
    if "chart" in payload:
        body["chart"] = {"name": payload["chart"]["name"]}
    return json.dumps(body, ensure_ascii=False, default=str).encode()


def _value_lines(payload: Mapping[str, Any]) -> list[str]:
    lines = []
    change = payload.get("change", {})
    for name, value in payload.get("results", {}).items():
        if isinstance(value, Mapping) and value.get("table"):
            shown = f"a table of {number_text(value['rows'])} rows"
        else:
            shown = number_text(value) if not isinstance(value, list | dict) else json.dumps(value)
        entry = change.get(name)
        if entry and entry.get("before") is not None:
            was = f"was {number_text(entry['before'])}"
            if entry.get("pct"):  # an unchanged value needs no "0.0%"
                pct = entry["pct"]
                sign = "+" if pct > 0 else MINUS
                was += f", {sign}{abs(pct):.1f}%"
            if entry.get("rows_added") is not None:
                was += f", {entry['rows_added']} row(s) added, {entry['rows_removed']} removed"
            shown += f" ({was})"
        lines.append(f"{name}: {shown}")
    return lines


def email_message(payload: Mapping[str, Any], sender: str, to: Sequence[str]) -> EmailMessage:
    """The alert as an email: the sentences, each value with its change, and the chart
    inline (an HTML part showing it, the PNG attached as a related part)."""
    job = payload["job"]["name"]
    sentences = [alert["sentence"] for alert in payload.get("alerts", [])]
    values = _value_lines(payload)
    message = EmailMessage()
    message["From"] = sender
    message["To"] = ", ".join(to)
    # One line whatever the job's name holds (a line break would end the header).
    subject = " ".join(f"{job}: {sentences[0] if sentences else 'alert'}".split())
    message["Subject"] = subject if len(subject) <= 160 else subject[:159] + "…"
    message["Message-ID"] = make_msgid(domain="workbench")
    link = payload.get("share_url")
    text = "\n".join(
        [*sentences, "", "Values:", *(f"  {line}" for line in values), "", f"Job: {job}"]
    )
    if link:
        text += f"\nIts latest run: {link}"
    if "chart_left_out" in payload:
        text += f"\n({payload['chart_left_out']}.)"
    message.set_content(text)
    chart = payload.get("chart")
    if chart:
        cid = make_msgid(domain="workbench")
        page = "".join(
            [
                *(f"<p>{html.escape(s)}</p>" for s in sentences),
                "<ul>",
                *(f"<li>{html.escape(line)}</li>" for line in values),
                "</ul>",
                f'<img src="cid:{cid[1:-1]}" alt="{html.escape(chart["name"])}">',
                f"<p>Job: {html.escape(job)}</p>",
                f'<p><a href="{html.escape(link)}">Its latest run</a></p>' if link else "",
            ]
        )
        message.add_alternative(f"<html><body>{page}</body></html>", subtype="html")
        html_part = message.get_body(preferencelist=("html",))
        assert isinstance(html_part, EmailMessage)
        html_part.add_related(
            base64.b64decode(chart["png_base64"]),
            maintype="image",
            subtype="png",
            cid=cid,
            filename=chart["name"],
            disposition="inline",
        )
    return message
