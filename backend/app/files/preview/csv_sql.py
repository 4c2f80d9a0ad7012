"""The SQL that reads a delimited text file's fields as the preview of its head read them
(see table.py): each column's type and how its text is read (missing values, decimal
commas, amounts, percents, yes/no, date formats), written in DuckDB's SQL for the whole
file, which paging.py pages, sorts and copies. DuckDB reads only UTF-8: a file in another
encoding is read from a UTF-8 copy beside it.
"""

from __future__ import annotations

import codecs
import os
import uuid
from pathlib import Path
from typing import Any

from app.files.preview.delimited import lines_before

# What pandas reads as missing by default; DuckDB is told the same.
_MISSING = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
            "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan",
            "null"]  # fmt: skip
_YES = ("y", "yes", "true")
_NO = ("n", "no", "false")
_UTF8 = ("utf-8", "utf8", "ascii")


def literal(value: object) -> str:
    """A value as an SQL string literal."""
    return "'" + str(value).replace("'", "''") + "'"


def csv_source(
    path: Path, shown: dict[str, Any], work: Path, *, padded: bool
) -> tuple[Path, str, list[str]]:
    """The SQL that reads a delimited text file's fields, and per column the SQL that reads
    its field as the preview read the file's head."""
    text_format = shown.get("format") or {}
    encoding = str(text_format.get("encoding") or "utf-8").lower()
    readable = path
    if encoding not in _UTF8:
        readable = _utf8_copy(path, encoding, Path(f"{work}.utf8.csv"))
    sep = str(text_format.get("delimiter") or ",")
    with readable.open("rb") as file:
        head = file.read(4 << 20).decode("utf-8", "replace").removeprefix("\ufeff")
    header_row = int(shown.get("header_row") or 0)
    skip = lines_before(head, sep, header_row + 1)
    columns = shown["columns"]
    types = ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(columns)))
    # What pandas reads as missing is told apart in each column's SQL (`typed_sql`), which
    # runs only for the sort key and the rows shown, not by the reader for every field.
    options = (
        f"delim={literal(sep)}, quote='\"', escape='\"', header=false, skip={skip},"
        f" columns={{{types}}}, auto_detect=false"
        + (", null_padding=true, parallel=false" if padded else "")
    )
    read = f"SELECT * FROM read_csv({literal(readable)}, {options})"
    return readable, read, [typed_sql(f"c{i}", c, text_format) for i, c in enumerate(columns)]


def present(field: str, column: dict[str, Any] | None = None) -> str:
    """The SQL of a text field, NULL where pandas reads it as missing, or where it is one
    of the texts the whole file's decision reads as missing in this column
    (`missing_values`: whole_kinds.py)."""
    missing = ", ".join(literal(value) for value in _MISSING)
    listed = listed_missing(column)
    also = f" OR trim({field}) IN ({', '.join(map(literal, listed))})" if listed else ""
    return f"CASE WHEN {field} IN ({missing}){also} THEN NULL ELSE {field} END"


def listed_missing(column: dict[str, Any] | None) -> list[str]:
    """The texts a column's decision reads as missing beyond pandas' own (trimmed)."""
    found = (column or {}).get("missing_values")
    if not isinstance(found, list):
        return []
    texts = (entry.get("value") for entry in found if isinstance(entry, dict))
    return [text for text in texts if isinstance(text, str) and text not in _MISSING]


def missing_markers() -> list[str]:
    """The texts pandas reads as missing (but the empty one)."""
    return [value for value in _MISSING if value]


def typed_sql(field: str, column: dict[str, Any], text_format: dict[str, Any]) -> str:
    """The SQL that reads a text field as the preview read its column."""
    dtype = str(column.get("dtype", ""))
    field = present(field, column)
    if column.get("mixed") == "number":  # read by reading.py, as the head was
        return f"wb_number({field}, {literal(column.get('decimal_separator') or '.')})"
    if column.get("mixed") == "date":
        return f"wb_date({field}, {'true' if column.get('day_first') else 'false'})"
    text = f"trim({field})"
    if dtype in ("bool", "boolean"):
        yes = ", ".join(map(literal, _YES))
        no = ", ".join(map(literal, _NO))
        word = f"lower({text})"
        return f"CASE WHEN {word} IN ({yes}) THEN true WHEN {word} IN ({no}) THEN false END"
    if dtype.lower().startswith(("int", "uint", "float")):
        if "unit" in column:  # amounts, percents or thousands commas, read from text
            number = f"TRY_CAST(regexp_replace({text}, '[^0-9.eE+-]', '', 'g') AS DOUBLE)"
            return f"{number} / 100" if column.get("unit") == "%" else number
        if text_format.get("decimal") == ",":
            plain = text
            if text_format.get("thousands") == ".":
                plain = f"replace({plain}, '.', '')"
            return f"TRY_CAST(replace({plain}, ',', '.') AS DOUBLE)"
        return f"TRY_CAST({text} AS DOUBLE)"
    if dtype.startswith("datetime64"):
        date_format = column.get("date_format")
        if isinstance(date_format, str) and date_format != "ISO8601":
            return f"TRY_STRPTIME({text}, {literal(date_format)})"
        return f"TRY_CAST({text} AS TIMESTAMP)"
    return field


def _utf8_copy(path: Path, encoding: str, target: Path) -> Path:
    """The text file re-encoded as UTF-8 beside it (made once), for DuckDB reads only UTF-8."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{uuid.uuid4().hex}.part")
    decoder = codecs.getincrementaldecoder(encoding)("replace")
    try:
        with path.open("rb") as reading, partial.open("wb") as writing:
            while chunk := reading.read(8 << 20):
                writing.write(decoder.decode(chunk).encode("utf-8"))
            writing.write(decoder.decode(b"", final=True).encode("utf-8"))
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target
