package client_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/client"
	"github.com/secexec/secexec/internal/api"
)

// TestMain lets this test binary be the engine process of the test
// servers' VMs.
func TestMain(m *testing.M) {
	if secexec.IsEngine() {
		secexec.EngineMain()
	}
	code := m.Run()
	secexec.Shutdown(context.Background())
	os.Exit(code)
}

// The tenants of the test servers and their tokens.
const (
	alice = "alice-token"
	bob   = "bob-token"
)

// server is a real api.Server on a loopback port.
type server struct {
	api *api.Server
	url string
	// conns counts the TCP connections the server accepted.
	mu    sync.Mutex
	conns int
}

func newServer(t testing.TB, cfg api.Config) *server {
	t.Helper()
	cfg.Tokens = []api.Token{{Tenant: "alice", Hash: api.HashToken(alice)}, {Tenant: "bob", Hash: api.HashToken(bob)}}
	s, err := api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &server{api: s}
	hs := httptest.NewUnstartedServer(s)
	hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			srv.mu.Lock()
			srv.conns++
			srv.mu.Unlock()
		}
	}
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		_ = s.Shutdown(context.Background())
	})
	srv.url = hs.URL
	return srv
}

func (s *server) connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// client returns a client of s for token.
func (s *server) client(t testing.TB, token string, opts client.Options) *client.Client {
	t.Helper()
	opts.Token = token
	c, err := client.New(s.url, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newVM creates a VM closed at the end of the test.
func newVM(t testing.TB, c *client.Client, opts client.VMOptions) *client.VM {
	t.Helper()
	vm, err := c.NewVM(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vm.Close() })
	return vm
}
