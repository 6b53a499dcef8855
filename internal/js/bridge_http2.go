//lint:file-ignore SA1019 x/net/http2's client is deprecated in favour of net/http's, which dials its own connections and recognises TLS only on a *tls.Conn; the session must run on the guest's kernel socket (TLS done by the kernel), which x/net/http2's NewClientConn takes as is.

package js

// The HTTP/2 client behind node's http2.connect. The protocol (framing,
// HPACK, flow control, stream states) is golang.org/x/net/http2's
// ClientConn, run over the guest's own kernel socket: http2.js connects
// (net.connect, or tls.connect with ALPN h2, both through the kernel's
// policy and TLS) and then hands the descriptor over, so every byte still
// goes through the guest's socket. JavaScript sees sessions and streams by
// handle; response bodies are read one chunk at a time and each chunk
// waits until the loop delivered it, so neither side buffers a body.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	v8 "github.com/tommie/v8go"
	"golang.org/x/net/http2"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

const (
	// maxH2Streams bounds the open streams of one session (the server's
	// SETTINGS_MAX_CONCURRENT_STREAMS usually queues far fewer).
	maxH2Streams = 1024
	// h2DefaultHeaderList is the response header list a session accepts
	// unless told otherwise (node's default maxHeaderListSize), and
	// h2MaxHeaderList the most a guest may ask for.
	h2DefaultHeaderList = 65535
	h2MaxHeaderList     = 1 << 20
	// What the server may send before the guest reads: the HTTP/2 flow
	// control windows of one connection and of one stream. They bound the
	// memory a session holds in Go whatever the guest does.
	h2ConnWindow   = 1 << 20
	h2StreamWindow = 256 << 10
	// maxH2Request bounds the JSON of a request's headers.
	maxH2Request = 1 << 20
)

// h2session is one client connection.
type h2session struct {
	h       int
	ref     bool
	ctx     context.Context
	cancel  context.CancelFunc
	conn    *h2conn
	mu      sync.Mutex
	cc      *http2.ClientConn // set once the preface is sent
	streams int               // open streams (loop goroutine only)
}

func (s *h2session) clientConn() *http2.ClientConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cc
}

// h2stream is one request; rd carries its pause state and cancel.
type h2stream struct {
	sess *h2session
	req  *http.Request
	rd   *reader
	pr   *io.PipeReader
	pw   *io.PipeWriter
}

// h2conn is the guest's socket as the net.Conn x/net/http2 runs on.
// Closing it cancels the blocked reads and writes; the file is released
// once none is in flight, so no call uses a released file.
type h2conn struct {
	f      vfs.File
	ctx    context.Context
	cancel context.CancelFunc
	gate
	once sync.Once
	done chan struct{}
	err  error // why it ended (nil: closed or EOF); set before done closes
}

func newH2Conn(ctx context.Context, f vfs.File) *h2conn {
	ctx, cancel := context.WithCancel(ctx)
	return &h2conn{f: f, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// gate admits operations on something that closes: none begins once it
// closed, and the closer can wait for those that began before.
type gate struct {
	mu     sync.Mutex
	closed bool
	ops    sync.WaitGroup
}

// begin reports whether an operation may start, counting it (ops.Done
// ends it).
func (g *gate) begin() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.ops.Add(1)
	return true
}

// shut closes the gate; it reports whether this call closed it.
func (g *gate) shut() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.closed = true
	return true
}

// end records the first reason the connection ended.
func (c *h2conn) end(err error) {
	c.once.Do(func() {
		c.err = err
		close(c.done)
	})
}

func (c *h2conn) Read(b []byte) (int, error) {
	if !c.begin() {
		return 0, net.ErrClosed
	}
	defer c.ops.Done()
	n, err := c.f.Read(c.ctx, b)
	if c.ctx.Err() != nil {
		return n, net.ErrClosed
	}
	if n == 0 && err == nil && len(b) > 0 {
		err = io.EOF
	}
	if err != nil {
		// The read loop of the ClientConn ends with its first error: so
		// does the session.
		if err == io.EOF {
			c.end(nil)
		} else {
			c.end(err)
		}
	}
	return n, err
}

func (c *h2conn) Write(b []byte) (int, error) {
	if !c.begin() {
		return 0, net.ErrClosed
	}
	defer c.ops.Done()
	done := 0
	for done < len(b) {
		n, err := c.f.Write(c.ctx, b[done:])
		done += n
		if err != nil {
			return done, err
		}
		if n == 0 {
			return done, io.ErrShortWrite
		}
	}
	return done, nil
}

func (c *h2conn) Close() error {
	if !c.shut() {
		return nil
	}
	c.cancel()
	c.end(nil)
	go func() {
		c.ops.Wait()
		c.f.DecRef()
	}()
	return nil
}

// The guest's socket has no deadlines of its own: the ClientConn is
// bounded by the process context and by the guest closing it.
func (c *h2conn) LocalAddr() net.Addr                { return h2addr{} }
func (c *h2conn) RemoteAddr() net.Addr               { return h2addr{} }
func (c *h2conn) SetDeadline(_ time.Time) error      { return nil }
func (c *h2conn) SetReadDeadline(_ time.Time) error  { return nil }
func (c *h2conn) SetWriteDeadline(_ time.Time) error { return nil }

type h2addr struct{}

func (h2addr) Network() string { return "tcp" }
func (h2addr) String() string  { return "guest-socket" }

// h2Options is what http2.js asks of a new session.
type h2Options struct {
	MaxHeaderListSize int `json:"maxHeaderListSize"`
}

// newH2Transport configures the client: no transparent gzip (node hands
// the body as sent), bounded header lists and receive windows.
func newH2Transport(o h2Options) (*http2.Transport, error) {
	t1 := &http.Transport{DisableCompression: true}
	t1.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerConnection: h2ConnWindow, MaxReceiveBufferPerStream: h2StreamWindow}
	t, err := http2.ConfigureTransports(t1)
	if err != nil {
		return nil, err
	}
	t.DisableCompression = true
	t.MaxHeaderListSize = uint32(o.MaxHeaderListSize)
	return t, nil
}

// h2Req is a request as http2.js sends it.
type h2Req struct {
	Method    string      `json:"method"`
	Path      string      `json:"path"`
	Scheme    string      `json:"scheme"`
	Authority string      `json:"authority"`
	Headers   [][2]string `json:"headers"`
	// Trailers: the guest sends trailers after the body (waitForTrailers).
	Trailers bool `json:"trailers"`
}

func (q *h2Req) build(ctx context.Context, endStream bool) (*http.Request, *io.PipeReader, *io.PipeWriter, error) {
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
			// Filled by h2Trailers before the body ends: x/net reads it
			// at the end of the body.
			req.Trailer = http.Header{}
		}
	}
	return req.WithContext(ctx), pr, pw, nil
}

// h2Error is how a failed stream or session is reported to JavaScript.
type h2Error struct {
	Message string `json:"message,omitempty"`
	Rst     int    `json:"rst"`
}

// h2ErrCode maps an error of x/net/http2 or of the kernel to node's
// error code, a message and the RST_STREAM code.
func h2ErrCode(err error) (string, h2Error) {
	var se http2.StreamError
	var ce http2.ConnectionError
	var ge http2.GoAwayError
	switch {
	case errors.As(err, &se):
		return "ERR_HTTP2_STREAM_ERROR", h2Error{Message: "Stream closed with error code NGHTTP2_" + se.Code.String(), Rst: int(se.Code)}
	case errors.As(err, &ge):
		return "ERR_HTTP2_SESSION_ERROR", h2Error{Message: "Session closed with error code NGHTTP2_" + ge.ErrCode.String(), Rst: int(ge.ErrCode)}
	case errors.As(err, &ce):
		return "ERR_HTTP2_SESSION_ERROR", h2Error{Message: "Session closed with error code NGHTTP2_" + http2.ErrCode(ce).String(), Rst: int(ce)}
	case errors.Is(err, context.Canceled):
		return "ERR_HTTP2_STREAM_CANCEL", h2Error{Message: "The pending stream has been canceled", Rst: int(http2.ErrCodeCancel)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		// The connection ended under the stream (x/net's read loop saw
		// EOF without a GOAWAY covering it): node closes the streams of
		// a closed socket with CANCEL, which is no error.
		return "ERR_HTTP2_CONNECTION_LOST", h2Error{Message: "Stream closed with error code NGHTTP2_CANCEL", Rst: int(http2.ErrCodeCancel)}
	}
	if e := errno.Of(err); e != 0 {
		return e.Name(), h2Error{}
	}
	return "ERR_HTTP2_ERROR", h2Error{Message: err.Error(), Rst: int(http2.ErrCodeInternal)}
}

func h2ErrPayload(err error) (string, string) {
	code, e := h2ErrCode(err)
	b, _ := json.Marshal(e)
	return code, string(b)
}

// h2Headers is a header block with lower-case names, in order.
func h2Headers(h http.Header) [][2]string {
	out := [][2]string{}
	for k, vv := range h {
		k = strings.ToLower(k)
		for _, v := range vv {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// runStream performs the request of stream sh and posts its events: the
// response head ("h2resp"), each chunk of the body ("h2data", waiting
// until delivered) and the end with trailers or an error ("h2end").
func (r *rt) runStream(ctx context.Context, cc *http2.ClientConn, sh int, st *h2stream, req *http.Request) {
	endWith := func(err error, trailers http.Header) {
		ev := event{kind: "h2end", a: sh}
		if err != nil {
			ev.code, ev.payload = h2ErrPayload(err)
		} else if len(trailers) > 0 {
			b, _ := json.Marshal(map[string]any{"trailers": h2Headers(trailers)})
			ev.payload = string(b)
		}
		r.post(ctx, ev)
	}
	// Informational heads (103 early hints, 100) are node's 'headers'
	// events; x/net bounds how many a response may have.
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		b, _ := json.Marshal(map[string]any{"status": code, "headers": h2Headers(http.Header(h))})
		r.post(ctx, event{kind: "h2info", a: sh, payload: string(b)})
		return nil
	}}
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
	head, _ := json.Marshal(map[string]any{"status": resp.StatusCode, "headers": h2Headers(resp.Header), "end": ended})
	if !r.post(ctx, event{kind: "h2resp", a: sh, payload: string(head)}) {
		return
	}
	for {
		if !st.rd.waitResumed(ctx) {
			return
		}
		buf := make([]byte, readChunk)
		n, err := resp.Body.Read(buf)
		if ctx.Err() != nil {
			return
		}
		if n > 0 {
			if _, acked := r.deliver(ctx, event{kind: "h2data", a: sh, data: buf[:n]}); !acked {
				return
			}
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

// closeSession ends session s: gracefully (new streams refused, open
// ones finish, then GOAWAY and close) or at once.
func (s *h2session) close(graceful bool) {
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

// disposeH2 ends every session of the process.
func (r *rt) disposeH2() {
	for _, st := range r.h2streams {
		st.rd.stop()
	}
	for _, s := range r.h2s {
		s.close(false)
	}
}

// handleH2 delivers the stream and session events of the loop.
func (r *rt) handleH2(ev event) (bool, error) {
	switch ev.kind {
	case "h2resp", "h2info":
		if r.h2streams[ev.a] == nil {
			return true, nil
		}
		return r.dispatchPayload(ev.kind, ev.a, 0, "", ev.payload)
	case "h2data":
		defer close(ev.ack)
		if r.h2streams[ev.a] == nil {
			return true, nil
		}
		n := copy(r.scratch, ev.data)
		return r.dispatchPayload(ev.kind, ev.a, n, "", "")
	case "h2end":
		st := r.h2streams[ev.a]
		if st == nil {
			return true, nil
		}
		r.dropStream(ev.a, st)
		return r.dispatchPayload(ev.kind, ev.a, 0, ev.code, ev.payload)
	case "h2sessclose":
		if r.h2s[ev.a] == nil {
			return true, nil
		}
		delete(r.h2s, ev.a)
		return r.dispatchPayload(ev.kind, ev.a, 0, ev.code, ev.payload)
	}
	return true, nil
}

func (r *rt) dropStream(sh int, st *h2stream) {
	delete(r.h2streams, sh)
	st.sess.streams--
	st.rd.stop()
	if st.pr != nil {
		st.pr.CloseWithError(context.Canceled)
	}
}

func init() {
	register("h2Open", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		fd, err1 := argInt(args, 0)
		h, err2 := argInt(args, 1)
		js, err3 := argString(args, 2)
		id, err4 := argInt(args, 3)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || len(js) > 4096 {
			return nil, errno.EINVAL
		}
		var o h2Options
		if json.Unmarshal([]byte(js), &o) != nil {
			return nil, errno.EINVAL
		}
		if o.MaxHeaderListSize <= 0 {
			o.MaxHeaderListSize = h2DefaultHeaderList
		}
		o.MaxHeaderListSize = min(o.MaxHeaderListSize, h2MaxHeaderList)
		if len(r.h2s) >= maxHandles {
			return nil, errno.EMFILE
		}
		if _, dup := r.h2s[h]; dup {
			return nil, errno.EINVAL
		}
		t, err := newH2Transport(o)
		if err != nil {
			return nil, errno.EINVAL
		}
		f, err := r.takeSocket(fd)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(r.ctx)
		s := &h2session{h: h, ref: true, ctx: ctx, cancel: cancel, conn: newH2Conn(ctx, f)}
		if r.h2s == nil {
			r.h2s, r.h2streams = map[int]*h2session{}, map[int]*h2stream{}
		}
		r.h2s[h] = s
		// The session's end (EOF, reset, close) is one loop event, posted
		// whatever ended it.
		go func() {
			<-s.conn.done
			ev := event{kind: "h2sessclose", a: h}
			if err := s.conn.err; err != nil {
				ev.code, ev.payload = h2ErrPayload(err)
			}
			r.post(r.ctx, ev)
		}()
		err = r.startOp("h2open", id, func(context.Context) (string, error) {
			cc, err := t.NewClientConn(s.conn)
			if err != nil {
				_ = s.conn.Close()
				return "", err
			}
			s.mu.Lock()
			s.cc = cc
			s.mu.Unlock()
			return "", nil
		})
		if err != nil {
			_ = s.conn.Close()
			return nil, err
		}
		return nil, nil
	})
	register("h2Request", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		h, err1 := argInt(args, 0)
		sh, err2 := argInt(args, 1)
		js, err3 := argString(args, 2)
		if err1 != nil || err2 != nil || err3 != nil || len(js) > maxH2Request {
			return nil, errno.EINVAL
		}
		s := r.h2s[h]
		if s == nil {
			return nil, errno.EBADF
		}
		cc := s.clientConn()
		if cc == nil {
			return nil, errno.ENOTCONN
		}
		if _, dup := r.h2streams[sh]; dup {
			return nil, errno.EINVAL
		}
		if s.streams >= maxH2Streams || len(r.h2streams) >= maxHandles {
			return nil, errno.EAGAIN
		}
		var q h2Req
		if json.Unmarshal([]byte(js), &q) != nil {
			return nil, errno.EINVAL
		}
		ctx, cancel := context.WithCancel(s.ctx)
		req, pr, pw, err := q.build(ctx, argBool(args, 3))
		if err != nil {
			cancel()
			return nil, err
		}
		rd := &reader{h: sh, ref: s.ref, cancel: cancel, resume: make(chan struct{})}
		close(rd.resume)
		st := &h2stream{sess: s, req: req, rd: rd, pr: pr, pw: pw}
		r.h2streams[sh] = st
		s.streams++
		go r.runStream(ctx, cc, sh, st, req)
		return nil, nil
	})
	register("h2Write", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		sh, err1 := argInt(args, 0)
		n, err2 := argInt(args, 1)
		id, err3 := argInt(args, 2)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, errno.EINVAL
		}
		st := r.h2streams[sh]
		if st == nil || st.pw == nil {
			return nil, errno.EPIPE
		}
		b, err := r.bytesArg(n)
		if err != nil {
			return nil, err
		}
		data := append([]byte(nil), b...)
		pw := st.pw
		// The pipe hands the bytes to the ClientConn as flow control lets
		// it send them: the write completes when the peer took them.
		return nil, r.startOp("h2write", id, func(context.Context) (string, error) {
			if _, err := pw.Write(data); err != nil {
				return "", errno.EPIPE
			}
			return "", nil
		})
	})
	register("h2Trailers", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		sh, err1 := argInt(args, 0)
		js, err2 := argString(args, 1)
		if err1 != nil || err2 != nil || len(js) > maxH2Request {
			return nil, errno.EINVAL
		}
		var kv [][2]string
		if json.Unmarshal([]byte(js), &kv) != nil {
			return nil, errno.EINVAL
		}
		st := r.h2streams[sh]
		if st == nil || st.pw == nil || st.req.Trailer == nil {
			return nil, errno.EPIPE
		}
		for _, f := range kv {
			if !validHeaderField(f[0], f[1]) {
				return nil, errno.EINVAL
			}
			st.req.Trailer.Add(f[0], f[1])
		}
		return nil, nil
	})
	register("h2End", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		sh, err := argInt(args, 0)
		if st := r.h2streams[sh]; st != nil && err == nil && st.pw != nil {
			_ = st.pw.Close()
		}
		return nil, nil
	})
	register("h2Pause", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		sh, err := argInt(args, 0)
		if st := r.h2streams[sh]; st != nil && err == nil {
			st.rd.setPaused(argBool(args, 1))
		}
		return nil, nil
	})
	register("h2Cancel", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		// Cancelling the request makes the ClientConn reset the stream
		// (RST_STREAM CANCEL: x/net/http2 chooses the code).
		sh, err := argInt(args, 0)
		if st := r.h2streams[sh]; st != nil && err == nil {
			r.dropStream(sh, st)
		}
		return nil, nil
	})
	register("h2Ref", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		h, err := argInt(args, 0)
		s := r.h2s[h]
		if s == nil || err != nil {
			return nil, nil
		}
		s.ref = argBool(args, 1)
		for _, st := range r.h2streams {
			if st.sess == s {
				st.rd.ref = s.ref
			}
		}
		return nil, nil
	})
	register("h2Close", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		h, err := argInt(args, 0)
		if s := r.h2s[h]; s != nil && err == nil {
			s.close(argBool(args, 1))
		}
		return nil, nil
	})
	register("h2Ping", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		h, err1 := argInt(args, 0)
		id, err2 := argInt(args, 1)
		if err1 != nil || err2 != nil {
			return nil, errno.EINVAL
		}
		s := r.h2s[h]
		if s == nil {
			return nil, errno.EBADF
		}
		cc := s.clientConn()
		if cc == nil {
			return nil, errno.ENOTCONN
		}
		clk := r.p.Kernel().Clock()
		return nil, r.startOp("h2ping", id, func(context.Context) (string, error) {
			ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
			defer cancel()
			t0 := time.Now()
			if err := cc.Ping(ctx); err != nil {
				return "", err
			}
			// The round trip is a timer too: shown under the VM's clock.
			rtt := clk.Duration(time.Since(t0))
			return strconv.FormatFloat(float64(rtt.Microseconds())/1000, 'f', 3, 64), nil
		})
	})
}
