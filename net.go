package secexec

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/secexec/secexec/kernel/errno"
)

// Net is the embedder's side of a VM's network: connections to servers
// that guests run inside the VM (node's http.createServer().listen(port),
// a WebAssembly program's listener). Reaching them needs no network
// permission: the embedder owns the VM. Guests' own network access is
// governed by the VM's Permissions (deny by default).
type Net struct{ v *VM }

// Net returns the VM's network as the embedder sees it.
func (v *VM) Net() *Net { return &Net{v: v} }

// Dial connects to the guest's TCP listener on port, as a client on the
// VM's loopback would. It fails with an error matching
// errno.ECONNREFUSED when nothing in the VM listens there.
func (n *Net) Dial(ctx context.Context, port int) (net.Conn, error) {
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("secexec: port %d: %w", port, errno.EINVAL)
	}
	if err := n.v.b.err(); err != nil {
		return nil, err
	}
	return n.v.b.dial(ctx, uint16(port))
}

// Transport returns an http.RoundTripper whose connections go to servers
// in the VM: the request URL's port (80 or 443 by default) picks the
// listener and its host is only the Host header; "https" URLs speak TLS
// to the guest (configure TLSClientConfig for its certificate).
// Each call returns a new transport with its own connection pool; close
// its idle connections (CloseIdleConnections) when done.
func (n *Net) Transport() *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			_, p, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			port, err := strconv.Atoi(p)
			if err != nil {
				return nil, fmt.Errorf("secexec: port %q: %w", p, errno.EINVAL)
			}
			return n.Dial(ctx, port)
		},
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 0,
		ForceAttemptHTTP2:     false,
	}
}

// Fetch sends req to a server in the VM (see Transport) and returns its
// response, whose body the caller must close. Redirects are not
// followed. Use one Transport for many requests when connections should
// be reused.
func (n *Net) Fetch(ctx context.Context, req *http.Request) (*http.Response, error) {
	t := n.Transport()
	resp, err := t.RoundTrip(req.WithContext(ctx))
	if err != nil {
		t.CloseIdleConnections()
		return nil, err
	}
	resp.Body = &closeTransport{ReadCloser: resp.Body, t: t}
	return resp, nil
}

// closeTransport closes a one-request transport's connections with the
// response body.
type closeTransport struct {
	io.ReadCloser
	t *http.Transport
}

func (c *closeTransport) Close() error {
	err := c.ReadCloser.Close()
	c.t.CloseIdleConnections()
	return err
}
