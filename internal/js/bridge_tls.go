package js

// The TLS half of the bridge: tls.js asks the kernel to run a handshake on
// one of its sockets (kernel.Process.StartTLS) with node's options
// translated to crypto/tls's, and gets back the session as node's
// TLSSocket shows it.

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"sync"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/internal/hostwork"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
)

// maxTLSRequest bounds a handshake request's JSON: certificates, keys and
// CAs are bounded again by the kernel (maxPEM).
const maxTLSRequest = 4 << 20

// tlsHandshakeRequest is what tls.js asks of StartTLS: a tlsRequest
// with the protocol range and cipher suites.
type tlsHandshakeRequest struct {
	tlsRequest
	// MinVersion and MaxVersion are OpenSSL's numbers (0x0301 TLS 1.0 ...
	// 0x0304 TLS 1.3), which are crypto/tls's too.
	MinVersion uint16 `json:"minVersion"`
	MaxVersion uint16 `json:"maxVersion"`
	// Ciphers are IANA suite names; tls.js has resolved node's cipher list.
	Ciphers []string `json:"ciphers"`
	// SNI makes a server ask tls.js for its certificate by the client's
	// server name (SNICallback, addContext): a "tlssni" event, answered
	// with tlsSNIReply.
	SNI bool `json:"sni"`
}

// sniWaits are the handshakes waiting for tls.js's answer to a "tlssni"
// event, by request id. Handshakes run on their own goroutines.
type sniWaits struct {
	mu      sync.Mutex
	waiting map[int]chan sniAnswer
}

// sniAnswer is tls.js's answer: the certificate to present, none (keep
// the server's), or a failure of the SNICallback.
type sniAnswer struct {
	Failed bool     `json:"failed"`
	Cert   string   `json:"cert"`
	Key    string   `json:"key"`
	CA     []string `json:"ca"`
}

// ask posts the client's name to tls.js as event id and waits for its answer.
func (r *rt) askSNI(ctx context.Context, id int, name string) (*kernel.TLSCert, error) {
	ch := make(chan sniAnswer, 1)
	r.sni.mu.Lock()
	if r.sni.waiting == nil {
		r.sni.waiting = map[int]chan sniAnswer{}
	}
	r.sni.waiting[id] = ch
	r.sni.mu.Unlock()
	defer func() {
		r.sni.mu.Lock()
		delete(r.sni.waiting, id)
		r.sni.mu.Unlock()
	}()
	if !r.post(ctx, event{kind: "tlssni", a: id, payload: name}) {
		return nil, errno.EINTR
	}
	select {
	case a := <-ch:
		if a.Failed {
			return nil, &kernel.TLSError{Code: "ERR_TLS_SNI_CALLBACK", Err: errors.New("the SNICallback failed")}
		}
		if a.Cert == "" && a.Key == "" {
			return nil, nil
		}
		c := &kernel.TLSCert{Cert: []byte(a.Cert), Key: []byte(a.Key)}
		for _, ca := range a.CA {
			c.CA = append(c.CA, []byte(ca))
		}
		return c, nil
	case <-ctx.Done():
		return nil, errno.EINTR
	}
}

// bridgeTLSSNIReply answers the "tlssni" event id; it returns false when no
// handshake waits for it (it ended meanwhile).
func bridgeTLSSNIReply(r *rt, a *callArgs) (*v8.Value, error) {
	id, js := a.int(0), a.str(1)
	if len(js) > maxTLSRequest {
		return nil, errno.EINVAL
	}
	var ans sniAnswer
	if json.Unmarshal([]byte(js), &ans) != nil {
		return nil, errno.EINVAL
	}
	r.sni.mu.Lock()
	ch := r.sni.waiting[id]
	delete(r.sni.waiting, id)
	r.sni.mu.Unlock()
	if ch == nil {
		return r.boolean(false), nil
	}
	ch <- ans // buffered: the one answer
	return r.boolean(true), nil
}

// cipherSuiteIDs maps crypto/tls's suites, secure and insecure, by name.
var cipherSuiteIDs = func() map[string]uint16 {
	m := map[string]uint16{}
	for _, list := range [][]*tls.CipherSuite{tls.CipherSuites(), tls.InsecureCipherSuites()} {
		for _, c := range list {
			m[c.Name] = c.ID
		}
	}
	return m
}()

// options translates the request to the kernel's; an unknown suite or a
// version outside what OpenSSL numbers is EINVAL (tls.js sends neither).
func (req *tlsHandshakeRequest) options() (kernel.TLSOptions, error) {
	// tls.js checks the server's name itself, as node does.
	opts := kernel.TLSOptions{Server: req.Server, ServerName: req.ServerName, NoNameCheck: true, Insecure: !req.RejectUnauthorized,
		Cert: []byte(req.Cert), Key: []byte(req.Key), ALPN: req.ALPN, RequestCert: req.RequestCert,
		MinVersion: req.MinVersion, MaxVersion: req.MaxVersion}
	for _, c := range req.CA {
		opts.CA = append(opts.CA, []byte(c))
	}
	for _, v := range []uint16{req.MinVersion, req.MaxVersion} {
		if v != 0 && (v < tls.VersionTLS10 || v > tls.VersionTLS13) {
			return opts, errno.EINVAL
		}
	}
	if len(req.Ciphers) > 64 {
		return opts, errno.EINVAL
	}
	if req.Ciphers != nil {
		// An empty list is no TLS 1.0-1.2 suite at all (a list of TLS
		// 1.3 suites only), not the defaults.
		opts.CipherSuites = make([]uint16, 0, len(req.Ciphers))
	}
	for _, name := range req.Ciphers {
		id, ok := cipherSuiteIDs[name]
		if !ok {
			return opts, errno.EINVAL
		}
		opts.CipherSuites = append(opts.CipherSuites, id)
	}
	return opts, nil
}

// bridgeTLSHandshake runs a handshake on fd; the session (tlsReport's
// JSON) or the failure comes back as event id.
func bridgeTLSHandshake(r *rt, a *callArgs) (*v8.Value, error) {
	fd, js, id := a.int(0), a.str(1), a.int(2)
	if len(js) > maxTLSRequest {
		return nil, errno.EINVAL
	}
	var req tlsHandshakeRequest
	if json.Unmarshal([]byte(js), &req) != nil {
		return nil, errno.EINVAL
	}
	opts, err := req.options()
	if err != nil {
		return nil, err
	}
	if req.Server && req.SNI {
		opts.SelectCert = func(ctx context.Context, name string) (*kernel.TLSCert, error) { return r.askSNI(ctx, id, name) }
	}
	return nil, r.startOp("tls", id, func(ctx context.Context) (string, error) {
		// The handshake's public-key work is the guest's: its thread's
		// CPU time is charged to the process.
		var info kernel.TLSInfo
		err := hostwork.Run(r.p, func() error {
			var herr error
			info, herr = r.p.StartTLS(ctx, fd, opts)
			return herr
		})
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(reportTLS(info))
		return string(b), err
	})
}
