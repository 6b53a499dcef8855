"""Tests of the server-sent events parser (the WHATWG algorithm), fed
every way a stream can be cut into chunks."""

import unittest
from typing import List

from secexec_client import ServerSentEvent, SSEDecoder, SSEError


def parse(stream: bytes, step: int = 0) -> List[ServerSentEvent]:
    d = SSEDecoder(max_event_bytes=1000)
    if step == 0:
        return d.feed(stream)
    out: List[ServerSentEvent] = []
    for i in range(0, len(stream), step):
        out += d.feed(stream[i : i + step])
    return out


class SSETest(unittest.TestCase):
    def check(self, stream: bytes, want: List[ServerSentEvent]) -> None:
        # The same events whatever the chunking, one byte at a time too.
        for step in (0, 1, 2, 3, 7):
            self.assertEqual(parse(stream, step), want, f"chunks of {step}")

    def test_line_endings(self):
        want = [ServerSentEvent("stdout", "a"), ServerSentEvent("exit", "b")]
        for eol in (b"\n", b"\r\n", b"\r"):
            self.check(b"event: stdout" + eol + b"data: a" + eol + eol + b"event: exit" + eol + b"data: b" + eol + eol, want)
        # Mixed, and CR then LF in separate chunks is one line end.
        self.check(b"event: stdout\r\ndata: a\r\r\nevent: exit\ndata: b\r\n\n", want)

    def test_multiline_data_and_fields(self):
        self.check(b"data: one\ndata:two\ndata\ndata:  three\n\n", [ServerSentEvent("message", "one\ntwo\n\n three")])
        # A trailing line without its blank line is not dispatched.
        self.check(b"data: done\n\ndata: partial\n", [ServerSentEvent(data="done")])

    def test_comments_id_retry(self):
        self.check(
            b": keep-alive\n:\nid: 7\nretry: 1500\nretry: x1\ndata: a\n\nid: bad\0\ndata: b\n\n",
            [ServerSentEvent(data="a", id="7", retry=1500), ServerSentEvent(data="b", id="7", retry=1500)],
        )
        # No data: nothing dispatched, and the event type resets.
        self.check(b"event: x\n\ndata: y\n\n", [ServerSentEvent(data="y")])
        self.check(b"field-unknown: 1\ndata: z\n\n", [ServerSentEvent(data="z")])

    def test_bom_and_utf8(self):
        self.check(b"\xef\xbb\xbfdata: \xc3\xa9\n\n", [ServerSentEvent(data="é")])
        self.check(b"\xef\xbb\xbf\n", [])

    def test_bounds(self):
        with self.assertRaises(SSEError):
            parse(b"data: " + b"x" * 2000)  # a line never ending
        with self.assertRaises(SSEError):
            parse(b"data: " + b"x" * 600 + b"\ndata: " + b"y" * 600 + b"\n")  # an event too large


if __name__ == "__main__":
    unittest.main()
