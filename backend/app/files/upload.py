"""Read the `file` part of a multipart upload straight from the request stream.

Starlette's form parser spools the whole body before the route runs; this reader hands
the route the part's name first and then its bytes as they arrive, so an upload flows to
object storage with bounded memory and an over-limit upload is refused as soon as it is.
"""

from __future__ import annotations

import unicodedata
from collections.abc import AsyncIterator
from email.message import Message

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import ClientDisconnect, Request

from app.errors import BadRequest

# Join the small pieces the server hands us into chunks worth a storage write.
CHUNK_SIZE = 1024 * 1024
MAX_NAME_BYTES = 255


class UploadAborted(BadRequest):
    """The client went away, or the body ended, before the file did."""

    code = "upload_incomplete"


class NameTooLong(BadRequest):
    code = "name_too_long"


def clean_file_name(raw: str) -> str:
    """The name as uploaded, minus any directory part and control characters."""
    name = raw.replace("\\", "/").rsplit("/", 1)[-1]
    name = unicodedata.normalize("NFC", "".join(ch for ch in name if ch.isprintable())).strip()
    if name in ("", ".", ".."):
        raise BadRequest("The uploaded file has no usable name.", code="invalid_file_name")
    if len(name.encode()) > MAX_NAME_BYTES:
        raise NameTooLong(
            f"The file name is {len(name.encode()):,} bytes long; at most {MAX_NAME_BYTES} bytes "
            "(UTF-8) are allowed. Rename the file and upload it again."
        )
    return name


def _disposition(headers: dict[str, bytes]) -> tuple[str | None, str | None]:
    """The part's field name and file name from its Content-Disposition header."""
    raw = headers.get("content-disposition", b"")
    _, params = parse_options_header(raw)
    name = params.get(b"name")
    filename: str | None = None
    if b"filename*" in params:
        # RFC 5987: filename*=UTF-8''percent-encoded
        message = Message()
        message["content-disposition"] = raw.decode("latin-1")
        filename = message.get_filename()
    if filename is None and b"filename" in params:
        # Browsers send the name as UTF-8 bytes inside the quotes.
        filename = params[b"filename"].decode("utf-8", "replace")
    return (name.decode("utf-8", "replace") if name else None), filename


class MultipartFile:
    """The first part named `field` that carries a file, read incrementally."""

    def __init__(self, request: Request, field: str = "file"):
        content_type = request.headers.get("content-type", "")
        kind, params = parse_options_header(content_type)
        if kind != b"multipart/form-data" or b"boundary" not in params:
            raise BadRequest(
                "Send the file as multipart/form-data with a field named 'file'.",
                code="expected_multipart",
            )
        self._stream = request.stream()
        self._field = field
        self._pending: list[bytes] = []
        self._headers: dict[str, bytes] = {}
        self._header_field = b""
        self._header_value = b""
        self._in_file = False
        self._done = False
        self.filename: str | None = None
        try:
            self._parser = MultipartParser(
                params[b"boundary"],
                {
                    "on_part_begin": self._on_part_begin,
                    "on_header_field": self._on_header_field,
                    "on_header_value": self._on_header_value,
                    "on_header_end": self._on_header_end,
                    "on_headers_finished": self._on_headers_finished,
                    "on_part_data": self._on_part_data,
                    "on_part_end": self._on_part_end,
                },
            )
        except FormParserError as exc:  # e.g. a boundary longer than RFC 2046 allows
            raise self._malformed(exc) from None

    # Parser callbacks -------------------------------------------------------------
    def _on_part_begin(self) -> None:
        self._headers = {}

    def _on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._header_field += data[start:end]

    def _on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._header_value += data[start:end]

    def _on_header_end(self) -> None:
        self._headers[self._header_field.decode("latin-1").lower()] = self._header_value
        self._header_field = self._header_value = b""

    def _on_headers_finished(self) -> None:
        name, filename = _disposition(self._headers)
        self._in_file = self.filename is None and name == self._field and filename is not None
        if self._in_file:
            self.filename = filename

    def _on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self._in_file:
            self._pending.append(data[start:end])

    def _on_part_end(self) -> None:
        if self._in_file:
            self._in_file = False
            self._done = True

    # Reading ----------------------------------------------------------------------
    async def _pump(self) -> bool:
        """Feed the parser one more piece of the body; False at the end of the body."""
        try:
            piece = await self._stream.__anext__()
        except StopAsyncIteration:
            return False
        except ClientDisconnect:
            raise UploadAborted("the client disconnected during the upload") from None
        if piece:
            try:
                self._parser.write(piece)
            except FormParserError as exc:
                raise self._malformed(exc) from None
        return True

    def _malformed(self, exc: FormParserError) -> BadRequest:
        # The parser caps each part header at about 4 KB; the header that long is, in
        # practice, the Content-Disposition that carries the file name.
        if "header size" in str(exc) and self._header_field.lower() == b"content-disposition":
            return NameTooLong(
                f"The file name is too long; at most {MAX_NAME_BYTES} bytes (UTF-8) are allowed. "
                "Rename the file and upload it again."
            )
        return BadRequest(
            f"The upload is not valid multipart/form-data ({exc}).", code="malformed_upload"
        )

    async def open(self) -> str:
        """Read up to the start of the file's bytes; the file name as sent."""
        while self.filename is None:
            if not await self._pump():
                raise BadRequest(
                    "The upload has no file in a field named 'file'.", code="missing_file"
                )
        return self.filename

    async def chunks(self) -> AsyncIterator[bytes]:
        """The file's bytes, in chunks of about CHUNK_SIZE."""
        buffer = bytearray()
        while True:
            if self._pending:
                for piece in self._pending:
                    buffer += piece
                self._pending.clear()
                if len(buffer) >= CHUNK_SIZE:
                    yield bytes(buffer)
                    buffer.clear()
            if self._done:
                break
            if not await self._pump():
                raise UploadAborted("the upload ended before the file did")
        if buffer:
            yield bytes(buffer)
