"""Amount and percent columns carry their currency and usual decimals (for the SPA to show
`€1,371.30` and `12.5%`), filters read a value as a person types it either way, and a
profile counts the cells it could not read apart from the empty ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.files.preview import preview_file
from app.files.preview.filters import Condition, check_filter
from app.files.preview.paging import Window, read_page
from app.files.profile import profile_file

MIXED = (
    "id,amount,share\n"
    '1,1371.3,12.5%\n2,"€22,729.58",3%\n3,"€4.10",1.5%\n4,,2.5%\n5,unknown,7.5%\n'
    '6,"€1,371.30",\n7,88,10%\n8,??,\n9,,\n10,"€5.00",\n'
    + "".join(f"{i},{i}.25,\n" for i in range(11, 17))
)


def rows_where(path: Path, shown: dict[str, Any], column: str, value: Any) -> list[int]:
    conditions = tuple(check_filter([Condition(column, "eq", value)], shown["columns"], "x"))
    page = read_page(
        path, name=path.name, shown=shown, window=Window(conditions=conditions), work=path
    )
    return [row[0] for row in page["rows"]]


def test_a_mixed_amount_column_says_its_currency_and_decimals(tmp_path: Path) -> None:
    path = tmp_path / "amounts.csv"
    path.write_text(MIXED)
    shown = preview_file(path, name=path.name).to_dict()
    amount, share = shown["columns"][1], shown["columns"][2]
    assert (amount["mixed"], amount["currency"], amount["decimals"]) == ("number", "€", 2)
    assert shown["rows"][0][1] == 1371.3  # the SPA shows it €1,371.30
    assert (share["unit"], share["decimals"]) == ("%", 1)
    assert "currency" not in share

    # Typed as shown or as the number it is, a filter finds both spellings.
    assert rows_where(path, shown, "amount", "1371.3") == [1, 6]
    assert rows_where(path, shown, "amount", "€1,371.30") == [1, 6]
    assert rows_where(path, shown, "amount", 1371.3) == [1, 6]
    # A percent is typed as the percent it shows.
    assert rows_where(path, shown, "share", "12.5") == [1]
    assert rows_where(path, shown, "share", "12.5%") == [1]


def test_a_profile_counts_unreadable_cells_apart_from_empty_ones(tmp_path: Path) -> None:
    path = tmp_path / "amounts.csv"
    path.write_text(MIXED)
    amount = profile_file(path, name=path.name)["columns"][1]
    assert (amount["unreadable"], amount["missing"]) == (2, 2)
    share = profile_file(path, name=path.name)["columns"][2]
    assert (share["unreadable"], share["missing"]) == (0, 10)
