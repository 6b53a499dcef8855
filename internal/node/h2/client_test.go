//lint:file-ignore SA1019 the tests run x/net/http2's Server directly, as a peer of the package's client.

package h2

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/vfs"
)

// openClient opens client session 1 on a fresh connection served by h
// and completes the handshake.
func openClient(t *testing.T, l *testLoop, n *testNet, h http.Handler) *Client {
	t.Helper()
	guest, host := n.pair(t)
	go (&http2.Server{}).ServeConn(host, &http2.ServeConnOpts{Handler: h})
	c := NewClient(l)
	t.Cleanup(c.Dispose)
	handshake, err := c.Open(context.Background(), 1, Options{}, take(guest))
	if err != nil {
		t.Fatal(err)
	}
	if err := handshake(); err != nil {
		t.Fatal(err)
	}
	return c
}

// readResponse collects stream sh's response: head, body and end.
func readResponse(t *testing.T, l *testLoop, c *Client, sh int) (head Event, body string, end Event) {
	t.Helper()
	var b bytes.Buffer
	for {
		ev := l.next(c.Accept)
		if ev.Stream != sh {
			t.Fatalf("event %+v of another stream", ev)
		}
		switch ev.Kind {
		case KindResponse:
			head = ev
		case KindResponseData:
			if len(ev.Data) > ChunkSize {
				t.Errorf("a chunk of %d bytes", len(ev.Data))
			}
			b.Write(ev.Data)
		case KindStreamEnd:
			return head, b.String(), ev
		}
	}
}

func header(list [][2]string, name string) string {
	for _, kv := range list {
		if kv[0] == name {
			return kv[1]
		}
	}
	return ""
}

// TestClient: the client against x/net's server on the VM's loopback:
// a GET with headers, a POST whose body and trailers come back, a 1 MiB
// body in bounded chunks, a ping, a cancelled stream the server sees
// reset, and a graceful close.
func TestClient(t *testing.T) {
	l, n := newTestLoop(t), newTestNet(t, netstack.Limits{})
	started, reset := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-greeting", "hi "+r.Header.Get("x-who"))
		io.WriteString(w, "hello")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "x-sum")
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
		w.Header().Set("x-sum", r.Trailer.Get("x-check"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("x"), 1<<20))
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
		close(reset)
	})
	c := openClient(t, l, n, mux)

	q := Request{Method: "GET", Path: "/hello", Scheme: "http", Authority: "guest", Headers: [][2]string{{"x-who", "guest"}}}
	if err := c.Request(1, 1, q, true); err != nil {
		t.Fatal(err)
	}
	head, body, end := readResponse(t, l, c, 1)
	if head.Status != 200 || header(head.Headers, "x-greeting") != "hi guest" || body != "hello" || end.Err != nil {
		t.Fatalf("GET: %+v %q %+v", head, body, end)
	}

	// Go's server keeps declared trailers only.
	q = Request{Method: "POST", Path: "/echo", Scheme: "http", Authority: "guest", Trailers: true, Headers: [][2]string{{"trailer", "x-check"}}}
	if err := c.Request(1, 3, q, false); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"one ", "two"} {
		send, err := c.Write(3, []byte(part))
		if err != nil {
			t.Fatal(err)
		}
		if err := send(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Trailers(3, [][2]string{{"x-check", "42"}}); err != nil {
		t.Fatal(err)
	}
	c.End(3)
	_, body, end = readResponse(t, l, c, 3)
	if body != "one two" || header(end.Trailers, "x-sum") != "42" {
		t.Fatalf("echo: %q, trailers %v (%v)", body, end.Trailers, end.Err)
	}

	if err := c.Request(1, 5, Request{Method: "GET", Path: "/big", Scheme: "http", Authority: "guest"}, true); err != nil {
		t.Fatal(err)
	}
	if _, body, end = readResponse(t, l, c, 5); len(body) != 1<<20 || end.Err != nil {
		t.Fatalf("big: %d bytes (%v)", len(body), end.Err)
	}

	ping, err := c.Ping(1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ping(); err != nil {
		t.Fatalf("ping: %v", err)
	}

	if err := c.Request(1, 7, Request{Method: "GET", Path: "/hang", Scheme: "http", Authority: "guest"}, true); err != nil {
		t.Fatal(err)
	}
	<-started
	c.Cancel(7)
	// The server sees the reset; the stream's own last events, posted
	// as it ended, are dropped by the bookkeeping.
	for done := false; !done; {
		select {
		case <-reset:
			done = true
		case it := <-l.ch:
			if c.Accept(it.ev.Kind, it.ev.Stream) {
				t.Fatalf("an event of a cancelled stream: %+v", it.ev)
			}
			if it.ack != nil {
				close(it.ack)
			}
		}
	}

	c.Close(1, true)
	if ev := l.next(c.Accept); ev.Kind != KindSessionEnd || ev.Session != 1 || ev.Err != nil {
		t.Fatalf("after close: %+v", ev)
	}
	if c.Alive() {
		t.Error("alive after its session ended")
	}
}

// TestClientBadCalls: what the guest may get wrong is an errno, never a
// panic.
func TestClientBadCalls(t *testing.T) {
	l, n := newTestLoop(t), newTestNet(t, netstack.Limits{})
	c := NewClient(l)
	defer c.Dispose()
	guest, host := n.pair(t)
	go (&http2.Server{}).ServeConn(host, &http2.ServeConnOpts{Handler: http.NotFoundHandler()})
	get := Request{Method: "GET", Path: "/", Scheme: "http", Authority: "guest"}
	wantErr(t, "request of no session", c.Request(9, 1, get, true), errno.EBADF)
	handshake, err := c.Open(context.Background(), 1, Options{MaxHeaderListSize: 1 << 40}, take(guest))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Open(context.Background(), 1, Options{}, func() (vfs.File, error) { t.Fatal("took a socket for a handle in use"); return nil, nil })
	wantErr(t, "handle in use", err, errno.EINVAL)
	wantErr(t, "before the handshake", c.Request(1, 1, get, true), errno.ENOTCONN)
	if err := handshake(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Request{{Path: "/", Scheme: "http", Authority: "a"}, {Method: "GET", Path: "no-slash ", Scheme: "http", Authority: "a"},
		{Method: "GET", Path: "/", Scheme: "http", Authority: "a", Headers: [][2]string{{"content-length", "-1"}}}} {
		wantErr(t, "bad request", c.Request(1, 1, bad, false), errno.EINVAL)
	}
	if err := c.Request(1, 1, get, true); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "stream in use", c.Request(1, 1, get, true), errno.EINVAL)
	_, err = c.Write(1, []byte("x"))
	wantErr(t, "write after the head ended the stream", err, errno.EPIPE)
	_, err = c.Write(99, []byte("x"))
	wantErr(t, "write of no stream", err, errno.EPIPE)
	wantErr(t, "trailers not declared", c.Trailers(1, nil), errno.EPIPE)
	if err := c.Request(1, 3, Request{Method: "POST", Path: "/", Scheme: "http", Authority: "a", Trailers: true}, false); err != nil {
		t.Fatal(err)
	}
	for _, f := range [][2]string{{"", "x"}, {"Upper", "x"}, {":path", "x"}, {"x", "a\r\nb"}, {"x", strings.Repeat("a", MaxHeaderList)}} {
		wantErr(t, "trailer "+f[0], c.Trailers(3, [][2]string{f}), errno.EINVAL)
	}
	_, err = c.Ping(9)
	wantErr(t, "ping of no session", err, errno.EBADF)
	// Calls on handles that are not there do nothing.
	c.End(99)
	c.Pause(99, true)
	c.Cancel(99)
	c.SetRef(99, false)
	c.Close(99, true)
}

// TestClientStreamLimit: a guest opening streams without end is refused
// past MaxStreams per session, however slow the server.
func TestClientStreamLimit(t *testing.T) {
	l, n := newTestLoop(t), newTestNet(t, netstack.Limits{})
	c := openClient(t, l, n, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	get := Request{Method: "GET", Path: "/", Scheme: "http", Authority: "guest"}
	for i := 0; i < MaxStreams; i++ {
		if err := c.Request(1, 1+2*i, get, true); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
	}
	wantErr(t, "one stream too many", c.Request(1, 1+2*MaxStreams, get, true), errno.EAGAIN)
	// A stream let go of makes room.
	c.Cancel(1)
	if err := c.Request(1, 1+2*MaxStreams, get, true); err != nil {
		t.Fatal(err)
	}
}

// TestClientHeaderBomb: a server answering with a header list over the
// session's limit fails the stream; the guest never sees the list.
func TestClientHeaderBomb(t *testing.T) {
	l, n := newTestLoop(t), newTestNet(t, netstack.Limits{})
	guest, host := n.pair(t)
	go func() { // a hand-driven server, free to break the rules
		fr := http2.NewFramer(host, host)
		preface := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(host, preface); err != nil {
			return
		}
		_ = fr.WriteSettings()
		var buf bytes.Buffer
		enc := hpack.NewEncoder(&buf)
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			if h, ok := f.(*http2.HeadersFrame); ok {
				buf.Reset()
				_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
				_ = enc.WriteField(hpack.HeaderField{Name: "x-bomb", Value: strings.Repeat("a", 200<<10)})
				block := buf.Bytes()
				_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: h.StreamID, BlockFragment: block[:16<<10]})
				for rest := block[16<<10:]; len(rest) > 0; {
					k := min(len(rest), 16<<10)
					if fr.WriteContinuation(h.StreamID, k == len(rest), rest[:k]) != nil {
						return
					}
					rest = rest[k:]
				}
			}
		}
	}()
	c := NewClient(l)
	defer c.Dispose()
	handshake, err := c.Open(context.Background(), 1, Options{}, take(guest))
	if err != nil {
		t.Fatal(err)
	}
	if err := handshake(); err != nil {
		t.Fatal(err)
	}
	if err := c.Request(1, 1, Request{Method: "GET", Path: "/", Scheme: "http", Authority: "guest"}, true); err != nil {
		t.Fatal(err)
	}
	for {
		ev := l.next(c.Accept)
		if ev.Kind == KindResponse {
			t.Fatalf("the guest saw the oversized head: %d fields", len(ev.Headers))
		}
		if ev.Kind == KindStreamEnd || ev.Kind == KindSessionEnd {
			if ev.Kind == KindStreamEnd && ev.Err == nil {
				t.Fatal("the stream ended without an error")
			}
			return
		}
	}
}
