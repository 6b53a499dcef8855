package api_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/internal/testcert"
)

// TestServeTLS: with a certificate the API is HTTPS only, and a client
// that trusts the certificate gets answers.
func TestServeTLS(t *testing.T) {
	certPEM, keyPEM := testcert.New(t, false)
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	ts, cancel, done := serveAsync(t, api.ServeOptions{CertFile: cert, KeyFile: key, DrainTimeout: 5 * time.Second})
	addr := strings.TrimPrefix(ts.url, "http://")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", "https://"+addr+"/v1/vms", nil)
	req.Header.Set("Authorization", "Bearer "+alice)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Fatalf("HTTPS: %d", resp.StatusCode)
	}
	// Plain HTTP on the TLS port gets no API answer.
	if resp, err := http.Get(ts.url + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP was served")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A missing key file is an error, not a plain-HTTP server.
	if err := api.Serve(context.Background(), listen(t), ts.api, api.ServeOptions{CertFile: cert, KeyFile: filepath.Join(dir, "none")}); err == nil {
		t.Fatal("Serve without a key file succeeded")
	}
}
