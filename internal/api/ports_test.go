package api_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/secexec/secexec/internal/api"
)

// portServer is a node server the tests run in a VM on port 3000: HTTP
// answers describe the request (the Authorization header the guest saw
// included); a WebSocket upgrade is answered by hand and echoes text
// frames back prefixed with "echo:".
const portServer = `
const http = require('http'), crypto = require('crypto');
const srv = http.createServer((req, res) => {
  if (req.url === '/headers') { res.setHeader('content-type', 'application/json'); return res.end(JSON.stringify(req.headers)); }
  let n = 0;
  req.on('data', (d) => { n += d.length; });
  req.on('end', () => {
    res.setHeader('content-type', 'text/plain');
    res.end(req.method + ' ' + req.url + ' host=' + req.headers.host +
      ' auth=' + (req.headers.authorization || 'none') + ' body=' + n);
  });
});
srv.on('upgrade', (req, sock) => {
  const accept = crypto.createHash('sha1')
    .update(req.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
  sock.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
    'Sec-WebSocket-Accept: ' + accept + '\r\n\r\n');
  // At /protocols the echo says which subprotocols and credentials the guest saw.
  const pre = Buffer.from(req.url !== '/protocols' ? 'echo:' :
    'protocols=' + (req.headers['sec-websocket-protocol'] || '') + ' auth=' + (req.headers.authorization || 'none') + ':');
  let buf = Buffer.alloc(0);
  sock.on('end', () => sock.end()); // the client went: so does the server, as ws does
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 6) {
      const op = buf[0] & 0x0f, len = buf[1] & 0x7f;
      if (len > 125 || buf.length < 6 + len) break; // the tests send short frames
      const mask = buf.subarray(2, 6), data = Buffer.from(buf.subarray(6, 6 + len));
      for (let i = 0; i < len; i++) data[i] ^= mask[i % 4];
      buf = buf.subarray(6 + len);
      if (op === 8) { sock.end(Buffer.from([0x88, 0])); return; }
      if (op === 1) sock.write(Buffer.concat([Buffer.from([0x81, pre.length + len]), pre, data]));
    }
  });
});
srv.listen(3000);
`

// startPortServer starts portServer in VM id of alice and waits until
// it answers through /ports; it returns the server's pid.
func startPortServer(t testing.TB, s *testServer, id string) int {
	t.Helper()
	if r := s.do(alice, "PUT", "/v1/vms/"+id+"/files/workspace/srv.js", []byte(portServer)); r.status != http.StatusNoContent && r.status != http.StatusCreated && r.status != http.StatusOK {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	pid := spawn(t, s, id, map[string]any{"cmd": "node srv.js"})
	// Wait for the listener: a readiness loop, not a timing assertion.
	for i := 0; ; i++ {
		r := s.do(alice, "GET", "/v1/vms/"+id+"/ports/3000/ready", nil)
		if r.status == http.StatusOK {
			return pid
		}
		if r.status != http.StatusBadGateway || r.errCode(t) != string(api.CodePortClosed) || i == 600 {
			t.Fatalf("waiting for the guest server: %d %s", r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// echoWS dials u (with token unless empty), sends msg and returns the
// echo.
func echoWS(t *testing.T, u, token, msg string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u = "ws" + strings.TrimPrefix(u, "http")
	opts := &websocket.DialOptions{}
	if token != "" {
		opts.HTTPHeader = http.Header{"Authorization": {"Bearer " + token}}
	}
	c, _, err := websocket.Dial(ctx, u, opts)
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	typ, got, err := c.Read(ctx)
	if err != nil || typ != websocket.MessageText {
		t.Fatalf("read: %v %v", typ, err)
	}
	return string(got)
}

// get sends a request with no Authorization header (as a browser opening
// a preview URL) and returns the answer.
func get(t *testing.T, method, u string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}

// /ports proxies HTTP and WebSocket to the guest's server for the VM's
// tenant only, without the tenant's token; a closed port is 502
// port_closed; bodies are bounded.
func TestPortsProxy(t *testing.T) {
	s := newServer(t, api.Config{MaxFileBytes: 4096})
	id := s.newVM(alice, nil)
	startPortServer(t, s, id)
	base := "/v1/vms/" + id + "/ports/3000"

	r := s.do(alice, "GET", base+"/hello/world?x=1&y=%2F", nil)
	if r.status != http.StatusOK || string(r.body) != "GET /hello/world?x=1&y=%2F host=localhost:3000 auth=none body=0" {
		t.Fatalf("GET: %d %q", r.status, r.body)
	}
	r = s.do(alice, "GET", base+"/a%2Fb%20c/d%3F", nil)
	if r.status != http.StatusOK || string(r.body) != "GET /a%2Fb%20c/d%3F host=localhost:3000 auth=none body=0" {
		t.Fatalf("an encoded path: %d %q", r.status, r.body)
	}
	r = s.do(alice, "GET", base+"/", nil)
	if r.status != http.StatusOK || string(r.body) != "GET / host=localhost:3000 auth=none body=0" {
		t.Fatalf("the root: %d %q", r.status, r.body)
	}
	r = s.do(alice, "POST", base+"/submit", []byte(strings.Repeat("x", 1000)))
	if r.status != http.StatusOK || string(r.body) != "POST /submit host=localhost:3000 auth=none body=1000" {
		t.Fatalf("POST: %d %q", r.status, r.body)
	}
	if r := s.do(alice, "POST", base+"/big", []byte(strings.Repeat("x", 5000))); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over the limit: %d %s", r.status, r.body)
	}
	if got := echoWS(t, s.url+base+"/ws", alice, "hi"); got != "echo:hi" {
		t.Fatalf("WebSocket: %q", got)
	}
	if r := s.do(bob, "GET", base+"/", nil); r.status != http.StatusNotFound {
		t.Fatalf("another tenant: %d %s", r.status, r.body)
	}
	if r := s.do("", "GET", base+"/", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("no token: %d", r.status)
	}
	if r := s.do(alice, "GET", "/v1/vms/"+id+"/ports/3001/", nil); r.status != http.StatusBadGateway || r.errCode(t) != string(api.CodePortClosed) {
		t.Fatalf("a closed port: %d %s", r.status, r.body)
	}
	for _, p := range []string{"0", "65536", "x"} {
		if r := s.do(alice, "GET", "/v1/vms/"+id+"/ports/"+p+"/", nil); r.status != http.StatusBadRequest {
			t.Fatalf("port %s: %d %s", p, r.status, r.body)
		}
	}
}

// A preview URL opens the guest's server with no header, HTTP and
// WebSocket; it is scoped to its VM and port, revocable, expiring, and
// every failure is the same 404. Another tenant cannot make, revoke or
// see one.
func TestPreviews(t *testing.T) {
	s := newServer(t, api.Config{})
	id := s.newVM(alice, nil)
	pid := startPortServer(t, s, id)
	var pv struct {
		ID        string    `json:"id"`
		URL       string    `json:"url"`
		Port      int       `json:"port"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	r := s.do(alice, "POST", "/v1/vms/"+id+"/previews", map[string]any{"port": 3000})
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	r.json(t, &pv)
	if !strings.HasPrefix(pv.URL, s.url+"/p/") || !strings.HasSuffix(pv.URL, "/") || pv.Port != 3000 ||
		pv.ExpiresAt.Before(time.Now().Add(59*time.Minute)) || pv.ExpiresAt.After(time.Now().Add(61*time.Minute)) {
		t.Fatalf("preview %+v", pv)
	}
	if code, body := get(t, "GET", pv.URL+"index.html?q=1", nil); code != 200 || body != "GET /index.html?q=1 host=localhost:3000 auth=none body=0" {
		t.Fatalf("open: %d %q", code, body)
	}
	if code, body := get(t, "POST", pv.URL+"form", strings.NewReader("abc")); code != 200 || body != "POST /form host=localhost:3000 auth=none body=3" {
		t.Fatalf("post: %d %q", code, body)
	}
	if got := echoWS(t, pv.URL+"socket", "", "through a preview"); got != "echo:through a preview" {
		t.Fatalf("WebSocket: %q", got)
	}

	// The token is a credential: the metrics name the route, not the path.
	tok := strings.TrimSuffix(strings.TrimPrefix(pv.URL, s.url+"/p/"), "/")
	if r := s.do(alice, "GET", "/metrics", nil); r.status != 200 || contains(r.body, tok) || !contains(r.body, `route="/p/{token}/*"`) {
		t.Fatalf("metrics: %d, token in it: %v", r.status, contains(r.body, tok))
	}

	// Another tenant: no preview of alice's VM, no revoking hers.
	if r := s.do(bob, "POST", "/v1/vms/"+id+"/previews", map[string]any{"port": 3000}); r.status != http.StatusNotFound {
		t.Fatalf("bob creates: %d %s", r.status, r.body)
	}
	if r := s.do(bob, "DELETE", "/v1/vms/"+id+"/previews/"+pv.ID, nil); r.status != http.StatusNotFound {
		t.Fatalf("bob revokes: %d %s", r.status, r.body)
	}
	// A closed port, a bad port, a tampered token.
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/previews", map[string]any{"port": 3001}); r.status != http.StatusNotFound {
		t.Fatalf("closed port: %d %s", r.status, r.body)
	}
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/previews", map[string]any{"port": 70000}); r.status != http.StatusBadRequest {
		t.Fatalf("bad port: %d %s", r.status, r.body)
	}
	claims, sig, _ := strings.Cut(tok, ".")
	for _, bad := range []string{claims + "." + sig[:len(sig)-2] + "AA", claims, "x." + sig, strings.Repeat("a", 600)} {
		if code, _ := get(t, "GET", s.url+"/p/"+bad+"/", nil); code != http.StatusNotFound {
			t.Fatalf("token %q: %d", bad, code)
		}
	}
	// Revoked: 404, and revoking again is 404 too.
	if r := s.do(alice, "DELETE", "/v1/vms/"+id+"/previews/"+pv.ID, nil); r.status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	if code, _ := get(t, "GET", pv.URL, nil); code != http.StatusNotFound {
		t.Fatalf("revoked: %d", code)
	}
	if r := s.do(alice, "DELETE", "/v1/vms/"+id+"/previews/"+pv.ID, nil); r.status != http.StatusNotFound {
		t.Fatalf("revoke twice: %d", r.status)
	}
	// Expired: a one-second preview, opened once it is past.
	r = s.do(alice, "POST", "/v1/vms/"+id+"/previews", map[string]any{"port": 3000, "ttl_seconds": 1})
	r.json(t, &pv)
	time.Sleep(time.Until(pv.ExpiresAt) + 10*time.Millisecond)
	if code, _ := get(t, "GET", pv.URL, nil); code != http.StatusNotFound {
		t.Fatalf("expired: %d", code)
	}
	// The server stops: its live preview is a 404.
	r = s.do(alice, "POST", "/v1/vms/"+id+"/previews", map[string]any{"port": 3000})
	r.json(t, &pv)
	if r := s.do(alice, "DELETE", "/v1/vms/"+id+"/processes/"+itoa(pid), nil); r.status >= 300 {
		t.Fatalf("kill: %d %s", r.status, r.body)
	}
	for i := 0; ; i++ { // until the process is gone and its port closed
		code, _ := get(t, "GET", pv.URL, nil)
		if code == http.StatusNotFound {
			break
		}
		if code != http.StatusOK || i == 600 {
			t.Fatalf("preview of a stopped server: %d", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// And no new preview of the closed port.
	r = s.do(alice, "POST", "/v1/vms/"+id+"/previews", map[string]any{"port": 3000})
	if r.status != http.StatusNotFound {
		t.Fatalf("preview of a stopped server: %d %s", r.status, r.body)
	}
}

// The preview count per VM is bounded.
func TestPreviewQuota(t *testing.T) {
	s := newServer(t, api.Config{MaxPreviews: 2})
	id := s.newVM(alice, nil)
	startPortServer(t, s, id)
	for i := 0; i < 2; i++ {
		if r := s.do(alice, "POST", "/v1/vms/"+id+"/previews", map[string]any{"port": 3000}); r.status != http.StatusCreated {
			t.Fatalf("preview %d: %d %s", i, r.status, r.body)
		}
	}
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/previews", map[string]any{"port": 3000}); r.status != http.StatusTooManyRequests || r.errCode(t) != string(api.CodeQuota) {
		t.Fatalf("over the quota: %d %s", r.status, r.body)
	}
}

// In a fleet, ports and previews work through the replica that does not
// hold the VM: the preview URL names the host the client used, and a
// replica checks a URL signed by another with the shared secret.
func TestPortsAndPreviewsThroughFleet(t *testing.T) {
	a, b := replicaPair(t)
	id := a.newVM(alice, nil)
	startPortServer(t, b, id)
	if r := b.do(alice, "GET", "/v1/vms/"+id+"/ports/3000/via-b", nil); r.status != 200 || !strings.HasPrefix(string(r.body), "GET /via-b ") {
		t.Fatalf("through b: %d %q", r.status, r.body)
	}
	if got := echoWS(t, b.url+"/v1/vms/"+id+"/ports/3000/", alice, "fleet"); got != "echo:fleet" {
		t.Fatalf("WebSocket through b: %q", got)
	}
	r := b.do(alice, "POST", "/v1/vms/"+id+"/previews", map[string]any{"port": 3000})
	var pv struct{ URL string }
	r.json(t, &pv)
	if r.status != http.StatusCreated || !strings.HasPrefix(pv.URL, b.url+"/p/") {
		t.Fatalf("preview through b: %d %s", r.status, r.body)
	}
	if code, body := get(t, "GET", pv.URL+"x", nil); code != 200 || body != "GET /x host=localhost:3000 auth=none body=0" {
		t.Fatalf("preview through b: %d %q", code, body)
	}
	if got := echoWS(t, pv.URL, "", "preview in a fleet"); got != "echo:preview in a fleet" {
		t.Fatalf("WebSocket preview through b: %q", got)
	}
	// The guest sees neither the token nor the fleet's marks.
	r = b.do(alice, "GET", "/v1/vms/"+id+"/ports/3000/headers", nil, "Cookie", "c=1")
	var hdr map[string]string
	r.json(t, &hdr)
	for _, h := range []string{"authorization", "x-secexec-forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto"} {
		if v, ok := hdr[h]; ok {
			t.Errorf("the guest saw %s: %q", h, v)
		}
	}
	if hdr["host"] != "localhost:3000" || hdr["cookie"] != "c=1" {
		t.Errorf("headers the guest saw: %v", hdr)
	}
	// A watch streams through b too.
	ch := openWatch(t, b, id, "path=/workspace")
	if r, _ := a.exec(alice, id, map[string]any{"cmd": "mkdir /workspace/made-on-a"}); r.status != 200 {
		t.Fatalf("exec: %d %s", r.status, r.body)
	}
	expectEvents(t, ch, watchEvent{Op: "create", Name: "made-on-a", IsDir: true})
}

// The requests and WebSockets proxied to one VM at once are bounded: a
// held WebSocket takes the only slot, and the slot comes back when it
// closes.
func TestPortsConnectionBound(t *testing.T) {
	s := newServer(t, api.Config{MaxPortConns: 1})
	id := s.newVM(alice, nil)
	startPortServer(t, s, id)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(s.url, "http") + "/v1/vms/" + id + "/ports/3000/"
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + alice}}})
	if err != nil {
		t.Fatal(err)
	}
	r := s.do(alice, "GET", "/v1/vms/"+id+"/ports/3000/", nil)
	if r.status != http.StatusTooManyRequests || r.errCode(t) != string(api.CodeQuota) || r.header.Get("Retry-After") == "" {
		t.Fatalf("over the bound: %d %s", r.status, r.body)
	}
	c.CloseNow()
	for i := 0; ; i++ { // until the proxy has let the WebSocket go
		r := s.do(alice, "GET", "/v1/vms/"+id+"/ports/3000/", nil)
		if r.status == http.StatusOK {
			break
		}
		if r.status != http.StatusTooManyRequests || i == 600 {
			t.Fatalf("after the WebSocket closed: %d %s", r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := api.New(api.Config{Tokens: []api.Token{{Tenant: "a"}}, PublicURL: "ftp://x/"}); !errors.Is(err, api.ErrConfig) {
		t.Fatalf("a bad preview URL: %v", err)
	}
	if _, err := api.New(api.Config{Tokens: []api.Token{{Tenant: "a"}}, PreviewSecret: []byte("short")}); !errors.Is(err, api.ErrConfig) {
		t.Fatalf("a short preview secret: %v", err)
	}
}

// BenchmarkPortsProxy measures a GET to a guest's server through /ports
// (bearer token) and through a preview (none), each over a kept-alive
// client connection to the API.
func BenchmarkPortsProxy(b *testing.B) {
	s := newServer(b, api.Config{})
	id := s.newVM(alice, nil)
	startPortServer(b, s, id)
	r := s.do(alice, "POST", "/v1/vms/"+id+"/previews", map[string]any{"port": 3000})
	var pv struct{ URL string }
	r.json(b, &pv)
	for _, c := range []struct{ name, url, token string }{
		{"ports", s.url + "/v1/vms/" + id + "/ports/3000/bench", alice},
		{"preview", pv.URL + "bench", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				req, _ := http.NewRequest("GET", c.url, nil)
				if c.token != "" {
					req.Header.Set("Authorization", "Bearer "+c.token)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("%d", resp.StatusCode)
				}
			}
		})
	}
}

// hostileServer answers every connection on 3000 with a 1 MiB header
// line (path /big) or bytes that are not HTTP (any other path).
const hostileServer = `
const net = require('net');
net.createServer((c) => {
  c.once('data', (d) => {
    if (d.toString().startsWith('GET /big ')) {
      c.write('HTTP/1.1 200 OK\r\nX-Big: ' + 'a'.repeat(1 << 20) + '\r\n\r\n');
    } else {
      c.write('SSH-2.0-not-http\r\n\r\n');
    }
    c.end();
  });
}).listen(3000, () => console.log('ready'));
`

// A hostile guest server cannot make the API hold what it sends: a
// header over the bound and an answer that is not HTTP are 502.
func TestPortsHostileGuest(t *testing.T) {
	s := newServer(t, api.Config{})
	id := s.newVM(alice, nil)
	if r := s.do(alice, "PUT", "/v1/vms/"+id+"/files/workspace/h.js", []byte(hostileServer)); r.status >= 300 {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	spawn(t, s, id, map[string]any{"cmd": "node h.js"})
	for i := 0; ; i++ {
		r := s.do(alice, "GET", "/v1/vms/"+id+"/ports/3000/junk", nil)
		if r.status == http.StatusBadGateway && contains(r.body, "server on port 3000 failed") {
			break
		}
		if r.status != http.StatusBadGateway || i == 600 {
			t.Fatalf("not HTTP: %d %s", r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r := s.do(alice, "GET", "/v1/vms/"+id+"/ports/3000/big", nil); r.status != http.StatusBadGateway || r.errCode(t) != string(api.CodeBadGateway) {
		t.Fatalf("a 1 MiB header: %d %.200s", r.status, r.body)
	}
}
