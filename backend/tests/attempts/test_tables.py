"""The key tables' side of the vote: which names an attempt's code assigned, and what its
worker says of them read as untrusted (only the names asked for, bounded, strict types)."""

from __future__ import annotations

import json

from app.attempts.tables import MAX_TABLES, PLACES, Table, assigned_names, parse
from app.attempts.vote import group


def test_the_names_the_code_binds_last_bound_last() -> None:
    codes = [
        "import pandas as pd\ndf = pd.read_csv('x.csv')\ntop, rest = df.head(1), df.tail(3)",
        "df['total'] = df.a + df.b\nfor row in rows: pass\nwith open('f') as handle: pass",
        "by_region = df.groupby('r').sum()\n_private = 1\nresult: int = 3",
        "this is not python(",
        "clean.dropna(inplace=True)\nwide.insert(0, 'k', 1)\nother.sort_values('a', inplace=False)",
    ]
    assert assigned_names(codes) == [
        "top",
        "rest",
        "df",
        "row",
        "handle",
        "by_region",
        "result",
        "clean",
        "wide",
    ]
    assert len(assigned_names([f"v{i} = {i}" for i in range(50)])) == MAX_TABLES


def _entry(rows: int = 2, hashes: object = None) -> list[object]:
    return [rows, 2, ["region", "total"], hashes or [str(i) for i in PLACES]]


def test_what_the_worker_says_is_checked() -> None:
    said = {
        "good": _entry(),
        "unasked": _entry(),
        "bool_rows": [True, 2, ["a"], None],
        "bad_hash": _entry(hashes=["x"] * len(PLACES)),
        "short": _entry(hashes=["1"]),
        "columns": [2, 2, [{"a": 1}], None],
        "negative": [-1, 2, [], None],
        "shape_only": [5, 1, ["a"], None],
    }
    asked = [name for name in said if name != "unasked"]
    found = parse(json.dumps(said), asked)
    assert found == {
        "good": Table(2, 2, ("region", "total"), tuple(str(i) for i in PLACES)),
        "shape_only": Table(5, 1, ("a",), None),
    }
    assert parse("[1, 2]", ["a"]) == {} and parse("not json", ["a"]) == {}
    assert parse("[" * 100_000, ["a"]) == {} and parse(None, ["a"]) == {}


def test_agreeing_answers_split_only_on_a_same_named_table_that_differs() -> None:
    same = Table(2, 2, ("a", "b"), tuple("1" for _ in PLACES))
    other = Table(2, 2, ("a", "b"), tuple("2" for _ in PLACES))
    answers = [(1, "North"), (2, "north"), (3, "North.")]
    tables = {1: {"t": same}, 2: {"t": same, "x": other}, 3: {"t": other}}
    assert [g.attempts for g in group(answers, tables)] == [[1, 2], [3]]
    # A table only one attempt made does not count; tables never join different answers.
    assert [g.attempts for g in group(answers, {1: {"t": same}, 3: {"u": other}})] == [[1, 2, 3]]
    assert [g.attempts for g in group([(1, "4"), (2, "5")], {1: {"t": same}, 2: {"t": same}})] == [
        [1],
        [2],
    ]
