"""`python -m app`: start the workbench with the settings from the environment and `.env`."""

from __future__ import annotations

import socket
import sys
from collections.abc import Sequence
from typing import Any

import uvicorn
from fastapi import FastAPI
from pydantic import ValidationError
from uvicorn.supervisors import Multiprocess

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
    processes = settings.web_processes
    url = f"http://{settings.HOST}:{settings.PORT}"
    options: dict[str, Any] = {
        "host": settings.HOST,
        "port": settings.PORT,
        "log_level": settings.LOG_LEVEL.lower(),
        "log_config": logs.uvicorn_log_config(settings.LOG_FORMAT),
        # Forwarded headers are believed from TRUSTED_PROXIES only (app/api/forwarded.py);
        # uvicorn's own would believe them from 127.0.0.1 whatever the settings say.
        "proxy_headers": False,
    }
    if processes > 1:
        serve_in_processes(settings, processes, url, options)
        return
    config = uvicorn.Config(create_app(settings), **options)
    server = AnnouncingServer(config, url)
    server.run()
    if not server.started:
        sys.exit(3)  # what uvicorn.run answers when start-up fails


def serve_in_processes(
    settings: Settings, processes: int, url: str, options: dict[str, Any]
) -> None:
    """WEB_CONCURRENCY processes on one socket (uvicorn's workers), each its own app, made by
    app_from_environment from the same environment; a process that dies is started again."""
    settings.signing_key  # noqa: B018  made once here (without SECRET_KEY), read by each
    config = uvicorn.Config(
        "app.__main__:app_from_environment", factory=True, workers=processes, **options
    )
    print(f"Workbench starts {processes} processes on {url}", flush=True)
    Multiprocess(config, sockets=[config.bind_socket()]).run()


def app_from_environment() -> FastAPI:
    """The app of one of several processes (see serve_in_processes)."""
    settings = Settings()
    logs.configure(settings.LOG_LEVEL, settings.LOG_FORMAT)
    return create_app(settings)


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
