//lint:file-ignore SA1019 the h2c server of the test is x/net's h2c handler (prior knowledge), deprecated in favour of http.Server.Protocols.

package js

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"

	"github.com/secexec/secexec/internal/testcert"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel/policy"
)

// h2Mux is what the host's HTTP/2 servers answer: a greeting with
// headers, an echo with a trailer, requests that answer only once three
// are in flight together, and a 1 MiB body.
func h2Mux(t *testing.T) http.Handler {
	var mu sync.Mutex
	arrived, together := 0, make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-h2", "yes")
		w.Header().Add("set-cookie", "a=1")
		w.Header().Add("set-cookie", "b=2")
		fmt.Fprintf(w, "hello %s %s %s %s", r.Method, r.Header.Get("x-guest"), r.Proto, r.Header.Get("user-agent"))
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("content-type", r.Header.Get("content-type"))
		w.Header().Set("trailer", "x-len")
		w.Write(b)
		w.Header().Set("x-len", fmt.Sprint(len(b)))
	})
	mux.HandleFunc("/together", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived++
		if arrived == 3 {
			close(together)
		}
		mu.Unlock()
		select {
		case <-together:
			fmt.Fprint(w, "together")
		case <-time.After(5 * time.Second):
			fmt.Fprint(w, "alone")
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 32<<10)
		for off := 0; off < 1<<20; off += len(buf) {
			for i := range buf {
				buf[i] = byte((off + i) % 251)
			}
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	})
	return mux
}

// countConns returns a ConnState hook counting new connections.
func countConns(n *atomic.Int32) func(net.Conn, http.ConnState) {
	return func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
}

// http2.connect from a guest to host servers over TLS (ALPN h2) and h2c
// (prior knowledge): headers and bodies both ways, concurrent streams on
// one connection, a 1 MiB body streamed in chunks, addresses the policy
// does not name refused by the kernel, and close() letting the process
// exit.
func TestHTTP2Client(t *testing.T) {
	var tlsConns, h2cConns atomic.Int32
	certPEM, keyPEM := testcert.New(t, false)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	tln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	secure := &http.Server{Handler: h2Mux(t), ConnState: countConns(&tlsConns)}
	if err := http2.ConfigureServer(secure, nil); err != nil {
		t.Fatal(err)
	}
	go secure.Serve(tln)
	t.Cleanup(func() { secure.Close() })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	plain := &http.Server{Handler: h2c.NewHandler(h2Mux(t), &http2.Server{}), ConnState: countConns(&h2cConns)}
	go plain.Serve(ln)
	t.Cleanup(func() { plain.Close() })

	v := newConfiguredVM(t, engine(t), vm.Config{Policy: policy.AllowAll().AllowNet(ln.Addr().String(), tln.Addr().String())})
	v.writeFile("/workspace/ca.pem", string(certPEM))
	script := `
const http2 = require('http2'), fs = require('fs');
const [tlsAddr, h2cAddr] = process.argv.slice(1);
const { HTTP2_HEADER_PATH, HTTP2_HEADER_METHOD, HTTP2_METHOD_POST, HTTP2_HEADER_STATUS } = http2.constants;
function req(session, headers, body) {
  return new Promise((resolve, reject) => {
    const s = session.request(headers);
    let head, trailers, chunks = [];
    s.on('response', (h) => { head = h; });
    s.on('trailers', (t) => { trailers = t; });
    s.on('data', (d) => chunks.push(d));
    s.on('end', () => resolve({ head, trailers, body: Buffer.concat(chunks), chunks: chunks.length }));
    s.on('error', reject);
    if (body !== undefined) s.end(body);
  });
}
(async () => {
  const targets = [
    ['tls', 'https://localhost:' + tlsAddr.split(':')[1], { ca: fs.readFileSync('/workspace/ca.pem') }],
    ['h2c', 'http://' + h2cAddr, {}],
  ];
  for (const [name, url, opts] of targets) {
    const session = http2.connect(url, opts);
    await new Promise((res, rej) => { session.once('connect', res); session.once('error', rej); });
    console.log(name, session.alpnProtocol, session.encrypted);
    const a = await req(session, { [HTTP2_HEADER_PATH]: '/hello', 'x-guest': 'yes' });
    console.log(name, a.head[HTTP2_HEADER_STATUS], typeof a.head[':status'], a.head['x-h2'], JSON.stringify(a.head['set-cookie']), a.body.toString());
    const b = await req(session, { [HTTP2_HEADER_METHOD]: HTTP2_METHOD_POST, [HTTP2_HEADER_PATH]: '/echo', 'content-type': 'text/plain' }, 'ping body');
    console.log(name, b.head[':status'], b.head['content-type'], b.body.toString(), b.trailers && b.trailers['x-len']);
    const all = await Promise.all([1, 2, 3].map((i) => req(session, { ':path': '/together?i=' + i })));
    console.log(name, all.map((r) => r.body.toString()).join(','));
    const big = await req(session, { ':path': '/big' });
    let ok = big.body.length === 1 << 20;
    for (let i = 0; ok && i < big.body.length; i++) ok = big.body[i] === i % 251;
    console.log(name, big.body.length, ok, big.chunks > 1);
    await new Promise((res) => session.close(res));
    console.log(name, 'closed', session.closed, session.destroyed);
  }
  // A stream closed mid-body, then the session is still usable; a
  // destroyed session emits 'close'.
  {
    const session = http2.connect('http://' + h2cAddr);
    const s = session.request({ ':path': '/big' });
    let got = 0;
    s.on('data', (d) => { got += d.length; if (got >= 65536 && !s.destroyed) s.close(http2.constants.NGHTTP2_CANCEL); });
    await new Promise((res) => s.on('close', res));
    console.log('cancel', got < 1 << 20, s.rstCode);
    const a = await req(session, { ':path': '/hello' });
    console.log('after cancel', a.head[':status']);
    session.destroy();
    await new Promise((res) => session.on('close', res));
    console.log('destroyed', session.destroyed);
  }
  // Addresses no rule names: the kernel refuses the connection.
  for (const url of ['http://169.254.169.254', 'https://10.0.0.1:8443']) {
    const s = http2.connect(url);
    await new Promise((res) => s.on('error', (e) => { console.log('denied', url, e.code, e.syscall); res(); }));
  }
})();
`
	res := v.node(script, tln.Addr().String(), ln.Addr().String())
	var want strings.Builder
	for _, c := range []struct{ name, alpn, enc string }{{"tls", "h2", "true"}, {"h2c", "h2c", "false"}} {
		fmt.Fprintf(&want, "%s %s %s\n", c.name, c.alpn, c.enc)
		fmt.Fprintf(&want, "%s 200 number yes [\"a=1\",\"b=2\"] hello GET yes HTTP/2.0 \n", c.name)
		fmt.Fprintf(&want, "%s 200 text/plain ping body 9\n", c.name)
		fmt.Fprintf(&want, "%s together,together,together\n", c.name)
		fmt.Fprintf(&want, "%s 1048576 true true\n", c.name)
		fmt.Fprintf(&want, "%s closed true true\n", c.name)
	}
	want.WriteString("cancel true 8\nafter cancel 200\ndestroyed true\n")
	want.WriteString("denied http://169.254.169.254 EACCES connect\ndenied https://10.0.0.1:8443 EACCES connect\n")
	if res.code != 0 || res.stdout != want.String() {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want.String(), res.stderr)
	}
	// Every request of a session, the concurrent ones too, went over its
	// one connection: h2c had two sessions (the second for the cancel).
	if n, m := tlsConns.Load(), h2cConns.Load(); n != 1 || m != 2 {
		t.Errorf("connections: tls %d, h2c %d; want 1 and 2", n, m)
	}
}
