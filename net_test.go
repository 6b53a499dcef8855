package secexec_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/kernel/errno"
)

// guestServer is a node HTTP server the tests start in a VM.
const guestServer = `
const http = require('http');
http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    res.setHeader('content-type', 'text/plain');
    res.end(req.method + ' ' + req.url + ' ' + req.headers.host + ' ' + body);
  });
}).listen(8080, () => console.log('ready'));
`

// The embedder reaches a server running in the VM, in every engine mode:
// Fetch for one request, a Transport for many over kept-alive
// connections, Dial for raw bytes; nothing listening is ECONNREFUSED.
func TestNetFetchGuestServer(t *testing.T) {
	for _, mode := range []secexec.EngineMode{secexec.EngineInProcess, secexec.EngineShared, secexec.EnginePerVM} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			vm, err := secexec.NewVM(ctx, secexec.Options{Engine: mode, Permissions: secexec.AllowAll()})
			if err != nil {
				t.Fatal(err)
			}
			defer vm.Close()
			if _, err := vm.Net().Dial(ctx, 8080); !errors.Is(err, errno.ECONNREFUSED) {
				t.Fatalf("Dial before the server listens: %v, want ECONNREFUSED", err)
			}
			p, err := vm.Spawn(ctx, []string{"node", "-e", guestServer}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Signal(secexec.SIGKILL)
			line, err := bufio.NewReader(p.Stdout).ReadString('\n')
			if err != nil || line != "ready\n" {
				t.Fatalf("server said %q, %v", line, err)
			}

			req, _ := http.NewRequest("POST", "http://app.internal:8080/hello?x=1", strings.NewReader("payload"))
			resp, err := vm.Net().Fetch(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(body) != "POST /hello?x=1 app.internal:8080 payload" {
				t.Fatalf("fetch: %d %q", resp.StatusCode, body)
			}

			client := &http.Client{Transport: vm.Net().Transport()}
			defer client.CloseIdleConnections()
			for i := 0; i < 3; i++ {
				resp, err := client.Get("http://vm:8080/n")
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(body) != "GET /n vm:8080 " {
					t.Fatalf("request %d: %q", i, body)
				}
			}

			c, err := vm.Net().Dial(ctx, 8080)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(c, "GET /raw HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(c)
			c.Close()
			if err != nil || !strings.HasPrefix(string(raw), "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(string(raw), "GET /raw x ") {
				t.Fatalf("raw: %q, %v", raw, err)
			}
		})
	}
}
