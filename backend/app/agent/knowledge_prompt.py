"""What the agent is told of the project's knowledge: the team's items, each with a label
the agent cites ([K1]), and the titles of those that did not fit.

The team wrote this text (and a review pass may have proposed it from a run), so it is
untrusted: each part is made one line of bounded length with the prompt's block tags
defused (untrusted.py), and rendered inside the prompt's knowledge block, which the prompt
tells the model to read as facts about the data, never as instructions about its work.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.agent.untrusted import untrusted

TITLE_CHARS = 200
BODY_CHARS = 2000
ABOUT_CHARS = 300


@dataclass(frozen=True)
class KnowledgeEntry:
    label: str  # K1, K2, … in prompt order
    kind: str  # rule, definition, column, example, lesson
    title: str
    body: str
    about: str = ""  # what it applies to ("file sales.csv, column amount"), "" for the project


@dataclass(frozen=True)
class KnowledgeSection:
    entries: list[KnowledgeEntry] = field(default_factory=list)
    not_shown: list[str] = field(default_factory=list)
    more_not_shown: int = 0

    def __bool__(self) -> bool:
        return bool(self.entries or self.not_shown or self.more_not_shown)


def safe(section: KnowledgeSection | None) -> KnowledgeSection:
    """The section with every text made safe and cut to size."""
    if not section:
        return KnowledgeSection()
    return KnowledgeSection(
        entries=[
            KnowledgeEntry(
                label=entry.label,
                kind=entry.kind,
                title=untrusted(entry.title, TITLE_CHARS),
                body=untrusted(entry.body, BODY_CHARS),
                about=untrusted(entry.about, ABOUT_CHARS),
            )
            for entry in section.entries
        ],
        not_shown=[untrusted(title, TITLE_CHARS) for title in section.not_shown],
        more_not_shown=section.more_not_shown,
    )
