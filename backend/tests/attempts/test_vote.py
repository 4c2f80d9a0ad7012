"""The vote on the attempts' answers (app.attempts.vote): what counts as the same result,
and how attempts are grouped and tallied."""

from __future__ import annotations

import pytest

from app.attempts.strategies import STRATEGIES, plan
from app.attempts.vote import agree, reduce, tally


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The total is 4,812.", "Total revenue: 4812.0"),  # grouping, stated precision
        ("3.14", "pi is about 3.14159"),  # the less precise answer rounded it
        ("North, South", "south and north"),  # a list, in another order
        ("Paris", "  paris. "),  # case, spacing, punctuation
        ("[1, 2, 3]", "3, 2, 1"),  # the same values as a set
        ("\u22125", "-5.0"),  # a typographic minus
        ("| region | total |\n| North | 2510.75 |", "North: 2510.75"),  # a table's content
    ],
)
def test_answers_that_state_the_same_result_agree(first: str, second: str) -> None:
    assert agree(reduce(first), reduce(second))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("4812", "4700"),
        ("3.15", "3.14159"),
        ("4490.75", "4490.75 and 12"),  # another value besides
        ("Paris", "Lyon"),
        ("North, South", "North, West"),
    ],
)
def test_answers_with_different_results_do_not(first: str, second: str) -> None:
    assert not agree(reduce(first), reduce(second))


def test_a_majority_a_full_agreement_and_a_split() -> None:
    found = tally([(1, "42"), (2, "42.0"), (3, "41")], 3)
    assert (found.agreement, found.outcome) == ("2/3", "majority")
    assert [g.attempts for g in found.groups] == [[1, 2], [3]]
    assert tally([(1, "a"), (2, "A"), (3, "a ")], 3).outcome == "agree"
    split = tally([(1, "1"), (2, "2"), (3, "3")], 3)
    assert (split.agreement, split.outcome) == ("1/3", None)
    # Attempts that did not answer count against a majority.
    assert tally([(1, "7"), (2, "7")], 5).outcome is None
    assert tally([], 3).outcome is None and tally([], 3).agreement == "0/3"


def test_each_attempt_has_its_own_strategy_and_the_models_take_turns() -> None:
    planned = plan(5, "openai/b", ["openai/a", "openai/b"])
    assert [p.strategy for p in planned] == list(STRATEGIES)
    assert len({p.strategy.temperature for p in planned}) == 5
    assert [p.model for p in planned] == ["openai/b", "openai/a"] * 2 + ["openai/b"]
    assert [p.model for p in plan(2, "m", [])] == ["m", "m"]
