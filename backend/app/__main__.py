"""`python -m app`: start the workbench with the settings from the environment and `.env`."""

from __future__ import annotations

import logging
import socket
import sys
from collections.abc import Sequence

import uvicorn
from pydantic import ValidationError

from app.config import Settings
from app.main import create_app


def main() -> None:
    try:
        settings = Settings()
    except ValidationError as exc:
        print("Workbench cannot start: the configuration is not valid.", file=sys.stderr)
        for error in exc.errors():
            where = ".".join(str(p) for p in error["loc"]) or "settings"
            print(f"  {where}: {error['msg']}", file=sys.stderr)
        sys.exit(2)
    logging.basicConfig(
        level=settings.LOG_LEVEL.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    quiet_chatter(settings.LOG_LEVEL)
    config = uvicorn.Config(
        create_app(settings),
        host=settings.HOST,
        port=settings.PORT,
        log_level=settings.LOG_LEVEL.lower(),
        proxy_headers=True,
    )
    server = AnnouncingServer(config, f"http://{settings.HOST}:{settings.PORT}")
    server.run()
    if not server.started:
        sys.exit(3)  # what uvicorn.run answers when start-up fails


# Libraries' INFO lines a person starting the workbench has no use for: LiteLLM's line per
# model call (twice: it has a handler of its own and propagates to ours) and Alembic's
# context and per-migration lines. Shown when LOG_LEVEL is debug.
CHATTY_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "alembic")


def quiet_chatter(level: str) -> None:
    """Keep the libraries in CHATTY_LOGGERS to warnings unless the log level is debug."""
    if level.lower() != "debug":
        for name in CHATTY_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)


class AnnouncingServer(uvicorn.Server):
    """Says where the workbench is once it listens there, and only then (start-up first
    migrates the database and prepares the sandbox, which takes a while the first time)."""

    def __init__(self, config: uvicorn.Config, url: str):
        super().__init__(config)
        self.url = url

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            print(f"Workbench is ready on {self.url}", flush=True)

    def _log_started_message(self, listeners: Sequence[socket.SocketType]) -> None:
        """Uvicorn's own "Uvicorn running on …": the URL is said once, by startup()."""


if __name__ == "__main__":
    main()
