"""The OTLP encoder: recorded spans written straight into the OTLP protobuf wire format
(an ExportTraceServiceRequest), each string scrubbed of secrets on the way (`Scrubber`).
The span recorder (recorder.py) hands it its batches.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import StatusCode

if TYPE_CHECKING:
    from app.observability.recorder import _Span


@dataclass(frozen=True)
class Scrubber:
    """What leaves the process in a span passes through here (see tracing.py's module):
    every string through `text`; attributes named in `dropped` are left out, those named in
    `urls` go through `url`."""

    text: Callable[[str], str]
    dropped: frozenset[str]
    urls: frozenset[str]
    url: Callable[[str], str]


# The protobuf wire format of OTLP's messages (opentelemetry-proto's trace.proto and
# common.proto): a field is its number and wire type, then its value; a message inside
# another is written with its length first.
_pack_fixed64 = struct.Struct("<Q").pack
_pack_fixed32 = struct.Struct("<I").pack
_pack_double = struct.Struct("<d").pack
_SMALL_VARINTS = [bytes([i]) for i in range(128)]


def _varint(value: int) -> bytes:
    if value < 128:
        return _SMALL_VARINTS[value]
    out = bytearray()
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field (a string, bytes or a message)."""
    size = len(payload)
    return tag + (_SMALL_VARINTS[size] if size < 128 else _varint(size)) + payload


class Encoder:
    """Spans into an OTLP ExportTraceServiceRequest, each string scrubbed on the way.

    A span's attribute's encoding is kept for the next span that has the same one (a
    bounded cache): most repeat (a statement, a model's name, the database's, a flag); so is
    a span's name's.
    """

    CACHE = 4096

    def __init__(self, resource: Mapping[str, Any], scrubber: Scrubber) -> None:
        self.scrubber = scrubber
        self._attribute_cache: dict[tuple[str, Any, type], bytes] = {}
        self._names: dict[str, bytes] = {}  # a span's name: its field
        # Resource{attributes = 1}
        self.resource = b"".join(
            _field(b"\x0a", self._attribute(k, v)) for k, v in resource.items()
        )

    def scope(self, name: str, version: str | None) -> bytes:
        """An InstrumentationScope{name = 1, version = 2}, as a ScopeSpans' field 1."""
        scope = _field(b"\x0a", name.encode())
        if version:
            scope += _field(b"\x12", version.encode())
        return _field(b"\x0a", scope)

    def request(self, spans: Sequence[_Span]) -> bytes:
        """ExportTraceServiceRequest{resource_spans = 1}: one ResourceSpans{resource = 1,
        scope_spans = 2}, a ScopeSpans{scope = 1, spans = 2} for each tracer."""
        by_scope: dict[bytes, list[bytes]] = {}
        for span in spans:
            by_scope.setdefault(span.tracer.scope, []).append(_field(b"\x12", self.span(span)))
        scopes = b"".join(
            _field(b"\x12", scope + b"".join(encoded)) for scope, encoded in by_scope.items()
        )
        return _field(b"\x0a", _field(b"\x0a", self.resource) + scopes)

    def span(self, span: _Span) -> bytes:
        """Span{trace_id = 1, span_id = 2, parent_span_id = 4, name = 5, kind = 6,
        start = 7, end = 8, attributes = 9, events = 11, links = 13, status = 15,
        flags = 16}."""
        parts = [
            b"\x0a\x10",
            span.trace_id.to_bytes(16, "big"),
            b"\x12\x08",
            span.span_id.to_bytes(8, "big"),
        ]
        if span.parent_id:
            parts += (b"\x22\x08", span.parent_id.to_bytes(8, "big"))
        encoded_name = self._names.get(span.name)
        if encoded_name is None:
            encoded_name = self._name(span.name)
        parts += (
            encoded_name,
            b"\x30",
            # OTLP's kinds count from 1 (INTERNAL); (_value_: .value is a property's call)
            _SMALL_VARINTS[span.kind._value_ + 1],
            b"\x39",
            _pack_fixed64(span.start_time),
            b"\x41",
            _pack_fixed64(span.end_time or span.start_time),
        )
        cache = self._attribute_cache
        for key, value in span.attributes.items():
            # With the value's type: True, 1 and 1.0 are one key of a dict.
            cached = (key, value, type(value))
            encoded = cache.get(cached)
            if encoded is None:
                encoded = self._span_attribute(cached)
            parts.append(encoded)
        for name, attributes, timestamp in span.events:
            # Event{time = 1, name = 2, attributes = 3}
            event = [b"\x09", _pack_fixed64(timestamp), _field(b"\x12", name.encode())]
            for key, value in attributes.items():
                encoded = self._attribute(key, value)
                if encoded:
                    event.append(_field(b"\x1a", encoded))
            parts.append(_field(b"\x5a", b"".join(event)))
        for link in span.links:
            # Link{trace_id = 1, span_id = 2, attributes = 4, flags = 6}
            linked = link.context
            encoded_link = [
                b"\x0a\x10",
                linked.trace_id.to_bytes(16, "big"),
                b"\x12\x08",
                linked.span_id.to_bytes(8, "big"),
            ]
            for key, value in (link.attributes or {}).items():
                encoded = self._attribute(key, value)
                if encoded:
                    encoded_link.append(_field(b"\x22", encoded))
            encoded_link += (b"\x35", _FLAGS[linked.is_remote])
            parts.append(_field(b"\x6a", b"".join(encoded_link)))
        if span.status_code is not StatusCode.UNSET:
            # Status{message = 2, code = 3}
            status = b"\x18" + _SMALL_VARINTS[span.status_code.value]
            if span.status_message:
                message = self.scrubber.text(span.status_message).encode()
                status = _field(b"\x12", message) + status
            parts.append(_field(b"\x7a", status))
        parts += (b"\x85\x01", _FLAGS[span.parent_remote])
        return b"".join(parts)

    def _name(self, name: str) -> bytes:
        """A span's name field, scrubbed, kept for the next span of that name."""
        encoded = _field(b"\x2a", self.scrubber.text(name).encode())
        return self._kept(self._names, name, encoded)

    def _span_attribute(self, cached: tuple[str, Any, type]) -> bytes:
        """A span's attribute field (key, value, the value's type), kept for the next
        span."""
        encoded = self._attribute(cached[0], cached[1])
        encoded = _field(b"\x4a", encoded) if encoded else b""
        return self._kept(self._attribute_cache, cached, encoded)

    def _kept(self, cache: dict[Any, bytes], key: Any, encoded: bytes) -> bytes:
        """`encoded`, kept in `cache` under `key` (emptied when it holds CACHE)."""
        if len(cache) >= self.CACHE:
            cache.clear()
        cache[key] = encoded
        return encoded

    def _attribute(self, key: str, value: Any) -> bytes:
        """KeyValue{key = 1, value = 2}, scrubbed; empty when the attribute is left out."""
        scrubber = self.scrubber
        if key in scrubber.dropped:
            return b""
        if key in scrubber.urls and type(value) is str:
            value = scrubber.url(value)
        return _field(b"\x0a", key.encode()) + _field(b"\x12", self._value(value))

    def _value(self, value: Any) -> bytes:
        """AnyValue{string = 1, bool = 2, int = 3, double = 4, array = 5}."""
        if isinstance(value, str):
            return _field(b"\x0a", self.scrubber.text(value).encode("utf-8", "replace"))
        if isinstance(value, bool):
            return b"\x10\x01" if value else b"\x10\x00"
        if isinstance(value, int):
            if -(2**63) <= value < 2**63:
                return b"\x18" + _varint(value & 0xFFFFFFFFFFFFFFFF)
            return self._value(str(value))
        if isinstance(value, float):
            return b"\x21" + _pack_double(value)
        # ArrayValue{values = 1}
        return _field(b"\x2a", b"".join(_field(b"\x0a", self._value(v)) for v in value))


# A span's or a link's flags, by whether its parent (or the linked span) is remote: that
# whether it is remote is known (0x100), and whether it is (0x200).
_FLAGS = {False: _pack_fixed32(0x100), True: _pack_fixed32(0x300)}
