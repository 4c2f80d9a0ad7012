"""A TCP proxy on loopback that can be told to cut every connection: a storage outage on demand."""

from __future__ import annotations

import asyncio
import threading

from tests.support.services import free_port


class CuttableProxy:
    def __init__(self, upstream_host: str, upstream_port: int):
        self.upstream = (upstream_host, upstream_port)
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.cut_after_bytes: int | None = None  # cut once this many bytes went upstream
        self.sent = 0
        self.down = False
        self._writers: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", self.port)
        )
        self._ready.set()
        self._loop.run_forever()
        server.close()

    def start(self) -> CuttableProxy:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            self._cut()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._loop.stop()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop)
        self._thread.join(10)

    def restore(self) -> None:
        self.down = False
        self.cut_after_bytes = None
        self.sent = 0

    def cut(self) -> None:
        """Cut every open connection now and refuse new ones until restore()."""
        self.down = True
        self._loop.call_soon_threadsafe(self._cut)

    def _cut(self) -> None:
        self.down = True
        for writer in list(self._writers):
            writer.transport.abort()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            writer.transport.abort()
            return
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        self._writers |= {writer, up_writer}

        async def pipe(
            src: asyncio.StreamReader, dst: asyncio.StreamWriter, upstream: bool
        ) -> None:
            try:
                while data := await src.read(65536):
                    if upstream:
                        self.sent += len(data)
                        if self.cut_after_bytes is not None and self.sent > self.cut_after_bytes:
                            self._cut()
                            return
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.transport.abort() if self.down else dst.close()

        await asyncio.gather(pipe(reader, up_writer, True), pipe(up_reader, writer, False))
        self._writers -= {writer, up_writer}
