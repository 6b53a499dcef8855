package clients_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/secexec/secexec"
	secapi "github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/internal/cli"
)

// TestMain lets this test binary be the secexec command (the server the
// clients talk to) and its engine process.
func TestMain(m *testing.M) {
	if secexec.IsEngine() {
		secexec.EngineMain()
	}
	if os.Getenv(cliEnv) == "1" {
		ctx, stop := signalContext()
		code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		secexec.Shutdown(context.Background())
		os.Exit(code)
	}
	os.Exit(m.Run())
}

const cliEnv = "SECEXEC_TEST_RUN_CLI"

func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, os.Interrupt)
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// server is `secexec serve` running as a process.
type server struct {
	url    string
	tokens [2]string
	cmd    *exec.Cmd
}

// startServer starts `secexec serve` on a free loopback port with two
// tenants, and stops it (SIGTERM, which must exit cleanly) at cleanup.
func startServer(t *testing.T) *server {
	t.Helper()
	s := &server{tokens: [2]string{secapi.NewToken(), secapi.NewToken()}}
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	lines := secapi.TokenLine("one", s.tokens[0]) + "\n" + secapi.TokenLine("two", s.tokens[1]) + "\n"
	if err := os.WriteFile(tokens, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(os.Args[0], "serve", "--listen", "127.0.0.1:0", "--tokens-file", tokens, "--drain-timeout", "10s",
		// The clients' tests serve host tools on loopback.
		"--allow-tool-network", "127.0.0.1/32",
		// and save, restore and pause VMs.
		"--snapshot-dir", filepath.Join(dir, "snapshots"))
	s.cmd.Env = append(os.Environ(), cliEnv+"=1")
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	re := regexp.MustCompile(`serving the API on (http://\S+)`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			s.url = m[1]
			break
		}
		t.Log(sc.Text())
	}
	if s.url == "" {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		t.Fatal("secexec serve did not start")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- s.cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("secexec serve after SIGTERM: %v", err)
			}
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			t.Error("secexec serve did not stop on SIGTERM")
		}
	})
	return s
}

func (s *server) env() []string {
	return append(os.Environ(), "SECEXEC_URL="+s.url, "SECEXEC_TOKEN="+s.tokens[0], "SECEXEC_TOKEN_2="+s.tokens[1])
}

// TestClients runs both clients' suites against one server.
func TestClients(t *testing.T) {
	s := startServer(t)
	t.Run("python", func(t *testing.T) { testPython(t, s) })
	t.Run("typescript", func(t *testing.T) { testTypeScript(t, s) })
}

// TestClientRoutesInOpenAPI: every route a client lists is in the
// document, and every path template a client builds is one of them.
func TestClientRoutesInOpenAPI(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(secapi.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`"(GET|POST|PUT|PATCH|DELETE) (/[^"]*)"`)
	for _, f := range []string{"python/secexec_client/__init__.py", "typescript/src/index.ts"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ms := re.FindAllStringSubmatch(string(src), -1)
		if len(ms) < 10 {
			t.Fatalf("%s: found only %d routes", f, len(ms))
		}
		for _, m := range ms {
			ops, ok := doc.Paths[m[2]]
			if _, has := ops[strings.ToLower(m[1])]; !ok || !has {
				t.Errorf("%s uses %s %s, which openapi.json lacks", f, m[1], m[2])
			}
		}
		// The suffixes the client appends to a VM's path exist.
		for _, suffix := range regexp.MustCompile(`"(/(?:exec|files|archive|js/evaluate|js/execute|contexts|processes)[^"]*)"`).FindAllStringSubmatch(string(src), -1) {
			p := strings.TrimSuffix(strings.SplitN(suffix[1], "?", 2)[0], "/")
			if p == "/files" {
				p = "/files/{path}"
			}
			if _, ok := doc.Paths["/v1/vms/{id}"+p]; !ok {
				t.Errorf("%s builds /v1/vms/{id}%s, which openapi.json lacks", f, p)
			}
		}
	}
}
