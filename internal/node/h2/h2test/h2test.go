// Package h2test drives an HTTP/2 server as a hostile client would: the
// attacks a server must bound (CVE-2023-44487's rapid reset, more streams
// than allowed, an HPACK bomb, a client that never reads). It is shared
// by internal/node/h2's tests and the guest-level ones in internal/js, so
// that one attack runs against both.
package h2test

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"strings"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// readGuard bounds a read that waits for the server, so that a server
// that never answers fails a test instead of hanging it.
const readGuard = 60 * time.Second

// Client is a hand-driven HTTP/2 client connection, free to break the
// rules a real client keeps.
type Client struct {
	c   net.Conn
	fr  *http2.Framer
	enc *hpack.Encoder
	buf bytes.Buffer
}

// NewClient sends the connection preface and empty SETTINGS on c.
func NewClient(c net.Conn) (*Client, error) {
	r := &Client{c: c, fr: http2.NewFramer(c, c)}
	r.enc = hpack.NewEncoder(&r.buf)
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		return nil, err
	}
	if err := r.fr.WriteSettings(); err != nil {
		return nil, err
	}
	return r, nil
}

// Headers encodes a GET of path plus extra fields.
func (r *Client) Headers(path string, extra ...hpack.HeaderField) []byte {
	r.buf.Reset()
	for _, f := range append([]hpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "http"},
		{Name: ":authority", Value: "guest"}, {Name: ":path", Value: path}}, extra...) {
		_ = r.enc.WriteField(f)
	}
	return append([]byte(nil), r.buf.Bytes()...)
}

// Get opens stream id with a GET of path that ends with its head.
func (r *Client) Get(id uint32, path string) error {
	return r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.Headers(path), EndStream: true, EndHeaders: true})
}

// ReadUntil reads frames until stop says so or the connection ends; it
// returns the GOAWAY code if one came.
func (r *Client) ReadUntil(stop func(http2.Frame) bool) (goaway http2.ErrCode, gotGoaway bool, err error) {
	_ = r.c.SetReadDeadline(time.Now().Add(readGuard))
	for {
		f, err := r.fr.ReadFrame()
		if err != nil {
			return goaway, gotGoaway, err
		}
		if g, ok := f.(*http2.GoAwayFrame); ok {
			goaway, gotGoaway = g.ErrCode, true
		}
		if stop(f) {
			return goaway, gotGoaway, nil
		}
	}
}

// RapidReset writes up to n pairs of a GET of path and its RST_STREAM
// (CVE-2023-44487), stopping when the server stops taking them; it
// reports how many it wrote.
func (r *Client) RapidReset(n int, path string) (sent int) {
	for i := 0; i < n; i++ {
		id := uint32(2*i + 1)
		if r.Get(id, path) != nil || r.fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
			break
		}
		sent++
	}
	return sent
}

// Refused opens n streams of GETs of path at once and reads until want
// of them were refused (REFUSED_STREAM, or PROTOCOL_ERROR past the
// advertised limit) or the connection ended; it reports how many were.
func (r *Client) Refused(n, want int, path string) (int, error) {
	for i := 0; i < n; i++ {
		if err := r.Get(uint32(2*i+1), path); err != nil {
			return 0, err
		}
	}
	refused := 0
	_, _, err := r.ReadUntil(func(f http2.Frame) bool {
		if rst, ok := f.(*http2.RSTStreamFrame); ok && (rst.ErrCode == http2.ErrCodeRefusedStream || rst.ErrCode == http2.ErrCodeProtocol) {
			refused++
		}
		return refused >= want
	})
	return refused, err
}

// HeaderBomb sends on stream 1 a GET of path with a header field of size
// bytes, in 16 KiB CONTINUATION frames, and reads what comes back: the
// status of a response, a reset of the stream, or a GOAWAY.
func (r *Client) HeaderBomb(path string, size int) (status string, reset, goaway bool, err error) {
	big := r.Headers(path, hpack.HeaderField{Name: "x-bomb", Value: strings.Repeat("a", size)})
	first, rest := big[:16<<10], big[16<<10:]
	if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: first, EndStream: true}); err != nil {
		return "", false, false, err
	}
	for len(rest) > 0 {
		k := min(len(rest), 16<<10)
		if r.fr.WriteContinuation(1, k == len(rest), rest[:k]) != nil {
			break // the server may have closed already
		}
		rest = rest[k:]
	}
	_, goaway, err = r.ReadUntil(func(f http2.Frame) bool {
		if h, ok := f.(*http2.HeadersFrame); ok {
			dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) {
				if f.Name == ":status" {
					status = f.Value
				}
			})
			_, _ = dec.Write(h.HeaderBlockFragment())
			return true
		}
		_, reset = f.(*http2.RSTStreamFrame)
		return reset
	})
	return status, reset, goaway, err
}

// NeverRead GETs path on stream 1 and, never sending a WINDOW_UPDATE,
// reads DATA until it has the initial window (65535 bytes, all the server
// may send); it reports how much it got.
func (r *Client) NeverRead(path string) (int, error) {
	if err := r.Get(1, path); err != nil {
		return 0, err
	}
	got := 0
	_, _, err := r.ReadUntil(func(f http2.Frame) bool {
		if d, ok := f.(*http2.DataFrame); ok {
			got += len(d.Data())
		}
		return got >= 65535
	})
	return got, err
}

// WaitGoroutines waits until the process's goroutines are back to at
// most want (a session's goroutines end asynchronously after its socket
// closed), for at most 20 seconds; it reports the count it saw last.
func WaitGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for i := 0; i < 400 && n > want; i++ {
		time.Sleep(50 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}
