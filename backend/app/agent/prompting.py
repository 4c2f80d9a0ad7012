"""The agent's system prompt, rendered from Jinja2 templates with StrictUndefined."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

_env = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "prompts"),
    undefined=StrictUndefined,
    keep_trailing_newline=False,
    autoescape=False,
)

SAMPLE_CHARS = 24
ANSWER_CHARS = 600


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    dtype: str
    samples: str


@dataclass(frozen=True)
class FileInfo:
    name: str
    size: str
    row_count: int | None = None
    columns: list[ColumnInfo] = field(default_factory=list)
    pinned: bool = False
    note: str = ""


@dataclass(frozen=True)
class Turn:
    query: str
    answer: str


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def _short(value: Any) -> str:
    text = str(value).replace("\n", " ")
    return text if len(text) <= SAMPLE_CHARS else text[: SAMPLE_CHARS - 1] + "…"


def columns_from_preview(preview: dict[str, Any], samples: int = 3) -> list[ColumnInfo]:
    """Column names, dtypes and a few distinct non-empty sample values from a stored preview."""
    rows = preview.get("rows", [])
    out = []
    for i, column in enumerate(preview.get("columns", [])):
        seen: list[str] = []
        for row in rows:
            value = row[i] if i < len(row) else None
            if value is None or value == "":
                continue
            text = _short(value)
            if text not in seen:
                seen.append(text)
            if len(seen) == samples:
                break
        out.append(ColumnInfo(column["name"], column["dtype"], ", ".join(seen)))
    return out


def render_system_prompt(
    *,
    files: list[FileInfo],
    history: list[Turn],
    authorized_imports: list[str],
    code_open: str = "<code>",
    code_close: str = "</code>",
) -> str:
    """The system prompt: how to work, what is in the workspace, what was asked before."""
    history = [
        Turn(t.query, t.answer if len(t.answer) <= ANSWER_CHARS else t.answer[:ANSWER_CHARS] + "…")
        for t in history
    ]
    return (
        _env.get_template("system.j2")
        .render(
            files=files,
            history=history,
            authorized_imports=", ".join(sorted({m.split(".")[0] for m in authorized_imports})),
            code_open=code_open,
            code_close=code_close,
        )
        .strip()
        + "\n"
    )
