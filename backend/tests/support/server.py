"""The real app served by uvicorn on loopback, in a thread with its own event loop."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

import uvicorn

from app.config import Settings
from app.main import create_app
from tests.support.services import free_port

T = TypeVar("T")
# Not a deadline for a slow start (the sandbox's runtime cache, the slow part of a first
# start, is built before the tests: tests/conftest.py): what a hang is.
START_HANG_SECONDS = 900


class LiveServer:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.app = create_app(settings)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            self.app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="on",
            timeout_keep_alive=30,
            proxy_headers=False,  # as `python -m app` serves it: TRUSTED_PROXIES decides
        )
        self._server = uvicorn.Server(config)
        self._server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._server.serve())

    def start(self) -> LiveServer:
        """Serve, once the app's start-up is over: however long a busy machine takes, as
        long as the server's thread lives (it ends when the start-up fails). The limit is
        only there to name a start-up that hangs."""
        self._thread.start()
        hung = time.monotonic() + START_HANG_SECONDS
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the app did not start; see the log above")
            if time.monotonic() > hung:
                raise RuntimeError(f"the app's start-up hung for {START_HANG_SECONDS} s")
            time.sleep(0.02)
        return self

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        """Run a coroutine on the server's own loop (where its engine and clients live)."""
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(30)

    @property
    def state(self) -> Any:
        return self.app.state
