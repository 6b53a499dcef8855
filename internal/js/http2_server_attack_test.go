package js

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/secexec/secexec/internal/node/h2"
	"github.com/secexec/secexec/internal/node/h2/h2test"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// h2GuestServer is a guest HTTP/2 server on port 8443 (h2c) for host
// clients: /hello answers, /hang never does, /count tells how many
// streams the guest saw, /big writes 8 MiB with backpressure and
// reports on stderr how far it got.
const h2GuestServer = `
const http2 = require('http2');
let seen = 0;
const server = http2.createServer();
server.on('stream', (stream, headers) => {
  seen++;
  const path = headers[':path'];
  if (path === '/hello') { stream.respond({ 'x-guest': 'yes' }); stream.end('hello ' + headers[':method'] + ' ' + headers['x-host']); }
  else if (path === '/count') { stream.respond(); stream.end(String(seen)); }
  else if (path === '/big') {
    stream.respond();
    const chunk = Buffer.alloc(64 << 10, 120);
    let sent = 0;
    const more = () => {
      while (sent < 8 << 20) {
        sent += chunk.length;
        if (!stream.write(chunk)) { console.error('stalled', sent); stream.once('drain', more); return; }
      }
      stream.end();
    };
    more();
  }
  // /hang: no answer.
});
server.on('sessionError', () => {});
server.listen(8443, () => console.log('ready'));
`

// startGuest runs script in v and waits for its first stdout line.
func startGuest(t *testing.T, v *testVM, script string) (*kernel.Process, func() string) {
	t.Helper()
	k := v.vm.Kernel
	v.writeFile("/workspace/server.js", script)
	outR, outW, err := k.NewPipe()
	if err != nil {
		t.Fatal(err)
	}
	errW, errOut := collect(k, t)
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"node", "server.js"},
		Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/workspace", Files: []vfs.File{nil, outW, errW}})
	outW.DecRef()
	errW.DecRef()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Signal(kernel.SIGKILL) })
	sc := bufio.NewScanner(fileReader{outR})
	if !sc.Scan() || sc.Text() != "ready" {
		_ = p.Signal(kernel.SIGKILL)
		t.Fatalf("first line %q\nstderr: %s", sc.Text(), trunc(errOut()))
	}
	go func() {
		defer outR.DecRef()
		for sc.Scan() {
		}
	}()
	return p, errOut
}

// hostH2Client is Go's HTTP/2 client reaching the guest's port over the
// VM's port mapping (prior knowledge, as curl --http2-prior-knowledge).
func hostH2Client(k *kernel.Kernel, port uint16) *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		Protocols: &p,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return k.DialGuest(ctx, port)
		},
	}}
}

func hostGet(t *testing.T, c *http.Client, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://guest"+path, nil)
	req.Header.Set("x-host", "go")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s body: %v", path, err)
	}
	return resp.StatusCode, string(b)
}

// dialRaw is a hostile client connection to the guest's port (see
// h2test: the attacks internal/node/h2's tests run against the server
// without JavaScript).
func dialRaw(t *testing.T, k *kernel.Kernel, port uint16) *h2test.Client {
	t.Helper()
	c, err := k.DialGuest(context.Background(), port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r, err := h2test.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHTTP2ServerFromHost: Go's HTTP/2 client reaches a guest server
// through the VM's port mapping.
func TestHTTP2ServerFromHost(t *testing.T) {
	v := newVM(t, nil)
	startGuest(t, v, h2GuestServer)
	c := hostH2Client(v.vm.Kernel, 8443)
	if code, body := hostGet(t, c, "/hello"); code != 200 || body != "hello GET go" {
		t.Fatalf("GET /hello: %d %q", code, body)
	}
}

// TestHTTP2ServerAttacks drives a guest server with hostile clients: a
// rapid-reset flood (CVE-2023-44487), more streams than the session
// allows, an oversized header list (an HPACK bomb), and a client that
// never reads. Each ends in a bounded way, the guest keeps serving, and
// the host's goroutines go back down when the VM closes.
func TestHTTP2ServerAttacks(t *testing.T) {
	base := runtime.NumGoroutine()
	// Room for more sockets than a process may hold server sessions, so
	// that the session limit is the one met (the VM's socket limit,
	// which still counts a session's socket, comes first by default).
	v := newConfiguredVM(t, engine(t), vm.Config{Limits: kernel.Limits{Sockets: 4 * h2.MaxServerSessions}})
	p, errOut := startGuest(t, v, h2GuestServer)
	k := v.vm.Kernel

	t.Run("rapid reset", func(t *testing.T) {
		r := dialRaw(t, k, 8443)
		const n = 20000
		sent := r.RapidReset(n, "/hang")
		code, gotGoaway, err := r.ReadUntil(func(http2.Frame) bool { return false })
		t.Logf("rapid reset: %d pairs written, goaway %v %v, end %v", sent, gotGoaway, code, err)
		if gotGoaway && code != http2.ErrCodeEnhanceYourCalm && code != http2.ErrCodeNo {
			t.Errorf("goaway code %v", code)
		}
		// The guest saw at most the streams it could have been running.
		_, body := hostGet(t, hostH2Client(k, 8443), "/count")
		var seen int
		fmt.Sscan(body, &seen)
		if seen >= n {
			t.Errorf("the guest saw %d of %d reset streams", seen, n)
		}
	})

	t.Run("too many streams", func(t *testing.T) {
		r := dialRaw(t, k, 8443)
		if refused, err := r.Refused(400, 400-h2.ServerStreams, "/hang"); refused < 400-h2.ServerStreams {
			t.Fatalf("%d streams over the limit refused (%v)", refused, err)
		}
	})

	t.Run("header list too large", func(t *testing.T) {
		r := dialRaw(t, k, 8443)
		// 200 KiB of headers in CONTINUATION frames, over node's 64 KiB.
		status, rst, gotGoaway, err := r.HeaderBomb("/hello", 200<<10)
		if status != "431" && !rst && !gotGoaway {
			t.Fatalf("oversized header list: status %q, no reset, no GOAWAY (%v)", status, err)
		}
		// The guest never saw it.
		if code, body := hostGet(t, hostH2Client(k, 8443), "/hello"); code != 200 || body != "hello GET go" {
			t.Fatalf("after the bomb: %d %q", code, body)
		}
	})

	t.Run("client never reads", func(t *testing.T) {
		r := dialRaw(t, k, 8443)
		// No WINDOW_UPDATE ever: the server may send the initial 65535.
		if got, err := r.NeverRead("/big"); err != nil || got != 65535 {
			t.Fatalf("got %d bytes (%v)", got, err)
		}
		// The guest still serves while that stream waits.
		if code, body := hostGet(t, hostH2Client(k, 8443), "/hello"); code != 200 || body != "hello GET go" {
			t.Fatalf("beside the stalled stream: %d %q", code, body)
		}
	})

	t.Run("sessions per process", func(t *testing.T) {
		// Last: the sessions end only as their sockets close.
		// More connections than a process may hold sessions: the ones over
		// the limit are closed at once, the others get the server's
		// SETTINGS.
		served, closed := 0, 0
		for i := 0; i < h2.MaxServerSessions+20; i++ {
			r := dialRaw(t, k, 8443)
			_, _, err := r.ReadUntil(func(f http2.Frame) bool { _, ok := f.(*http2.SettingsFrame); return ok })
			if err != nil {
				closed++
			} else {
				served++
			}
		}
		if served > h2.MaxServerSessions || closed == 0 {
			t.Fatalf("%d sessions served, %d closed; limit %d", served, closed, h2.MaxServerSessions)
		}
	})

	// The process ends (the VM's kill): every session's goroutines end
	// with it.
	_ = p.Signal(kernel.SIGKILL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.HostWait(ctx); err != nil {
		t.Fatal(err)
	}
	// The never-read stream's writes stalled at the first window, not
	// at 8 MiB: the guest saw backpressure.
	stderr := errOut()
	var stalled int
	if _, err := fmt.Sscanf(stderr, "stalled %d", &stalled); err != nil || stalled > 1<<20 {
		t.Errorf("guest stderr %q: want a stall within the first MiB", trunc(stderr))
	}
	if n := h2test.WaitGoroutines(base + 10); n > base+10 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after the VM closed, %d before\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}
