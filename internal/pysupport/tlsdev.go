package pysupport

import (
	"bytes"
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
)

// TLS for Python's ssl module (ssl.py in the support layer): the kernel
// runs the handshake on the host side, as it does for node's tls and for
// curl, verifying the peer against the host's trust store or the CAs the
// guest loaded; the socket carries plaintext afterwards. CPython for WASI
// has no _ssl, so nothing of OpenSSL runs in the guest.

// tlsRequest is the payload of opStartTLS.
type tlsRequest struct {
	CA   []string `json:"ca"`   // PEM; empty: the host's trust store
	Cert string   `json:"cert"` // PEM chain, for a server or a client certificate
	Key  string   `json:"key"`  // PEM
	ALPN []string `json:"alpn"`
}

// tlsResponse describes the session, in the shapes ssl.SSLSocket reports.
type tlsResponse struct {
	Version    string   `json:"version"`
	Cipher     string   `json:"cipher"`
	ALPN       string   `json:"alpn"`
	Authorized bool     `json:"authorized"`
	PeerCerts  [][]byte `json:"peer_certs"` // DER, leaf first
	// Peer is the leaf as ssl.SSLSocket.getpeercert() returns it.
	Peer *peerCert `json:"peer,omitempty"`
}

// peerCert is CPython's decoded certificate: names are lists of RDNs,
// each a list of (attribute, value) pairs.
type peerCert struct {
	Subject        [][][2]string `json:"subject"`
	Issuer         [][][2]string `json:"issuer"`
	Version        int           `json:"version"`
	SerialNumber   string        `json:"serialNumber"`
	NotBefore      string        `json:"notBefore"`
	NotAfter       string        `json:"notAfter"`
	SubjectAltName [][2]string   `json:"subjectAltName,omitempty"`
}

// tlsFailure is the payload of a failed handshake.
type tlsFailure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Bounds of a TLS request's lists.
const maxTLSList = 64

// parseTLSRequest decodes opStartTLS's payload and checks its flags:
// EINVAL for anything but one JSON object of the known fields within the
// bounds.
func parseTLSRequest(data []byte, flags int64) (tlsRequest, error) {
	var req tlsRequest
	if len(data) > 0 {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil || dec.More() {
			return req, errno.EINVAL
		}
	}
	if len(req.CA) > maxTLSList || len(req.ALPN) > maxTLSList || flags&^(tlsServer|tlsInsecure) != 0 {
		return req, errno.EINVAL
	}
	return req, nil
}

func startTLS(ctx context.Context, p *kernel.Process, r netRequest) netResponse {
	req, err := parseTLSRequest(r.data, r.a)
	if err != nil {
		return netResponse{err: err}
	}
	opts := kernel.TLSOptions{
		Server:     r.a&tlsServer != 0,
		ServerName: r.addr,
		Insecure:   r.a&tlsInsecure != 0,
		Cert:       []byte(req.Cert),
		Key:        []byte(req.Key),
		ALPN:       req.ALPN,
	}
	for _, c := range req.CA {
		opts.CA = append(opts.CA, []byte(c))
	}
	info, err := p.StartTLS(ctx, r.fd, opts)
	if err != nil {
		return netResponse{err: err}
	}
	out := tlsResponse{Version: info.Version, Cipher: info.Cipher, ALPN: info.ALPN,
		Authorized: info.Authorized, PeerCerts: info.PeerCerts}
	if len(info.PeerCerts) > 0 {
		if c, err := x509.ParseCertificate(info.PeerCerts[0]); err == nil {
			out.Peer = decodeCert(c)
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return netResponse{err: errno.EIO}
	}
	resp := netResponse{data: b}
	if info.Authorized {
		resp.r1 = 1
	}
	return resp
}

// oidNames are OpenSSL's long names of the usual name attributes.
var oidNames = map[string]string{
	"2.5.4.3": "commonName", "2.5.4.4": "surname", "2.5.4.5": "serialNumber",
	"2.5.4.6": "countryName", "2.5.4.7": "localityName", "2.5.4.8": "stateOrProvinceName",
	"2.5.4.9": "streetAddress", "2.5.4.10": "organizationName", "2.5.4.11": "organizationalUnitName",
	"2.5.4.12": "title", "2.5.4.42": "givenName", "1.2.840.113549.1.9.1": "emailAddress",
	"0.9.2342.19200300.100.1.25": "domainComponent", "0.9.2342.19200300.100.1.1": "userId",
}

// decodeCert renders c as CPython's ssl module does (_decode_certificate).
func decodeCert(c *x509.Certificate) *peerCert {
	pc := &peerCert{
		Subject:      rdnSequence(c.Subject.Names),
		Issuer:       rdnSequence(c.Issuer.Names),
		Version:      c.Version,
		SerialNumber: strings.ToUpper(c.SerialNumber.Text(16)),
		NotBefore:    c.NotBefore.UTC().Format("Jan _2 15:04:05 2006 GMT"),
		NotAfter:     c.NotAfter.UTC().Format("Jan _2 15:04:05 2006 GMT"),
	}
	if len(pc.SerialNumber)%2 == 1 {
		pc.SerialNumber = "0" + pc.SerialNumber
	}
	for _, d := range c.DNSNames {
		pc.SubjectAltName = append(pc.SubjectAltName, [2]string{"DNS", d})
	}
	for _, e := range c.EmailAddresses {
		pc.SubjectAltName = append(pc.SubjectAltName, [2]string{"email", e})
	}
	for _, ip := range c.IPAddresses {
		s := ip.String()
		if ip.To4() == nil {
			// OpenSSL spells IPv6 addresses in full, upper case.
			var b strings.Builder
			for i := 0; i < 16; i += 2 {
				if i > 0 {
					b.WriteByte(':')
				}
				fmt.Fprintf(&b, "%X", int(ip[i])<<8|int(ip[i+1]))
			}
			s = b.String()
		}
		pc.SubjectAltName = append(pc.SubjectAltName, [2]string{"IP Address", s})
	}
	for _, u := range c.URIs {
		pc.SubjectAltName = append(pc.SubjectAltName, [2]string{"URI", u.String()})
	}
	return pc
}

// rdnSequence lists a name's attributes in order, one per RDN.
func rdnSequence(names []pkix.AttributeTypeAndValue) [][][2]string {
	out := make([][][2]string, 0, len(names))
	for _, a := range names {
		name := oidNames[a.Type.String()]
		if name == "" {
			name = a.Type.String()
		}
		out = append(out, [][2]string{{name, fmt.Sprint(a.Value)}})
	}
	return out
}
