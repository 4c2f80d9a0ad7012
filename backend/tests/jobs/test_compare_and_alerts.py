"""Comparing two runs' results, and alerts: checked with clear 422s, evaluated into
sentences that say what changed."""

from __future__ import annotations

from typing import Any

import pytest

from app.api.errors import status_of
from app.jobs import compare as comparing
from app.jobs.alerts import InvalidAlert, evaluate, load_alerts, validate_alerts
from app.jobs.compare import compare

EMAIL = {"channel": "email", "to": ["team@example.com"]}


def test_values_change_with_their_percentage() -> None:
    change = compare(
        {"revenue": 48210, "orders": 0, "region": "north", "top": [1, 2], "gone": 3},
        {"revenue": 42233, "orders": 7, "region": "south", "top": [1, 2], "new": 1.5},
    )
    assert change["revenue"] == {"before": 48210, "after": 42233, "pct": -12.3978, "changed": True}
    assert change["orders"]["pct"] is None  # from 0: no percentage
    assert change["region"] == {"before": "north", "after": "south", "pct": None, "changed": True}
    assert change["top"]["changed"] is False
    assert change["new"] == {"before": None, "after": 1.5, "pct": None, "changed": True}
    assert change["gone"] == {"before": 3, "after": None, "pct": None, "changed": True}


def test_tables_count_rows_added_and_removed_by_content() -> None:
    before = [{"region": "north", "total": 10}, {"region": "south", "total": 20}]
    after = {
        "columns": [{"name": "total"}, {"name": "region"}],  # columns in another order
        "rows": [[20, "south"], [30, "east"], [31, "west"]],
    }
    assert compare({"t": before}, {"t": after})["t"] == {
        "before": 2,
        "after": 3,
        "pct": 50.0,
        "changed": True,
        "rows_added": 2,
        "rows_removed": 1,
    }
    same = compare({"t": before}, {"t": list(reversed(before))})["t"]
    assert (same["changed"], same["rows_added"], same["rows_removed"]) == (False, 0, 0)


def test_a_big_table_is_compared_by_its_row_count_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comparing, "MAX_COMPARED_ROWS", 100)
    rows = {"columns": ["n"], "rows": [[n] for n in range(150)]}
    shifted = {"columns": ["n"], "rows": [[n + 1] for n in range(150)]}
    entry = compare({"t": rows}, {"t": shifted})["t"]
    assert entry["rows_added"] is None and entry["rows_removed"] is None
    assert (entry["before"], entry["after"], entry["changed"]) == (150, 150, False)


@pytest.mark.parametrize(
    ("alerts", "said"),
    [
        (
            [{"when": "change_pct", "value": 10, "deliver": [EMAIL]}],
            "alert 1: a `change_pct` alert needs `result`",
        ),
        ([{"when": "change_pct", "result": "revenue", "deliver": [EMAIL]}], "needs `value`"),
        ([{"when": "change_pct", "result": "revenue", "value": 0, "deliver": [EMAIL]}], "not 0"),
        ([{"when": "above", "result": "revenue", "value": 5, "deliver": []}], "at least 1 item"),
        ([{"when": "sometimes", "deliver": [EMAIL]}], "alert 1 (when)"),
        ([{"when": "failed", "value": 3, "deliver": [EMAIL]}], "takes no `value`"),
        (
            [{"when": "failed", "deliver": [{"channel": "email", "to": ["not-an-address"]}]}],
            "not a valid email address",
        ),
        (
            [{"when": "failed", "deliver": [{"channel": "email", "to": ["a,b@example.com"]}]}],
            "one address each",
        ),
        (
            [{"when": "failed", "deliver": [{"channel": "webhook", "url": "ftp://x.example"}]}],
            "starts with https://",
        ),
        (
            [
                {
                    "when": "failed",
                    "deliver": [{"channel": "webhook", "url": "https://u:p@x.example/h"}],
                }
            ],
            "may not carry a user name or password",
        ),
        (
            [
                {
                    "when": "failed",
                    "deliver": [
                        {"channel": "webhook", "url": "https://x.example/h", "secret": "short"}
                    ],
                }
            ],
            "at least 16 characters",
        ),
        (
            [
                {
                    "when": "failed",
                    "deliver": [
                        {"channel": "webhook", "url": "https://x.example", "secret_sealed": "v1"}
                    ],
                }
            ],
            "`secret_sealed` is not something to send",
        ),
        ([{"when": "failed", "deliver": [{"channel": "pigeon"}]}], "alert 1 (deliver.0)"),
        ([{"when": "above", "result": "profit", "value": 1, "deliver": [EMAIL]}], "no result"),
    ],
)
def test_an_alert_that_cannot_be_used_is_refused_with_the_reason(
    alerts: list[dict[str, Any]], said: str
) -> None:
    with pytest.raises(InvalidAlert) as refused:
        validate_alerts(alerts, ["revenue", "regions"])
    assert said in refused.value.detail, refused.value.detail
    assert refused.value.code == "invalid_alert" and status_of(refused.value) == 422


def test_the_alert_missing_its_result_says_so() -> None:
    with pytest.raises(InvalidAlert) as refused:
        validate_alerts([{"when": "change_pct", "value": 10, "deliver": [EMAIL]}])
    assert "a `change_pct` alert needs `result`" in refused.value.detail
    with pytest.raises(InvalidAlert) as unknown:
        validate_alerts(
            [{"when": "changed", "result": "profit", "deliver": [EMAIL]}], ["revenue", "regions"]
        )
    assert unknown.value.detail == (
        "alert 1: this job has no result named 'profit' (its results: revenue, regions)."
    )


def alerts(*given: dict[str, Any]) -> Any:
    return load_alerts([{**alert, "deliver": [EMAIL]} for alert in given])


def test_a_fall_past_the_threshold_says_by_how_much_and_from_what() -> None:
    watched = alerts(
        {"when": "change_pct", "result": "revenue", "value": -10},
        {"when": "change_pct", "result": "revenue", "value": 10},
        {"when": "below", "result": "revenue", "value": 45000},
        {"when": "above", "result": "revenue", "value": 45000},
        {"when": "changed", "result": "regions"},
        {"when": "changed", "result": "revenue"},
    )
    previous = {"revenue": 48210, "regions": [{"r": "north"}, {"r": "south"}]}
    current = {"revenue": 42233, "regions": [{"r": "north"}, {"r": "east"}, {"r": "west"}]}
    held = evaluate(watched, "succeeded", current, compare(previous, current), [])
    assert [(t.index, t.sentence) for t in held] == [
        (
            0,
            "revenue fell 12.4% since the last run (48,210 → 42,233), below the \u221210% alert.",
        ),
        (2, "revenue is 42,233, below the 45,000 alert."),
        (4, "regions changed since the last run (2 row(s) added, 1 removed; 3 rows now)."),
        (5, "revenue changed since the last run (48,210 → 42,233)."),
    ]


def test_a_rise_a_first_run_and_a_skipped_run() -> None:
    watched = alerts({"when": "change_pct", "result": "revenue", "value": 10})
    rose = evaluate(
        watched, "succeeded", {"revenue": 60}, compare({"revenue": 50}, {"revenue": 60})
    )
    assert [t.sentence for t in rose] == [
        "revenue rose 20% since the last run (50 → 60), above the +10% alert."
    ]
    # The first run has nothing to compare with; a skipped run alerts on nothing.
    assert evaluate(watched, "succeeded", {"revenue": 60}, None) == []
    assert (
        evaluate(watched, "skipped", {"revenue": 60}, compare({"revenue": 1}, {"revenue": 60}))
        == []
    )


def test_checks_failing_and_the_run_failing_alert_with_their_own_sentences() -> None:
    watched = alerts(
        {"when": "check_failed"}, {"when": "failed"}, {"when": "above", "result": "n", "value": 1}
    )
    checks = [
        {
            "name": "amount_present",
            "passed": False,
            "message": "orders.amount has 312 missing values; the job expects none",
        },
        {"name": "rows", "passed": True, "message": None},
    ]
    held = evaluate(watched, "failed", {"n": 5}, None, checks, error="a check failed")
    assert [t.sentence for t in held] == [
        "1 check(s) failed — amount_present: orders.amount has 312 missing values; "
        "the job expects none",
        "The run failed: a check failed",
    ]
