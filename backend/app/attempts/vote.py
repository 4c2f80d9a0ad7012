"""The vote on what the attempts computed: each answer reduced to comparable values,
the attempts grouped by agreement, the largest group's answer the run's if a majority
holds it.

An answer is reduced to its numbers (each at the precision the answer states it: "4.8k"
is not read, "4,812" and "4812.0" are the same number, "3.14" agrees with "3.14159" at two
decimals) and, without numbers, to its text folded for case, spacing and punctuation, or
to the set of its items when it is a list. Two answers agree when their numbers agree in
order, or as sets (the same values listed another way); or, without numbers, when their
folded texts or item sets are equal.

The key tables the attempts' code produced count too (app.attempts.tables): answers that
agree are still apart when a table of the same name in both attempts holds different
values at the precision the answers state (the fewer decimals of the two; 4 when neither
states a number). Tables never join answers that disagree.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.attempts.tables import Table

_NUMBER = re.compile(r"(?<![\w.])[-\u2212]?\d[\d,]*(?:\.\d+)?(?![\w])")
_GROUPED = re.compile(r"^[-\u2212]?\d{1,3}(,\d{3})+(\.\d+)?$")
_SPACE = re.compile(r"\s+")
_EDGE_PUNCTUATION = " .,;:!?\"'`*_()[]{}"
RELATIVE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Number:
    value: float
    decimals: int  # as the answer states it


@dataclass(frozen=True)
class Reduced:
    """An answer as the vote compares it."""

    numbers: tuple[Number, ...]
    text: str  # folded
    items: frozenset[str]  # folded, when the answer is a list (else empty)


def reduce(answer: str) -> Reduced:
    numbers = tuple(n for m in _NUMBER.finditer(answer) for n in _numbers(m.group(0)))
    text = _fold(answer)
    parts = [_fold(p) for p in re.split(r"[\n,;]|\band\b", answer)]
    parts = [p for p in parts if p]
    items = frozenset(parts) if len(parts) > 1 else frozenset()
    return Reduced(numbers, text, items)


def _numbers(raw: str) -> list[Number]:
    raw = raw.replace("\u2212", "-")
    if "," in raw and not _GROUPED.match(raw):  # "1,2,3": a list, not one number
        return [n for part in raw.split(",") if part for n in _numbers(part)]
    number = _number(raw.replace(",", ""))
    return [number] if number is not None else []


def _number(cleaned: str) -> Number | None:
    try:
        value = float(cleaned)
    except ValueError:
        return None
    decimals = len(cleaned.split(".")[1]) if "." in cleaned else 0
    return Number(value, decimals)


def _fold(text: str) -> str:
    return _SPACE.sub(" ", text.casefold()).strip(_EDGE_PUNCTUATION)


def _same_number(a: Number, b: Number) -> bool:
    places = min(a.decimals, b.decimals)
    if round(a.value, places) == round(b.value, places):
        return True
    # The less precise answer rounded the other's number (half a unit of its last place).
    half = 0.5 * 10 ** (-places)
    if abs(a.value - b.value) <= half + 1e-12:
        return True
    return math.isclose(a.value, b.value, rel_tol=RELATIVE_TOLERANCE)


def _same_numbers(a: Sequence[Number], b: Sequence[Number]) -> bool:
    return len(a) == len(b) and all(_same_number(x, y) for x, y in zip(a, b, strict=True))


def agree(a: Reduced, b: Reduced) -> bool:
    """Whether two answers computed the same result."""
    if a.numbers or b.numbers:
        if _same_numbers(a.numbers, b.numbers):
            return True
        # The same values, listed in another order or with one repeated.
        key = lambda n: n.value  # noqa: E731
        first = _distinct(sorted(a.numbers, key=key))
        second = _distinct(sorted(b.numbers, key=key))
        return bool(first) and _same_numbers(first, second)
    if a.text == b.text:
        return True
    return bool(a.items) and a.items == b.items


def _distinct(numbers: list[Number]) -> list[Number]:
    kept: list[Number] = []
    for number in numbers:
        if not kept or not _same_number(kept[-1], number):
            kept.append(number)
    return kept


DEFAULT_PLACES = 4


def places(a: Reduced, b: Reduced) -> int:
    """The decimals two answers' tables are compared at: the fewer the answers state."""
    stated = [max(n.decimals for n in r.numbers) for r in (a, b) if r.numbers]
    return min(stated) if stated else DEFAULT_PLACES


def table_differs(a: dict[str, Table], b: dict[str, Table], at: int) -> str | None:
    """The first table of the same name whose values differ (None: none does)."""
    for name, table in a.items():
        other = b.get(name)
        if other is not None and not table.same_as(other, at):
            return name
    return None


def apart_by(a: tuple[str, dict[str, Table]], b: tuple[str, dict[str, Table]]) -> str | None:
    """The table that keeps two attempts ((answer, tables)) apart although their answers
    agree; None when their answers differ, or nothing does."""
    first, second = reduce(a[0]), reduce(b[0])
    if not agree(first, second):
        return None
    return table_differs(a[1], b[1], places(first, second))


@dataclass
class Group:
    answer: str  # its first attempt's answer
    attempts: list[int]


def group(
    answers: Sequence[tuple[int, str]], tables: dict[int, dict[str, Table]] | None = None
) -> list[Group]:
    """The attempts' answers ((attempt, answer), in attempt order) grouped by agreement,
    largest group first (ties: the group of the lowest attempt first). An answer joins the
    first group whose first answer it agrees with and whose first attempt's tables of the
    same names hold the same values."""
    tables = tables or {}
    groups: list[tuple[Reduced, int, Group]] = []
    for attempt, answer in answers:
        reduced = reduce(answer)
        for first, first_attempt, found in groups:
            if not agree(first, reduced):
                continue
            differs = table_differs(
                tables.get(first_attempt, {}), tables.get(attempt, {}), places(first, reduced)
            )
            if differs is None:
                found.attempts.append(attempt)
                break
        else:
            groups.append((reduced, attempt, Group(answer, [attempt])))
    ordered = [g for _, _, g in groups]
    ordered.sort(key=lambda g: (-len(g.attempts), g.attempts[0]))
    return ordered


@dataclass
class Tally:
    """What the vote found, before any judge: the groups and whether one is a majority."""

    groups: list[Group]
    total: int  # attempts asked for (those that failed count: they did not agree)

    @property
    def largest(self) -> Group | None:
        return self.groups[0] if self.groups else None

    @property
    def agreement(self) -> str:
        return f"{len(self.largest.attempts) if self.largest else 0}/{self.total}"

    @property
    def outcome(self) -> str | None:
        """agree, majority, or None: no group holds a majority (a judge decides)."""
        largest = self.largest
        if largest is None:
            return None
        if len(largest.attempts) == self.total:
            return "agree"
        if len(largest.attempts) * 2 > self.total:
            return "majority"
        return None


def tally(
    answers: Sequence[tuple[int, str]],
    total: int,
    tables: dict[int, dict[str, Table]] | None = None,
) -> Tally:
    """Group the answers of the attempts that answered, of `total` asked for (and their
    key tables, by attempt)."""
    return Tally(group(answers, tables), total)
