"""The agent's system prompt, rendered from Jinja2 templates with StrictUndefined.

File names, column names, sample values and earlier turns come from users and their files,
so they are untrusted: each is made one line of bounded length with its invisible
characters escaped (untrusted.py), and placed inside a delimited block that the prompt tells
the model to read as data, never as instructions. Text that imitates a delimiter is defused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from app.agent import knowledge_prompt
from app.agent.knowledge_prompt import KnowledgeSection
from app.agent.sources_prompt import fit
from app.agent.untrusted import DATA_TAG, HISTORY_TAG, KNOWLEDGE_TAG, untrusted
from app.files import reading
from app.files.preview.csv_sql import listed_missing

_env = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "prompts"),
    undefined=StrictUndefined,
    keep_trailing_newline=False,
    autoescape=False,
)

NAME_CHARS = 120
COLUMN_CHARS = 80
DTYPE_CHARS = 40
SAMPLE_CHARS = 24
SAMPLES = 3
NOTE_CHARS = 300
QUERY_CHARS = 500
ANSWER_CHARS = 600
# Columns described per file; a wider table is summarised as "and N more".
MAX_COLUMNS = 60


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
    more_columns: int = 0
    # How the file must be read for the columns above (built from checked values: see
    # read_hint), and a workbook's sheets.
    read: str = ""
    sheets: list[str] = field(default_factory=list)
    # Set when the file is too big to load whole into pandas in the sandbox: what it would
    # take and what the sandbox has (see too_big), e.g. "about 9.8 GB in pandas; the
    # sandbox has 2.0 GB".
    too_big: str = ""


@dataclass(frozen=True)
class Turn:
    query: str
    answer: str


@dataclass(frozen=True)
class Variables:
    """The variables earlier questions left in the session's sandbox.

    Each entry is described by the backend from validated names, types and shapes (see
    app.sandbox.snapshot_format), so none is free text.

    Attributes:
        defined: What the code can use now, e.g. "df (DataFrame, 1,000 rows, 5 columns)".
        lost: What earlier questions made that is gone (not saveable when the sandbox
            was restarted).
        restarted: The sandbox was started afresh for this question.
        problem: Why the saved variables could not be loaded, if they could not.
    """

    defined: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    restarted: bool = False
    problem: str | None = None


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def too_big(pandas_bytes: int | None, memory_mb: int) -> str:
    """What a file's line says of its size when it is too big for pandas in the sandbox
    (`pandas_bytes` from app.files.preview.footprint.too_big_for_pandas), or ""."""
    if pandas_bytes is None:
        return ""
    return (
        f"about {human_size(pandas_bytes)} in pandas; the sandbox has {human_size(memory_mb << 20)}"
    )


def columns_from_preview(preview: dict[str, Any], samples: int = SAMPLES) -> list[ColumnInfo]:
    """Column names, dtypes and a few distinct non-empty sample values from a stored preview."""
    rows = preview.get("rows", [])
    out = []
    for i, column in enumerate(preview.get("columns", [])):
        seen: list[str] = []
        for row in rows:
            value = row[i] if i < len(row) else None
            if value is None or value == "":
                continue
            text = untrusted(value, SAMPLE_CHARS)
            if text not in seen:
                seen.append(text)
            if len(seen) == samples:
                break
        out.append(ColumnInfo(column["name"], column["dtype"], ", ".join(seen)))
    return out


# The functions that read columns mixing kinds, given to the agent as code when a file has
# such a column: the very ones the preview reads them with.
MIXED_READING = reading.source_for_agent()
_MIXED_CALL = re.compile(r"read_(?:dates|numbers)\(")
_DELIMITERS = {",": "','", ";": "';'", "\t": "'\\t'", "|": "'|'"}
_THOUSANDS = {".": "'.'", ",": "','", " ": "' '", "\u00a0": "'\\xa0'", "'": '"\'"'}
_CODEC = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_DATE_FORMAT = re.compile(r"^(ISO8601|[%A-Za-z0-9 ./:_-]{1,32})$")
MAX_SHEETS = 20


def read_hint(preview: dict[str, Any]) -> str:
    """How to read a file so the code gets what the preview showed, or "" when pandas'
    defaults do: the read_csv / read_excel arguments beyond them (separator, decimal comma,
    encoding, the header row under title rows, the spellings of yes and no), then the text
    dates and the amounts and percents to convert.

    Every part is checked against what the preview can produce (a file's bytes chose them),
    so the hint carries no free text but column names, which are escaped.
    """
    parts = []
    text_format = preview.get("format") or {}
    delimiter = text_format.get("delimiter")
    if delimiter in _DELIMITERS and delimiter != ",":
        parts.append(f"sep={_DELIMITERS[delimiter]}")
    if text_format.get("decimal") == ",":
        parts.append("decimal=','")
    if text_format.get("thousands") in _THOUSANDS:
        parts.append(f"thousands={_THOUSANDS[text_format['thousands']]}")
    encoding = str(text_format.get("encoding") or "utf-8")
    if _CODEC.match(encoding) and encoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
        parts.append(f"encoding={encoding!r}")
    header_row = preview.get("header_row")
    if isinstance(header_row, int) and not isinstance(header_row, bool) and header_row > 0:
        parts.append(f"header={header_row}")
    columns = [c for c in preview.get("columns", []) if isinstance(c, dict)][:MAX_COLUMNS]
    for values in ("true_values", "false_values"):
        words = sorted({w for c in columns for w in c.get(values) or [] if _checked_word(w)})
        if words:
            parts.append(f"{values}={words!r}")
    dates = [
        f"{_name(c)!r}: {c['date_format']!r}"
        for c in columns
        if isinstance(c.get("date_format"), str) and _DATE_FORMAT.match(c["date_format"])
    ]
    steps = []
    if dates:
        steps.append(
            "convert text dates with pd.to_datetime(df[column], format=...) for "
            f"{{{', '.join(dates)}}}"
        )
    for comma, converter in ((False, _TO_NUMBER), (True, _TO_NUMBER_COMMA)):
        written = [c for c in columns if "unit" in c and (c.get("decimal") == ",") == comma]
        amounts = [c for c in written if c["unit"] in _AMOUNT_UNITS]
        percents = [_name(c) for c in written if c["unit"] == "%"]
        how = " (written with a decimal comma)" if comma else ""
        for unit in dict.fromkeys(c["unit"] for c in amounts):
            named = [_name(c) for c in amounts if c["unit"] == unit]
            what = f"text amounts in {unit}" if unit else "text amounts"
            steps.append(f"turn {what}{how} into numbers with {converter} for {named}")
        if percents:
            steps.append(
                f"turn text percents{how} into fractions with {converter} / 100 for {percents}"
            )
    steps += _mixed_steps(columns)
    steps += _missing_steps(columns)
    reader = "pd.read_csv" if text_format else "pd.read_excel" if preview.get("sheets") else None
    if parts and reader:
        steps.insert(0, f"read with {reader}(name, {', '.join(parts)})")
    return "; then ".join(steps)


def _mixed_steps(columns: list[dict[str, Any]]) -> list[str]:
    """How to read the columns that mix kinds as the preview did: with the functions of
    app.files.reading, which the prompt gives as code (MIXED_READING), cell by cell."""
    steps = []
    for column in columns:
        name = _name(column)
        if column.get("mixed") == "date":
            day_first = bool(column.get("day_first"))
            settled = column.get("settled_by")
            order = "day-first" if day_first else "month-first"
            why = f"from {untrusted(settled, SAMPLE_CHARS)}" if settled else "assumed"
            call = f"df[{name!r}] = read_dates(df[{name!r}], day_first={day_first})"
            said = f"dates mixed with date texts, read {order} ({why})"
        elif column.get("mixed") == "number":
            decimal = "," if column.get("decimal_separator") == "," else "."
            call = f"df[{name!r}] = read_numbers(df[{name!r}], decimal={decimal!r})"
            said = "numbers mixed with amount texts" + _currencies(column)
        else:
            continue
        count = column.get("unreadable")
        if isinstance(count, int) and count:
            cells = "1 cell" if count == 1 else f"{count:,} cells"
            said += f"; {cells} cannot be read and become NaN"
        steps.append(f"{said}: {call}")
    return steps


def _missing_steps(columns: list[dict[str, Any]]) -> list[str]:
    """How to read the number and date columns that hold a few texts read as missing
    ("TBD", "—": `missing_values` beyond pandas' own), which pandas would leave as text;
    the texts themselves are file content and stay out of the prompt."""
    numbers, dates = [], []
    for column in columns:
        if column.get("mixed") or not listed_missing(column):
            continue
        dtype = str(column.get("dtype", ""))
        if dtype.startswith("float"):
            numbers.append(_name(column))
        elif dtype.startswith("datetime64"):
            dates.append(_name(column))
    steps = []
    if numbers:
        steps.append(
            f"a few texts read as missing: pd.to_numeric(df[column], errors='coerce') for {numbers}"
        )
    if dates:
        steps.append(
            f"a few texts read as missing: pd.to_datetime(df[column], errors='coerce') for {dates}"
        )
    return steps


def _currencies(column: dict[str, Any]) -> str:
    """What a mixed number column's amounts are in, said to the agent (known units only)."""
    units = column.get("currencies") or [column.get("currency") or column.get("unit")]
    known = [u for u in units if isinstance(u, str) and u.upper() in _KNOWN_UNITS]
    if not known:
        return ""
    if known == ["%"]:
        return " (percents, read as fractions)"
    return f" (amounts in {' and '.join(known)})"


_KNOWN_UNITS = {"€", "$", "£", "¥", "₹", "%", "EUR", "USD", "GBP", "CHF", "JPY", "INR"}
# How a column of amounts ("€1,058.58") or percents ("12.5%", without the division) is read.
_TO_NUMBER = (
    "pd.to_numeric(df[column].astype(str).str.replace(r'[^0-9.eE+-]', '', regex=True), "
    "errors='coerce')"
)
# The same for amounts written the European way ("1.058,58 €"): dots and spaces between
# thousands dropped, the decimal comma made a point.
_TO_NUMBER_COMMA = (
    "pd.to_numeric(df[column].astype(str).str.replace(r'[^0-9,eE+-]', '', regex=True)"
    ".str.replace(',', '.'), errors='coerce')"
)
_AMOUNT_UNITS = (None, "€", "$", "£", "¥", "₹")
_WORD = re.compile(r"^[A-Za-z]{1,5}$")


def _checked_word(word: object) -> bool:
    # Yes and no as the file spells them: only letters (y, Yes, FALSE...), nothing else.
    return isinstance(word, str) and bool(_WORD.match(word))


def _name(column: dict[str, Any]) -> str:
    return untrusted(column.get("name", ""), COLUMN_CHARS)


def _safe_file(file: FileInfo) -> FileInfo:
    columns = [
        ColumnInfo(
            untrusted(column.name, COLUMN_CHARS),
            untrusted(column.dtype, DTYPE_CHARS),
            untrusted(column.samples, SAMPLES * (SAMPLE_CHARS + 2)),
        )
        for column in file.columns[:MAX_COLUMNS]
    ]
    return replace(
        file,
        name=untrusted(file.name, NAME_CHARS),
        columns=columns,
        note=untrusted(file.note, NOTE_CHARS),
        more_columns=file.more_columns + len(file.columns) - len(columns),
        sheets=[untrusted(sheet, NAME_CHARS) for sheet in file.sheets[:MAX_SHEETS]],
    )


def render_system_prompt(
    *,
    files: list[FileInfo],
    history: list[Turn],
    authorized_imports: list[str],
    variables: Variables | None = None,
    sources: list[Any] | None = None,
    knowledge: KnowledgeSection | None = None,
    code_open: str = "<code>",
    code_close: str = "</code>",
) -> str:
    """The system prompt: how to work, what is in the workspace, what was asked before.

    Args:
        files: The workspace's files, as found (they are made safe here).
        history: The session's earlier turns, oldest first (made safe here).
        variables: The variables those turns left, if known.
        sources: The project's data sources (`sources_prompt.SourceInfo`), made safe and
            cut to the prompt's budget (`sources_prompt.fit`).
        knowledge: The team's knowledge items chosen for the question (made safe here);
            none: the prompt says nothing of knowledge.
        authorized_imports: Modules the code may import.
        code_open: The tag that opens a code block.
        code_close: The tag that closes it.
    """
    return (
        _env.get_template("system.j2")
        .render(
            files=[_safe_file(file) for file in files],
            history=[
                Turn(untrusted(t.query, QUERY_CHARS), untrusted(t.answer, ANSWER_CHARS))
                for t in history
            ],
            variables=variables or Variables(),
            sources=fit(sources or []),
            knowledge=knowledge_prompt.safe(knowledge),
            problem=untrusted(variables.problem or "", NOTE_CHARS) if variables else "",
            authorized_imports=", ".join(sorted({m.split(".")[0] for m in authorized_imports})),
            code_open=code_open,
            code_close=code_close,
            data_tag=DATA_TAG,
            history_tag=HISTORY_TAG,
            knowledge_tag=KNOWLEDGE_TAG,
            mixed_reading=MIXED_READING
            if any(_MIXED_CALL.search(file.read) for file in files)
            else "",
        )
        .strip()
        + "\n"
    )


# Plans and the check of an answer --------------------------------------------------------
# What the check is shown of each step: the code whole (up to this), the output's end.
CHECK_CODE_CHARS = 4000
CHECK_OUTPUT_CHARS = 3000
CHECK_ANSWER_CHARS = 8000
CHECK_STEPS = 12
_CHECK_TAG = re.compile(r"<(\s*/?\s*(?:question|answer))", re.IGNORECASE)


@dataclass(frozen=True)
class CheckedStep:
    number: int
    code: str
    output: str
    error: str | None = None


def _block_text(text: str, limit: int, keep_end: bool = False) -> str:
    """Multi-line text for a check prompt: bounded, with the prompt's own tags defused."""
    text = _CHECK_TAG.sub(r"&lt;\1", text)
    if len(text) <= limit:
        return text
    return "…" + text[-(limit - 1) :] if keep_end else text[: limit - 1] + "…"


def render_initial_plan(question: str) -> str:
    return _env.get_template("plan_initial.j2").render(question=question).strip()


def render_plan_update(question: str, steps_taken: int, remaining_steps: int) -> str:
    return (
        _env.get_template("plan_update.j2")
        .render(question=question, steps_taken=steps_taken, remaining_steps=remaining_steps)
        .strip()
    )


def render_check(question: str, steps: list[CheckedStep], answer: str) -> str:
    """The prompt of the answer check: the question, the last steps' code and outputs (cut
    to size, the end of an output kept), and the answer."""
    shown = [
        CheckedStep(
            s.number,
            _block_text(s.code, CHECK_CODE_CHARS),
            _block_text(s.output, CHECK_OUTPUT_CHARS, keep_end=True),
            _block_text(s.error, CHECK_OUTPUT_CHARS, keep_end=True) if s.error else None,
        )
        for s in steps[-CHECK_STEPS:]
    ]
    return (
        _env.get_template("verify.j2")
        .render(
            question=_block_text(question, CHECK_ANSWER_CHARS),
            steps=shown,
            answer=_block_text(answer, CHECK_ANSWER_CHARS),
        )
        .strip()
    )


def render_repair_strategy(label: str, instruction: str) -> str:
    """What a repair strategy asks of the model after its failing steps (app.agent.fanout)."""
    template = _env.get_template("repair_strategy.j2")
    return template.render(label=label, instruction=instruction).strip()


def render_repair_check(
    question: str, failed: list[CheckedStep], strategy: str, repaired: CheckedStep
) -> str:
    """The prompt of the critic's look at a repair: the failing steps, the repair's code and
    output (cut to size as in the answer check)."""

    def cut(s: CheckedStep) -> CheckedStep:
        return CheckedStep(
            s.number,
            _block_text(s.code, CHECK_CODE_CHARS),
            _block_text(s.output, CHECK_OUTPUT_CHARS, keep_end=True),
            _block_text(s.error, CHECK_OUTPUT_CHARS, keep_end=True) if s.error else None,
        )

    return (
        _env.get_template("repair_check.j2")
        .render(
            question=_block_text(question, CHECK_ANSWER_CHARS),
            failed=[cut(s) for s in failed],
            strategy=strategy,
            repair=cut(repaired),
        )
        .strip()
    )
