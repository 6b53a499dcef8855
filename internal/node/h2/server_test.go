//lint:file-ignore SA1019 the tests run x/net/http2's ClientConn directly, as the peer of the package's server.

package h2

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/net/http2"

	"github.com/secexec/secexec/internal/node/h2/h2test"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/vfs"
)

// serve starts server session h on a fresh connection and returns the
// host's end, for a real client.
func serve(t *testing.T, s *Server, n *testNet, h int, o ServerOptions) net.Conn {
	t.Helper()
	guest, host := n.pair(t)
	if err := s.Serve(context.Background(), h, o, take(guest)); err != nil {
		t.Fatal(err)
	}
	return host
}

// goClient is x/net's client on host.
func goClient(t *testing.T, host net.Conn) *http2.ClientConn {
	t.Helper()
	cc, err := (&http2.Transport{}).NewClientConn(host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

type result struct {
	resp *http.Response
	body string
	err  error
}

// roundTrip runs req on cc off the test goroutine, which must keep
// running the loop meanwhile.
func roundTrip(cc *http2.ClientConn, req *http.Request) <-chan result {
	ch := make(chan result, 1)
	go func() {
		resp, err := cc.RoundTrip(req)
		if err != nil {
			ch <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		ch <- result{resp: resp, body: string(b), err: err}
	}()
	return ch
}

// TestServer: Go's client against the server on the VM's loopback: a
// request head with its wire id, a body and trailers delivered, a
// response in three operations run in order with trailers, a push the
// client refuses, and a reset whose code the client sees.
func TestServer(t *testing.T) {
	l, n := newTestLoop(t), newTestNet(t, netstack.Limits{})
	s := NewServer(l)
	defer s.Dispose()
	cc := goClient(t, serve(t, s, n, 1, ServerOptions{}))

	req, _ := http.NewRequest("POST", "http://guest/upload?q=1", strings.NewReader("request body"))
	req.Header.Set("x-client", "go")
	req.Header.Set("Trailer", "x-after")
	req.Trailer = http.Header{"X-After": {"done"}}
	res := roundTrip(cc, req)
	ev := l.next(s.Accept)
	if ev.Kind != KindRequest || ev.Session != 1 || ev.ID != 1 || ev.End || header(ev.Headers, ":path") != "/upload?q=1" ||
		header(ev.Headers, ":method") != "POST" || header(ev.Headers, "x-client") != "go" || ev.Headers[0][0] != ":method" {
		t.Fatalf("request: %+v", ev)
	}
	sh := ev.Stream
	var body bytes.Buffer
	for ev = l.next(s.Accept); ev.Kind == KindRequestData; ev = l.next(s.Accept) {
		body.Write(ev.Data)
	}
	if ev.Kind != KindRequestEnd || body.String() != "request body" || header(ev.Trailers, "x-after") != "done" {
		t.Fatalf("body %q, end %+v", body.String(), ev)
	}
	// Three operations queued at once run in the order asked.
	if err := s.Respond(sh, Response{Status: 201, Headers: [][2]string{{"x-guest", "yes"}, {"trailer", "x-sum"}}}, l.start); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(sh, []byte("answer"), l.start); err != nil {
		t.Fatal(err)
	}
	if err := s.End(sh, [][2]string{{"x-sum", "7"}}, l.start); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := l.op(); err != nil {
			t.Fatalf("operation: %v", err)
		}
	}
	r := <-res
	if r.err != nil || r.resp.StatusCode != 201 || r.resp.Header.Get("x-guest") != "yes" || r.body != "answer" || r.resp.Trailer.Get("x-sum") != "7" {
		t.Fatalf("response: %+v", r)
	}
	if _, sniffed := r.resp.Header["Content-Type"]; sniffed {
		t.Error("a content-type the guest did not set")
	}
	if ev = l.next(s.Accept); ev.Kind != KindServerStreamEnd || ev.Stream != sh || ev.Err != nil {
		t.Fatalf("stream end: %+v", ev)
	}

	// Stream 3: push refused by Go's client, then a reset with a code of
	// the guest's own.
	get, _ := http.NewRequest("GET", "http://guest/x", nil)
	res = roundTrip(cc, get)
	if ev = l.next(s.Accept); ev.Kind != KindRequest || ev.ID != 3 || !ev.End {
		t.Fatalf("second request: %+v", ev)
	}
	push, err := s.Push(ev.Stream, Request{Method: "GET", Path: "/pushed"})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "push to a client that disabled it", push(), errno.EOPNOTSUPP)
	s.Reset(ev.Stream, uint32(http2.ErrCodeRefusedStream))
	r = <-res
	var se http2.StreamError
	if !errors.As(r.err, &se) || se.Code != http2.ErrCodeRefusedStream {
		t.Fatalf("after the reset: %v", r.err)
	}
	if ev = l.next(s.Accept); ev.Kind != KindServerStreamEnd || ev.Err != nil {
		t.Fatalf("reset stream end: %+v", ev)
	}

	s.Close(1, true)
	if ev = l.next(s.Accept); ev.Kind != KindServerSessionEnd || ev.Session != 1 {
		t.Fatalf("after close: %+v", ev)
	}
	if s.Alive() {
		t.Error("alive after its session ended")
	}
}

// TestServerBadCalls: what the guest may get wrong is an errno.
func TestServerBadCalls(t *testing.T) {
	l, n := newTestLoop(t), newTestNet(t, netstack.Limits{})
	s := NewServer(l)
	defer s.Dispose()
	cc := goClient(t, serve(t, s, n, 1, ServerOptions{MaxConcurrentStreams: -1, MaxHeaderListSize: 1 << 40, InitialWindowSize: 1 << 40, MaxFrameSize: 1}))
	wantErr(t, "handle in use", s.Serve(context.Background(), 1, ServerOptions{}, nil), errno.EINVAL)
	wantErr(t, "respond to no stream", s.Respond(99, Response{Status: 200}, l.start), errno.EPIPE)
	wantErr(t, "write to no stream", s.Write(99, nil, l.start), errno.EPIPE)
	_, err := s.Push(99, Request{Path: "/"})
	wantErr(t, "push on no stream", err, errno.EPIPE)
	_, err = s.Push(99, Request{Path: "x"})
	wantErr(t, "push of a relative path", err, errno.EINVAL)

	get, _ := http.NewRequest("GET", "http://guest/", nil)
	res := roundTrip(cc, get)
	sh := l.next(s.Accept).Stream
	for _, st := range []int{0, 99, 1000} {
		wantErr(t, "status", s.Respond(sh, Response{Status: st}, l.start), errno.EINVAL)
	}
	wantErr(t, "bad header", s.Respond(sh, Response{Status: 200, Headers: [][2]string{{"x", "a\nb"}}}, l.start), errno.EINVAL)
	wantErr(t, "bad trailer", s.End(sh, [][2]string{{"X", "a"}}, l.start), errno.EINVAL)
	refuse := func(func() error) error { return errno.EAGAIN }
	// A refused operation leaves no gap: the next one still runs.
	wantErr(t, "operation refused", s.Respond(sh, Response{Status: 200}, refuse), errno.EAGAIN)
	if err := s.Respond(sh, Response{Status: 204, EndStream: true}, l.start); err != nil {
		t.Fatal(err)
	}
	if err := l.op(); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.err != nil || r.resp.StatusCode != 204 {
		t.Fatalf("response: %+v", r)
	}
	// After the end, the stream's operations fail.
	if err := s.Write(sh, []byte("late"), l.start); err == nil {
		if err := l.op(); !errors.Is(err, errno.EPIPE) {
			t.Errorf("write after the end: %v", err)
		}
	}
	s.Pause(99, true)
	s.Reset(99, 0)
	s.SetRef(99, false)
	s.Close(99, false)
}

// TestServerSessionLimit: past MaxServerSessions a Server refuses a
// session before it takes the socket.
func TestServerSessionLimit(t *testing.T) {
	l, n := newTestLoop(t), newTestNet(t, netstack.Limits{Sockets: 4 * MaxServerSessions})
	s := NewServer(l)
	defer s.Dispose()
	for h := 1; h <= MaxServerSessions; h++ {
		serve(t, s, n, h, ServerOptions{})
	}
	err := s.Serve(context.Background(), 0, ServerOptions{}, func() (vfs.File, error) {
		t.Fatal("took a socket past the limit")
		return nil, nil
	})
	wantErr(t, "one session too many", err, errno.EMFILE)
}

// rawClient is a hostile client on a fresh connection to server
// session h.
func rawClient(t *testing.T, s *Server, n *testNet, h int) *h2test.Client {
	t.Helper()
	r, err := h2test.NewClient(serve(t, s, n, h, ServerOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// startDrain runs the loop beside a hostile client, on a goroutine that
// is the Server's loop until stop: it accepts every event and calls
// answer (nil: no answer) for each request. stop waits until the loop
// returned and reports the requests it saw.
func startDrain(l *testLoop, s *Server, answer func(Event)) (stop func() int) {
	quit, seen := make(chan struct{}), make(chan int)
	go func() {
		requests := 0
		for {
			select {
			case it := <-l.ch:
				h := it.ev.Stream
				if it.ev.Kind == KindServerSessionEnd {
					h = it.ev.Session
				}
				s.Accept(it.ev.Kind, h)
				if it.ack != nil {
					close(it.ack)
				}
				if it.ev.Kind == KindRequest {
					requests++
					if answer != nil {
						answer(it.ev)
					}
				}
			case <-quit:
				seen <- requests
				return
			}
		}
	}()
	return func() int {
		close(quit)
		return <-seen
	}
}

// TestServerAttacks drives the server with hostile clients: a
// rapid-reset flood (CVE-2023-44487), more streams than the session
// allows, an oversized header list (an HPACK bomb) and a client that
// never reads. Each ends in a bounded way, and the goroutines go back
// down once the sessions are disposed of.
func TestServerAttacks(t *testing.T) {
	base := runtime.NumGoroutine()
	l, n := newTestLoop(t), newTestNet(t, netstack.Limits{})
	s := NewServer(l)

	t.Run("rapid reset", func(t *testing.T) {
		r := rawClient(t, s, n, 1)
		// The owner is busy while the flood comes (it drains its loop
		// only afterwards): the handlers that cannot hand their streams
		// over pile up, and x/net's defence ends the connection.
		const pairs = 20000
		sent := r.RapidReset(pairs, "/hang")
		stop := startDrain(l, s, nil)
		code, gotGoaway, err := r.ReadUntil(func(http2.Frame) bool { return false })
		requests := stop()
		t.Logf("rapid reset: %d pairs written, goaway %v %v, end %v, %d requests seen", sent, gotGoaway, code, err, requests)
		if !gotGoaway || code != http2.ErrCodeEnhanceYourCalm {
			t.Errorf("goaway %v, code %v", gotGoaway, code)
		}
		if requests >= pairs {
			t.Errorf("the owner saw %d of %d reset streams", requests, pairs)
		}
	})

	t.Run("too many streams", func(t *testing.T) {
		r := rawClient(t, s, n, 2)
		stop := startDrain(l, s, nil)
		defer stop()
		if refused, err := r.Refused(400, 400-ServerStreams, "/hang"); refused < 400-ServerStreams {
			t.Fatalf("%d streams over the limit refused (%v)", refused, err)
		}
	})

	t.Run("header list too large", func(t *testing.T) {
		r := rawClient(t, s, n, 3)
		// Requests of this session only: the streams of the last one
		// may still be coming in.
		requests := 0
		stop := startDrain(l, s, func(ev Event) {
			if ev.Session == 3 {
				requests++
			}
		})
		// 200 KiB of headers, over node's 64 KiB.
		status, rst, gotGoaway, err := r.HeaderBomb("/hello", 200<<10)
		stop()
		if status != "431" && !rst && !gotGoaway {
			t.Fatalf("oversized header list: status %q, no reset, no GOAWAY (%v)", status, err)
		}
		if requests != 0 {
			t.Fatalf("the owner saw the oversized request")
		}
	})

	t.Run("client never reads", func(t *testing.T) {
		r := rawClient(t, s, n, 4)
		// The owner answers with 8 MiB in 64 KiB writes, queued at once;
		// each write completes only when x/net took it.
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		stop := startDrain(l, s, func(ev Event) {
			if ev.Session != 4 {
				return
			}
			_ = s.Respond(ev.Stream, Response{Status: 200}, l.start)
			for i := 0; i < 128; i++ {
				_ = s.Write(ev.Stream, chunk, l.start)
			}
		})
		got, err := r.NeverRead("/big")
		stop()
		if err != nil || got != 65535 {
			t.Fatalf("got %d bytes (%v)", got, err)
		}
		// The respond and at most a few writes completed: the rest wait
		// on the window.
		done := 0
		for len(l.ops) > 0 {
			<-l.ops
			done++
		}
		if done > 8 {
			t.Errorf("%d of 129 operations completed against a client that never reads", done)
		}
	})

	s.Dispose()
	for len(l.ops) > 0 {
		<-l.ops
	}
	n.st.Close(context.Background())
	if got := h2test.WaitGoroutines(base + 10); got > base+10 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after dispose, %d before\n%s", got, base, buf[:runtime.Stack(buf, true)])
	}
}

// TestWireStreamID: the stream id read out of x/net's ResponseWriter is
// the id on the wire (1, 3, 5 for a client's requests), so an x/net
// whose writer changed shape fails here rather than silently falling
// back to counting.
func TestWireStreamID(t *testing.T) {
	srvSide, cliSide := net.Pipe()
	ids := make(chan uint32, 3)
	s2, hs, err := ServerOptions{}.newServer()
	if err != nil {
		t.Fatal(err)
	}
	go s2.ServeConn(srvSide, &http2.ServeConnOpts{BaseConfig: hs, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		id, ok := wireStreamID(w)
		if !ok {
			id = 0
		}
		ids <- id
	})})
	cc, err := (&http2.Transport{}).NewClientConn(cliSide)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	for _, want := range []uint32{1, 3, 5} {
		req, _ := http.NewRequest("GET", "http://guest/", nil)
		resp, err := cc.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := <-ids; got != want {
			t.Fatalf("stream id %d, want %d", got, want)
		}
	}
}
