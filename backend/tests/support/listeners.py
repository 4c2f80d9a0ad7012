"""Listeners on loopback that are not what a source's URL promises: a fake PostgreSQL that
asks for a cleartext password and keeps what it is sent, a port that accepts and never
answers and a port that speaks HTTP (each an asyncio server in a thread of its own), and a
port where no connection ever opens (Blackhole).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Awaitable, Callable
from types import TracebackType

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
_SSL_REQUEST = 80877103
_GSS_REQUEST = 80877104


class Listener:
    """An asyncio server on 127.0.0.1 (a free port) run by `handle`, in its own thread."""

    def __init__(self) -> None:
        self.port = 0
        self.connections = 0
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    def __enter__(self) -> Listener:
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._handle, "127.0.0.1", 0), self._loop
        )
        self._server = started.result(10)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        async def stop() -> None:
            assert self._server is not None
            self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


class FakePostgres(Listener):
    """Speaks PostgreSQL's start-up far enough to ask for a cleartext password
    (AuthenticationCleartextPassword: an R message with code 3), and keeps every password
    message ('p') and start-up parameters it receives."""

    def __init__(self) -> None:
        super().__init__()
        self.passwords: list[str] = []
        self.startups: list[dict[str, str]] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            (length,) = struct.unpack("!i", await reader.readexactly(4))
            body = await reader.readexactly(length - 4)
            (code,) = struct.unpack("!i", body[:4])
            if code in (_SSL_REQUEST, _GSS_REQUEST):
                writer.write(b"N")  # no TLS here: go on in clear text
                await writer.drain()
                continue
            words = body[4:].split(b"\0")
            self.startups.append(
                {k.decode(): v.decode() for k, v in zip(words[::2], words[1::2], strict=False) if k}
            )
            break
        writer.write(b"R" + struct.pack("!ii", 8, 3))
        await writer.drain()
        kind = await reader.readexactly(1)
        (length,) = struct.unpack("!i", await reader.readexactly(4))
        body = await reader.readexactly(length - 4)
        if kind == b"p":
            self.passwords.append(body.rstrip(b"\0").decode())
        fields = b"SFATAL\0C28P01\0Mpassword authentication failed\0\0"
        writer.write(b"E" + struct.pack("!i", len(fields) + 4) + fields)
        await writer.drain()


class SilentListener(Listener):
    """Accepts every connection and never says anything (a firewall's tarpit, a stuck peer)."""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(4096):
            pass


class HttpListener(Listener):
    """An HTTP server: answers whatever it is sent with a 400 and closes."""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(4096)
        body = b"<html><body>Bad Request</body></html>"
        writer.write(
            b"HTTP/1.1 400 Bad Request\r\nServer: nginx\r\nContent-Type: text/html\r\n"
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()


class Blackhole:
    """A port on 127.0.0.1 where a connection never opens, as at a blackholed address: a
    socket listening with its accept queue filled and never accepted, so the kernel drops
    every further SYN (the client waits out its timeout)."""

    def __init__(self) -> None:
        self.port = 0
        self._sockets: list[socket.socket] = []

    def __enter__(self) -> Blackhole:
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        self.port = int(server.getsockname()[1])
        self._sockets.append(server)
        for _ in range(3):  # more than a backlog of 0 holds
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", self.port))
            self._sockets.append(filler)
        return self

    def __exit__(self, *exc: object) -> None:
        for sock in self._sockets:
            sock.close()
