package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/internal/cli"
)

// TestMain lets this test binary be the engine process of the VMs its
// servers create, and the secexec command (for the tests that start
// `secexec serve` as a process).
func TestMain(m *testing.M) {
	if secexec.IsEngine() {
		secexec.EngineMain()
	}
	if os.Getenv(cliEnv) == "1" {
		// As cmd/secexec does: SIGTERM drains `secexec serve`.
		ctx, stop := cli.SignalContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		secexec.Shutdown(context.Background())
		os.Exit(code)
	}
	os.Exit(m.Run())
}

const cliEnv = "SECEXEC_TEST_RUN_CLI"

// The tenants of the test servers and their tokens.
const (
	alice = "alice-token"
	bob   = "bob-token"
)

func testTokens() []api.Token {
	return []api.Token{{Tenant: "alice", Hash: api.HashToken(alice)}, {Tenant: "bob", Hash: api.HashToken(bob)}}
}

// testServer is an API server on a loopback port.
type testServer struct {
	t   testing.TB
	api *api.Server
	url string
	hs  *httptest.Server
}

// kill stops the server as a crash would for its clients: its listener
// closes (connections are refused) and its VMs and engines end; what it
// saved in the store stays.
func (s *testServer) kill() {
	s.hs.CloseClientConnections()
	s.hs.Close()
	_ = s.api.Shutdown(context.Background())
}

func newServer(t testing.TB, cfg api.Config) *testServer {
	t.Helper()
	if cfg.Tokens == nil {
		cfg.Tokens = testTokens()
	}
	s, err := api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.Close()
		_ = s.Shutdown(context.Background())
	})
	return &testServer{t: t, api: s, url: hs.URL, hs: hs}
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %q: %v", r.body, err)
	}
}

// errCode returns the code of an error answer.
func (r *response) errCode(t testing.TB) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	r.json(t, &e)
	if e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not an error answer: %d %q", r.status, r.body)
	}
	return e.Error.Code
}

// do sends a request with token (none if empty); a non-nil body that is
// not []byte or io.Reader is sent as JSON.
func (s *testServer) do(token, method, path string, body any, hdr ...string) *response {
	s.t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		data, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd, ct = bytes.NewReader(data), "application/json"
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	validateResponse(s.t, req, resp, data)
	return &response{status: resp.StatusCode, header: resp.Header, body: data}
}

// newVM creates a VM for token and returns its id.
func (s *testServer) newVM(token string, body any) string {
	s.t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	r := s.do(token, "POST", "/v1/vms", body)
	if r.status != http.StatusCreated {
		s.t.Fatalf("create VM: %d %s", r.status, r.body)
	}
	var vm struct{ ID string }
	r.json(s.t, &vm)
	return vm.ID
}

// execResult is a decoded exec answer.
type execResult struct {
	ExitCode  int    `json:"exit_code"`
	Outcome   string `json:"outcome"`
	Stdout    []byte `json:"stdout"`
	Stderr    []byte `json:"stderr"`
	Truncated bool   `json:"truncated"`
}

func (s *testServer) exec(token, id string, req map[string]any) (*response, execResult) {
	s.t.Helper()
	r := s.do(token, "POST", "/v1/vms/"+id+"/exec", req)
	var res execResult
	if r.status == http.StatusOK {
		r.json(s.t, &res)
	}
	return r, res
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// serveAsync runs api.Serve on a loopback port; cancel starts the
// shutdown, whose result done delivers.
func serveAsync(t *testing.T, o api.ServeOptions) (ts *testServer, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	s, err := api.New(api.Config{Tokens: testTokens()})
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	go func() { ch <- api.Serve(ctx, ln, s, o) }()
	return &testServer{t: t, api: s, url: "http://" + ln.Addr().String()}, cancel, ch
}
