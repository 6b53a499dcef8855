// Package testcert makes throwaway TLS certificates for tests: real
// self-signed ECDSA certificates for localhost and 127.0.0.1, generated at
// test time so that no key material is ever committed.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"
)

// New returns a self-signed CA certificate for localhost and 127.0.0.1
// and its key, as PEM; expired makes one whose validity ended an hour ago.
func New(t testing.TB, expired bool) (certPEM, keyPEM []byte) {
	t.Helper()
	notAfter := time.Now().Add(time.Hour)
	if expired {
		notAfter = time.Now().Add(-time.Hour)
	}
	return sign(t, &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter,
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	})
}

// CommonNameOnly returns a self-signed CA certificate whose only name is
// the subject's CN (no subject alt names, as Node's test fixtures), and
// its key, as PEM.
func CommonNameOnly(t testing.TB, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	return sign(t, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: time.Now().Add(time.Hour),
	})
}

// sign signs tmpl, made a CA for server and client use, with a new key.
func sign(t testing.TB, tmpl *x509.Certificate) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}
