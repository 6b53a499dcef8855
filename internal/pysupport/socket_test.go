package pysupport_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/testcert"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
)

// socketProgram uses sockets the common ways, all inside one process on
// the loopback; its output is the same with host CPython on Linux as in
// the VM (errors print their type and message, never errno numbers,
// which differ between Linux and WASI; ports are not printed).
const socketProgram = `import socket, select, selectors, errno
# TCP: a server and a client in one process.
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen()
host, port = srv.getsockname()
print("listening", host, port > 0, srv.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))
cli = socket.create_connection(("127.0.0.1", port))
conn, peer = srv.accept()
print("accepted", peer == cli.getsockname(), conn.getpeername() == cli.getsockname(), cli.getpeername() == (host, port))
cli.sendall(b"hello over tcp")
print(conn.recv(100))
big = bytes(range(256)) * 4096
cli.sendall(b"x")
conn.sendall(big[:200000])
got = bytearray()
while len(got) < 200000:
    got += cli.recv(65536)
print(len(got), got == big[:200000], conn.recv(1))
with cli.makefile("rwb") as f:
    conn.sendall(b"line one\nline two\n")
    print(f.readline(), f.readline())
cli.shutdown(socket.SHUT_WR)
print("eof", conn.recv(10))
conn.sendall(b"after shutdown")
print(cli.recv(100))
conn.close()
print("closed", cli.recv(10))
cli.close()
# Time-outs and non-blocking mode.
a, b = socket.socketpair()
print("pair", a.family == socket.AF_UNIX, a.type == socket.SOCK_STREAM)
a.settimeout(0.05)
print(a.gettimeout(), a.getblocking())
try:
    a.recv(1)
except socket.timeout as e:
    print(type(e).__name__, e)
a.setblocking(False)
print(a.gettimeout(), a.getblocking())
try:
    a.recv(1)
except BlockingIOError as e:
    print(type(e).__name__, e.errno == errno.EAGAIN)
print(select.select([a, b], [a], [], 0)[0:2] == ([], [a]))
b.send(b"ping")
r, w, _ = select.select([a, b], [], [], 1)
print(r == [a], a.recv(4, socket.MSG_PEEK), a.recv(4))
d = socket.fromfd(b.fileno(), socket.AF_UNIX, socket.SOCK_STREAM)
b.close()
a.setblocking(True)
a.send(b"to the duplicate")
print(d.recv(100), d.dup().getblocking())
a.close(); d.close()
try:
    socket.socket(fileno=12345)
except OSError as e:
    print(type(e).__name__, e.errno == errno.EBADF)
try:
    socket.socket(fileno="x")
except TypeError as e:
    print(type(e).__name__, e)
# A refused connection.
dead = socket.socket(); dead.bind(("127.0.0.1", 0)); dport = dead.getsockname()[1]; dead.close()
try:
    socket.create_connection(("127.0.0.1", dport))
except OSError as e:
    print(type(e).__name__, e.strerror)
print(socket.socket().connect_ex(("127.0.0.1", dport)) == errno.ECONNREFUSED)
# selectors: a non-blocking echo server, two clients.
sel = selectors.DefaultSelector()
ls = socket.create_server(("127.0.0.1", 0))
ls.setblocking(False)
sel.register(ls, selectors.EVENT_READ)
clients = [socket.create_connection(ls.getsockname()) for _ in range(2)]
for i, c in enumerate(clients):
    c.sendall(b"client %d" % i)
echoed = 0
while echoed < 2:
    for key, _ in sel.select(timeout=5):
        if key.fileobj is ls:
            c, _ = ls.accept()
            c.setblocking(False)
            sel.register(c, selectors.EVENT_READ)
        else:
            data = key.fileobj.recv(100)
            key.fileobj.sendall(data.upper())
            sel.unregister(key.fileobj)
            key.fileobj.close()
            echoed += 1
print(sorted(c.recv(100) for c in clients))
for c in clients:
    c.close()
sel.close(); ls.close(); srv.close()
# UDP on the loopback.
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", 0))
v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
v.sendto(b"ping", u.getsockname())
data, addr = u.recvfrom(100)
print(data, addr[0], addr[1] == v.getsockname()[1])
u.sendto(b"pong", addr)
print(v.recvfrom(100)[0])
v.connect(u.getsockname())
v.send(b"one"); v.send(b"two")
print(u.recv(100), u.recvfrom(2)[0])
u.close(); v.close()
# Names.
print(socket.getaddrinfo("localhost", 80, socket.AF_INET, socket.SOCK_STREAM))
print(socket.getaddrinfo("127.0.0.1", "http", socket.AF_INET))
print(socket.getaddrinfo(None, 8080, socket.AF_INET, socket.SOCK_DGRAM, 0, socket.AI_PASSIVE))
print(socket.gethostbyname("localhost"), socket.gethostbyname("127.0.0.1"), socket.getnameinfo(("127.0.0.1", 80), 0))
print(socket.inet_aton("10.1.2.3"), socket.inet_ntoa(b"\x7f\x00\x00\x01"), socket.inet_pton(socket.AF_INET6, "::1"))
print(socket.htons(1), socket.getservbyname("https"), isinstance(socket.gethostname(), str))
try:
    socket.getaddrinfo("localhost", "no-such-service")
except socket.gaierror as e:
    print(type(e).__name__, e)
`

func TestSocketMatchesHost(t *testing.T) {
	h := newHost(t, vmhost.Config{})
	want, wantErr, wantCode := hostPython(t, t.TempDir(), "", "-c", socketProgram)
	got := run(t, h, "", "python3", "-c", socketProgram)
	if got.stdout != want || got.stderr != wantErr || got.exit.Code != wantCode {
		t.Fatalf("VM python3: code %d\nstdout:\n%s\nstderr:\n%s\nhost python3: code %d\nstdout:\n%s\nstderr:\n%s",
			got.exit.Code, got.stdout, got.stderr, wantCode, want, wantErr)
	}
}

// asyncioProgram runs an asyncio echo server and clients (streams,
// which need socketpair and selectors underneath).
const asyncioProgram = `import asyncio
async def handle(reader, writer):
    while line := await reader.readline():
        writer.write(line.upper())
        await writer.drain()
    writer.close()
    await writer.wait_closed()
async def client(port, n, host="127.0.0.1"):
    reader, writer = await asyncio.open_connection(host, port)
    out = []
    for i in range(3):
        writer.write(b"client %d line %d\n" % (n, i))
        await writer.drain()
        out.append(await reader.readline())
    writer.write_eof()
    out.append(await reader.read())
    writer.close()
    await writer.wait_closed()
    return out
async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    for r in await asyncio.gather(*(client(port, n) for n in range(3))):
        print(r)
    print(await client(port, 3, "localhost"))  # resolved without threads
    try:
        await asyncio.wait_for(asyncio.open_connection("127.0.0.1", 1), 5)
    except OSError as e:
        print(type(e).__name__)
    server.close()
    await server.wait_closed()
asyncio.run(main())
`

func TestSocketAsyncioMatchesHost(t *testing.T) {
	h := newHost(t, vmhost.Config{})
	want, wantErr, wantCode := hostPython(t, t.TempDir(), "", "-c", asyncioProgram)
	got := run(t, h, "", "python3", "-c", asyncioProgram)
	if got.stdout != want || got.stderr != wantErr || got.exit.Code != wantCode {
		t.Fatalf("VM python3: code %d\nstdout:\n%s\nstderr:\n%s\nhost python3: code %d\nstdout:\n%s\nstderr:\n%s",
			got.exit.Code, got.stdout, got.stderr, wantCode, want, wantErr)
	}
}

// httpClientProgram fetches from the server the test runs on the host's
// loopback (its URL is argv[1]) with urllib.request and http.client.
const httpClientProgram = `import sys, json, urllib.request, urllib.error, http.client, urllib.parse
base = sys.argv[1]
with urllib.request.urlopen(base + "/hello?x=1") as r:
    print(r.status, r.reason, r.headers["Content-Type"], r.read())
req = urllib.request.Request(base + "/echo", data=b'{"a": 1}', headers={"Content-Type": "application/json", "X-Test": "yes"})
with urllib.request.urlopen(req, timeout=10) as r:
    print(r.status, json.loads(r.read()))
try:
    urllib.request.urlopen(base + "/missing")
except urllib.error.HTTPError as e:
    print("HTTPError", e.code, e.read())
u = urllib.parse.urlsplit(base)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
for i in range(3):
    c.request("GET", "/big?n=%d" % (100000 * (i + 1)))
    r = c.getresponse()
    body = r.read()
    print(r.status, len(body), body[:8], r.getheader("Content-Length"))
c.close()
`

func TestSocketHTTPClientToHostServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hello":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "hello from the host, %s %s", r.Method, r.URL.RawQuery)
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"method": %q, "body": %q, "type": %q, "x": %q}`, r.Method, b, r.Header.Get("Content-Type"), r.Header.Get("X-Test"))
		case "/big":
			var n int
			fmt.Sscan(r.URL.Query().Get("n"), &n)
			w.Header().Set("Content-Length", fmt.Sprint(n))
			_, _ = w.Write([]byte(strings.Repeat("0123456789", n/10)))
		default:
			http.Error(w, "not here", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))

	want, wantErr, wantCode := hostPython(t, t.TempDir(), "", "-c", httpClientProgram, srv.URL)
	h := newHost(t, vmhost.Config{Policy: policy.AllowAll().AllowNet("127.0.0.1:" + port)})
	got := run(t, h, "", "python3", "-c", httpClientProgram, srv.URL)
	if got.stdout != want || got.stderr != wantErr || got.exit.Code != wantCode {
		t.Fatalf("VM python3: code %d\nstdout:\n%s\nstderr:\n%s\nhost python3: code %d\nstdout:\n%s\nstderr:\n%s",
			got.exit.Code, got.stdout, got.stderr, wantCode, want, wantErr)
	}

	// Without the rule, the host's loopback is out of reach: the
	// connection is refused, as if nothing listened there; an address
	// the policy denies is a PermissionError; both before any packet.
	refused := `import sys, urllib.request, urllib.error, socket
try:
    urllib.request.urlopen(sys.argv[1] + "/hello", timeout=10)
except urllib.error.URLError as e:
    print(type(e.reason).__name__, e.reason.strerror)
try:
    socket.create_connection(("203.0.113.7", 80), timeout=10)
except OSError as e:
    print(type(e).__name__, e.strerror)
`
	h = newHost(t, vmhost.Config{Policy: policy.AllowAll().DenyNet("203.0.113.0/24")})
	got = run(t, h, "", "python3", "-c", refused, srv.URL)
	if got.exit.Code != 0 || got.stdout != "ConnectionRefusedError Connection refused\nPermissionError Permission denied\n" {
		t.Fatalf("without the rule: code %d\nstdout %q\nstderr %s", got.exit.Code, got.stdout, got.stderr)
	}
}

// http.server in the VM, reached by curl in the same VM: a server of the
// program's own and python -m http.server.
func TestSocketHTTPServerInVM(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, vmhost.Config{})
	server := `import http.server, os
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("hello %s from python\n" % self.path).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))[::-1]
        self.send_response(201)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
srv = http.server.HTTPServer(("127.0.0.1", 8000), Handler)
open("/tmp/ready", "w").close()
for _ in range(3):
    srv.handle_request()
srv.server_close()
`
	if err := h.WriteFile(ctx, vm.Workspace+"/server.py", []byte(server), 0o644); err != nil {
		t.Fatal(err)
	}
	got := run(t, h, "", "sh", "-c", `python3 server.py & while [ ! -e /tmp/ready ]; do sleep 0.05; done
curl -s http://127.0.0.1:8000/a/b
curl -s -d 'dlrow olleh' http://localhost:8000/post -w ' %{http_code}\n'
curl -s -i http://127.0.0.1:8000/x | head -1
wait $!
echo "server exit $?"
# python -m http.server: a ThreadingHTTPServer, served without threads.
echo "static file" > /tmp/f.txt
python3 -m http.server 8001 --bind 127.0.0.1 --directory /tmp >/dev/null 2>&1 & pid=$!
i=0; until curl -s http://127.0.0.1:8001/f.txt; do i=$((i+1)); [ $i -lt 400 ] || break; sleep 0.05; done
curl -s -o /dev/null -w '%{http_code}\n' http://127.0.0.1:8001/missing
kill $pid`)
	want := "hello /a/b from python\nhello world 201\nHTTP/1.0 200 OK\r\nserver exit 0\nstatic file\n404\n"
	if got.exit.Code != 0 || got.stdout != want {
		t.Fatalf("code %d\nstdout %q\nwant   %q\nstderr %s", got.exit.Code, got.stdout, want, got.stderr)
	}
}

// The device adds no power: the fs policy on it, the VM's socket limit
// and its net rules all apply, and hostile requests get an errno.
func TestSocketDeviceIsBounded(t *testing.T) {
	// Without write access to the device, no sockets at all.
	pol := policy.AllowAll().DenyFS([]policy.FSOp{policy.FSWrite}, "/opt/secexec/net")
	h := newHost(t, vmhost.Config{Policy: pol})
	got := run(t, h, "", "python3", "-c", "import socket\ntry:\n    socket.socket()\nexcept OSError as e:\n    print(type(e).__name__)\n")
	if got.stdout != "PermissionError\n" {
		t.Fatalf("device denied: code %d stdout %q stderr %s", got.exit.Code, got.stdout, got.stderr)
	}

	// Sockets reach Python through /proc/self/fd (see _secexec_socket.py),
	// a magic link that the fs rules on /proc do not close, as on Linux.
	pol = policy.AllowAll().DenyFS([]policy.FSOp{policy.FSRead, policy.FSWrite}, "/proc/**")
	h = newHost(t, vmhost.Config{Policy: pol})
	got = run(t, h, "", "python3", "-c", "import socket\na, b = socket.socketpair()\na.send(b'x')\nprint(b.recv(1))\n")
	if got.stdout != "b'x'\n" {
		t.Fatalf("/proc denied: code %d stdout %q stderr %s", got.exit.Code, got.stdout, got.stderr)
	}

	// The VM's socket limit: socket() fails with ENFILE past it.
	h = newHost(t, vmhost.Config{Limits: kernel.Limits{Sockets: 10}})
	got = run(t, h, "", "python3", "-c", `import socket, errno
socks = []
try:
    while True:
        socks.append(socket.socket())
except OSError as e:
    print(len(socks), errno.errorcode[e.errno])
for s in socks:
    s.close()
a, b = socket.socketpair()
print("after close", a.send(b"x"), b.recv(1))
`)
	if got.stdout != "10 ENFILE\nafter close 1 b'x'\n" {
		t.Fatalf("socket limit: code %d stdout %q stderr %s", got.exit.Code, got.stdout, got.stderr)
	}

	// Listening needs a rule too.
	h = newHost(t, vmhost.Config{Policy: policy.AllowAll().DenyNet("*")})
	got = run(t, h, "", "python3", "-c", `import socket
s = socket.socket()
s.bind(("127.0.0.1", 8080))
try:
    s.listen()
except OSError as e:
    print(type(e).__name__)
try:
    socket.getaddrinfo("example.com", 80)
except socket.gaierror as e:
    print(type(e).__name__)
`)
	if got.stdout != "PermissionError\ngaierror\n" {
		t.Fatalf("net rules: code %d stdout %q stderr %s", got.exit.Code, got.stdout, got.stderr)
	}

	// Hostile requests, written by hand.
	h = newHost(t, vmhost.Config{})
	got = run(t, h, "", "python3", "-c", `import os, errno, struct
REQ = struct.Struct("<BiqqqH")
def attempt(msg):
    fd = os.open("/opt/secexec/net", os.O_RDWR)
    try:
        mv = memoryview(msg)
        while mv:
            mv = mv[os.write(fd, mv):]
        resp = os.read(fd, 1 << 17)
        if not resp:
            return "eof"
        code, = struct.unpack_from("<H", resp)
        return resp[24:24 + resp[18]].decode() if code else "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
    finally:
        os.close(fd)
print(attempt(b""))
print(attempt(b"\x01"))
print(attempt(REQ.pack(99, 0, 0, 0, 0, 0)))
print(attempt(REQ.pack(6, 0, 0, 0, 0, 500) + b"1.2.3.4:80"))
print(attempt(REQ.pack(6, 1, 0, 0, 0, 10) + b"1.2.3.4:80"))
print(attempt(REQ.pack(17, 0, 0, 0, 0, 0)))
print(attempt(REQ.pack(1, -1, 2, 1 << 40, 0, 0)))
print(attempt(REQ.pack(1, -1, 40, 1, 0, 0)))
print(attempt(REQ.pack(12, 1, 0, 0, 0, 0) + b"x" * 200000))
print(attempt(REQ.pack(18, 1, 0, 0, 0, 0) + b"x" * (1 << 20) + b"y" * 8000))
print(attempt(REQ.pack(13, 12345, 0, 1 << 40, 0, 0)))
print(attempt(REQ.pack(3, -1, 0, 0, 0, 3) + b"zzz"))
`)
	want := "eof\nEINVAL\nEINVAL\nEINVAL\nENOTSOCK\nENOTSOCK\nEINVAL\nEAFNOSUPPORT\nEINVAL\nE2BIG\nEBADF\nEINVAL\n"
	if got.stdout != want {
		t.Fatalf("hostile requests: code %d\nstdout %q\nwant   %q\nstderr %s", got.exit.Code, got.stdout, want, got.stderr)
	}

	// Requests left unread in many handles: the bytes all net devices
	// hold are bounded (ENOBUFS), and come back when the handles close.
	got = run(t, h, "", "python3", "-c", `import os, errno, socket
fds, err = [], None
try:
    for i in range(100):
        fd = os.open("/opt/secexec/net", os.O_RDWR)
        fds.append(fd)
        os.write(fd, b"\x0c" + b"x" * 1000000)
except OSError as e:
    err = errno.errorcode[e.errno]
print(err, 50 < len(fds) < 100)
for fd in fds:
    os.close(fd)
a, b = socket.socketpair()
a.send(b"still works")
print(b.recv(100))
`)
	if got.stdout != "ENOBUFS True\nb'still works'\n" {
		t.Fatalf("held bytes: code %d stdout %q stderr %s", got.exit.Code, got.stdout, got.stderr)
	}
}

// tlsProgram speaks https to the server the test runs on the host's
// loopback (argv[1]) trusting the CA in argv[2]: the kernel runs TLS, the
// guest sees ssl's API and errors.
const tlsProgram = `import sys, ssl, socket, urllib.request, urllib.error, urllib.parse
url, cafile = sys.argv[1], sys.argv[2]
ctx = ssl.create_default_context(cafile=cafile)
with urllib.request.urlopen(url + "/hello", context=ctx) as r:
    print(r.status, r.read())
u = urllib.parse.urlsplit(url)
with socket.create_connection((u.hostname, u.port)) as raw:
    with ctx.wrap_socket(raw, server_hostname=u.hostname) as s:
        cert = s.getpeercert()
        print(s.version(), s.selected_alpn_protocol(), sorted(cert), cert["subject"], cert["issuer"])
        print(cert.get("subjectAltName"), cert["notBefore"], cert["notAfter"], cert["serialNumber"], len(s.getpeercert(True)))
        s.sendall(b"GET /hello HTTP/1.0\r\nHost: x\r\n\r\n")
        print(s.recv(12))
try:
    urllib.request.urlopen(url + "/hello")  # the host's trust store: the test's CA is not in it
except urllib.error.URLError as e:
    print(type(e.reason).__name__, e.reason.verify_code, e.reason.verify_message)
try:
    ctx.wrap_socket(socket.create_connection((u.hostname, u.port)), server_hostname="wrong.example")
except ssl.SSLCertVerificationError as e:
    print(type(e).__name__, e.verify_code, e.verify_message)
with urllib.request.urlopen(url + "/hello", context=ssl._create_unverified_context()) as r:
    print("unverified", r.status, r.read())
import asyncio
async def fetch():
    reader, writer = await asyncio.open_connection(u.hostname, u.port, ssl=ctx)
    writer.write(b"GET /async HTTP/1.0\r\nHost: x\r\n\r\n")
    body = await reader.read()
    print("asyncio", body.split(b"\r\n")[0], body.split(b"\r\n\r\n")[1], sorted(writer.get_extra_info("peercert")))
    writer.close()
    await writer.wait_closed()
asyncio.run(fetch())
`

func TestSocketTLSMatchesHost(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello over tls %s", r.Proto)
	}))
	// The handshakes the program fails on purpose are not the server's
	// news.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, vmhost.Config{Policy: policy.AllowAll().AllowNet("127.0.0.1:" + port)})
	if err := h.WriteFile(context.Background(), vm.Workspace+"/ca.pem", ca, 0o644); err != nil {
		t.Fatal(err)
	}
	want, wantErr, wantCode := hostPython(t, dir, "", "-c", tlsProgram, srv.URL, "ca.pem")
	got := run(t, h, "", "python3", "-c", tlsProgram, srv.URL, "ca.pem")
	if got.stdout != want || got.stderr != wantErr || got.exit.Code != wantCode {
		t.Fatalf("VM python3: code %d\nstdout:\n%s\nstderr:\n%s\nhost python3: code %d\nstdout:\n%s\nstderr:\n%s",
			got.exit.Code, got.stdout, got.stderr, wantCode, want, wantErr)
	}
}

// A TLS server in the VM (ssl on the server side: the kernel's
// handshake with the guest's certificate), reached by curl and by a
// python client that verifies it.
func TestSocketTLSServerInVM(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, vmhost.Config{})
	cert, key := testcert.New(t, false)
	for name, b := range map[string][]byte{"cert.pem": cert, "key.pem": key, "server.py": []byte(`import http.server, ssl
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("tls %s %s\n" % (self.path, self.request.version())).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
srv = http.server.HTTPServer(("127.0.0.1", 8443), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain("cert.pem", "key.pem")
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open("/tmp/ready", "w").close()
for _ in range(2):
    srv.handle_request()
srv.server_close()
`), "aserver.py": []byte(`import asyncio, ssl
async def main():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain("cert.pem", "key.pem")
    done = asyncio.Event()
    async def handle(reader, writer):
        line = await reader.readline()
        writer.write(b"HTTP/1.0 200 OK\r\n\r\nasyncio tls " + line.split()[1] + b"\n")
        await writer.drain()
        writer.close()
        done.set()
    server = await asyncio.start_server(handle, "127.0.0.1", 8444, ssl=ctx)
    open("/tmp/aready", "w").close()
    await done.wait()
    server.close()
asyncio.run(main())
`)} {
		if err := h.WriteFile(ctx, vm.Workspace+"/"+name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := run(t, h, "", "sh", "-c", `python3 server.py & while [ ! -e /tmp/ready ]; do sleep 0.05; done
curl -sk https://127.0.0.1:8443/from-curl
python3 -c "import ssl, urllib.request; print(urllib.request.urlopen('https://localhost:8443/from-python', context=ssl.create_default_context(cafile='cert.pem')).read())"
wait $!
echo "server exit $?"
python3 aserver.py & while [ ! -e /tmp/aready ]; do sleep 0.05; done
curl -sk https://127.0.0.1:8444/from-curl
wait $!
echo "asyncio server exit $?"`)
	want := "tls /from-curl TLSv1.3\nb'tls /from-python TLSv1.3\\n'\nserver exit 0\nasyncio tls /from-curl\nasyncio server exit 0\n"
	if got.exit.Code != 0 || got.stdout != want {
		t.Fatalf("code %d\nstdout %q\nwant   %q\nstderr %s", got.exit.Code, got.stdout, want, got.stderr)
	}
}

// A python blocked in a socket call (in the device: accept, UDP
// recvfrom; in a plain read: recv) ends at the call's deadline like any
// guest.
func TestSocketBlockedGuestEndsAtDeadline(t *testing.T) {
	h := newHost(t, vmhost.Config{})
	for _, prog := range []string{
		"import socket\ns = socket.socket()\ns.bind(('127.0.0.1', 0))\ns.listen()\nprint('blocked', flush=True)\ns.accept()\n",
		"import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.bind(('127.0.0.1', 0))\nprint('blocked', flush=True)\ns.recvfrom(10)\n",
		"import socket\na, b = socket.socketpair()\nprint('blocked', flush=True)\na.recv(10)\n",
	} {
		var out, errb strings.Builder
		ex, err := h.Run(context.Background(), vmhost.RunSpec{Argv: []string{"python3", "-c", prog},
			Stdout: &out, Stderr: &errb, Timeout: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if ex.Code != 124 || ex.Outcome != vmhost.TimedOut || out.String() != "blocked\n" {
			t.Fatalf("%q: exit %+v stdout %q stderr %q", prog, ex, out.String(), errb.String())
		}
	}
}

// Names from the VM's own /etc/hosts resolve without DNS, as glibc reads
// the file first: the VM's hostname (so http.server's getfqdn asks no
// resolver) and names the guest adds.
func TestSocketNamesFromEtcHosts(t *testing.T) {
	pol := policy.AllowAll()
	pol.Net = append(pol.Net, policy.NetRule{Effect: policy.Deny, Ops: []policy.NetOp{policy.NetDNS}, Hosts: []string{"*"}})
	h := newHost(t, vmhost.Config{Policy: pol})
	ctx := context.Background()
	hosts, err := h.ReadFile(ctx, "/etc/hosts", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.WriteFile(ctx, "/etc/hosts", append(hosts, "127.0.0.5 myservice my.alias\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	got := run(t, h, "", "python3", "-c", `
import socket
print(socket.gethostname(), socket.getfqdn(), socket.gethostbyname(socket.gethostname()))
print(socket.gethostbyaddr("127.0.0.5"), socket.getnameinfo(("127.0.0.1", 443), 0))
srv = socket.create_server(("127.0.0.5", 0))
c = socket.create_connection(("my.alias", srv.getsockname()[1]))
print(c.getpeername()[0], srv.accept()[1][0])
try:
    socket.gethostbyname("elsewhere.example")
except socket.gaierror as e:
    print(type(e).__name__, e.errno == socket.EAI_FAIL)
`)
	want := "secexec secexec 127.0.1.1\n('myservice', ['my.alias'], ['127.0.0.5']) ('localhost', 'https')\n127.0.0.5 127.0.0.1\ngaierror True\n"
	if got.exit.Code != 0 || got.stdout != want {
		t.Fatalf("code %d\nstdout %q\nwant   %q\nstderr %s", got.exit.Code, got.stdout, want, got.stderr)
	}
}
