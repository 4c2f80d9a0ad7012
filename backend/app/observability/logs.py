"""The backend's log lines: plain text for a person (`make run`), or one JSON object a line
(LOG_FORMAT=json) for a log collector, each with the run, session and trace ids where the
line was written for one.

The ids come from context variables that a run sets where it starts (`for_run`); the agent's
thread and the threads of `asyncio.to_thread` inherit them. Libraries' lines (uvicorn's,
LiteLLM's) go through the same handler; LiteLLM's own chatter is kept to warnings unless
LOG_LEVEL is debug.
"""

from __future__ import annotations

import contextvars
import copy
import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace

from app.config import LogFormat

RUN_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("run_id", default=None)
SESSION_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("session_id", default=None)

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Libraries' INFO lines a person starting the workbench has no use for: LiteLLM's line per
# model call (twice: it has a handler of its own and propagates to ours) and Alembic's
# context and per-migration lines. Shown when LOG_LEVEL is debug.
CHATTY_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "alembic")


def for_run(run_id: object, session_id: object) -> None:
    """Mark what the current task (and the threads it starts) logs as this run's."""
    RUN_ID.set(str(run_id))
    SESSION_ID.set(str(session_id))


class JsonLines(logging.Formatter):
    """A record as one line of JSON: time, level, logger, message, the ids, the error."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        run_id, session_id = RUN_ID.get(), SESSION_ID.get()
        if run_id is not None:
            line["run_id"] = run_id
        if session_id is not None:
            line["session_id"] = session_id
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            line["trace_id"] = format(context.trace_id, "032x")
            line["span_id"] = format(context.span_id, "016x")
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["error"] = record.exc_text
        return json.dumps(line, ensure_ascii=False, default=str)


def configure(level: str, form: LogFormat) -> None:
    """Send every log line to stderr in the chosen format, at `level` (see CHATTY_LOGGERS)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines() if form == LogFormat.json else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in CHATTY_LOGGERS:
        chatty = logging.getLogger(name)
        # LiteLLM prints through a handler of its own too: its lines go through ours only.
        for old in list(chatty.handlers):
            chatty.removeHandler(old)
        chatty.propagate = True
        if level.lower() != "debug":
            chatty.setLevel(logging.WARNING)


# A shared link's token is a password to its report: never written to a log.
_SHARED_TOKEN = re.compile(r"(/shared/)[^/?#\s]+")


def hide_secrets_in_path(path: str) -> str:
    """The request path as a log may show it: a shared link's token masked."""
    return _SHARED_TOKEN.sub(r"\1***", path)


class HideSharedTokens(logging.Filter):
    """On uvicorn's access lines: the path's shared-link token masked (the record's args
    are (client, method, path, http version, status))."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], hide_secrets_in_path(args[2]), *args[3:])
        return True


_ACCESS_FILTERS = {"hide_shared_tokens": {"()": HideSharedTokens}}


def uvicorn_log_config(form: LogFormat) -> dict[str, Any] | None:
    """uvicorn's own logging setup: its default for text, none for JSON (its loggers then
    pass their lines to ours, access lines included); shared links' tokens masked in its
    access lines either way."""
    if form == LogFormat.text:
        from uvicorn.config import LOGGING_CONFIG

        config = copy.deepcopy(LOGGING_CONFIG)
        config["filters"] = _ACCESS_FILTERS
        config["loggers"]["uvicorn.access"]["filters"] = ["hide_shared_tokens"]
        return config
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": _ACCESS_FILTERS,
        "loggers": {
            "uvicorn": {"handlers": [], "propagate": True},
            "uvicorn.error": {"handlers": [], "propagate": True},
            "uvicorn.access": {
                "handlers": [],
                "propagate": True,
                "filters": ["hide_shared_tokens"],
            },
        },
    }
