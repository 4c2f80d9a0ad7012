"""A question's selected knowledge as the agent's prompt shows it (labelled K1, K2, … in
prompt order) and as the run records it (`Run.knowledge`)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from app.agent.knowledge_prompt import KnowledgeEntry, KnowledgeSection
from app.knowledge.selection import Candidate, Selection
from app.models import KnowledgeKind

# A definition whose term is an identifier (net_revenue) is used when the code names it.
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{2,}$")


@dataclass(frozen=True)
class Given:
    """An item a run was given: its label in the prompt, and the identifier whose use in
    the run's code counts as relying on it (a column's name, a definition's term), if any."""

    item_id: uuid.UUID
    label: str
    title: str
    term: str | None = None

    def record(self, used: bool = False) -> dict[str, object]:
        return {
            "item_id": str(self.item_id),
            "title": self.title,
            "label": self.label,
            "used": used,
        }


def labelled(selection: Selection) -> list[tuple[str, Candidate]]:
    return [(f"K{n}", item) for n, item in enumerate(selection.shown, start=1)]


def section(selection: Selection, file_names: dict[uuid.UUID, str]) -> KnowledgeSection:
    """What the prompt shows (made safe by the prompt itself)."""
    return KnowledgeSection(
        entries=[
            KnowledgeEntry(
                label, item.kind, item.title, item.body, _about(item, file_names, selection)
            )
            for label, item in labelled(selection)
        ],
        not_shown=selection.not_shown,
        more_not_shown=selection.more_not_shown,
    )


def given(selection: Selection) -> list[Given]:
    return [Given(item.id, label, item.title, _term(item)) for label, item in labelled(selection)]


def _term(item: Candidate) -> str | None:
    if item.kind == KnowledgeKind.column and item.column and len(item.column) > 1:
        return item.column
    if item.kind == KnowledgeKind.definition and _IDENTIFIER.match(item.title.strip()):
        return item.title.strip()
    return None


def _about(item: Candidate, file_names: dict[uuid.UUID, str], selection: Selection) -> str:
    parts = []
    if item.file_id is not None and item.file_id in file_names:
        parts.append(f"file {file_names[item.file_id]}")
    if item.source_id is not None and item.source_id in selection.source_names:
        parts.append(f"source {selection.source_names[item.source_id]}")
    if item.table:
        parts.append(f"table {item.table}")
    if item.column:
        parts.append(f"column {item.column}")
    return ", ".join(parts)
