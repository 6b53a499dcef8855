// Package webget is secexec's curl and wget: the command lines, output
// and exit statuses of curl 7.88 and GNU wget 1.21 for the options agents
// use, over net/http (HTTP/1.1 only) on connections from netconn. Inside
// the sandbox the host makes every connection, under the VM's network
// policy, and runs TLS for the guest.
package webget

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/secexec/secexec/userland/internal/netconn"
)

// Bounds on what a server can make the client hold in memory: bodies are
// streamed, never held.
const (
	// maxHeaderBytes bounds one response's header block (curl's own
	// limit is 100 KiB per header line; this is for all of them).
	maxHeaderBytes = 256 << 10
	// maxRawCapture bounds the raw header bytes kept for printing.
	maxRawCapture = maxHeaderBytes + 4096
)

// Main runs curl or wget, as named by the basename of args[0] (a
// multi-call module is registered under both names; any other name runs
// def), and returns the exit status.
func Main(args []string, env Env, def string) int {
	name := def
	if len(args) > 0 {
		name = args[0]
		if i := lastSlash(name); i >= 0 {
			name = name[i+1:]
		}
		args = args[1:]
	}
	if name != "curl" && name != "wget" {
		name = def
	}
	if name == "wget" {
		return Wget(args, env)
	}
	return Curl(args, env)
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// recConn records, for printing, the raw header block of the request
// written on it and of the responses read from it: net/http parses
// headers into a map, losing the server's order and spelling, which
// curl -i and -v show as sent.
type recConn struct {
	net.Conn
	mu      sync.Mutex
	armed   bool
	wbuf    []byte
	wdone   bool
	rbuf    []byte
	blocks  [][]byte
	reqHead []byte
	// noLength holds back the request's header block to take out the
	// "Content-Length: 0" net/http sends for a bodiless POST, PUT or
	// PATCH and curl does not.
	noLength bool
}

// arm starts recording the next request and its response headers;
// noLength is set for a request without a body.
func (c *recConn) arm(noLength bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed, c.wdone, c.noLength = true, false, noLength
	c.wbuf, c.rbuf, c.blocks, c.reqHead = nil, nil, nil, nil
}

// take returns what was recorded since arm.
func (c *recConn) take() (req []byte, resp [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reqHead, c.blocks
}

var crlf2 = []byte("\r\n\r\n")

var zeroLength = []byte("\r\nContent-Length: 0\r\n")

func (c *recConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if !c.armed || c.wdone {
		c.mu.Unlock()
		return c.Conn.Write(p)
	}
	c.wbuf = append(c.wbuf, p...)
	i := bytes.Index(c.wbuf, crlf2)
	switch {
	case i >= 0:
		c.reqHead, c.wdone = c.wbuf[:i+4], true
	case len(c.wbuf) > maxRawCapture:
		c.wdone = true
	}
	if !c.noLength {
		c.wbuf = nil
		c.mu.Unlock()
		return c.Conn.Write(p)
	}
	if !c.wdone {
		// Held back until the block is complete (nothing follows it).
		c.mu.Unlock()
		return len(p), nil
	}
	out := c.wbuf
	c.wbuf = nil
	if i >= 0 {
		if j := bytes.Index(out[:i+4], zeroLength); j >= 0 {
			out = append(out[:j+2:j+2], out[j+len(zeroLength):]...)
			c.reqHead = out[:i+4-len(zeroLength)+2]
		}
	}
	c.mu.Unlock()
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *recConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.armed || n == 0 {
		return n, err
	}
	c.rbuf = append(c.rbuf, p[:n]...)
	for c.armed {
		i := bytes.Index(c.rbuf, crlf2)
		if i < 0 {
			if len(c.rbuf) > maxRawCapture {
				c.armed, c.rbuf = false, nil
			}
			break
		}
		block := c.rbuf[: i+4 : i+4]
		c.blocks = append(c.blocks, block)
		c.rbuf = append([]byte(nil), c.rbuf[i+4:]...)
		// 1xx responses come before the final one.
		if !(len(block) > 9 && block[9] == '1') {
			c.armed, c.rbuf = false, nil
		}
	}
	return n, err
}

// client makes HTTP/1.1 requests one at a time, as curl does, on
// connections it can observe.
type client struct {
	tr             *http.Transport
	hc             *http.Client
	connectTimeout time.Duration
	insecure       bool
	// onConnect and onConnected, when set, are told of every new
	// connection before and after it is made.
	onConnect, onConnected func(host, port string)
	// dialing is set while a connection is being made, so that a time-out
	// can be told to be a connect's.
	dialing bool
}

func newClient(connectTimeout time.Duration, insecure bool) *client {
	c := &client{connectTimeout: connectTimeout, insecure: insecure}
	c.tr = &http.Transport{
		Proxy:                  nil,
		DialContext:            func(ctx context.Context, _, addr string) (net.Conn, error) { return c.dial(ctx, addr, false) },
		DialTLSContext:         func(ctx context.Context, _, addr string) (net.Conn, error) { return c.dial(ctx, addr, true) },
		ForceAttemptHTTP2:      false,
		TLSNextProto:           map[string]func(string, *tlsConn) http.RoundTripper{},
		DisableCompression:     true,
		MaxResponseHeaderBytes: maxHeaderBytes,
		MaxIdleConnsPerHost:    1,
	}
	c.hc = &http.Client{
		Transport:     c.tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

func (c *client) dial(ctx context.Context, addr string, useTLS bool) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if c.connectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.connectTimeout)
		defer cancel()
	}
	if c.onConnect != nil {
		c.onConnect(host, port)
	}
	c.dialing = true
	defer func() { c.dialing = false }()
	conn, err := netconn.Dial(ctx, host, port, netconn.Options{TLS: useTLS, ServerName: host, Insecure: c.insecure})
	if err != nil {
		return nil, err
	}
	if c.onConnected != nil {
		c.onConnected(host, port)
	}
	return &recConn{Conn: conn}, nil
}

// exchange is one request and response as they went over the wire.
type exchange struct {
	reqHead   []byte
	respHeads [][]byte
}

// do sends req and returns the response with its headers read; the body
// streams from the connection. hasBody says whether the command sends a
// body (perhaps empty): without one, no Content-Length goes out.
func (c *client) do(req *http.Request, hasBody bool) (*http.Response, *exchange, error) {
	var rc *recConn
	trace := &httptraceClientTrace{gotConn: func(conn net.Conn) {
		if r, ok := conn.(*recConn); ok {
			r.arm(!hasBody)
			rc = r
		}
	}}
	req = req.WithContext(withTrace(req.Context(), trace))
	resp, err := c.hc.Do(req)
	ex := &exchange{}
	if rc != nil {
		ex.reqHead, ex.respHeads = rc.take()
	}
	return resp, ex, err
}

func (c *client) close() { c.tr.CloseIdleConnections() }
