"""A server-sent events parser: the WHATWG HTML "event stream" algorithm.

No maintained SSE parser is packaged where this client is built (httpx-sse
and sseclient-py are not in Debian), so this module follows the standard
(https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream)
closely: lines end in CRLF, LF or CR (also split across chunks), a leading
BOM is dropped, ":" starts a comment, a field without ":" has an empty
value, one space after ":" is removed, "data" lines join with LF, an "id"
holding NUL is ignored, "retry" takes only ASCII digits, and an event with
no data is not dispatched. Unlike a browser it bounds what it buffers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

__all__ = ["ServerSentEvent", "SSEDecoder", "SSEError"]


class SSEError(ValueError):
    """The stream broke a bound of the decoder (a line or an event too large)."""


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event: its type ("message" by default), data, last event id and retry."""

    event: str = "message"
    data: str = ""
    id: str = ""
    retry: Optional[int] = None


class SSEDecoder:
    """Turns the bytes of an event stream, fed in chunks of any size, into events."""

    def __init__(self, max_event_bytes: int = 1 << 20) -> None:
        self._max = max_event_bytes
        self._buf = bytearray()
        self._started = False  # the BOM check is done
        self._pending_cr = False  # the last chunk ended in CR: a following LF belongs to it
        self._event = ""
        self._data: List[str] = []
        self._data_len = 0
        self._last_id = ""
        self._retry: Optional[int] = None

    def feed(self, chunk: bytes) -> List[ServerSentEvent]:
        """Decodes chunk and returns the events it completed."""
        out: List[ServerSentEvent] = []
        if self._pending_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._pending_cr = False
        self._buf += chunk
        if not self._started:
            if len(self._buf) < 3 and b"\xef\xbb\xbf".startswith(bytes(self._buf)):
                return out  # maybe a BOM still arriving
            if self._buf.startswith(b"\xef\xbb\xbf"):
                del self._buf[:3]
            self._started = True
        start = 0
        n = len(self._buf)
        while start < n:
            cr = self._buf.find(b"\r", start)
            lf = self._buf.find(b"\n", start)
            if cr < 0 and lf < 0:
                break
            if cr < 0 or (0 <= lf < cr):
                end, nxt = lf, lf + 1
            elif cr + 1 < n:
                end, nxt = cr, cr + 2 if self._buf[cr + 1] == 0x0A else cr + 1
            else:  # CR last in the buffer: its LF, if any, comes next
                end, nxt = cr, cr + 1
                self._pending_cr = True
            ev = self._line(bytes(self._buf[start:end]).decode("utf-8", "replace"))
            if ev is not None:
                out.append(ev)
            start = nxt
        del self._buf[:start]
        if len(self._buf) > self._max:
            raise SSEError(f"a server-sent event line over {self._max} bytes")
        return out

    def _line(self, line: str) -> Optional[ServerSentEvent]:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
            self._data_len += len(value) + 1
            if self._data_len > self._max:
                raise SSEError(f"a server-sent event over {self._max} bytes")
        elif field == "id":
            if "\0" not in value:
                self._last_id = value
        elif field == "retry":
            if value and value.isascii() and value.isdigit():
                self._retry = int(value)
        return None

    def _dispatch(self) -> Optional[ServerSentEvent]:
        data, event = self._data, self._event
        self._data, self._data_len, self._event = [], 0, ""
        if not data:
            return None
        return ServerSentEvent(event=event or "message", data="\n".join(data), id=self._last_id, retry=self._retry)
