package kernel

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/secexec/secexec/kernel/errno"
)

// TLSOptions configure Process.StartTLS. Certificates and keys are PEM,
// as guests hold them.
type TLSOptions struct {
	// Server makes this side the TLS server (it needs Cert and Key).
	Server bool
	// ServerName is the name a client sends (SNI) and verifies the
	// server's certificate against; empty skips the name check.
	ServerName string
	// NoNameCheck leaves the check of the server's name to the caller
	// (node checks it in JavaScript, with checkServerIdentity, which a
	// program may replace): ServerName is then only sent.
	NoNameCheck bool
	// Insecure completes the handshake even when the peer's certificate
	// does not verify (node's rejectUnauthorized: false); TLSInfo still
	// reports why.
	Insecure bool
	// CA replaces the host's trust store with these PEM certificates.
	CA [][]byte
	// Cert and Key are this side's certificate chain and private key.
	Cert, Key []byte
	// ALPN lists the application protocols to offer, in preference order.
	ALPN []string
	// RequestCert makes a server ask the client for a certificate.
	RequestCert bool
}

// TLSInfo is what a guest learns about an established TLS session.
type TLSInfo struct {
	Version    string   `json:"protocol"`           // "TLSv1.3"
	Cipher     string   `json:"cipher"`             // IANA name
	ALPN       string   `json:"alpnProtocol"`       // "" when none was agreed
	Authorized bool     `json:"authorized"`         // the peer's certificate verified
	AuthError  string   `json:"authorizationError"` // why not, as node's codes
	PeerCerts  [][]byte `json:"peerCertificates"`   // DER, leaf first
	ServerName string   `json:"servername"`         // SNI the client sent (server side)
}

// TLSError is a failed TLS handshake, with node's error code for it
// (DEPTH_ZERO_SELF_SIGNED_CERT, UNABLE_TO_VERIFY_LEAF_SIGNATURE,
// CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID, ...). It matches
// ECONNRESET when the peer broke the connection.
type TLSError struct {
	Code string
	Err  error
}

func (e *TLSError) Error() string { return "tls: " + e.Code + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *TLSError) Unwrap() error { return e.Err }

// maxPEM bounds the certificate and key material one StartTLS takes in.
const maxPEM = 1 << 20

// StartTLS runs a TLS handshake on the connected stream socket fd (see
// netstack.Socket.StartTLS): from then on the process reads and writes
// plaintext. Peer certificates are verified against the host's trust
// store, or opts.CA, on the host side with Go's crypto/tls.
func (p *Process) StartTLS(ctx context.Context, fd int, opts TLSOptions) (TLSInfo, error) {
	s, err := p.socket(fd)
	if err != nil {
		return TLSInfo{}, err
	}
	defer s.DecRef()
	size := len(opts.Cert) + len(opts.Key)
	for _, c := range opts.CA {
		size += len(c)
	}
	if size > maxPEM || len(opts.ALPN) > 16 || len(opts.ServerName) > 255 {
		return TLSInfo{}, errno.EINVAL
	}
	var roots *x509.CertPool
	if len(opts.CA) > 0 {
		roots = x509.NewCertPool()
		for _, c := range opts.CA {
			if !roots.AppendCertsFromPEM(c) {
				return TLSInfo{}, &TLSError{Code: "ERR_OSSL_PEM_NO_START_LINE", Err: errors.New("no certificate in ca")}
			}
		}
	} else if roots, err = x509.SystemCertPool(); err != nil {
		roots = x509.NewCertPool()
	}
	info := TLSInfo{}
	cfg := &tls.Config{
		ServerName: opts.ServerName,
		NextProtos: opts.ALPN,
		MinVersion: tls.VersionTLS12,
		// Verification is done below, so that a guest that accepts an
		// unverified peer still learns why it did not verify.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if opts.Server && len(cs.PeerCertificates) == 0 {
				if opts.RequestCert {
					info.AuthError = "UNABLE_TO_GET_ISSUER_CERT"
				}
				return nil
			}
			code, err := verifyPeer(cs, roots, opts)
			info.Authorized, info.AuthError = err == nil, code
			if err != nil && !opts.Insecure {
				return &TLSError{Code: code, Err: err}
			}
			return nil
		},
	}
	if len(opts.Cert) > 0 || len(opts.Key) > 0 {
		pair, err := tls.X509KeyPair(opts.Cert, opts.Key)
		if err != nil {
			return TLSInfo{}, &TLSError{Code: "ERR_OSSL_PEM_NO_START_LINE", Err: err}
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if opts.Server {
		if len(cfg.Certificates) == 0 {
			return TLSInfo{}, &TLSError{Code: "ERR_TLS_MISSING_CERTIFICATE", Err: errors.New("a TLS server needs a certificate and key")}
		}
		if opts.RequestCert {
			cfg.ClientAuth = tls.RequestClientCert
		}
	}
	cs, err := s.StartTLS(ctx, cfg, opts.Server)
	if err != nil {
		var te *TLSError
		if errors.As(err, &te) || errno.Of(err) != 0 {
			return TLSInfo{}, err
		}
		return TLSInfo{}, &TLSError{Code: "ECONNRESET", Err: err}
	}
	info.Version = tlsVersionName(cs.Version)
	info.Cipher = tls.CipherSuiteName(cs.CipherSuite)
	info.ALPN = cs.NegotiatedProtocol
	info.ServerName = cs.ServerName
	for _, c := range cs.PeerCertificates {
		info.PeerCerts = append(info.PeerCerts, c.Raw)
	}
	return info, nil
}

// Is makes a TLSError for a broken connection match ECONNRESET.
func (e *TLSError) Is(target error) bool {
	return e.Code == "ECONNRESET" && target == errno.ECONNRESET
}

// verifyPeer verifies the peer's chain and, for a client, the server's
// name, and returns node's code for a failure.
func verifyPeer(cs tls.ConnectionState, roots *x509.CertPool, opts TLSOptions) (string, error) {
	if len(cs.PeerCertificates) == 0 {
		return "UNABLE_TO_GET_ISSUER_CERT", errors.New("the peer sent no certificate")
	}
	leaf := cs.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	vo := x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: time.Now()}
	if opts.Server {
		vo.KeyUsages = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	if _, err := leaf.Verify(vo); err != nil {
		var ua x509.UnknownAuthorityError
		var ci x509.CertificateInvalidError
		switch {
		case errors.As(err, &ci) && ci.Reason == x509.Expired:
			if time.Now().Before(leaf.NotBefore) {
				return "CERT_NOT_YET_VALID", err
			}
			return "CERT_HAS_EXPIRED", err
		case errors.As(err, &ua):
			if len(cs.PeerCertificates) == 1 && leaf.CheckSignatureFrom(leaf) == nil {
				return "DEPTH_ZERO_SELF_SIGNED_CERT", err
			}
			last := cs.PeerCertificates[len(cs.PeerCertificates)-1]
			if last.CheckSignatureFrom(last) == nil {
				return "SELF_SIGNED_CERT_IN_CHAIN", err
			}
			return "UNABLE_TO_VERIFY_LEAF_SIGNATURE", err
		}
		return "CERT_UNTRUSTED", err
	}
	if !opts.Server && opts.ServerName != "" && !opts.NoNameCheck {
		if err := leaf.VerifyHostname(opts.ServerName); err != nil {
			return "ERR_TLS_CERT_ALTNAME_INVALID", fmt.Errorf("Hostname/IP does not match certificate's altnames: %w", err)
		}
	}
	return "", nil
}

func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "TLSv1.3"
	case tls.VersionTLS12:
		return "TLSv1.2"
	}
	return "unknown"
}
