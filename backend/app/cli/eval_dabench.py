"""Tasks in InfiAgent-DABench's format, the prompt they become, and how answers are scored.

A task is one JSON object a line: `{id, question, constraints, format, file_name, answers}`
where `answers` (or DABench's `common_answers`, or a separate labels file) is a list of
`[name, value]` pairs. The model ends its final answer with `@name[value]` for each. A task
over a database names the project's data source it needs in `source` (a name, or a list of
them) instead of, or besides, a `file_name`.

Scoring follows DABench's own evaluator, `examples/DA-Agent/eval_closed_form.py` in
github.com/InfiAgent/InfiAgent: the pairs are found with the regex `@(\\w+)\\[(.*?)\\]`
(a name given twice keeps its last value), and a value is right when it equals the label's
text exactly or both read as numbers within 1e-6. The format asks for a stated precision,
so "34.65" is right for 34.65 and "34.6523" is not. `rounded` matching is kinder: the
model's number is rounded to as many decimals as the label shows, and text compares
without regard to case or surrounding spaces.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from enum import StrEnum
from pathlib import Path
from typing import Any

ANSWER = re.compile(r"@(\w+)\[(.*?)\]")
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


class Match(StrEnum):
    """How a given value is compared with the label's."""

    dabench = "dabench"
    rounded = "rounded"


class TaskFileError(ValueError):
    """A task or labels file that cannot be used, with the file and line at fault."""


@dataclass(frozen=True)
class Task:
    """One question of a task set."""

    id: str
    question: str
    answers: tuple[tuple[str, str], ...]
    constraints: str = ""
    format: str = ""
    files: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    raw_id: Any = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def expected(self) -> dict[str, str]:
        return dict(self.answers)


def prompt(task: Task) -> str:
    """What the workbench is asked: DABench's question, constraints and format, the file,
    and how to end the answer so that it can be scored."""
    parts = [task.question.strip()]
    if task.files:
        names = ", ".join(f'"{name}"' for name in task.files)
        parts.append(f"The data is in {names}.")
    if task.sources:
        names = ", ".join(f'"{name}"' for name in task.sources)
        kind = "source" if len(task.sources) == 1 else "sources"
        parts.append(f"The data is in the database {kind} {names}.")
    if task.constraints.strip():
        parts.append(f"Constraints: {task.constraints.strip()}")
    if task.format.strip():
        parts.append(f"Answer format: {task.format.strip()}")
    example = " ".join(f"@{name}[...]" for name, _ in task.answers)
    parts.append(
        "End your final answer with the answers written exactly in that format, "
        f"each as @name[value] (here: {example}), with the values rounded as asked."
    )
    return "\n\n".join(parts)


# -- reading task sets -----------------------------------------------------------------------


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TaskFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFileError(f"{path}: cannot read it ({exc})") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise TaskFileError(f"{path} line {number}: not JSON ({exc})") from None
        if not isinstance(row, dict):
            raise TaskFileError(f"{path} line {number}: expected a JSON object")
        rows.append((number, row))
    return rows


def _pairs(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not value:
        raise TaskFileError(f"{where}: answers must be a non-empty list of [name, value] pairs")
    pairs = []
    for pair in value:
        if not (isinstance(pair, list | tuple) and len(pair) == 2 and isinstance(pair[0], str)):
            raise TaskFileError(f"{where}: answers must be [name, value] pairs, not {pair!r}")
        if not re.fullmatch(r"\w+", pair[0]):
            raise TaskFileError(f"{where}: answer name {pair[0]!r} is not a word (\\w+)")
        pairs.append((pair[0], _text(pair[1])))
    return tuple(pairs)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _key(value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise TaskFileError(f"{where}: 'id' must be a number or a non-empty string")
    return str(value)


def _names(row: dict[str, Any], key: str, what: str, where: str) -> tuple[str, ...]:
    """A field holding one name or a list of them (none when it is missing or empty)."""
    value = row.get(key)
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise TaskFileError(f"{where}: '{key}' must be {what} or a list of them")


def load_labels(path: Path) -> dict[str, tuple[tuple[str, str], ...]]:
    """DABench's labels file: `{id, common_answers}` (or `answers`) a line."""
    labels: dict[str, tuple[tuple[str, str], ...]] = {}
    for number, row in _lines(path):
        where = f"{path} line {number}"
        if "id" not in row:
            raise TaskFileError(f"{where}: 'id' is missing")
        answers = row.get("common_answers", row.get("answers"))
        labels[_key(row["id"], where)] = _pairs(answers, where)
    return labels


def load_tasks(path: Path, labels: Path | None = None) -> list[Task]:
    """The tasks of a JSONL file, with their answers from the task or the labels file.

    Raises:
        TaskFileError: naming the file and line of the first problem.
    """
    known = load_labels(labels) if labels else {}
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for number, row in _lines(path):
        where = f"{path} line {number}"
        for name in ("id", "question"):
            if name not in row:
                raise TaskFileError(f"{where}: '{name}' is missing")
        key = _key(row["id"], where)
        if key in seen:
            raise TaskFileError(f"{where}: id {key} is used on line {seen[key]} already")
        seen[key] = number
        if not isinstance(row["question"], str) or not row["question"].strip():
            raise TaskFileError(f"{where}: 'question' must be non-empty text")
        for name in ("constraints", "format"):
            if not isinstance(row.get(name, ""), str):
                raise TaskFileError(f"{where}: '{name}' must be text")
        if "answers" in row or "common_answers" in row:
            answers = _pairs(row.get("answers", row.get("common_answers")), where)
        elif key in known:
            answers = known[key]
        else:
            source = f" or in {labels}" if labels else " (or pass --labels)"
            raise TaskFileError(f"{where}: task {key} has no answers in the task{source}")
        tasks.append(
            Task(
                id=key,
                question=row["question"],
                answers=answers,
                constraints=row.get("constraints") or "",
                format=row.get("format") or "",
                files=_names(row, "file_name", "a file name", where),
                sources=_names(row, "source", "a source's name", where),
                raw_id=row["id"],
                extra={k: v for k, v in row.items() if k in ("concepts", "level")},
            )
        )
    if not tasks:
        raise TaskFileError(f"{path}: no tasks in it")
    return tasks


# -- scoring ---------------------------------------------------------------------------------


def extract(response: str | None) -> dict[str, str]:
    """The `@name[value]` pairs of a response; a name given twice keeps its last value."""
    if not response:
        return {}
    return {name: value for name, value in ANSWER.findall(response)}


def _equal_dabench(given: str | None, expected: str) -> bool:
    if given is None:
        return False
    if given == expected:
        return True
    try:
        return abs(float(given) - float(expected)) < 1e-6
    except ValueError:
        return False


def _decimal(text: str) -> Decimal | None:
    if not NUMBER.fullmatch(text):
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _equal_rounded(given: str | None, expected: str) -> bool:
    if given is None:
        return False
    given, expected = given.strip(), expected.strip()
    if given.casefold() == expected.casefold():
        return True
    want, have = _decimal(expected), _decimal(given)
    if want is None or have is None or "e" in expected.lower():
        return _equal_dabench(given, expected)
    # As many decimals as the label shows: "34.65" rounds the answer to two, "36" to none.
    quantum = Decimal(1).scaleb(min(0, int(want.as_tuple().exponent)))
    try:
        return have.quantize(quantum, rounding=ROUND_HALF_UP) == want
    except InvalidOperation:
        return False


def equal(given: str | None, expected: str, match: Match = Match.dabench) -> bool:
    """Whether one given value counts as the expected one."""
    if match is Match.rounded:
        return _equal_rounded(given, expected)
    return _equal_dabench(given, expected)


@dataclass(frozen=True)
class Score:
    """How one response fared against a task's labels."""

    given: dict[str, str | None]
    correctness: dict[str, bool]

    @property
    def correct(self) -> bool:
        return bool(self.correctness) and all(self.correctness.values())

    @property
    def sub_correct(self) -> int:
        return sum(self.correctness.values())


def score(task: Task, response: str | None, match: Match = Match.dabench) -> Score:
    """Every label of `task` checked against the pairs found in `response`."""
    found = extract(response)
    given = {name: found.get(name) for name, _ in task.answers}
    correctness = {name: equal(given[name], value, match) for name, value in task.answers}
    return Score(given=given, correctness=correctness)
