"""What the command prints, and where: results on stdout, progress and prompts on stderr.

`--json` output is written straight to stdout, one document (or one event a line), never
through Rich, so that it stays parseable whatever the terminal's width or colours.

Whatever the command prints, it prints as text and never as the terminal's commands:
titles, names, a step's output and the model's answer are written by others (a model, a
co-owner), and a control character among them could write the clipboard (OSC 52), set the
window's title, clear the screen or overwrite a line. The consoles drop every C0 and C1
control character but newline and tab from the text they print (`printable`), below Rich's
styles, so the command's own colours still show; JSON escapes them instead, keeping the
text whole.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import typer
from rich.console import Console, ConsoleOptions, RenderableType
from rich.filesize import decimal
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.table import Table

# What a terminal may act on: C0 but newline and tab, DEL, C1 (a CR-LF ends a line).
_CONTROL = re.compile(r"\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# In JSON, which escapes C0 itself: DEL and C1, the only bytes a string may keep raw.
_RAW_IN_JSON = re.compile(r"[\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` without the control characters a terminal would act on (newline and tab
    stay; a CR-LF becomes a newline)."""
    return _CONTROL.sub(lambda found: "\n" if found.group() == "\r\n" else "", text)


class TextConsole(Console):
    """A Rich console that prints server text as text: every segment it renders loses its
    control characters (`printable`), a link its target's too; the segments Rich makes to
    move the cursor, and the styles it adds on a colour terminal, are its own and stay.
    Markup and emoji codes are off: brackets and colons in a title are shown as typed."""

    def __init__(self, **kwargs: Any):
        super().__init__(**{"markup": False, "emoji": False, **kwargs})

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            text, style, control = segment
            link = style.link if style is not None else None
            if control or not (_CONTROL.search(text) or (link and _CONTROL.search(link))):
                yield segment
            elif style is not None and link:
                yield Segment(printable(text), style + Style(link=printable(link)))
            else:
                yield Segment(printable(text), style)


out = TextConsole(highlight=False)
err = TextConsole(stderr=True, highlight=False, soft_wrap=True)  # wrap where the terminal does


def confirm(question: str) -> None:
    """Ask `question` (yes or no) on the terminal; no ends the command (typer.Abort)."""
    typer.confirm(printable(question), abort=True)


def echo(message: str, *, error: bool = False) -> None:
    """One line on stdout (or stderr), as it is but for its control characters."""
    typer.echo(printable(message), err=error)


class Failure(Exception):
    """Something the user should read (then the command exits with `exit_code`)."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


def print_json(document: Any) -> None:
    """One JSON document on stdout (a list or an object), indented for reading."""
    _write_json(json.dumps(document, indent=2, ensure_ascii=False))


def print_json_line(document: Any) -> None:
    """One JSON document on one line of stdout, flushed at once (for streams)."""
    _write_json(json.dumps(document, ensure_ascii=False, separators=(",", ":")))


def _write_json(encoded: str) -> None:
    """A JSON document and a newline on stdout, flushed. JSON escapes C0 itself; DEL and
    C1, which it writes raw, are escaped too (outside strings JSON is ASCII, so this
    changes no value)."""
    safe = _RAW_IN_JSON.sub(lambda found: f"\\u{ord(found.group()):04x}", encoded)
    sys.stdout.write(safe + "\n")
    sys.stdout.flush()


def table(*columns: str, wrap: tuple[str, ...] = ()) -> Table:
    """A plain table: a header row, no boxes around cells (reads well in a pipe too).

    Args:
        columns: The headers.
        wrap: The headers of columns whose text may wrap when the table is too wide (names,
            questions); the others (ids, dates, numbers) are never cut.
    """
    grid = Table(box=None, header_style="bold", pad_edge=False)
    for column in columns:
        flexible = column in wrap
        grid.add_column(column, no_wrap=not flexible, min_width=12 if flexible else None)
    return grid


def print_table(
    columns: tuple[str, ...],
    rows: Sequence[Sequence[str]],
    *,
    wrap: tuple[str, ...] = (),
    optional: tuple[str, ...] = (),
) -> None:
    """Print rows under `columns` on stdout, whole: in a pipe at their full width; on a
    terminal narrower than the table, without the `optional` columns (in their order)."""
    shown = list(columns)

    def build() -> Table:
        grid = table(*shown, wrap=wrap)
        keep = [columns.index(c) for c in shown]
        for row in rows:
            grid.add_row(*(row[i] for i in keep))
        return grid

    def natural_width(grid: Table) -> int:
        return Measurement.get(out, out.options.update_width(100_000), grid).maximum

    grid = build()
    if not out.is_terminal:
        width = out.width
        out.width = max(width, natural_width(grid))
        try:
            out.print(grid)
        finally:
            out.width = width
        return
    dropping = [c for c in optional if c in shown]
    while dropping and natural_width(grid) > out.width:
        shown.remove(dropping.pop(0))
        grid = build()
    out.print(grid)


def size(value: int | None) -> str:
    return "" if value is None else decimal(value)


def when(value: str | None) -> str:
    """An API timestamp in the local time zone, to the minute."""
    if not value:
        return ""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


def tokens(tokens_in: int | None, tokens_out: int | None) -> str:
    if not tokens_in and not tokens_out:
        return ""
    return f"{tokens_in or 0:,} in, {tokens_out or 0:,} out"


def cost(value: float | None) -> str:
    if value is None:
        return ""
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def seconds(milliseconds: int | None) -> str:
    if milliseconds is None:
        return ""
    if milliseconds < 60_000:
        return f"{milliseconds / 1000:.1f} s"
    minutes, rest = divmod(round(milliseconds / 1000), 60)
    return f"{minutes} min {rest} s"


def shorten(text: str, width: int = 60) -> str:
    """The first line of `text`, cut to `width` characters."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"
