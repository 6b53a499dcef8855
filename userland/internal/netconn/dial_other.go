//go:build !wasip1

package netconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
)

// Dial connects to host:port with the net package and, for TLS, Go's
// crypto/tls with the system's roots.
func Dial(ctx context.Context, host, port string, o Options) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		var de *net.DNSError
		switch {
		case errors.As(err, &de):
			return nil, &Error{Stage: Resolve, Err: err}
		case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
			return nil, &Error{Stage: Timeout, Err: err}
		}
		return nil, classify(err)
	}
	if !o.TLS {
		return c, nil
	}
	tc := tls.Client(c, &tls.Config{ServerName: o.ServerName, InsecureSkipVerify: o.Insecure, NextProtos: []string{"http/1.1"}})
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		var ve *tls.CertificateVerificationError
		var ua x509.UnknownAuthorityError
		var he x509.HostnameError
		if errors.As(err, &ve) || errors.As(err, &ua) || errors.As(err, &he) {
			return nil, &Error{Stage: Verify, Err: err}
		}
		return nil, &Error{Stage: TLS, Err: err}
	}
	return tc, nil
}
