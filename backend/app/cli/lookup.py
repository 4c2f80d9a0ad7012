"""Projects, sessions and files as a user names them: by id, by name, or by an id's start;
sessions also by the start of their title.

An exact id wins, then an exact name, then a name in any case, then a unique id prefix (at
least four characters), then (sessions) a unique start of a title, in any case. Two matches
are an error that lists the candidates to choose from.
"""

from __future__ import annotations

import os
import re
from typing import Any

from app.cli.client import ApiError, WorkbenchClient
from app.cli.output import Failure

# The project `workbench ask` uses when none is named (WORKBENCH_PROJECT overrides it).
DEFAULT_PROJECT = "Terminal"
DEFAULT_PROJECT_DESCRIPTION = "Questions asked with the workbench command."
UUID = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
# The candidates an ambiguous name lists (the rest are counted).
MAX_LISTED = 10


def _listed(matches: list[dict[str, Any]], name_key: str) -> str:
    """The candidates as a user tells them apart: '"Title" (id)', a few at most."""
    shown = [f'"{m[name_key]}" ({m["id"]})' for m in matches[:MAX_LISTED]]
    more = len(matches) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def pick(
    kind: str, ref: str, items: list[dict[str, Any]], name_key: str, by_start: bool = False
) -> dict[str, Any]:
    """The one item of `items` that `ref` names.

    Args:
        kind: What the items are, for messages ("project", "session", "file").
        ref: An id, a name, or the start of an id, as the user typed it (with `by_start`,
            or the start of a name).
        items: The candidates, each with "id" and `name_key`.
        name_key: The field holding the item's name ("name" or "title").
        by_start: A name may be given by its start (in any case) when only one starts so.
    """
    for exact in items:
        if exact["id"] == ref:
            return exact
    folded = ref.casefold()
    prefix = ref.lower() if len(ref) >= 4 else None
    for matches in (
        [i for i in items if i[name_key] == ref],
        [i for i in items if str(i[name_key]).casefold() == folded],
        [i for i in items if prefix and str(i["id"]).startswith(prefix)],
    ):
        if len(matches) == 1:
            return matches[0]
        if matches:
            ids = ", ".join(str(m["id"]) for m in matches)
            raise Failure(f'{len(matches)} {kind}s match "{ref}": give the id ({ids}).')
    if not by_start:
        raise Failure(f'No {kind} "{ref}". `workbench {kind}s list` shows them.')
    starting = [i for i in items if folded and str(i[name_key]).casefold().startswith(folded)]
    if len(starting) == 1:
        return starting[0]
    if starting:
        raise Failure(
            f'{len(starting)} {kind}s have a {name_key} starting with "{ref}": '
            f"{_listed(starting, name_key)}. Give more of the {name_key}, or the id."
        )
    raise Failure(
        f'No {kind} is called "{ref}" or has a {name_key} starting with it. '
        f"`workbench {kind}s list` shows them."
    )


def project(client: WorkbenchClient, ref: str) -> dict[str, Any]:
    return pick("project", ref, client.projects(), "name")


def existing_default_project(client: WorkbenchClient) -> dict[str, Any] | None:
    """The project named by WORKBENCH_PROJECT, else "Terminal", if it exists."""
    named = os.environ.get("WORKBENCH_PROJECT")
    if named:
        return project(client, named)
    return next((p for p in client.projects() if p["name"] == DEFAULT_PROJECT), None)


def project_or_default(client: WorkbenchClient, ref: str | None) -> dict[str, Any]:
    """The named project, else the default one ("Terminal" is made on first use)."""
    if ref:
        return project(client, ref)
    return existing_default_project(client) or client.create_project(
        DEFAULT_PROJECT, DEFAULT_PROJECT_DESCRIPTION
    )


def session(client: WorkbenchClient, ref: str, project_ref: str | None = None) -> dict[str, Any]:
    """A session by id, by title, or by the start of its title when only one starts so (in
    the named project, else in any project)."""
    if UUID.match(ref):
        try:
            return client.session(ref.lower())
        except ApiError as exc:
            if exc.status != 404:
                raise
            raise Failure(f'No session "{ref}". `workbench sessions list` shows them.') from exc
    projects = [project(client, project_ref)] if project_ref else client.projects()
    candidates = [s for p in projects for s in client.sessions(p["id"])]
    return pick("session", ref, candidates, "title", by_start=True)


def file(client: WorkbenchClient, ref: str, project_ref: str | None = None) -> dict[str, Any]:
    """A file by id, or by name (in the named project, else in any project)."""
    if UUID.match(ref):
        try:
            return client.file(ref.lower())
        except ApiError as exc:
            if exc.status != 404:
                raise
            raise Failure(f'No file "{ref}". `workbench files list` shows them.') from exc
    projects = [project(client, project_ref)] if project_ref else client.projects()
    candidates = [f for p in projects for f in client.files(p["id"])]
    return pick("file", ref, candidates, "name")


def runs(client: WorkbenchClient, session_id: str, refs: list[str], option: str) -> list[str]:
    """Questions of a session as the user names them: their numbers in the session (1 is
    the first) or run ids; as run ids.

    Args:
        option: The option they were given with, for messages ("--runs").
    """
    history = [r["id"] for r in client.runs(session_id)]
    ids = []
    for ref in refs:
        if ref.isdigit():
            if not 1 <= int(ref) <= len(history):
                count = f"{len(history)} question{'' if len(history) == 1 else 's'}"
                raise Failure(f"{option}: the session has {count}, not {ref}.")
            ids.append(history[int(ref) - 1])
        else:
            ids.append(ref)
    return ids
