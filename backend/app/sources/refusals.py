"""What a query on a source ends with when it cannot give its rows: refused before it ran,
or failed in (or on the way to) the database. app.sources.querying is where callers meet
them."""

from __future__ import annotations


class QueryRefused(Exception):
    """The statement is not a single read-only query; a sentence for the agent, raised
    before any connection is made."""


class QueryFailed(Exception):
    """The database's own error (credentials scrubbed), or a timeout or cap with what to
    change; raised during the query."""


def timed_out(timeout_seconds: float) -> QueryFailed:
    """What a query stopped at its statement timeout ends with."""
    return QueryFailed(
        f"The query ran longer than the statement timeout ({timeout_seconds:g} s): "
        "aggregate or filter more in the database, or add LIMIT."
    )
