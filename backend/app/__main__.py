"""`python -m app`: start the workbench with the settings from the environment and `.env`."""

from __future__ import annotations

import socket
import sys
from collections.abc import Sequence

import uvicorn
from pydantic import ValidationError

from app.config import Settings
from app.main import create_app
from app.observability import logs


def main() -> None:
    try:
        settings = Settings()
    except ValidationError as exc:
        print("Workbench cannot start: the configuration is not valid.", file=sys.stderr)
        for error in exc.errors():
            where = ".".join(str(p) for p in error["loc"]) or "settings"
            print(f"  {where}: {error['msg']}", file=sys.stderr)
        sys.exit(2)
    logs.configure(settings.LOG_LEVEL, settings.LOG_FORMAT)
    config = uvicorn.Config(
        create_app(settings),
        host=settings.HOST,
        port=settings.PORT,
        log_level=settings.LOG_LEVEL.lower(),
        log_config=logs.uvicorn_log_config(settings.LOG_FORMAT),
        # Forwarded headers are believed from TRUSTED_PROXIES only (app/api/forwarded.py);
        # uvicorn's own would believe them from 127.0.0.1 whatever the settings say.
        proxy_headers=False,
    )
    server = AnnouncingServer(config, f"http://{settings.HOST}:{settings.PORT}")
    server.run()
    if not server.started:
        sys.exit(3)  # what uvicorn.run answers when start-up fails


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
