package cli_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// --publish serves a guest's server on the host's loopback for as long as
// the command runs: here a node server that answers one request and
// exits, which ends the command.
func TestPublish(t *testing.T) {
	port := freePort(t)
	server := `require('http').createServer((req, res) => { res.end('from guest ' + req.url); res.socket.server.close(); }).listen(3000)`
	done := make(chan string, 1)
	go func() {
		code, out, errOut := runCLI(t, "", "exec", "--publish", fmt.Sprintf("%d:3000", port), "node -e \""+server+"\"")
		done <- fmt.Sprintf("%d %q %q", code, out, errOut)
	}()
	var body []byte
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/hi", port))
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer through --publish: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if string(body) != "from guest /hi" {
		t.Fatalf("body %q", body)
	}
	select {
	case r := <-done:
		if !strings.HasPrefix(r, "0 ") {
			t.Fatalf("exec: %s", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("exec did not end after its server did")
	}
	if code, _, errOut := runCLI(t, "", "exec", "--publish", "0.0.0.0:8080:80", "true"); code != 2 || !strings.Contains(errOut, "loopback") {
		t.Fatalf("non-loopback publish: %d %q", code, errOut)
	}
}
