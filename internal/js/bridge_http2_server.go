//lint:file-ignore SA1019 x/net/http2's Server is deprecated in favour of net/http's, which serves a listener of its own and recognises TLS only on a *tls.Conn; a session runs on one accepted guest socket (TLS done by the kernel), which ServeConn takes as is, and the stream ids node shows are read from x/net's ResponseWriter (wireStreamID).

package js

// The HTTP/2 server behind node's http2.createServer and
// createSecureServer. As for the client (bridge_http2.go), the protocol
// runs in Go: golang.org/x/net/http2's Server.ServeConn over the guest's
// own accepted kernel socket (TLS, when there is any, already done by the
// kernel with ALPN h2). That route was chosen over framing in Go with the
// stream state machine in JavaScript because x/net/http2 brings, tested
// and maintained, every bound the server needs against a hostile client:
// SETTINGS_MAX_CONCURRENT_STREAMS enforced, header lists bounded before
// they are decoded in full (HPACK bombs), receive windows that bound what
// a client may send before the guest reads, a cap on queued control
// frames, and the rapid-reset defence (CVE-2023-44487: handlers that have
// not started are counted, a flood ends the connection with
// ENHANCE_YOUR_CALM). A JavaScript state machine would have to re-earn
// each of those; the price is that a few nghttp2 details node exposes
// (the RST_STREAM code of a server's stream.close, server-sent PINGs,
// arbitrary SETTINGS) are not reachable through x/net's API.
//
// Each request runs x/net's handler on its own goroutine: it posts the
// stream to the loop, streams the request body one delivered chunk at a
// time (pausable, so the flow-control window is the bound), then waits
// until JavaScript ended the response, reset the stream, or the peer or
// the session went away. JavaScript's respond/write/end calls become
// operations on the stream's ResponseWriter, one at a time.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	v8 "github.com/tommie/v8go"
	"golang.org/x/net/http2"

	"github.com/secexec/secexec/kernel/errno"
)

const (
	// maxH2ServerSessions bounds the server sessions of one process: each
	// holds a socket that left the guest's descriptor table, so the table's
	// own limit no longer counts it.
	maxH2ServerSessions = 256
	// h2ServerStreams is the most concurrent streams a session allows a
	// client (node's default is unbounded; each stream is a goroutine
	// here), and the default when the guest asks for none.
	h2ServerStreams = 128
	// h2ServerIdle ends a session no stream used for this long, so an idle
	// client does not hold a session for ever.
	h2ServerIdle = 10 * time.Minute
)

// discardLog keeps x/net's complaints about a misbehaving client (the
// guest's peer) out of the host's log.
var discardLog = log.New(io.Discard, "", 0)

// h2srvSession is one accepted HTTP/2 connection.
type h2srvSession struct {
	h      int
	ref    bool
	ctx    context.Context
	cancel context.CancelFunc
	conn   *h2conn
	hs     *http.Server // x/net's graceful shutdown hangs off its Shutdown
	scheme string

	mu      sync.Mutex
	ordinal int               // requests seen, for the stream ids node shows
	rst     map[uint32]uint32 // RST_STREAM codes the guest chose, by stream id (h2srvConn)
}

// h2srvStream is one request being answered.
type h2srvStream struct {
	sess *h2srvSession
	h    int
	id   uint32 // the stream's id, as far as the session can tell
	w    http.ResponseWriter
	req  *http.Request
	rd   *reader // the request body's pause state

	// JavaScript's operations on w run one at a time, in the order it
	// asked for them: each takes a ticket on the loop and waits its turn.
	opMu   sync.Mutex
	opCond *sync.Cond
	ticket uint64 // the next ticket (loop goroutine)
	turn   uint64 // the ticket whose turn it is

	// ops are the operations on w under way; once it is shut, none may
	// start.
	ops  gate
	done chan struct{} // closed when JavaScript ended or reset the stream
	once sync.Once

	mu      sync.Mutex
	reset   bool   // ended by a reset rather than by the end of the response
	rstCode uint32 // the code of that reset
	err     error  // why the request body failed, if it did
}

// await blocks until it is ticket t's turn.
func (st *h2srvStream) await(t uint64) {
	st.opMu.Lock()
	for st.turn != t {
		st.opCond.Wait()
	}
	st.opMu.Unlock()
}

// next gives the turn to the following ticket.
func (st *h2srvStream) next() {
	st.opMu.Lock()
	st.turn++
	st.opMu.Unlock()
	st.opCond.Broadcast()
}

// finish lets the handler return: after the response ended normally, or
// (reset) by resetting the stream.
func (st *h2srvStream) finish(reset bool) {
	st.once.Do(func() {
		st.ops.shut()
		st.mu.Lock()
		st.reset = reset
		st.mu.Unlock()
		close(st.done)
	})
}

// h2srvRegistry holds the server streams of a process: their goroutines
// add and remove them, the loop looks them up.
type h2srvRegistry struct {
	mu      sync.Mutex
	next    int
	streams map[int]*h2srvStream
}

func (g *h2srvRegistry) add(st *h2srvStream) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.streams) >= maxHandles {
		return false
	}
	g.next++
	st.h = g.next
	g.streams[st.h] = st
	return true
}

func (g *h2srvRegistry) get(h int) *h2srvStream {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.streams[h]
}

func (g *h2srvRegistry) remove(h int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.streams, h)
}

// h2srvOptions is what http2.js asks of a new server session.
type h2srvOptions struct {
	MaxConcurrentStreams int  `json:"maxConcurrentStreams"`
	MaxHeaderListSize    int  `json:"maxHeaderListSize"`
	InitialWindowSize    int  `json:"initialWindowSize"`
	MaxFrameSize         int  `json:"maxFrameSize"`
	Encrypted            bool `json:"encrypted"`
}

// newServer bounds a session whatever the guest asked: streams, header
// list, frame size and the receive windows that bound what a client may
// send before the guest reads it.
func (o h2srvOptions) newServer() (*http2.Server, *http.Server, error) {
	streams := o.MaxConcurrentStreams
	if streams <= 0 || streams > h2ServerStreams {
		streams = h2ServerStreams
	}
	hdr := o.MaxHeaderListSize
	if hdr <= 0 {
		hdr = h2DefaultHeaderList
	}
	hdr = min(hdr, h2MaxHeaderList)
	win := o.InitialWindowSize
	if win <= 0 || win > h2StreamWindow {
		win = h2StreamWindow
	}
	frame := o.MaxFrameSize
	if frame < 16384 || frame > 1<<20 {
		frame = 16384
	}
	s2 := &http2.Server{
		MaxConcurrentStreams:         uint32(streams),
		MaxReadFrameSize:             uint32(frame),
		MaxUploadBufferPerStream:     int32(win),
		MaxUploadBufferPerConnection: h2ConnWindow,
		IdleTimeout:                  h2ServerIdle,
	}
	hs := &http.Server{MaxHeaderBytes: hdr, ErrorLog: discardLog}
	if err := http2.ConfigureServer(hs, s2); err != nil {
		return nil, nil, err
	}
	return s2, hs, nil
}

// h2srvHead is a request head as the 'stream' event shows it.
type h2srvHead struct {
	Session int         `json:"session"`
	ID      int         `json:"id"`
	Headers [][2]string `json:"headers"`
	End     bool        `json:"end"`
}

// requestHead lists the pseudo-headers node shows first, then the
// request's headers in a fixed order (Go keeps no wire order).
func requestHead(req *http.Request, scheme string) [][2]string {
	out := [][2]string{{":method", req.Method}, {":authority", req.Host}, {":scheme", scheme}, {":path", req.RequestURI}}
	if req.Method == http.MethodConnect {
		out = [][2]string{{":method", req.Method}, {":authority", req.Host}}
	}
	keys := make([]string, 0, len(req.Header))
	for k := range req.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		lk := strings.ToLower(k)
		for _, v := range req.Header[k] {
			out = append(out, [2]string{lk, v})
		}
	}
	return out
}

// serveStream is x/net's handler: it runs for each request of session s.
func (r *rt) serveStream(s *h2srvSession, w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	st := &h2srvStream{sess: s, w: w, req: req, done: make(chan struct{})}
	st.opCond = sync.NewCond(&st.opMu)
	// A request that waits for 100-continue gets it when the guest first
	// reads the body: its reader starts paused.
	rd := &reader{ref: false, cancel: func() {}, resume: make(chan struct{})}
	if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		rd.paused = true
	} else {
		close(rd.resume)
	}
	st.rd = rd
	if !r.h2srv.add(st) {
		panic(http.ErrAbortHandler) // resets the stream
	}
	defer r.h2srv.remove(st.h)
	s.mu.Lock()
	s.ordinal++
	id := 2*s.ordinal - 1
	s.mu.Unlock()
	if wid, ok := wireStreamID(w); ok {
		id = int(wid)
	}
	st.id = uint32(id)
	// x/net leaves ContentLength 0 only for a request that ended with its
	// headers, or that declared a zero content-length.
	_, declared := req.Header["Content-Length"]
	endStream := req.ContentLength == 0 && !declared
	head, _ := json.Marshal(h2srvHead{Session: s.h, ID: id, Headers: requestHead(req, s.scheme), End: endStream})
	if !r.post(s.ctx, event{kind: "h2sstream", a: s.h, b: st.h, payload: string(head)}) {
		return
	}
	closed := func(code string, payload string) {
		r.post(s.ctx, event{kind: "h2sclose", a: st.h, code: code, payload: payload})
	}
	if !endStream {
		// The body is read beside the handler, which must stay free to
		// end the stream while the client still sends (or holds) it:
		// x/net closes the body when the handler returns, which ends
		// the read.
		go func() {
			if err := r.readRequestBody(ctx, st); err != nil && ctx.Err() == nil {
				st.mu.Lock()
				st.err = err
				st.mu.Unlock()
				st.finish(true)
			}
		}()
	}
	select {
	case <-st.done:
	case <-ctx.Done():
		// The client reset the stream or the session ended: the guest's
		// operations on w fail from now on.
		st.finish(true)
		code, p := h2ErrPayload(context.Cause(ctx))
		closed(code, p)
		return
	}
	st.mu.Lock()
	reset, bodyErr := st.reset, st.err
	st.mu.Unlock()
	if bodyErr != nil {
		code, p := h2ErrPayload(bodyErr)
		closed(code, p)
		panic(http.ErrAbortHandler)
	}
	if reset {
		if code := st.rstCode; code != uint32(http2.ErrCodeInternal) {
			s.mu.Lock()
			if len(s.rst) < maxH2Streams {
				s.rst[st.id] = code
			}
			s.mu.Unlock()
		}
		// x/net resets a stream whose handler panics with ErrAbortHandler
		// (RST_STREAM INTERNAL_ERROR), without touching w again, so a
		// write blocked on flow control may still hold it.
		closed("", "")
		panic(http.ErrAbortHandler)
	}
	// x/net flushes and ends the stream once the handler returns, which
	// must wait for the operations that still hold w.
	st.ops.ops.Wait()
	closed("", "")
}

// readRequestBody delivers the request body of st one chunk at a time,
// then its end (with trailers).
func (r *rt) readRequestBody(ctx context.Context, st *h2srvStream) error {
	for {
		if !st.rd.waitResumed(ctx) {
			return context.Cause(ctx)
		}
		buf := make([]byte, readChunk)
		n, err := st.req.Body.Read(buf)
		if n > 0 {
			if _, acked := r.deliver(ctx, event{kind: "h2sdata", a: st.h, data: buf[:n]}); !acked {
				return context.Cause(ctx)
			}
		}
		if err == io.EOF {
			payload := ""
			if len(st.req.Trailer) > 0 {
				b, _ := json.Marshal(map[string]any{"trailers": h2Headers(st.req.Trailer)})
				payload = string(b)
			}
			r.post(ctx, event{kind: "h2sbodyend", a: st.h, payload: payload})
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// h2srvResponse is a response head or trailers from http2.js.
type h2srvResponse struct {
	Status    int         `json:"status"`
	Headers   [][2]string `json:"headers"`
	EndStream bool        `json:"endStream"`
	// NoDate: node's respond({sendDate: false}) sends no date header,
	// which x/net would add.
	NoDate bool `json:"noDate"`
}

// streamOp runs op on w as JavaScript's next operation on stream sh; its
// result comes back as an "h2sop" event with id. end finishes the stream
// after a successful op.
func (r *rt) streamOp(sh, id int, end bool, op func(w http.ResponseWriter) error) error {
	st := r.h2srv.get(sh)
	if st == nil {
		return errno.EPIPE
	}
	t := st.ticket
	err := r.startOp("h2sop", id, func(context.Context) (string, error) {
		st.await(t)
		defer st.next()
		if !st.ops.begin() {
			return "", errno.EPIPE
		}
		err := op(st.w)
		st.ops.ops.Done()
		if err != nil {
			return "", errno.EPIPE
		}
		if end {
			st.finish(false)
		}
		return "", nil
	})
	if err == nil {
		st.ticket++
	}
	return err
}

// validHeaderField reports whether a header field may go on the wire
// (http2.js validated it already; this keeps x/net from being handed
// anything it would refuse with a panic or a broken frame).
func validHeaderField(k, v string) bool {
	if k == "" || len(k)+len(v) > h2MaxHeaderList {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c <= ' ' || c >= 0x7f || c == ':' || (c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return !strings.ContainsAny(v, "\r\n\x00")
}

func (r *rt) disposeH2Server() {
	for _, s := range r.h2ss {
		s.cancel()
		_ = s.conn.Close()
	}
}

// handleH2Server delivers the server's events of the loop.
func (r *rt) handleH2Server(ev event) (bool, error) {
	switch ev.kind {
	case "h2sdata":
		defer close(ev.ack)
		n := copy(r.scratch, ev.data)
		return r.dispatchPayload(ev.kind, ev.a, n, "", "")
	case "h2ssessclose":
		if r.h2ss[ev.a] == nil {
			return true, nil
		}
		delete(r.h2ss, ev.a)
	}
	return r.dispatchPayload(ev.kind, ev.a, ev.b, ev.code, ev.payload)
}

func init() {
	register("h2sServe", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		fd, err1 := argInt(args, 0)
		h, err2 := argInt(args, 1)
		js, err3 := argString(args, 2)
		if err1 != nil || err2 != nil || err3 != nil || len(js) > 4096 {
			return nil, errno.EINVAL
		}
		var o h2srvOptions
		if json.Unmarshal([]byte(js), &o) != nil {
			return nil, errno.EINVAL
		}
		if len(r.h2ss) >= maxH2ServerSessions {
			return nil, errno.EMFILE
		}
		if _, dup := r.h2ss[h]; dup {
			return nil, errno.EINVAL
		}
		s2, hs, err := o.newServer()
		if err != nil {
			return nil, errno.EINVAL
		}
		f, err := r.takeSocket(fd)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(r.ctx)
		s := &h2srvSession{h: h, ref: true, ctx: ctx, cancel: cancel, conn: newH2Conn(ctx, f), hs: hs, scheme: "http", rst: map[uint32]uint32{}}
		if o.Encrypted {
			s.scheme = "https"
		}
		r.h2ss[h] = s
		go func() {
			s2.ServeConn(&h2srvConn{h2conn: s.conn, s: s}, &http2.ServeConnOpts{
				Context:    ctx,
				BaseConfig: hs,
				Handler:    http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { r.serveStream(s, w, req) }),
			})
			_ = s.conn.Close()
			cancel()
			<-s.conn.done // err is set before done closes
			ev := event{kind: "h2ssessclose", a: h}
			if err := s.conn.err; err != nil {
				ev.code, ev.payload = h2ErrPayload(err)
			}
			r.post(r.ctx, ev)
		}()
		return nil, nil
	})
	register("h2sRespond", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		sh, err1 := argInt(args, 0)
		js, err2 := argString(args, 1)
		id, err3 := argInt(args, 2)
		if err1 != nil || err2 != nil || err3 != nil || len(js) > maxH2Request {
			return nil, errno.EINVAL
		}
		var resp h2srvResponse
		if json.Unmarshal([]byte(js), &resp) != nil || resp.Status < 100 || resp.Status > 999 {
			return nil, errno.EINVAL
		}
		for _, kv := range resp.Headers {
			if !validHeaderField(kv[0], kv[1]) {
				return nil, errno.EINVAL
			}
		}
		return nil, r.streamOp(sh, id, resp.EndStream, func(w http.ResponseWriter) error {
			h := w.Header()
			for _, kv := range resp.Headers {
				k := http.CanonicalHeaderKey(kv[0])
				h[k] = append(h[k], kv[1])
			}
			// Go would sniff a content-type and count a content-length:
			// node sends neither unless asked.
			for _, k := range []string{"Content-Type", "Content-Length"} {
				if _, ok := h[k]; !ok && resp.Status >= 200 {
					h[k] = nil
				}
			}
			if _, ok := h["Date"]; !ok && resp.NoDate && resp.Status >= 200 {
				h["Date"] = nil
			}
			w.WriteHeader(resp.Status)
			if resp.Status < 200 {
				// An informational head (103, 100) goes out at once; the
				// final one may follow.
				for _, kv := range resp.Headers {
					delete(h, http.CanonicalHeaderKey(kv[0]))
				}
				return nil
			}
			if resp.EndStream {
				// The head goes out with END_STREAM when the handler
				// returns, as one HEADERS frame.
				return nil
			}
			return http.NewResponseController(w).Flush()
		})
	})
	register("h2sWrite", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		sh, err1 := argInt(args, 0)
		n, err2 := argInt(args, 1)
		id, err3 := argInt(args, 2)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, errno.EINVAL
		}
		b, err := r.bytesArg(n)
		if err != nil {
			return nil, err
		}
		data := append([]byte(nil), b...)
		// The write completes when x/net took the bytes, which waits on the
		// peer's flow-control window: a client that never reads holds
		// one chunk here and the guest's stream stops draining.
		return nil, r.streamOp(sh, id, false, func(w http.ResponseWriter) error {
			if _, err := w.Write(data); err != nil {
				return err
			}
			return http.NewResponseController(w).Flush()
		})
	})
	register("h2sEnd", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		sh, err1 := argInt(args, 0)
		js, err2 := argString(args, 1)
		id, err3 := argInt(args, 2)
		if err1 != nil || err2 != nil || err3 != nil || len(js) > maxH2Request {
			return nil, errno.EINVAL
		}
		var trailers [][2]string
		if js != "" && json.Unmarshal([]byte(js), &trailers) != nil {
			return nil, errno.EINVAL
		}
		for _, kv := range trailers {
			if !validHeaderField(kv[0], kv[1]) {
				return nil, errno.EINVAL
			}
		}
		return nil, r.streamOp(sh, id, true, func(w http.ResponseWriter) error {
			h := w.Header()
			for _, kv := range trailers {
				h.Add(http.TrailerPrefix+kv[0], kv[1])
			}
			return nil
		})
	})
	register("h2sReset", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		sh, err1 := argInt(args, 0)
		code, err2 := argInt(args, 1)
		if st := r.h2srv.get(sh); st != nil && err1 == nil {
			if err2 != nil || code < 0 || code > 0xffffffff {
				code = int(http2.ErrCodeCancel)
			}
			st.mu.Lock()
			st.rstCode = uint32(code)
			st.mu.Unlock()
			st.finish(true)
		}
		return nil, nil
	})
	register("h2sPause", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		sh, err := argInt(args, 0)
		if st := r.h2srv.get(sh); st != nil && err == nil {
			st.rd.setPaused(argBool(args, 1))
		}
		return nil, nil
	})
	register("h2sPush", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		sh, err1 := argInt(args, 0)
		js, err2 := argString(args, 1)
		id, err3 := argInt(args, 2)
		if err1 != nil || err2 != nil || err3 != nil || len(js) > maxH2Request {
			return nil, errno.EINVAL
		}
		var q h2Req
		if json.Unmarshal([]byte(js), &q) != nil || !strings.HasPrefix(q.Path, "/") {
			return nil, errno.EINVAL
		}
		st := r.h2srv.get(sh)
		if st == nil {
			return nil, errno.EPIPE
		}
		return nil, r.startOp("h2spush", id, func(context.Context) (string, error) {
			p, ok := st.w.(http.Pusher)
			if !ok || !st.ops.begin() {
				return "", errno.EPIPE
			}
			defer st.ops.ops.Done()
			hdr := http.Header{}
			for _, kv := range q.Headers {
				hdr.Add(kv[0], kv[1])
			}
			err := p.Push(q.Path, &http.PushOptions{Method: q.Method, Header: hdr})
			switch {
			case err == nil:
				return "", nil
			case errors.Is(err, http.ErrNotSupported):
				return "", errno.EOPNOTSUPP
			}
			return "", errno.EINVAL
		})
	})
	register("h2sRef", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		h, err := argInt(args, 0)
		if s := r.h2ss[h]; s != nil && err == nil {
			s.ref = argBool(args, 1)
		}
		return nil, nil
	})
	register("h2sClose", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		h, err := argInt(args, 0)
		s := r.h2ss[h]
		if s == nil || err != nil {
			return nil, nil
		}
		if !argBool(args, 1) {
			s.cancel()
			_ = s.conn.Close()
			return nil, nil
		}
		// GOAWAY, the open streams finish, then the connection closes.
		go func() {
			ctx, cancel := context.WithTimeout(s.ctx, h2ServerIdle)
			defer cancel()
			_ = s.hs.Shutdown(ctx)
		}()
		return nil, nil
	})
}

// h2srvConn is a server session's socket. It rewrites the error code of
// the RST_STREAM frames x/net writes for streams the guest reset with a
// code of its own: x/net resets an abandoned stream with INTERNAL_ERROR
// only, while node's stream.close(code) sends code. Only the code of a
// frame the session asked for is changed; the frames themselves pass
// through as x/net wrote them.
type h2srvConn struct {
	*h2conn
	s *h2srvSession

	hdr   [9]byte // the frame header being read
	nh    int     // bytes of hdr seen
	left  int     // payload bytes of the current frame still to pass
	off   int     // payload bytes of the current frame passed
	code  [4]byte // the code to write into the current RST_STREAM
	recod bool    // whether the current frame's code is rewritten
}

func (c *h2srvConn) Write(b []byte) (int, error) {
	var out []byte // a copy of b, made once a byte changes
	for i := 0; i < len(b); {
		if c.left == 0 {
			take := min(9-c.nh, len(b)-i)
			copy(c.hdr[c.nh:], b[i:i+take])
			c.nh += take
			i += take
			if c.nh < 9 {
				continue
			}
			c.nh, c.off = 0, 0
			c.left = int(c.hdr[0])<<16 | int(c.hdr[1])<<8 | int(c.hdr[2])
			c.recod = false
			if c.hdr[3] == 0x3 && c.left == 4 {
				id := binary.BigEndian.Uint32(c.hdr[5:]) & 0x7fffffff
				if code, ok := c.s.takeRst(id); ok {
					binary.BigEndian.PutUint32(c.code[:], code)
					c.recod = true
				}
			}
			continue
		}
		take := min(c.left, len(b)-i)
		if c.recod {
			if out == nil {
				out = append([]byte(nil), b...)
			}
			for k := 0; k < take; k++ {
				out[i+k] = c.code[c.off+k]
			}
		}
		c.left -= take
		c.off += take
		i += take
	}
	if out == nil {
		out = b
	}
	return c.h2conn.Write(out)
}

// takeRst returns (and forgets) the RST_STREAM code the guest chose for
// stream id.
func (s *h2srvSession) takeRst(id uint32) (uint32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	code, ok := s.rst[id]
	delete(s.rst, id)
	return code, ok
}

// wireStreamID reads the stream id x/net keeps in its ResponseWriter
// (w.rws.stream.id): its API has no other way to it, and node shows the
// id (stream.id) and resets by it. reflect reads the unexported fields
// without writing them; a shape it does not find (another x/net) falls
// back to counting requests, exact while handlers start in order.
func wireStreamID(w http.ResponseWriter) (uint32, bool) {
	v := reflect.ValueOf(w)
	for _, name := range []string{"rws", "stream", "id"} {
		if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
			return 0, false
		}
		v = v.Elem().FieldByName(name)
		if !v.IsValid() {
			return 0, false
		}
	}
	if v.Kind() != reflect.Uint32 {
		return 0, false
	}
	return uint32(v.Uint()), true
}
