"""Hostile code against the asks for data (`sql()` & co., issue 25): the code can write any
bytes to any descriptor of its process and so forge asks, and whatever an ask holds, the
backend answers it with one well-formed frame or refuses the step; it never runs anything
but what its data sources' checks allow (tests/redteam/test_source_statements.py)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from app.sandbox.asks import Asks
from app.sandbox.protocol import MAX_ASK_CHARS
from tests.redteam.conftest import Target
from tests.redteam.test_protocol_attacks import attack, refused_on_the_channel, still_answers
from tests.support.hostile import TO_EVERY_DESCRIPTOR
from tests.support.llm import ScriptedLLM


def test_an_ask_forged_outside_a_call_is_a_violation(target: Target, llm: ScriptedLLM) -> None:
    # A query ask the code writes itself, with a nonce of its own: the supervisor ends the
    # step; no answer is read, no query runs.
    forged = json.dumps({"type": "query", "sql": "SELECT 1", "source": None, "nonce": "0" * 16})
    code = TO_EVERY_DESCRIPTOR + f"to_every_descriptor(framed({forged!r}))\n"
    session_id, events = attack(target, llm, code, "red team: forged ask")
    refused_on_the_channel(events)
    assert not [e for e in events if e.event == "step.queries"]
    still_answers(target, llm, session_id)


class Recorder:
    """An answerer that records what reaches it (nothing hostile may)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def query(self, sql: str, source: str | None, room: int | None, deadline: float) -> Any:
        self.calls.append(("query", sql, source, room))
        return iter(())

    def lookup(self, what: str, source: str | None, table: str | None) -> list[dict[str, Any]]:
        self.calls.append(("lookup", what, source, table))
        return []

    def take_records(self) -> list[Any]:
        return []


HOSTILE_ASKS: list[dict[str, Any]] = [
    {"type": "query"},  # no SQL
    {"type": "query", "sql": 42},
    {"type": "query", "sql": ["SELECT 1"]},
    {"type": "query", "sql": "   "},
    {"type": "query", "sql": "x" * (MAX_ASK_CHARS + 1)},
    {"type": "query", "sql": "SELECT 1", "source": {"$ne": None}},
    {"type": "query", "sql": "SELECT 1", "source": "s" * 10_000},
    {"type": "query", "sql": "SELECT 1", "source": ""},
    {"type": "query_next"},  # nothing open
    {"type": "lookup", "what": "drop"},
    {"type": "lookup", "what": "columns", "table": 7},
    {"type": "shutdown"},
    {"type": None},
    {},
]


@pytest.mark.parametrize("ask", HOSTILE_ASKS, ids=lambda a: json.dumps(a)[:40])
def test_a_malformed_ask_is_answered_with_an_error_and_reaches_nothing(ask: dict[str, Any]) -> None:
    answerer = Recorder()
    asks = Asks(answerer, lambda: 1 << 20)
    answer = asks.answer(ask, time.monotonic() + 30)
    assert answer["type"] == "query_error", answer
    assert isinstance(answer["error"], str) and 0 < len(answer["error"]) <= 300
    assert answerer.calls == []


def test_into_is_bounded_by_the_free_quota_whatever_the_ask_says() -> None:
    answerer = Recorder()
    asks = Asks(answerer, lambda: 12345)
    asks.answer({"type": "query", "sql": "SELECT 1", "into": True}, time.monotonic() + 30)
    asks.answer({"type": "query", "sql": "SELECT 1", "into": "yes"}, time.monotonic() + 30)
    assert [call[3] for call in answerer.calls] == [12345, None]
