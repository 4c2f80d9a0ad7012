"""The dissent explainer's reply read as it comes: a clause per dissenting attempt, bounded,
and nothing from a reply it cannot read (the verdict keeps the vote's text)."""

from __future__ import annotations

from app.attempts.dissent import CLAUSE_CHARS, DISSENT_MARKER, parse, prompt
from app.attempts.judge import Shown


def test_a_clause_per_dissenting_attempt_is_read_and_tidied() -> None:
    reply = 'Sure: {"3": "Because it kept refunded orders.", "4": "  it averaged  ", "9": "x"}'
    assert parse(reply, [3, 4]) == {3: "it kept refunded orders", 4: "it averaged"}


def test_unreadable_or_hostile_replies_give_nothing_or_a_bounded_clause() -> None:
    assert parse("no json here", [3]) == {}
    assert parse('{"3": 42, "4": ""}', [3, 4]) == {}
    assert parse('["3"]', [3]) == {}
    long = parse('{"3": "' + "a" * 5000 + '"}', [3])[3]
    assert len(long) == CLAUSE_CHARS and long.endswith("…")


def test_the_prompt_shows_the_majority_and_each_dissent() -> None:
    majority = Shown(1, "pandas", "total = df.revenue.sum()", "4490.75", "4490.75")
    other = Shown(3, "cross-check", "total = df.revenue.sum() + 321", "4811.75", "4811.75")
    text = prompt("What is the total?", majority, [other])
    assert text.startswith(DISSENT_MARKER)
    assert "The majority (attempt 1)" in text and "## Attempt 3 (strategy: cross-check)" in text
    assert '{"3": "…"}' in text
