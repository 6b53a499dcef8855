package kernel

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
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
	// MinVersion and MaxVersion bound the protocol versions this side
	// accepts (tls.VersionTLS10 ... tls.VersionTLS13); zero means TLS 1.2
	// and TLS 1.3, node's defaults.
	MinVersion, MaxVersion uint16
	// CipherSuites are the TLS 1.0-1.2 suites this side accepts, in
	// preference order; nil means crypto/tls's defaults. (TLS 1.3's suites
	// are not configurable in crypto/tls.)
	CipherSuites []uint16
	// SelectCert, for a server, is asked for the certificate to present
	// to a client by the name it sent (node's SNICallback and
	// addContext). A nil result keeps Cert and Key; an error fails the
	// handshake with it.
	SelectCert func(ctx context.Context, serverName string) (*TLSCert, error)
}

// TLSCert is a certificate chain and its key, PEM, that a server presents,
// and the CAs it verifies a client's certificate against (none: the
// server's).
type TLSCert struct {
	Cert, Key []byte
	CA        [][]byte
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
	if size > maxPEM || len(opts.ALPN) > 16 || len(opts.ServerName) > 255 || len(opts.CipherSuites) > 64 {
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
		ServerName:   opts.ServerName,
		NextProtos:   opts.ALPN,
		MinVersion:   cmp.Or(opts.MinVersion, tls.VersionTLS12),
		MaxVersion:   cmp.Or(opts.MaxVersion, tls.VersionTLS13),
		CipherSuites: opts.CipherSuites,
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
			// As OpenSSL, a server without a certificate still reads the
			// client's hello, and fails the handshake after it.
			cfg.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return nil, errNoServerCert }
		}
		if opts.RequestCert {
			cfg.ClientAuth = tls.RequestClientCert
		}
	}
	if cfg.MinVersion < tls.VersionTLS10 || cfg.MaxVersion > tls.VersionTLS13 || cfg.MinVersion > cfg.MaxVersion {
		// As OpenSSL, a context whose range holds no version fails the
		// handshake, not its making.
		return TLSInfo{}, &TLSError{Code: "ERR_SSL_NO_PROTOCOLS_AVAILABLE", Err: errors.New("error:0A0000BF:SSL routines::no protocols available")}
	}
	if opts.Server && opts.SelectCert != nil {
		cfg.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			next, ca, err := selectCert(hello, cfg, opts.SelectCert)
			if ca != nil {
				// The chosen context's CAs verify the client's certificate.
				roots = ca
			}
			return next, err
		}
	}
	cs, err := s.StartTLS(ctx, cfg, opts.Server)
	if err != nil {
		return TLSInfo{}, handshakeError(err, opts)
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

// selectCert asks sel for the certificate for the client's name and
// returns cfg with it (nil to keep cfg), and the context's CAs if it has
// any.
func selectCert(hello *tls.ClientHelloInfo, cfg *tls.Config, sel func(context.Context, string) (*TLSCert, error)) (*tls.Config, *x509.CertPool, error) {
	if hello.ServerName == "" {
		// As OpenSSL, no name sent, no callback.
		return nil, nil, nil
	}
	c, err := sel(hello.Context(), hello.ServerName)
	if err != nil || c == nil {
		return nil, nil, err
	}
	size := len(c.Cert) + len(c.Key)
	for _, ca := range c.CA {
		size += len(ca)
	}
	if size > maxPEM {
		return nil, nil, errno.EINVAL
	}
	pair, err := tls.X509KeyPair(c.Cert, c.Key)
	if err != nil {
		return nil, nil, &TLSError{Code: "ERR_OSSL_PEM_NO_START_LINE", Err: err}
	}
	var roots *x509.CertPool
	if len(c.CA) > 0 {
		roots = x509.NewCertPool()
		for _, ca := range c.CA {
			if !roots.AppendCertsFromPEM(ca) {
				return nil, nil, &TLSError{Code: "ERR_OSSL_PEM_NO_START_LINE", Err: errors.New("no certificate in ca")}
			}
		}
	}
	next := cfg.Clone()
	next.Certificates = []tls.Certificate{pair}
	next.GetCertificate = nil
	next.GetConfigForClient = nil
	return next, roots, nil
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

// errNoServerCert fails the handshake of a server that has no certificate.
var errNoServerCert = errors.New("the server has no certificate")

// handshakeError gives a failed handshake node's code: the socket's own
// errors (EINTR, ETIMEDOUT) stay, a peer that went away is ECONNRESET, and
// an alert or a record that is not TLS gets OpenSSL's code and message,
// as node shows them ("error:0A000412:SSL routines::sslv3 alert bad
// certificate").
func handshakeError(err error, opts TLSOptions) error {
	var te *TLSError
	if errors.As(err, &te) {
		return err
	}
	var en errno.Errno
	if errors.As(err, &en) && en != errno.ECONNRESET && en != errno.EPIPE {
		return err
	}
	if errors.Is(err, errNoServerCert) {
		return &TLSError{Code: "ERR_SSL_NO_SUITABLE_SIGNATURE_ALGORITHM", Err: errors.New("error:0A000076:SSL routines::no suitable signature algorithm")}
	}
	if code, msg, ok := localHandshakeError(err); ok {
		return &TLSError{Code: code, Err: errors.New(msg)}
	}
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		return &TLSError{Code: "ERR_SSL_WRONG_VERSION_NUMBER", Err: errors.New("error:0A00010B:SSL routines::wrong version number")}
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		// The alert's type is unexported: its value is a uint8.
		if v := reflect.ValueOf(op.Err); v.Kind() == reflect.Uint8 {
			a := uint8(v.Uint())
			if a == alertProtocolVersion && opts.Server && opts.MaxVersion != 0 && opts.MaxVersion < tls.VersionTLS12 {
				// OpenSSL's client sends that alert in a TLS 1.2 record,
				// which a server held below 1.2 rejects as a record of the
				// wrong version before it reads the alert.
				return &TLSError{Code: "ERR_SSL_WRONG_VERSION_NUMBER", Err: errors.New("error:0A00010B:SSL routines::wrong version number")}
			}
			if name, ok := alertNames[a]; ok {
				return &TLSError{Code: "ERR_SSL_" + strings.ToUpper(strings.ReplaceAll(name, " ", "_")),
					Err: fmt.Errorf("error:0A%06X:SSL routines::%s", 1000+int(a), name)}
			}
		}
	}
	return &TLSError{Code: "ECONNRESET", Err: err}
}

// alertProtocolVersion is the protocol_version alert (RFC 8446 6.2).
const alertProtocolVersion = 70

// localErrors map crypto/tls's own handshake failures, by the start of
// their message (crypto/tls exports no type for them), to OpenSSL's code
// and message for the same failure.
var localErrors = []struct{ prefix, code, msg string }{
	{"tls: client offered only unsupported versions", "ERR_SSL_UNSUPPORTED_PROTOCOL", "error:0A000102:SSL routines::unsupported protocol"},
	{"tls: server selected unsupported protocol version", "ERR_SSL_UNSUPPORTED_PROTOCOL", "error:0A000102:SSL routines::unsupported protocol"},
	{"tls: no cipher suite supported by both client and server", "ERR_SSL_NO_SHARED_CIPHER", "error:0A0000C1:SSL routines::no shared cipher"},
	{"tls: server chose an unconfigured cipher suite", "ERR_SSL_WRONG_CIPHER_RETURNED", "error:0A000111:SSL routines::wrong cipher returned"},
}

// localHandshakeError finds err among localErrors.
func localHandshakeError(err error) (code, msg string, ok bool) {
	text := err.Error()
	for _, l := range localErrors {
		if strings.Contains(text, l.prefix) {
			return l.code, l.msg, true
		}
	}
	return "", "", false
}

// alertNames are OpenSSL's reasons for the alerts a peer may send.
var alertNames = map[uint8]string{
	10: "sslv3 alert unexpected message", 20: "sslv3 alert bad record mac", 40: "sslv3 alert handshake failure",
	42: "sslv3 alert bad certificate", 43: "sslv3 alert unsupported certificate", 44: "sslv3 alert certificate revoked",
	45: "sslv3 alert certificate expired", 46: "sslv3 alert certificate unknown", 47: "sslv3 alert illegal parameter",
	48: "tlsv1 alert unknown ca", 49: "tlsv1 alert access denied", 50: "tlsv1 alert decode error",
	51: "tlsv1 alert decrypt error", 70: "tlsv1 alert protocol version", 71: "tlsv1 alert insufficient security",
	80: "tlsv1 alert internal error", 86: "tlsv1 alert inappropriate fallback", 109: "tlsv13 alert missing extension",
	112: "tlsv1 unrecognized name", 116: "tlsv13 alert certificate required", 120: "tlsv1 alert no application protocol",
}

func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "TLSv1.3"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS10:
		return "TLSv1"
	}
	return "unknown"
}
