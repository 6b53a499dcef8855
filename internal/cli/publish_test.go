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
	server := `require('http').createServer((req, res) => { res.end('from guest ' + req.url); res.socket.server.close(); }).listen(3000)`
	publishServes(t, "node -e \""+server+"\"", "from guest /hi")
	if code, _, errOut := runCLI(t, "", "exec", "--publish", "0.0.0.0:8080:80", "true"); code != 2 || !strings.Contains(errOut, "loopback") {
		t.Fatalf("non-loopback publish: %d %q", code, errOut)
	}
}

// A python server in the VM (http.server on the kernel's sockets) is
// reachable through --publish as a node one is.
func TestPublishPythonServer(t *testing.T) {
	server := `import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = ("from python " + self.path).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("0.0.0.0", 3000), H).handle_request()
`
	publishServes(t, fmt.Sprintf("python3 -c 'exec(bytes.fromhex(\"%x\").decode())'", server), "from python /hi")
}

// publishServes runs cmd (a server on the guest's port 3000 that answers
// one request and exits) with --publish, fetches /hi through the host's
// loopback and checks the answer and that the exec then ends.
func publishServes(t *testing.T, cmd, want string) {
	t.Helper()
	port := freePort(t)
	done := make(chan string, 1)
	go func() {
		code, out, errOut := runCLI(t, "", "exec", "--publish", fmt.Sprintf("%d:3000", port), cmd)
		done <- fmt.Sprintf("%d %q %q", code, out, errOut)
	}()
	var body []byte
	deadline := time.Now().Add(60 * time.Second)
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
	if string(body) != want {
		t.Fatalf("body %q, want %q", body, want)
	}
	select {
	case r := <-done:
		if !strings.HasPrefix(r, "0 ") {
			t.Fatalf("exec: %s", r)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("exec did not end after its server did")
	}
}
