"""Untrusted text made fit for the agent's prompts: one line of bounded length, its invisible
characters escaped, and the tags of the prompt's data blocks (DATA_TAG, HISTORY_TAG,
KNOWLEDGE_TAG) found inside it defused, so that it cannot close the block it is placed in.
Used by the system prompt (prompting.py), by what it says of the data sources
(sources_prompt.py) and of the team's knowledge (knowledge_prompt.py).
"""

from __future__ import annotations

import re
from typing import Any

# The blocks that hold untrusted text; their tags, found inside that text, are defused.
DATA_TAG = "data-description"
HISTORY_TAG = "session-history"
KNOWLEDGE_TAG = "team-knowledge"
_BLOCK_TAG = re.compile(rf"<(\s*/?\s*(?:{DATA_TAG}|{HISTORY_TAG}|{KNOWLEDGE_TAG}))", re.IGNORECASE)


def untrusted(value: Any, limit: int) -> str:
    """Text from a user's file or an earlier turn, made fit to place inside a prompt block.

    Args:
        value: The text (or value) as found.
        limit: The most characters to keep; a longer text ends with "…".

    Returns:
        One line: line breaks, control and other invisible characters are written as
        Python escapes (a column named "Revenue\\n(EUR)" stays usable in code), and a tag
        of the prompt's blocks has its "<" written "&lt;".
    """
    text = "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in str(value)
    )
    text = _BLOCK_TAG.sub(r"&lt;\1", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
