"""`workbench jobs repairs` and `workbench jobs approve`: a job's repairs (code the model
proposed after a run failed), and an editor's say on the one waiting."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from app.cli.config import connect
from app.cli.output import out, print_json, print_table, shorten

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
JobId = Annotated[str, typer.Argument(help="The job's id.")]


def repairs(job: JobId, as_json: AsJson = False) -> None:
    """The job's repairs, newest first; the diff of the one waiting for approval."""
    with connect() as client:
        items = client.all_items(f"/jobs/{job}/repairs")
    if as_json:
        print_json(items)
        return
    rows = [
        (
            r["id"],
            r["status"],
            str(r["created_at"])[:19],
            r.get("decided_by_name") or "",
            shorten(r.get("reason") or ""),
            shorten(r.get("note") or ""),
        )
        for r in items
    ]
    print_table(("ID", "STATUS", "MADE", "DECIDED BY", "FAILURE", "NOTE"), rows, wrap=("NOTE",))
    waiting = [r for r in items if r["status"] == "proposed"]
    if waiting:
        _show(waiting[0])
        out.print(f"Approve it: workbench jobs approve {job} {waiting[0]['id']} (or --reject)")


def _show(repair: dict[str, Any]) -> None:
    out.print(
        f"\nRepair {repair['id']} ({repair['status']}): {repair.get('note') or ''}", markup=False
    )
    out.print(repair.get("diff") or "(no change)", markup=False, highlight=False)
    for check in repair.get("checks") or []:
        mark = "passed" if check["passed"] else f"failed: {check['message']}"
        out.print(f"  check {check['name']} {mark}", markup=False)


def approve(
    job: JobId,
    repair: Annotated[str, typer.Argument(help="The repair's id.")],
    reject: Annotated[bool, typer.Option("--reject", help="Reject it instead.")] = False,
    as_json: AsJson = False,
) -> None:
    """Approve the job's proposed repair (its code and tests replace the job's), or reject it."""
    decision = "reject" if reject else "approve"
    with connect() as client:
        done = client.json(
            "POST", f"/jobs/{job}/repairs/{repair}/approval", json={"decision": decision}
        )
    if as_json:
        print_json(done)
        return
    if done["status"] == "applied":
        out.print(f"Approved: the job {job} runs the repaired code from now on.")
    else:
        out.print(f"Rejected: the job {job} keeps its code.")
