"""Previews of JSON tables (an array of records, or an object of columns, read whole
within a size bound) and of JSON lines files (the first records read, every line counted).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

import pandas as pd

from app.files.detect import Detected, convert_text
from app.files.preview.counting import CsvRowCounter
from app.files.preview.errors import UnreadableFile
from app.files.preview.table import INFER_ROWS, Preview, build_preview

JSON_MAX_BYTES = 256 << 20


def preview_json(path: Path, name: str) -> Preview:
    """A JSON table's preview, its text columns read as dates, numbers or yes/no where they are."""
    frame = read_json_table(path, name)
    detected = Detected()
    frame = convert_text(frame, detected, day_first=False)
    return build_preview(frame, len(frame), detected=detected)


def read_json_table(path: Path, name: str) -> pd.DataFrame:
    """A JSON file's table: an array of records, or an object of columns."""
    if path.stat().st_size > JSON_MAX_BYTES:
        raise UnreadableFile(
            f"{name} is too large to preview as JSON (over {JSON_MAX_BYTES >> 20} MB);"
            " JSON lines or Parquet suit big tables"
        )
    data = json.loads(path.read_bytes())
    columns = list(data.values()) if isinstance(data, dict) else []
    if isinstance(data, list) and all(isinstance(record, dict) for record in data):
        frame = pd.json_normalize(data)
    elif columns and all(isinstance(column, dict) for column in columns):
        frame = pd.DataFrame(data)  # pandas' own orient="columns": {column: {row: value}}
    elif all(isinstance(column, list) for column in columns) and len(set(map(len, columns))) == 1:
        frame = pd.DataFrame(data)
    else:
        raise UnreadableFile(
            f"{name} could not be read as JSON: it is not a table (expected an array of objects"
            " or an object of equally long column arrays)"
        )
    return frame


def preview_jsonl(path: Path, name: str) -> Preview:
    """A JSON lines file's preview from its first records, every line counted; the kinds
    its first records decide are checked over all of them after (whole_jsonl.py)."""
    counter = CsvRowCounter(header=False, quoting=False)
    with path.open("rb") as file:
        records = read_json_lines(file, name, INFER_ROWS, counter)
        while chunk := file.read(8 << 20):
            counter.feed(chunk)
    frame = pd.json_normalize(records)
    detected = Detected()
    frame = convert_text(frame, detected, day_first=False)
    return build_preview(frame, counter.finish(), detected=detected, checked_later=True)


def read_json_lines(
    file: IO[bytes], name: str, limit: int, counter: CsvRowCounter | None = None
) -> list[dict[str, Any]]:
    """Reads up to `limit` records of a JSON lines file, feeding what it reads to `counter`."""
    records: list[dict[str, Any]] = []
    for number, line in enumerate(file, 1):
        if counter is not None:
            counter.feed(line)
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            problem = "" if isinstance(record, dict) else "is not a JSON object"
        except ValueError as exc:
            problem = f"is not valid JSON ({getattr(exc, 'msg', exc)})"
        if problem:
            raise UnreadableFile(f"{name} could not be read as JSON lines: line {number} {problem}")
        records.append(record)
        if len(records) == limit:
            break
    return records
