// Package client talks to `secexec serve` over its HTTP API. It has the
// shape of the in-process SDK (package secexec) where the API allows:
// NewVM, VM.Exec, VM.Run, VM.Spawn, VM.FS, VM.JS and Close, with the
// guest's bytes kept exact, typed errors for the API's error codes,
// retries of requests the server refused for the moment (429, 503) that
// honour Retry-After, and one pool of connections reused by every call.
//
// It does not link V8 or the engine: a program that only drives a server
// stays small and builds without cgo.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Options configure a Client. The zero value (with a URL given to New)
// talks to a server that needs no token, which no secexec serve is: set
// Token.
type Options struct {
	// Token is the bearer token of the tenant the client acts for.
	Token string
	// HTTPClient sends the requests; nil means a client of its own whose
	// transport keeps connections alive for reuse. Its Timeout, if any,
	// also cuts streamed execs and file transfers: prefer Timeout below.
	HTTPClient *http.Client
	// MaxRetries is how often a request refused with 429 (a quota) or
	// 503 (the server is draining) is tried again: 0 means
	// DefaultMaxRetries, a negative number none.
	MaxRetries int
	// MaxRetryWait caps the wait before one retry, whatever Retry-After
	// asks (default DefaultMaxRetryWait).
	MaxRetryWait time.Duration
	// Timeout bounds each request that is not an exec, a stream or a
	// file transfer (creating a VM, a stat, a listing...): default
	// DefaultTimeout, negative for none. Execs are bounded by their own
	// ExecOptions.Timeout and by ctx.
	Timeout time.Duration
}

// Defaults of Options.
const (
	DefaultMaxRetries   = 3
	DefaultMaxRetryWait = 10 * time.Second
	DefaultTimeout      = time.Minute
)

// Client is a connection to one secexec server. It is safe for
// concurrent use; make one and share it.
type Client struct {
	base  *url.URL
	token string
	hc    *http.Client
	opts  Options
}

// ErrBadURL is matched by the error of New for a server URL it cannot use.
var ErrBadURL = errors.New("client: the server URL must be http:// or https:// with a host")

// New returns a client of the server at serverURL (http://host:port or
// https://..., optionally with a path prefix).
func New(serverURL string, opts Options) (*Client, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w: %q", ErrBadURL, serverURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	if opts.MaxRetries == 0 {
		opts.MaxRetries = DefaultMaxRetries
	}
	if opts.MaxRetryWait <= 0 {
		opts.MaxRetryWait = DefaultMaxRetryWait
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: newTransport()}
	}
	return &Client{base: u, token: opts.Token, hc: hc, opts: opts}, nil
}

// newTransport is http.DefaultTransport's configuration with more idle
// connections per host: every call of a client goes to the same host.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// URL returns the server's base URL.
func (c *Client) URL() string { return c.base.String() }

// call is one API request.
type call struct {
	method string
	path   string // below the base URL, already escaped
	query  url.Values
	// body is sent as is and may be sent again on a retry; stream is
	// sent once (a request with a stream is never retried).
	body        []byte
	stream      io.Reader
	contentType string
	accept      string
	// control: bounded by Options.Timeout.
	control bool
}

// jsonCall is a call with v as its JSON body.
func jsonCall(method, path string, v any) (*call, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("client: encoding the request: %w", err)
	}
	return &call{method: method, path: path, body: data, contentType: "application/json"}, nil
}

// cancelBody ends the call's context when the body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// send makes the call and returns a 2xx response, whose body the caller
// closes; any other answer is returned as an *Error. Refusals of the
// moment (429, and 503 other than engine_lost) are retried.
func (c *Client) send(ctx context.Context, cl *call) (*http.Response, error) {
	cancel := context.CancelFunc(func() {})
	if cl.control && c.opts.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
	}
	for attempt := 0; ; attempt++ {
		resp, err := c.roundTrip(ctx, cl)
		if err != nil {
			cancel()
			return nil, err
		}
		if resp.StatusCode/100 == 2 {
			resp.Body = cancelBody{resp.Body, cancel}
			return resp, nil
		}
		apiErr := readError(resp)
		if !retryable(apiErr) || cl.stream != nil || c.opts.MaxRetries < 0 || attempt >= c.opts.MaxRetries {
			cancel()
			return nil, apiErr
		}
		wait := retryWait(apiErr.RetryAfter, attempt, c.opts.MaxRetryWait)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			cancel()
			return nil, apiErr // no time left to wait: the refusal is the answer
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			cancel()
			return nil, fmt.Errorf("client: waiting to retry %s %s: %w (last answer: %w)", cl.method, cl.path, ctx.Err(), apiErr)
		case <-t.C:
		}
	}
}

func (c *Client) roundTrip(ctx context.Context, cl *call) (*http.Response, error) {
	u := c.endpoint(cl.path)
	if cl.query != nil {
		u.RawQuery = cl.query.Encode()
	}
	var body io.Reader
	switch {
	case cl.stream != nil:
		body = cl.stream
	case cl.body != nil:
		body = bytes.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", cl.method, cl.path, err)
	}
	c.authorize(req.Header)
	if cl.contentType != "" {
		req.Header.Set("Content-Type", cl.contentType)
	}
	if cl.accept != "" {
		req.Header.Set("Accept", cl.accept)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", cl.method, cl.path, err)
	}
	return resp, nil
}

// endpoint is the URL of the escaped path below the base URL; the
// escaping is kept as given, so a name's own "%" or "/" stays its own.
func (c *Client) endpoint(escaped string) url.URL {
	u := *c.base
	unescaped, err := url.PathUnescape(escaped)
	if err != nil {
		unescaped = escaped // not reached: the callers escape
	}
	u.RawPath = u.EscapedPath() + escaped
	u.Path += unescaped
	return u
}

func (c *Client) authorize(h http.Header) {
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
}

// readError turns a non-2xx answer into an *Error and closes its body,
// reading it to the end (bounded) so the connection can be reused.
func readError(resp *http.Response) *Error {
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{Status: resp.StatusCode, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"))}
	var b struct {
		Error struct {
			Code    Code   `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &b) == nil && b.Error.Code != "" {
		e.Code, e.Message = b.Error.Code, b.Error.Message
		return e
	}
	// Not the API's shape: a proxy in between, or not a secexec server.
	e.Code = codeForStatus(resp.StatusCode)
	e.Message = strings.TrimSpace(string(data))
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

func codeForStatus(status int) Code {
	switch status {
	case http.StatusTooManyRequests:
		return CodeQuota
	case http.StatusServiceUnavailable:
		return CodeShuttingDown
	case http.StatusUnauthorized:
		return CodeUnauthorized
	case http.StatusNotFound:
		return CodeNotFound
	}
	return CodeInternal
}

// retryable: refused before any work was done, so sending the same
// request again is safe. A lost engine (503 engine_lost) took the VM with
// it: trying again cannot help.
func retryable(e *Error) bool {
	return e.Status == http.StatusTooManyRequests ||
		e.Status == http.StatusServiceUnavailable && e.Code != CodeEngineLost
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(min(n, 24*3600)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// retryWait is the wait before retry attempt+1: Retry-After if the
// server said, else an exponential back-off from 100 ms; capped by limit.
func retryWait(retryAfter time.Duration, attempt int, limit time.Duration) time.Duration {
	d := retryAfter
	if d <= 0 {
		d = 100 * time.Millisecond << min(attempt, 10)
	}
	return min(d, limit)
}

// doJSON makes a control call (bounded by Options.Timeout) and decodes
// its JSON answer into v (nil: none wanted).
func (c *Client) doJSON(ctx context.Context, cl *call, v any) error {
	cl.control = true
	return c.answerJSON(ctx, cl, v)
}

// answerJSON makes the call and decodes its JSON answer into v.
func (c *Client) answerJSON(ctx context.Context, cl *call, v any) error {
	resp, err := c.send(ctx, cl)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if v == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJSONAnswer)).Decode(v); err != nil {
		return fmt.Errorf("client: decoding the answer to %s %s: %w", cl.method, cl.path, ctxErr(ctx, err))
	}
	return nil
}

// maxJSONAnswer bounds a JSON answer read whole (listings are the
// largest: a directory of many entries).
const maxJSONAnswer = 64 << 20
