package js

// The bridge of node's http2 module: thin adapters over internal/node/h2,
// which runs the sessions (golang.org/x/net/http2 on the guest's own
// kernel sockets, see its package doc). http2.js connects or accepts
// (net.connect, or tls.connect with ALPN h2, both through the kernel's
// policy and TLS) and then hands the descriptor over; JavaScript sees
// sessions and streams by handle and h2's events arrive on the loop.
// This file holds the client (http2.connect) and the events of both
// sides; bridge_http2_server.go the server.

import (
	"context"
	"encoding/json"
	"strconv"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/internal/node/h2"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

const (
	// maxH2Options bounds the JSON of a session's options, maxH2Request
	// that of a request's, a response's or a trailer's headers.
	maxH2Options = 4096
	maxH2Request = 1 << 20
)

// h2Kinds are the loop events of h2's events, as http2.js dispatches
// them; h2KindOf is the other way round.
var h2Kinds = map[h2.Kind]string{
	h2.KindResponse: "h2resp", h2.KindInformational: "h2info", h2.KindResponseData: "h2data",
	h2.KindStreamEnd: "h2end", h2.KindSessionEnd: "h2sessclose",
	h2.KindRequest: "h2sstream", h2.KindRequestData: "h2sdata", h2.KindRequestEnd: "h2sbodyend",
	h2.KindServerStreamEnd: "h2sclose", h2.KindServerSessionEnd: "h2ssessclose",
}

var h2KindOf = func() map[string]h2.Kind {
	m := make(map[string]h2.Kind, len(h2Kinds))
	for k, name := range h2Kinds {
		m[name] = k
	}
	return m
}()

// h2Loop is the runtime's loop as h2 reports to it.
type h2Loop struct{ r *rt }

func (l h2Loop) Post(ctx context.Context, ev h2.Event) bool {
	return l.r.post(ctx, h2LoopEvent(ev))
}

func (l h2Loop) Deliver(ctx context.Context, ev h2.Event) bool {
	_, acked := l.r.deliver(ctx, h2LoopEvent(ev))
	return acked
}

// h2LoopEvent is ev as http2.js receives it: the stream's handle (the
// session's for the ends of sessions; both for a request) and a JSON
// payload, an error as node's code with {message, rst}.
func h2LoopEvent(ev h2.Event) event {
	e := event{kind: h2Kinds[ev.Kind], a: ev.Stream, data: ev.Data}
	var payload any
	switch ev.Kind {
	case h2.KindSessionEnd, h2.KindServerSessionEnd:
		e.a = ev.Session
	case h2.KindRequest:
		e.a, e.b = ev.Session, ev.Stream
		payload = map[string]any{"session": ev.Session, "id": ev.ID, "headers": ev.Headers, "end": ev.End}
	case h2.KindResponse:
		payload = map[string]any{"status": ev.Status, "headers": ev.Headers, "end": ev.End}
	case h2.KindInformational:
		payload = map[string]any{"status": ev.Status, "headers": ev.Headers}
	}
	switch {
	case ev.Err != nil:
		var info h2.ErrorInfo
		e.code, info = h2.NodeError(ev.Err)
		payload = info
	case ev.Trailers != nil:
		payload = map[string]any{"trailers": ev.Trailers}
	}
	if payload != nil {
		b, _ := json.Marshal(payload)
		e.payload = string(b)
	}
	return e
}

// h2client is the process's HTTP/2 client, made on first use.
func (r *rt) h2client() *h2.Client {
	if r.h2c == nil {
		r.h2c = h2.NewClient(h2Loop{r})
	}
	return r.h2c
}

// h2server is the process's HTTP/2 server, made on first use.
func (r *rt) h2server() *h2.Server {
	if r.h2srv == nil {
		r.h2srv = h2.NewServer(h2Loop{r})
	}
	return r.h2srv
}

// h2Alive reports whether an HTTP/2 session or stream keeps the process
// alive.
func (r *rt) h2Alive() bool {
	return (r.h2c != nil && r.h2c.Alive()) || (r.h2srv != nil && r.h2srv.Alive())
}

// disposeH2 ends every client session of the process.
func (r *rt) disposeH2() {
	if r.h2c != nil {
		r.h2c.Dispose()
	}
}

// handleH2 delivers the HTTP/2 events of the loop, client and server;
// h2 drops those of a stream or session JavaScript let go of.
func (r *rt) handleH2(ev event) (bool, error) {
	k := h2KindOf[ev.kind]
	if k == h2.KindResponseData || k == h2.KindRequestData {
		defer close(ev.ack)
	}
	var live bool
	switch k {
	case h2.KindResponse, h2.KindInformational, h2.KindResponseData, h2.KindStreamEnd, h2.KindSessionEnd:
		live = r.h2client().Accept(k, ev.a)
	default:
		live = r.h2server().Accept(k, ev.a)
	}
	if !live {
		return true, nil
	}
	if k == h2.KindResponseData || k == h2.KindRequestData {
		ev.b = copy(r.scratch, ev.data)
	}
	return r.dispatchPayload(ev.kind, ev.a, ev.b, ev.code, ev.payload)
}

// handleH2Server delivers the server's events of the loop (handleH2
// tells the sides apart).
func (r *rt) handleH2Server(ev event) (bool, error) { return r.handleH2(ev) }

// takeSocket hands descriptor fd's socket to an HTTP/2 session, which
// owns it from now on: the descriptor leaves the guest's table, so
// nothing else reads or writes it.
func (r *rt) takeSocket(fd int) (vfs.File, error) {
	f, err := r.p.File(fd)
	if err != nil {
		return nil, err
	}
	_ = r.p.Close(fd)
	return f, nil
}

// h2JSON decodes the JSON argument s, at most max bytes, into v: EINVAL
// otherwise.
func h2JSON(s string, max int, v any) error {
	if len(s) > max || json.Unmarshal([]byte(s), v) != nil {
		return errno.EINVAL
	}
	return nil
}

// bridgeH2Open opens client session h on socket fd, which leaves the
// guest's descriptor table; the preface is sent as operation id
// ("h2open").
func bridgeH2Open(r *rt, a *callArgs) (*v8.Value, error) {
	fd, h, id := a.int(0), a.int(1), a.int(3)
	var o h2.Options
	if err := h2JSON(a.str(2), maxH2Options, &o); err != nil {
		return nil, err
	}
	c := r.h2client()
	handshake, err := c.Open(r.ctx, h, o, func() (vfs.File, error) { return r.takeSocket(fd) })
	if err != nil {
		return nil, err
	}
	if err := r.startOp("h2open", id, func(context.Context) (string, error) { return "", handshake() }); err != nil {
		c.Close(h, false)
		return nil, err
	}
	return nil, nil
}

// bridgeH2Request starts stream sh of session h with the request's head.
func bridgeH2Request(r *rt, a *callArgs) (*v8.Value, error) {
	var q h2.Request
	if err := h2JSON(a.str(2), maxH2Request, &q); err != nil {
		return nil, err
	}
	return nil, r.h2client().Request(a.int(0), a.int(1), q, a.bool(3))
}

// bridgeH2Write sends part of stream sh's request body as operation id
// ("h2write"), which completes when the peer took the bytes (flow
// control).
func bridgeH2Write(r *rt, a *callArgs) (*v8.Value, error) {
	send, err := r.h2client().Write(a.int(0), a.bytes(1))
	if err != nil {
		return nil, err
	}
	return nil, r.startOp("h2write", a.int(2), func(context.Context) (string, error) { return "", send() })
}

// bridgeH2Trailers sets the trailers stream sh sends after its body.
func bridgeH2Trailers(r *rt, a *callArgs) (*v8.Value, error) {
	var kv [][2]string
	if err := h2JSON(a.str(1), maxH2Request, &kv); err != nil {
		return nil, err
	}
	return nil, r.h2client().Trailers(a.int(0), kv)
}

// bridgeH2End ends stream sh's request body.
func bridgeH2End(r *rt, a *callArgs) (*v8.Value, error) {
	r.h2client().End(a.int(0))
	return nil, nil
}

// bridgeH2Pause pauses or resumes stream sh's response body.
func bridgeH2Pause(r *rt, a *callArgs) (*v8.Value, error) {
	r.h2client().Pause(a.int(0), a.bool(1))
	return nil, nil
}

// bridgeH2Cancel resets stream sh: the ClientConn sends RST_STREAM
// CANCEL (x/net/http2 chooses the code, so the one http2.js passes is
// not used).
func bridgeH2Cancel(r *rt, a *callArgs) (*v8.Value, error) {
	r.h2client().Cancel(a.int(0))
	return nil, nil
}

// bridgeH2Ref sets whether session h keeps the process alive.
func bridgeH2Ref(r *rt, a *callArgs) (*v8.Value, error) {
	r.h2client().SetRef(a.int(0), a.bool(1))
	return nil, nil
}

// bridgeH2Close closes session h, gracefully or at once.
func bridgeH2Close(r *rt, a *callArgs) (*v8.Value, error) {
	r.h2client().Close(a.int(0), a.bool(1))
	return nil, nil
}

// bridgeH2Ping pings session h as operation id ("h2ping"), whose
// payload is the round trip in milliseconds under the VM's clock.
func bridgeH2Ping(r *rt, a *callArgs) (*v8.Value, error) {
	ping, err := r.h2client().Ping(a.int(0))
	if err != nil {
		return nil, err
	}
	clk := r.p.Kernel().Clock()
	return nil, r.startOp("h2ping", a.int(1), func(context.Context) (string, error) {
		d, err := ping()
		if err != nil {
			return "", err
		}
		// The round trip is a timer too: shown under the VM's clock.
		rtt := clk.Duration(d)
		return strconv.FormatFloat(float64(rtt.Microseconds())/1000, 'f', 3, 64), nil
	})
}
