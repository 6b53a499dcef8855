//lint:file-ignore SA1019 x/net/http2's client is deprecated in favour of net/http's, which dials its own connections and recognises TLS only on a *tls.Conn; the session must run on the guest's kernel socket (TLS done by the kernel), which x/net/http2's NewClientConn takes as is.

package h2

import (
	"context"
	"github.com/secexec/secexec/internal/valve"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// Client holds the HTTP/2 client sessions of one owner (node's
// http2.connect) and their streams, by the handles the owner chose.
type Client struct {
	loop     Loop
	sessions map[int]*session
	streams  map[int]*stream
}

// NewClient returns a Client reporting to loop.
func NewClient(loop Loop) *Client {
	return &Client{loop: loop, sessions: map[int]*session{}, streams: map[int]*stream{}}
}

// session is one client connection.
type session struct {
	h       int
	ref     bool
	ctx     context.Context
	cancel  context.CancelFunc
	conn    *conn
	mu      sync.Mutex
	cc      *http2.ClientConn // set once the preface is sent
	streams int               // open streams (loop goroutine only)
}

func (s *session) clientConn() *http2.ClientConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cc
}

// stream is one request.
type stream struct {
	sess   *session
	req    *http.Request
	ref    bool
	pause  *valve.Valve
	cancel context.CancelFunc
	pr     *io.PipeReader // the request body, nil when the head ended it
	pw     *io.PipeWriter
}

// Options is what the guest asks of a new client session.
type Options struct {
	// MaxHeaderListSize bounds the response header lists the session
	// accepts (0: DefaultHeaderList; at most MaxHeaderList).
	MaxHeaderListSize int `json:"maxHeaderListSize"`
}

// transport configures the client: no transparent gzip (node hands the
// body as sent), bounded header lists and receive windows.
func (o Options) transport() (*http2.Transport, error) {
	hdr := o.MaxHeaderListSize
	if hdr <= 0 {
		hdr = DefaultHeaderList
	}
	t1 := &http.Transport{DisableCompression: true}
	t1.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerConnection: ConnWindow, MaxReceiveBufferPerStream: StreamWindow}
	t, err := http2.ConfigureTransports(t1)
	if err != nil {
		return nil, err
	}
	t.DisableCompression = true
	t.MaxHeaderListSize = uint32(min(hdr, MaxHeaderList))
	return t, nil
}

// Request is a request as the guest sends it, also a pushed request's
// head (Server.Push).
type Request struct {
	Method    string      `json:"method"`
	Path      string      `json:"path"`
	Scheme    string      `json:"scheme"`
	Authority string      `json:"authority"`
	Headers   [][2]string `json:"headers"`
	// Trailers: the guest sends trailers after the body (Client.Trailers).
	Trailers bool `json:"trailers"`
}

func (q *Request) build(ctx context.Context, endStream bool) (*http.Request, *io.PipeReader, *io.PipeWriter, error) {
	if q.Method == "" || q.Scheme == "" || q.Authority == "" || q.Path == "" {
		return nil, nil, nil, errno.EINVAL
	}
	u, err := url.ParseRequestURI(q.Path)
	if err != nil {
		return nil, nil, nil, errno.EINVAL
	}
	u.Scheme, u.Host = q.Scheme, q.Authority
	req := &http.Request{Method: q.Method, URL: u, Host: q.Authority, Header: http.Header{},
		Proto: "HTTP/2.0", ProtoMajor: 2}
	cl := int64(-1)
	for _, kv := range q.Headers {
		if strings.EqualFold(kv[0], "content-length") {
			n, err := strconv.ParseInt(kv[1], 10, 64)
			if err != nil || n < 0 {
				return nil, nil, nil, errno.EINVAL
			}
			cl = n
			continue
		}
		// Canonical here, lower-case on the wire (HTTP/2 names are).
		req.Header.Add(kv[0], kv[1])
	}
	// Node sends no user-agent of its own; an empty one keeps Go's out.
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header["User-Agent"] = []string{""}
	}
	var pr *io.PipeReader
	var pw *io.PipeWriter
	if endStream {
		req.Body, req.ContentLength = http.NoBody, 0
	} else {
		pr, pw = io.Pipe()
		req.Body = pr
		if cl > 0 {
			req.ContentLength = cl
		}
		if q.Trailers {
			// Filled by Trailers before the body ends: x/net reads it
			// at the end of the body.
			req.Trailer = http.Header{}
		}
	}
	return req.WithContext(ctx), pr, pw, nil
}

// Open starts client session h on the socket take returns, which the
// session owns from then on; take is called only once every check
// passed. The returned handshake sends the connection preface (it
// blocks: run it off the loop); until it returned, the session takes no
// requests. The session's end, whatever ends it, is one KindSessionEnd event
// posted under ctx. Errors: EINVAL (a handle in use), EMFILE, take's.
func (c *Client) Open(ctx context.Context, h int, o Options, take func() (vfs.File, error)) (handshake func() error, err error) {
	if len(c.sessions) >= maxHandles {
		return nil, errno.EMFILE
	}
	if _, dup := c.sessions[h]; dup {
		return nil, errno.EINVAL
	}
	t, err := o.transport()
	if err != nil {
		return nil, errno.EINVAL
	}
	f, err := take()
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &session{h: h, ref: true, ctx: sctx, cancel: cancel, conn: newConn(sctx, f)}
	c.sessions[h] = s
	go func() {
		<-s.conn.done
		c.loop.Post(ctx, Event{Kind: KindSessionEnd, Session: h, Err: s.conn.err})
	}()
	return func() error {
		cc, err := t.NewClientConn(s.conn)
		if err != nil {
			_ = s.conn.Close()
			return err
		}
		s.mu.Lock()
		s.cc = cc
		s.mu.Unlock()
		return nil
	}, nil
}

// Request starts stream sh of session h: it sends the request's head
// (ending the stream with it when endStream) and reports the response
// as KindInformational, KindResponse, KindResponseData and KindStreamEnd
// events.
// Errors: EBADF (no session h), ENOTCONN (no handshake yet), EINVAL (a
// handle in use, a bad request), EAGAIN (too many streams).
func (c *Client) Request(h, sh int, q Request, endStream bool) error {
	s := c.sessions[h]
	if s == nil {
		return errno.EBADF
	}
	cc := s.clientConn()
	if cc == nil {
		return errno.ENOTCONN
	}
	if _, dup := c.streams[sh]; dup {
		return errno.EINVAL
	}
	if s.streams >= MaxStreams || len(c.streams) >= maxHandles {
		return errno.EAGAIN
	}
	ctx, cancel := context.WithCancel(s.ctx)
	req, pr, pw, err := q.build(ctx, endStream)
	if err != nil {
		cancel()
		return err
	}
	st := &stream{sess: s, req: req, ref: s.ref, pause: valve.New(false), cancel: cancel, pr: pr, pw: pw}
	c.streams[sh] = st
	s.streams++
	go c.run(ctx, cc, sh, st)
	return nil
}

// run performs the request of stream sh and posts its events: the
// response head, each chunk of the body (waiting until delivered) and
// the end with trailers or an error.
func (c *Client) run(ctx context.Context, cc *http2.ClientConn, sh int, st *stream) {
	endWith := func(err error, trailers http.Header) {
		ev := Event{Kind: KindStreamEnd, Stream: sh, Err: err}
		if err == nil {
			ev.Trailers = trailerList(trailers)
		}
		c.loop.Post(ctx, ev)
	}
	// Informational heads are node's 'headers' events; x/net bounds how
	// many a response may have.
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		c.loop.Post(ctx, Event{Kind: KindInformational, Stream: sh, Status: code, Headers: headerList(http.Header(h))})
		return nil
	}}
	req := st.req
	resp, err := cc.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err != nil {
		if st.pr != nil {
			st.pr.CloseWithError(err)
		}
		endWith(err, nil)
		return
	}
	defer resp.Body.Close()
	// A response that ended with its headers has x/net's empty body (its
	// type is not exported): node flags the head END_STREAM.
	ended := reflect.TypeOf(resp.Body).String() == "http2.noBodyReader"
	if !c.loop.Post(ctx, Event{Kind: KindResponse, Stream: sh, Status: resp.StatusCode, Headers: headerList(resp.Header), End: ended}) {
		return
	}
	for {
		if !st.pause.Wait(ctx) {
			return
		}
		buf := make([]byte, ChunkSize)
		n, err := resp.Body.Read(buf)
		if ctx.Err() != nil {
			return
		}
		if n > 0 && !c.loop.Deliver(ctx, Event{Kind: KindResponseData, Stream: sh, Data: buf[:n]}) {
			return
		}
		if err == io.EOF {
			endWith(nil, resp.Trailer)
			return
		}
		if err != nil {
			endWith(err, nil)
			return
		}
	}
}

// Write sends data (copied) as the next part of stream sh's body. The
// returned send blocks until the session took the bytes, which waits on
// the peer's flow-control window: run it off the loop. Errors: EPIPE (no
// such stream, or its head ended it).
func (c *Client) Write(sh int, data []byte) (send func() error, err error) {
	st := c.streams[sh]
	if st == nil || st.pw == nil {
		return nil, errno.EPIPE
	}
	data = append([]byte(nil), data...)
	pw := st.pw
	return func() error {
		if _, err := pw.Write(data); err != nil {
			return errno.EPIPE
		}
		return nil
	}, nil
}

// Trailers sets the trailers stream sh sends when its body ends (End).
// Errors: EPIPE (no such stream, or not one that declared trailers),
// EINVAL (a field that may not go on the wire).
func (c *Client) Trailers(sh int, fields [][2]string) error {
	st := c.streams[sh]
	if st == nil || st.pw == nil || st.req.Trailer == nil {
		return errno.EPIPE
	}
	for _, f := range fields {
		if !validHeaderField(f[0], f[1]) {
			return errno.EINVAL
		}
		st.req.Trailer.Add(f[0], f[1])
	}
	return nil
}

// End ends stream sh's request body.
func (c *Client) End(sh int) {
	if st := c.streams[sh]; st != nil && st.pw != nil {
		_ = st.pw.Close()
	}
}

// Pause stops (or resumes) the delivery of stream sh's response body;
// while paused, the peer's flow-control window fills.
func (c *Client) Pause(sh int, paused bool) {
	if st := c.streams[sh]; st != nil {
		st.pause.Set(paused)
	}
}

// Cancel ends stream sh at once: the session resets it (RST_STREAM
// CANCEL; x/net/http2 chooses the code) and no more of its events are
// dispatched.
func (c *Client) Cancel(sh int) {
	if st := c.streams[sh]; st != nil {
		c.drop(sh, st)
	}
}

func (c *Client) drop(sh int, st *stream) {
	delete(c.streams, sh)
	st.sess.streams--
	st.cancel()
	if st.pr != nil {
		st.pr.CloseWithError(context.Canceled)
	}
}

// SetRef sets whether session h and its streams keep the owner alive
// (Alive), as node's session.ref and unref do.
func (c *Client) SetRef(h int, ref bool) {
	s := c.sessions[h]
	if s == nil {
		return
	}
	s.ref = ref
	for _, st := range c.streams {
		if st.sess == s {
			st.ref = ref
		}
	}
}

// Close ends session h: gracefully (new streams refused, open ones
// finish, then GOAWAY and close) or at once.
func (c *Client) Close(h int, graceful bool) {
	if s := c.sessions[h]; s != nil {
		s.close(graceful)
	}
}

func (s *session) close(graceful bool) {
	cc := s.clientConn()
	if cc == nil || !graceful {
		if cc != nil {
			_ = cc.Close()
		}
		_ = s.conn.Close()
		s.cancel()
		return
	}
	go func() {
		_ = cc.Shutdown(s.ctx)
		_ = s.conn.Close()
	}()
}

// Ping returns a ping of session h: it sends a PING and blocks until the
// peer answered (at most 30 seconds), returning the round trip. Errors:
// EBADF (no session h), ENOTCONN (no handshake yet).
func (c *Client) Ping(h int) (ping func() (time.Duration, error), err error) {
	s := c.sessions[h]
	if s == nil {
		return nil, errno.EBADF
	}
	cc := s.clientConn()
	if cc == nil {
		return nil, errno.ENOTCONN
	}
	return func() (time.Duration, error) {
		ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
		defer cancel()
		t0 := time.Now()
		if err := cc.Ping(ctx); err != nil {
			return 0, err
		}
		return time.Since(t0), nil
	}, nil
}

// Alive reports whether a referenced session or stream is open: an
// HTTP/2 session keeps the process alive until it is closed, as node's
// session socket does; so do its streams while they run.
func (c *Client) Alive() bool {
	for _, s := range c.sessions {
		if s.ref {
			return true
		}
	}
	for _, st := range c.streams {
		if st.ref {
			return true
		}
	}
	return false
}

// Accept does the bookkeeping of an event of kind k as the loop takes
// it, handle being the event's Stream (or Session, for KindSessionEnd), and
// reports whether the owner should still dispatch it: events of a
// stream or session the owner already let go of are dropped.
func (c *Client) Accept(k Kind, handle int) bool {
	switch k {
	case KindResponse, KindInformational, KindResponseData:
		return c.streams[handle] != nil
	case KindStreamEnd:
		st := c.streams[handle]
		if st == nil {
			return false
		}
		c.drop(handle, st)
		return true
	case KindSessionEnd:
		if c.sessions[handle] == nil {
			return false
		}
		delete(c.sessions, handle)
		return true
	}
	return false
}

// Dispose ends every session and stream at once.
func (c *Client) Dispose() {
	for _, st := range c.streams {
		st.cancel()
	}
	for _, s := range c.sessions {
		s.close(false)
	}
}
