"""Filters of a preview (app.files.preview.filters) over a whole file read by DuckDB: typed
values, every operator, yes/no columns, and refusals of what cannot be applied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.files.preview import UnknownColumn, preview_file
from app.files.preview.filters import BadFilter, check_filter, parse_filter
from app.files.preview.paging import Window, read_page

CSV = "name,amount,paid,when\n" + "".join(
    f"{name},{amount},{paid},2025-0{month}-1{month}\n"
    for name, amount, paid, month in [
        ("Alpha", 10, "yes", 1),
        ("beta", 25.5, "no", 2),
        ("Gamma", "", "yes", 3),
        ("alphabet", 40, "no", 4),
    ]
)


def matching(tmp_path: Path, conditions: list[dict[str, object]]) -> list[str]:
    path = tmp_path / "t.csv"
    path.write_text(CSV)
    shown = preview_file(path, name="t.csv").to_dict()
    typed = check_filter(parse_filter(json.dumps(conditions)), shown["columns"], "t.csv")
    page = read_page(
        path, name="t.csv", shown=shown, window=Window(conditions=tuple(typed)), work=tmp_path / "w"
    )
    assert page["row_count"] == len(page["rows"])
    return [row[0] for row in page["rows"]]


@pytest.mark.parametrize(
    ("conditions", "names"),
    [
        ([{"column": "name", "op": "contains", "value": "ALPHA"}], ["Alpha", "alphabet"]),
        ([{"column": "name", "op": "eq", "value": "beta"}], ["beta"]),
        ([{"column": "amount", "op": "ge", "value": "25.5"}], ["beta", "alphabet"]),
        ([{"column": "amount", "op": "lt", "value": 25.5}], ["Alpha"]),
        ([{"column": "amount", "op": "empty"}], ["Gamma"]),
        ([{"column": "amount", "op": "not_empty"}], ["Alpha", "beta", "alphabet"]),
        ([{"column": "paid", "op": "ne", "value": True}], ["beta", "alphabet"]),
        ([{"column": "paid", "op": "eq", "value": "yes"}], ["Alpha", "Gamma"]),
        ([{"column": "when", "op": "gt", "value": "2025-02-12"}], ["Gamma", "alphabet"]),
        ([{"column": "when", "op": "eq", "value": "2025-03-13"}], ["Gamma"]),
        (
            [
                {"column": "name", "op": "contains", "value": "a"},
                {"column": "amount", "op": "gt", "value": 20},
            ],
            ["beta", "alphabet"],
        ),
    ],
)
def test_each_operator_over_typed_columns(
    tmp_path: Path, conditions: list[dict[str, object]], names: list[str]
) -> None:
    assert matching(tmp_path, conditions) == names


def test_what_a_filter_cannot_be(tmp_path: Path) -> None:
    with pytest.raises(UnknownColumn):
        matching(tmp_path, [{"column": "nope", "op": "empty"}])
    for bad in (
        [{"column": "paid", "op": "gt", "value": True}],
        [{"column": "amount", "op": "contains", "value": "1"}],
        [{"column": "when", "op": "lt", "value": "31/01/2025"}],
        [{"column": "name", "op": "eq", "value": None}],
        [{"column": "name", "op": "eq", "value": ["a"]}],
        [{"column": "name", "op": "eq", "value": "x" * 1001}],
    ):
        with pytest.raises(BadFilter):
            matching(tmp_path, bad)
    assert parse_filter(None) == [] and parse_filter(" ") == []
