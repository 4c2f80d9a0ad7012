"""SQL injection through a preview's filter (`GET /files/{id}/preview?filter=`): column
names and values are the user's text, and the filter runs as SQL over the whole file. The
SQL names columns by position and passes values as parameters, so a column named like SQL
is just a column, a value written as SQL matches only the cells that hold that text, and
nothing of the server (another file, the database) is ever read."""

from __future__ import annotations

import csv
import io
import json

from tests.conftest import Api

EVIL_COLUMNS = ['a") OR 1=1 --', "b' OR ''=' UNION SELECT 1 --", "c0"]
ROWS = [["x", "1", "safe"], ["y", "2", "' OR '1'='1"], ["z", "3", "read_csv('/etc/passwd')"]]
_TEXT = io.StringIO()
csv.writer(_TEXT, lineterminator="\n").writerows([EVIL_COLUMNS, *ROWS])
CSV = _TEXT.getvalue().encode()


def preview(api: Api, file_id: str, conditions: object) -> dict:  # type: ignore[type-arg]
    response = api.get(f"/files/{file_id}/preview", params={"filter": json.dumps(conditions)})
    assert response.status_code in (200, 422), response.text
    return dict(response.json())


def test_sql_in_column_names_and_values_is_only_text(alice: Api) -> None:
    project = alice.project()
    file = alice.upload(project["id"], "evil.csv", CSV).json()
    # A column named like SQL is filtered as the column it is.
    found = preview(alice, file["id"], [{"column": EVIL_COLUMNS[0], "op": "eq", "value": "y"}])
    assert (found["row_count"], found["rows"]) == (1, [["y", 2, "' OR '1'='1"]])
    found = preview(alice, file["id"], [{"column": EVIL_COLUMNS[1], "op": "ge", "value": 2}])
    assert found["row_count"] == 2
    # A column named like a field of the SQL ("c0") is the user's column, not the first.
    found = preview(alice, file["id"], [{"column": "c0", "op": "contains", "value": "passwd"}])
    assert [row[0] for row in found["rows"]] == ["z"]
    # Values written as SQL match only cells holding that very text.
    for value in ["' OR '1'='1", "x' OR 1=1 --", "%", "_"]:
        found = preview(alice, file["id"], [{"column": "c0", "op": "eq", "value": value}])
        assert found["row_count"] == (1 if value == "' OR '1'='1" else 0), value
        found = preview(
            alice, file["id"], [{"column": EVIL_COLUMNS[0], "op": "contains", "value": value}]
        )
        assert found["row_count"] == 0, value
    # A column that is SQL but no column of the file is refused by name, never run.
    for column in ["1=1) OR (1", "c0 OR 1=1", "*", "row_number_"]:
        refused = preview(alice, file["id"], [{"column": column, "op": "empty"}])
        assert refused["code"] == "unknown_column", column
    # Reading another file through a value only compares text.
    found = preview(
        alice,
        file["id"],
        [
            {
                "column": "c0",
                "op": "ne",
                "value": "x') UNION SELECT * FROM read_csv('/etc/passwd') --",
            }
        ],
    )
    assert found["row_count"] == 3 and all(len(row) == 3 for row in found["rows"])
    # The file and the project are as they were.
    again = alice.get(f"/files/{file['id']}/preview").json()
    assert again["row_count"] == 3 and [c["name"] for c in again["columns"]] == EVIL_COLUMNS
    assert alice.get(f"/projects/{project['id']}/files").json()["total"] == 1
