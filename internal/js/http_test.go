package js

import (
	"compress/gzip"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/testcert"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel/policy"
)

// An http server and client in one node process, on the VM's loopback:
// JSON body, chunked response, keep-alive reuse through an Agent.
func TestHTTPInVM(t *testing.T) {
	v := newVM(t, nil)
	res := v.node(`
const http = require('http');
const srv = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.write('{"method":"' + req.method + '",');
    res.end('"url":"' + req.url + '","body":' + JSON.stringify(body) + '}');
  });
});
srv.listen(0, () => {
  const agent = new http.Agent({ keepAlive: true });
  const port = srv.address().port;
  let sockets = new Set();
  const one = (i) => new Promise((resolve, reject) => {
    const req = http.request({ port, path: '/x?i=' + i, method: 'POST', agent }, (res) => {
      sockets.add(res.socket);
      let b = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { b += d; });
      res.on('end', () => resolve(res.statusCode + ' ' + res.headers['transfer-encoding'] + ' ' + b));
    });
    req.on('error', reject);
    req.end('payload' + i);
  });
  (async () => {
    for (let i = 0; i < 3; i++) console.log(await one(i));
    console.log('sockets', sockets.size);
    agent.destroy();
    srv.close();
  })();
});
`)
	want := `200 chunked {"method":"POST","url":"/x?i=0","body":"payload0"}
200 chunked {"method":"POST","url":"/x?i=1","body":"payload1"}
200 chunked {"method":"POST","url":"/x?i=2","body":"payload2"}
sockets 1
`
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
}

// node's http and https clients reach servers on the host where a rule
// allows: plain HTTP, and HTTPS verified against a CA the guest passes.
func TestHTTPClientToHost(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s %s", r.Method, r.Header.Get("x-guest"))
	})
	plain := &http.Server{Handler: mux}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go plain.Serve(ln)
	t.Cleanup(func() { plain.Close() })
	certPEM, keyPEM := testcert.New(t, false)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	tln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	secure := &http.Server{Handler: mux}
	go secure.Serve(tln)
	t.Cleanup(func() { secure.Close() })

	v := newConfiguredVM(t, engine(t), vm.Config{Policy: policy.AllowAll().AllowNet(ln.Addr().String(), tln.Addr().String())})
	v.writeFile("/workspace/ca.pem", string(certPEM))
	script := `
const http = require('http'), https = require('https'), fs = require('fs');
const get = (mod, url, opts) => new Promise((resolve) => {
  mod.get(url, { headers: { 'x-guest': 'yes' }, ...opts }, (res) => {
    let b = ''; res.on('data', (d) => { b += d; }); res.on('end', () => resolve(res.statusCode + ' ' + b));
  }).on('error', (e) => resolve('error ' + e.code));
});
(async () => {
  console.log(await get(http, 'http://' + process.argv[1] + '/hello'));
  console.log(await get(https, 'https://localhost:' + process.argv[2].split(':')[1] + '/hello', { ca: fs.readFileSync('/workspace/ca.pem') }));
  console.log(await get(https, 'https://localhost:' + process.argv[2].split(':')[1] + '/hello'));
})();
`
	res := v.node(script, ln.Addr().String(), tln.Addr().String())
	want := "200 hello GET yes\n200 hello GET yes\nerror DEPTH_ZERO_SELF_SIGNED_CERT\n"
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
}

// fetch (undici) from node to a host server allowed by a rule, and to a
// server in the VM; a URL the policy does not allow is refused.
func TestFetch(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "application/json")
		fmt.Fprintf(w, `{"method":%q,"agent":%q}`, r.Method, r.Header.Get("user-agent"))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	srv := &http.Server{Handler: mux}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	v := newConfiguredVM(t, engine(t), vm.Config{Policy: policy.AllowAll().AllowNet(ln.Addr().String())})
	res := v.node(`
const http = require('http');
(async () => {
  const r = await fetch('http://' + process.argv[1] + '/json', { method: 'POST', body: 'x' });
  console.log(r.status, r.headers.get('content-type'), JSON.stringify(await r.json()));
  const srv = http.createServer((req, res) => res.end('in-vm ' + req.url)).listen(0);
  await new Promise((ok) => srv.on('listening', ok));
  const r2 = await fetch('http://127.0.0.1:' + srv.address().port + '/p?q=1');
  console.log(r2.status, await r2.text());
  srv.close();
  for (const url of ['http://' + process.argv[1] + '/redirect', 'http://10.1.2.3/']) {
    try { await fetch(url); console.log('fetched', url); } catch (e) { console.log('refused', e.cause && e.cause.code); }
  }
})();
`, ln.Addr().String())
	want := `200 application/json {"method":"POST","agent":"node"}
200 in-vm /p?q=1
refused EACCES
refused EACCES
`
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
}

// Two node processes of one VM talk HTTP over the VM's loopback (the
// server is a child process of the client); a client that never
// finishes its headers is cut off by the server's headersTimeout and the
// server keeps serving.
func TestHTTPAcrossProcesses(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/server.js", `
const http = require('http');
const srv = http.createServer((req, res) => res.end('served ' + req.url));
srv.headersTimeout = 300;
srv.requestTimeout = 300;
srv.listen(5000, () => console.log('listening'));
process.on('SIGTERM', () => srv.close(() => process.exit(0)));
`)
	v.writeFile("/workspace/client.js", `
const net = require('net'), http = require('http');
const get = (path) => new Promise((resolve, reject) => http.get({ port: 5000, path }, (res) => {
  let b = ''; res.on('data', (d) => { b += d; }); res.on('end', () => resolve(b));
}).on('error', reject));
const child = require('child_process').spawn('node', ['server.js'], { stdio: ['ignore', 'inherit', 'inherit'] });
(async () => {
  for (let i = 0; i < 50; i++) { try { await get('/probe'); break; } catch { await new Promise((r) => setTimeout(r, 20)); } }
  const slow = net.connect(5000, '127.0.0.1', () => slow.write('GET / HTTP/1.1\r\nHost: x\r\n'));
  let answer = '';
  slow.on('data', (d) => { answer += d; });
  slow.on('close', async () => {
    console.log('slowloris cut:', answer.split('\r\n')[0] || '(closed)');
    console.log(await get('/after'));
    child.kill('SIGTERM');
  });
})();
`)
	res := v.run("", "node", "client.js")
	want := "listening\nslowloris cut: HTTP/1.1 408 Request Timeout\nserved /after\n"
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
}

// writeEarlyHints checks what it writes into the 103 head: Node writes
// the other hints raw and passes CR and LF inside a link's <...>, so a
// guest value could add headers or a whole response; here each is
// refused and nothing reaches the peer but the headers that were meant.
func TestHTTPEarlyHintsRejectsInjection(t *testing.T) {
	v := newVM(t, nil)
	res := v.node(`
const http = require('http');
const net = require('net');
const srv = http.createServer((req, res) => {
  const tries = [
    { link: '</a\r\nX-Evil: 1>' },
    { link: '</ok>', 'x-foo': 'a\r\nX-Evil: 2' },
    { link: '</ok>', 'x\r\nX-Evil': '3' },
    { link: '</ok>; rel=preload', 'x-fine': 'yes' },
  ];
  for (const h of tries) {
    try { res.writeEarlyHints(h); console.log('written'); } catch (e) { console.log(e.code); }
  }
  res.end();
  srv.close();
});
srv.listen(0, () => {
  const c = net.connect(srv.address().port, () => c.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
  let d = '';
  c.setEncoding('latin1');
  c.on('data', (b) => { d += b; });
  c.on('end', () => console.log(JSON.stringify(d.split('\r\n\r\n')[0]), /X-Evil/.test(d)));
});
`)
	want := `ERR_INVALID_CHAR
ERR_INVALID_CHAR
ERR_INVALID_HTTP_TOKEN
written
"HTTP/1.1 103 Early Hints\r\nLink: </ok>; rel=preload\r\nx-fine: yes" false
`
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
}

// Parsers go back to a free list bounded by http.setMaxIdleHTTPParsers
// and are reused whole: a parser freed by one connection (on both of its
// close paths) serves the next without the old one's state, and the
// list never holds more idle parsers than its max or one parser twice.
func TestHTTPParserFreeList(t *testing.T) {
	v := newVM(t, nil)
	res := v.node(`
const http = require('http');
const { parsers } = require('_http_common');
http.setMaxIdleHTTPParsers(2);
const srv = http.createServer({ maxHeaderSize: 200 }, (req, res) => res.end(req.url + ' ' + (req.headers['x-big'] || '').length));
srv.on('clientError', (err, socket) => { console.log('clientError', err.code); socket.destroy(); });
srv.listen(0, async () => {
  const port = srv.address().port;
  const get = (path, headers) => new Promise((resolve) => {
    const req = http.get({ port, path, headers, agent: false }, (res) => {
      let b = '';
      res.on('data', (d) => { b += d; });
      res.on('end', () => resolve(res.statusCode + ' ' + b));
    });
    req.on('error', (e) => resolve(e.code));
  });
  for (let i = 0; i < 5; i++) console.log(await get('/' + i));
  console.log(await get('/big', { 'x-big': 'x'.repeat(300) }));
  console.log(await get('/after'));
  await new Promise((r) => setImmediate(r));
  console.log('idle', parsers.list.length, new Set(parsers.list).size === parsers.list.length);
  srv.close();
});
`)
	want := `200 /0 0
200 /1 0
200 /2 0
200 /3 0
200 /4 0
clientError HPE_HEADER_OVERFLOW
ECONNRESET
200 /after 0
idle 2 true
`
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
}

// fetch's paths beyond one GET, on the lazily loaded undici (its fetch
// entry, llhttp from the bundle's decoded asset): a redirect followed, a
// body streamed chunk by chunk, gzip decoded, an abort in the middle of a
// body, and HTTPS verified against a CA the guest gives tls.connect (a
// self-signed server refused without it).
func TestFetchPaths(t *testing.T) {
	certPEM, keyPEM := testcert.New(t, false)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/final", http.StatusFound)
	})
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "final") })
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		for i := range 3 {
			fmt.Fprintf(w, "chunk%d;", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, strings.Repeat("zipped ", 1000))
		zw.Close()
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // until the guest aborts
	})
	plainLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tlsLn, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	plain, secure := &http.Server{Handler: mux}, &http.Server{Handler: mux}
	go plain.Serve(plainLn)
	go secure.Serve(tlsLn)
	t.Cleanup(func() { plain.Close(); secure.Close() })

	v := newConfiguredVM(t, engine(t), vm.Config{Policy: policy.AllowAll().AllowNet(plainLn.Addr().String(), tlsLn.Addr().String())})
	v.writeFile("/workspace/ca.pem", string(certPEM))
	res := v.node(`
const base = 'http://' + process.argv[1];
const secure = 'https://localhost:' + process.argv[2].split(':')[1];
(async () => {
  const r = await fetch(base + '/redirect');
  console.log('redirect', r.status, r.redirected, new URL(r.url).pathname, await r.text());
  const s = await fetch(base + '/stream');
  const reader = s.body.getReader();
  let text = '', chunks = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks++;
    text += Buffer.from(value).toString();
  }
  console.log('stream', text, chunks >= 1);
  const z = await fetch(base + '/gzip');
  const body = await z.text();
  console.log('gzip', body.length, body.slice(0, 7));
  const ac = new AbortController();
  const h = await fetch(base + '/hang', { signal: ac.signal });
  const hr = h.body.getReader();
  console.log('hang first', Buffer.from((await hr.read()).value).toString());
  ac.abort();
  try { await hr.read(); console.log('read after abort'); } catch (e) { console.log('aborted', e.name); }
  try { await fetch(secure + '/final'); console.log('self-signed accepted'); } catch (e) { console.log('refused', e.cause && e.cause.code); }
  const tls = require('tls');
  const ca = require('fs').readFileSync('/workspace/ca.pem');
  const connect = tls.connect;
  tls.connect = (opts, ...rest) => connect({ ...opts, ca }, ...rest);
  const sr = await fetch(secure + '/redirect');
  console.log('https', sr.status, sr.redirected, await sr.text());
})();
`, plainLn.Addr().String(), tlsLn.Addr().String())
	want := `redirect 200 true /final final
stream chunk0;chunk1;chunk2; true
gzip 7000 zipped 
hang first first
aborted AbortError
refused DEPTH_ZERO_SELF_SIGNED_CERT
https 200 true final
`
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
}
