//lint:file-ignore SA1019 x/net/http2's Server is deprecated in favour of net/http's, which serves a listener of its own and recognises TLS only on a *tls.Conn; a session runs on one accepted guest socket (TLS done by the kernel), which ServeConn takes as is, and the stream ids node shows are read from x/net's ResponseWriter (wireStreamID).

package h2

// The server behind node's http2.createServer and createSecureServer:
// golang.org/x/net/http2's Server.ServeConn over the guest's own accepted
// kernel socket (TLS, when there is any, already done by the kernel with
// ALPN h2). That route was chosen over framing in Go with the stream
// state machine in JavaScript because x/net/http2 brings, tested and
// maintained, every bound the server needs against a hostile client:
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
// until the owner ended the response, reset the stream, or the peer or
// the session went away. The owner's Respond, Write and End become
// operations on the stream's ResponseWriter, one at a time.

import (
	"context"
	"encoding/binary"
	"errors"
	"github.com/secexec/secexec/internal/valve"
	"io"
	"log"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// ServerIdle ends a server session no stream used for this long, so an
// idle client does not hold a session for ever.
const ServerIdle = 10 * time.Minute

// discardLog keeps x/net's complaints about a misbehaving client (the
// guest's peer) out of the host's log.
var discardLog = log.New(io.Discard, "", 0)

// Server holds the HTTP/2 server sessions of one owner, by the handles
// the owner chose, and their streams, by handles the Server gives them.
type Server struct {
	loop     Loop
	sessions map[int]*serverSession // loop goroutine only
	reg      registry
}

// NewServer returns a Server reporting to loop.
func NewServer(loop Loop) *Server {
	return &Server{loop: loop, sessions: map[int]*serverSession{}, reg: registry{streams: map[int]*serverStream{}}}
}

// serverSession is one accepted HTTP/2 connection.
type serverSession struct {
	h      int
	ref    bool
	ctx    context.Context
	cancel context.CancelFunc
	conn   *conn
	hs     *http.Server // x/net's graceful shutdown hangs off its Shutdown
	scheme string

	mu      sync.Mutex
	ordinal int               // requests seen, for the stream ids node shows
	rst     map[uint32]uint32 // RST_STREAM codes the owner chose, by stream id (rstConn)
}

// serverStream is one request being answered.
type serverStream struct {
	sess  *serverSession
	h     int
	id    uint32 // the stream's id, as far as the session can tell
	w     http.ResponseWriter
	req   *http.Request
	pause *valve.Valve // the request body's

	// The owner's operations on w run one at a time, in the order it
	// asked for them: each takes a ticket on the loop and waits its turn.
	opMu   sync.Mutex
	opCond *sync.Cond
	ticket uint64 // the next ticket (loop goroutine)
	turn   uint64 // the ticket whose turn it is

	// ops are the operations on w under way; once it is shut, none may
	// start.
	ops  gate
	done chan struct{} // closed when the owner ended or reset the stream
	once sync.Once

	mu      sync.Mutex
	reset   bool   // ended by a reset rather than by the end of the response
	rstCode uint32 // the code of that reset
	err     error  // why the request body failed, if it did
}

// await blocks until it is ticket t's turn.
func (st *serverStream) await(t uint64) {
	st.opMu.Lock()
	for st.turn != t {
		st.opCond.Wait()
	}
	st.opMu.Unlock()
}

// next gives the turn to the following ticket.
func (st *serverStream) next() {
	st.opMu.Lock()
	st.turn++
	st.opMu.Unlock()
	st.opCond.Broadcast()
}

// finish lets the handler return: after the response ended normally, or
// (reset) by resetting the stream.
func (st *serverStream) finish(reset bool) {
	st.once.Do(func() {
		st.ops.shut()
		st.mu.Lock()
		st.reset = reset
		st.mu.Unlock()
		close(st.done)
	})
}

// registry holds the streams of a Server: their goroutines add and
// remove them, the loop looks them up.
type registry struct {
	mu      sync.Mutex
	next    int
	streams map[int]*serverStream
}

func (g *registry) add(st *serverStream) bool {
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

func (g *registry) get(h int) *serverStream {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.streams[h]
}

func (g *registry) remove(h int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.streams, h)
}

// ServerOptions is what the guest asks of a new server session. Each
// value is bounded whatever it asks (zero: the default).
type ServerOptions struct {
	MaxConcurrentStreams int  `json:"maxConcurrentStreams"`
	MaxHeaderListSize    int  `json:"maxHeaderListSize"`
	InitialWindowSize    int  `json:"initialWindowSize"`
	MaxFrameSize         int  `json:"maxFrameSize"`
	Encrypted            bool `json:"encrypted"`
}

// newServer bounds a session whatever the guest asked: streams, header
// list, frame size and the receive windows that bound what a client may
// send before the guest reads it.
func (o ServerOptions) newServer() (*http2.Server, *http.Server, error) {
	streams := o.MaxConcurrentStreams
	if streams <= 0 || streams > ServerStreams {
		streams = ServerStreams
	}
	hdr := o.MaxHeaderListSize
	if hdr <= 0 {
		hdr = DefaultHeaderList
	}
	hdr = min(hdr, MaxHeaderList)
	win := o.InitialWindowSize
	if win <= 0 || win > StreamWindow {
		win = StreamWindow
	}
	frame := o.MaxFrameSize
	if frame < 16384 || frame > 1<<20 {
		frame = 16384
	}
	s2 := &http2.Server{
		MaxConcurrentStreams:         uint32(streams),
		MaxReadFrameSize:             uint32(frame),
		MaxUploadBufferPerStream:     int32(win),
		MaxUploadBufferPerConnection: ConnWindow,
		IdleTimeout:                  ServerIdle,
	}
	hs := &http.Server{MaxHeaderBytes: hdr, ErrorLog: discardLog}
	if err := http2.ConfigureServer(hs, s2); err != nil {
		return nil, nil, err
	}
	return s2, hs, nil
}

// Serve starts server session h on the socket take returns, which the
// session owns from then on; take is called only once every check
// passed. Each request is a KindRequest event; the session's end is one
// KindServerSessionEnd event posted under ctx. Errors: EINVAL (a handle in
// use), EMFILE (MaxServerSessions), take's.
func (s *Server) Serve(ctx context.Context, h int, o ServerOptions, take func() (vfs.File, error)) error {
	if len(s.sessions) >= MaxServerSessions {
		return errno.EMFILE
	}
	if _, dup := s.sessions[h]; dup {
		return errno.EINVAL
	}
	s2, hs, err := o.newServer()
	if err != nil {
		return errno.EINVAL
	}
	f, err := take()
	if err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	ss := &serverSession{h: h, ref: true, ctx: sctx, cancel: cancel, conn: newConn(sctx, f), hs: hs, scheme: "http", rst: map[uint32]uint32{}}
	if o.Encrypted {
		ss.scheme = "https"
	}
	s.sessions[h] = ss
	go func() {
		s2.ServeConn(&rstConn{conn: ss.conn, s: ss}, &http2.ServeConnOpts{
			Context:    sctx,
			BaseConfig: hs,
			Handler:    http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { s.serveStream(ss, w, req) }),
		})
		_ = ss.conn.Close()
		cancel()
		<-ss.conn.done // err is set before done closes
		s.loop.Post(ctx, Event{Kind: KindServerSessionEnd, Session: h, Err: ss.conn.err})
	}()
	return nil
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

// serveStream is x/net's handler: it runs for each request of session ss.
func (s *Server) serveStream(ss *serverSession, w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	st := &serverStream{sess: ss, w: w, req: req, done: make(chan struct{})}
	st.opCond = sync.NewCond(&st.opMu)
	// A request that waits for 100-continue gets it when the owner first
	// reads the body: its body starts paused.
	st.pause = valve.New(strings.EqualFold(req.Header.Get("Expect"), "100-continue"))
	if !s.reg.add(st) {
		panic(http.ErrAbortHandler) // resets the stream
	}
	defer s.reg.remove(st.h)
	ss.mu.Lock()
	ss.ordinal++
	id := uint32(2*ss.ordinal - 1)
	ss.mu.Unlock()
	if wid, ok := wireStreamID(w); ok {
		id = wid
	}
	st.id = id
	// x/net leaves ContentLength 0 only for a request that ended with its
	// headers, or that declared a zero content-length.
	_, declared := req.Header["Content-Length"]
	endStream := req.ContentLength == 0 && !declared
	if !s.loop.Post(ss.ctx, Event{Kind: KindRequest, Session: ss.h, Stream: st.h, ID: id, Headers: requestHead(req, ss.scheme), End: endStream}) {
		return
	}
	closed := func(err error) {
		s.loop.Post(ss.ctx, Event{Kind: KindServerStreamEnd, Stream: st.h, Err: err})
	}
	if !endStream {
		// The body is read beside the handler, which must stay free to
		// end the stream while the client still sends (or holds) it:
		// x/net closes the body when the handler returns, which ends
		// the read.
		go func() {
			if err := s.readBody(ctx, st); err != nil && ctx.Err() == nil {
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
		// The client reset the stream or the session ended: the owner's
		// operations on w fail from now on.
		st.finish(true)
		closed(context.Cause(ctx))
		return
	}
	st.mu.Lock()
	reset, bodyErr := st.reset, st.err
	st.mu.Unlock()
	if bodyErr != nil {
		closed(bodyErr)
		panic(http.ErrAbortHandler)
	}
	if reset {
		if code := st.rstCode; code != uint32(http2.ErrCodeInternal) {
			ss.mu.Lock()
			if len(ss.rst) < MaxStreams {
				ss.rst[st.id] = code
			}
			ss.mu.Unlock()
		}
		// x/net resets a stream whose handler panics with ErrAbortHandler
		// (RST_STREAM INTERNAL_ERROR), without touching w again, so a
		// write blocked on flow control may still hold it.
		closed(nil)
		panic(http.ErrAbortHandler)
	}
	// x/net flushes and ends the stream once the handler returns, which
	// must wait for the operations that still hold w.
	st.ops.ops.Wait()
	closed(nil)
}

// readBody delivers the request body of st one chunk at a time, then its
// end (with trailers).
func (s *Server) readBody(ctx context.Context, st *serverStream) error {
	for {
		if !st.pause.Wait(ctx) {
			return context.Cause(ctx)
		}
		buf := make([]byte, ChunkSize)
		n, err := st.req.Body.Read(buf)
		if n > 0 && !s.loop.Deliver(ctx, Event{Kind: KindRequestData, Stream: st.h, Data: buf[:n]}) {
			return context.Cause(ctx)
		}
		if err == io.EOF {
			s.loop.Post(ctx, Event{Kind: KindRequestEnd, Stream: st.h, Trailers: trailerList(st.req.Trailer)})
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Response is a response head from the guest.
type Response struct {
	Status    int         `json:"status"`
	Headers   [][2]string `json:"headers"`
	EndStream bool        `json:"endStream"`
	// NoDate: node's respond({sendDate: false}) sends no date header,
	// which x/net would add.
	NoDate bool `json:"noDate"`
}

// op queues op on stream sh's ResponseWriter as the owner's next
// operation, started by start; end finishes the stream after a
// successful op. The ticket is taken only when start took the work, so
// that a refused operation leaves no gap in the queue.
func (s *Server) op(sh int, end bool, start Start, op func(w http.ResponseWriter) error) error {
	st := s.reg.get(sh)
	if st == nil {
		return errno.EPIPE
	}
	t := st.ticket
	err := start(func() error {
		st.await(t)
		defer st.next()
		if !st.ops.begin() {
			return errno.EPIPE
		}
		err := op(st.w)
		st.ops.ops.Done()
		if err != nil {
			return errno.EPIPE
		}
		if end {
			st.finish(false)
		}
		return nil
	})
	if err == nil {
		st.ticket++
	}
	return err
}

// Respond sends the response head of stream sh (ending the stream with it
// when resp.EndStream) as its next operation. Errors: EINVAL (a status
// out of 100-999, a bad header field), EPIPE (no such stream; the
// operation's own failure), start's.
func (s *Server) Respond(sh int, resp Response, start Start) error {
	if resp.Status < 100 || resp.Status > 999 {
		return errno.EINVAL
	}
	for _, kv := range resp.Headers {
		if !validHeaderField(kv[0], kv[1]) {
			return errno.EINVAL
		}
	}
	return s.op(sh, resp.EndStream, start, func(w http.ResponseWriter) error {
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
}

// Write sends data (copied) as the next part of stream sh's response
// body. The operation completes when x/net took the bytes, which waits
// on the peer's flow-control window: a client that never reads holds one
// chunk here and the owner's writes stop draining. Errors: as Respond's.
func (s *Server) Write(sh int, data []byte, start Start) error {
	data = append([]byte(nil), data...)
	return s.op(sh, false, start, func(w http.ResponseWriter) error {
		if _, err := w.Write(data); err != nil {
			return err
		}
		return http.NewResponseController(w).Flush()
	})
}

// End ends stream sh's response, with trailers if any. Errors: as
// Respond's.
func (s *Server) End(sh int, trailers [][2]string, start Start) error {
	for _, kv := range trailers {
		if !validHeaderField(kv[0], kv[1]) {
			return errno.EINVAL
		}
	}
	return s.op(sh, true, start, func(w http.ResponseWriter) error {
		h := w.Header()
		for _, kv := range trailers {
			h.Add(http.TrailerPrefix+kv[0], kv[1])
		}
		return nil
	})
}

// Reset resets stream sh with RST_STREAM code.
func (s *Server) Reset(sh int, code uint32) {
	if st := s.reg.get(sh); st != nil {
		st.mu.Lock()
		st.rstCode = code
		st.mu.Unlock()
		st.finish(true)
	}
}

// Pause stops (or resumes) the delivery of stream sh's request body.
func (s *Server) Pause(sh int, paused bool) {
	if st := s.reg.get(sh); st != nil {
		st.pause.Set(paused)
	}
}

// Push returns a push promise of q on stream sh: it blocks until x/net
// sent it or refused (EOPNOTSUPP: the client disabled push; EINVAL).
// Errors: EINVAL (a path not starting with /), EPIPE (no such stream).
func (s *Server) Push(sh int, q Request) (push func() error, err error) {
	if !strings.HasPrefix(q.Path, "/") {
		return nil, errno.EINVAL
	}
	st := s.reg.get(sh)
	if st == nil {
		return nil, errno.EPIPE
	}
	return func() error {
		p, ok := st.w.(http.Pusher)
		if !ok || !st.ops.begin() {
			return errno.EPIPE
		}
		defer st.ops.ops.Done()
		hdr := http.Header{}
		for _, kv := range q.Headers {
			hdr.Add(kv[0], kv[1])
		}
		err := p.Push(q.Path, &http.PushOptions{Method: q.Method, Header: hdr})
		switch {
		case err == nil:
			return nil
		case errors.Is(err, http.ErrNotSupported):
			return errno.EOPNOTSUPP
		}
		return errno.EINVAL
	}, nil
}

// SetRef sets whether session h keeps the owner alive (Alive).
func (s *Server) SetRef(h int, ref bool) {
	if ss := s.sessions[h]; ss != nil {
		ss.ref = ref
	}
}

// Close ends session h: gracefully (GOAWAY, the open streams finish,
// then the connection closes) or at once.
func (s *Server) Close(h int, graceful bool) {
	ss := s.sessions[h]
	if ss == nil {
		return
	}
	if !graceful {
		ss.cancel()
		_ = ss.conn.Close()
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(ss.ctx, ServerIdle)
		defer cancel()
		_ = ss.hs.Shutdown(ctx)
	}()
}

// Alive reports whether a referenced session is open.
func (s *Server) Alive() bool {
	for _, ss := range s.sessions {
		if ss.ref {
			return true
		}
	}
	return false
}

// Accept does the bookkeeping of an event of kind k as the loop takes
// it, handle being its Session (KindServerSessionEnd) or Stream, and reports
// whether the owner should still dispatch it.
func (s *Server) Accept(k Kind, handle int) bool {
	if k != KindServerSessionEnd {
		return true
	}
	if s.sessions[handle] == nil {
		return false
	}
	delete(s.sessions, handle)
	return true
}

// Dispose ends every session at once.
func (s *Server) Dispose() {
	for _, ss := range s.sessions {
		ss.cancel()
		_ = ss.conn.Close()
	}
}

// rstConn is a server session's socket. It rewrites the error code of
// the RST_STREAM frames x/net writes for streams the owner reset with a
// code of its own: x/net resets an abandoned stream with INTERNAL_ERROR
// only, while node's stream.close(code) sends code. Only the code of a
// frame the session asked for is changed; the frames themselves pass
// through as x/net wrote them.
type rstConn struct {
	*conn
	s *serverSession

	hdr   [9]byte // the frame header being read
	nh    int     // bytes of hdr seen
	left  int     // payload bytes of the current frame still to pass
	off   int     // payload bytes of the current frame passed
	code  [4]byte // the code to write into the current RST_STREAM
	recod bool    // whether the current frame's code is rewritten
}

func (c *rstConn) Write(b []byte) (int, error) {
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
	return c.conn.Write(out)
}

// takeRst returns (and forgets) the RST_STREAM code the owner chose for
// stream id.
func (ss *serverSession) takeRst(id uint32) (uint32, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	code, ok := ss.rst[id]
	delete(ss.rst, id)
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
