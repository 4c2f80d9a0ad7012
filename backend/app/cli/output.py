"""What the command prints, and where: results on stdout, progress and prompts on stderr.

`--json` output is written straight to stdout, one document (or one event a line), never
through Rich, so that it stays parseable whatever the terminal's width or colours.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.filesize import decimal
from rich.measure import Measurement
from rich.table import Table

out = Console(highlight=False)
err = Console(stderr=True, highlight=False, soft_wrap=True)  # messages wrap where the terminal does


class Failure(Exception):
    """Something the user should read (then the command exits with `exit_code`)."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


def print_json(document: Any) -> None:
    """One JSON document on stdout (a list or an object), indented for reading."""
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def print_json_line(document: Any) -> None:
    """One JSON document on one line of stdout, flushed at once (for streams)."""
    sys.stdout.write(json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n")
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
