"""The marks the databases put around a hit, and the safe snippet made from them: the text
HTML-escaped, then each mark made `<mark>`/`</mark>`, so a question holding `<script>` shows
as text wherever the snippet goes."""

from __future__ import annotations

import html

# Control characters no searched text holds (a comment or question with one is refused or
# shows them as nothing): they stand for the marks until the text is escaped.
START, STOP = "\x02", "\x03"


def safe_snippet(marked: str | None) -> str:
    escaped = html.escape(marked or "", quote=True)
    return escaped.replace(START, "<mark>").replace(STOP, "</mark>")
