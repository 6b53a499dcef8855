package js

import (
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/testcert"
)

// h2ServerScript is a guest HTTP/2 server and its node client in one VM:
// the core API (respond, write, end, trailers both ways), the
// compatibility API, push refused (node's client, like Go's, disables
// push), stream.close and the session's end.
const h2ServerScript = `
const http2 = require('http2');
const server = http2.createServer();
server.on('stream', (stream, headers, flags, raw) => {
  const path = headers[':path'];
  if (path === '/hello') {
    stream.respond({ ':status': 200, 'content-type': 'text/plain', 'x-id': String(stream.id) });
    stream.end('hello ' + headers[':method'] + ' ' + headers['x-guest'] + ' ' + headers[':scheme'] + ' ' + (flags & 1));
  } else if (path === '/echo') {
    const chunks = [];
    stream.on('trailers', (t) => { stream.reqTrailer = t['x-req']; });
    stream.on('data', (d) => chunks.push(d));
    stream.on('end', () => {
      stream.respond({ ':status': 201 }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'x-len': String(Buffer.concat(chunks).length) }));
      stream.end(Buffer.concat(chunks).toString().toUpperCase());
    });
  } else if (path === '/push') {
    try {
      stream.pushStream({ ':path': '/pushed' }, (err) => {
        stream.respond();
        stream.end(err ? err.code : 'pushed');
      });
    } catch (e) {
      stream.respond();
      stream.end('throws ' + e.code);
    }
  } else if (path === '/reset') {
    stream.respond();
    stream.write('partial');
    setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), 50);
  } else if (path === '/big') {
    stream.respond();
    const buf = Buffer.alloc(32 << 10);
    let sent = 0;
    const more = () => {
      while (sent < 1 << 20) {
        for (let i = 0; i < buf.length; i++) buf[i] = (sent + i) % 251;
        sent += buf.length;
        if (!stream.write(Buffer.from(buf))) { stream.once('drain', more); return; }
      }
      stream.end();
    };
    more();
  }
});
const compat = http2.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    res.setHeader('x-compat', 'yes');
    res.statusCode = 202;
    res.addTrailers({ 'x-t': 'trailer' });
    res.write(req.method + ' ' + req.url + ' ' + req.httpVersion + ' ');
    res.end(body + ' ' + req.headers['x-guest']);
  });
});
function req(session, headers, body, trailers) {
  return new Promise((resolve, reject) => {
    const s = session.request(headers, trailers ? { waitForTrailers: true } : undefined);
    let head, tr, chunks = [];
    s.on('response', (h) => { head = h; });
    s.on('trailers', (t) => { tr = t; });
    s.on('data', (d) => chunks.push(d));
    s.on('end', () => resolve({ head, tr, body: Buffer.concat(chunks) }));
    s.on('close', () => resolve({ head, tr, body: Buffer.concat(chunks), rst: s.rstCode }));
    s.on('error', reject);
    if (body !== undefined) s.end(body);
  });
}
server.listen(0, '127.0.0.1', () => compat.listen(0, '127.0.0.1', async () => {
  const session = http2.connect('http://127.0.0.1:' + server.address().port);
  const a = await req(session, { ':path': '/hello', 'x-guest': 'yes' });
  console.log(a.head[':status'], a.head['content-type'], a.head['x-id'], a.body.toString());
  const b = await req(session, { ':method': 'POST', ':path': '/echo' }, 'ping body');
  console.log(b.head[':status'], b.body.toString(), b.tr && b.tr['x-len']);
  const c = await req(session, { ':path': '/push' });
  console.log(c.body.toString());
  const big = await req(session, { ':path': '/big' });
  let ok = big.body.length === 1 << 20;
  for (let i = 0; ok && i < big.body.length; i++) ok = big.body[i] === i % 251;
  console.log('big', big.body.length, ok);
  const d = await req(session, { ':path': '/reset' });
  console.log('reset', d.body.toString(), d.rst);
  const s2 = http2.connect('http://127.0.0.1:' + compat.address().port);
  const e = await req(s2, { ':method': 'PUT', ':path': '/c?q=1', 'x-guest': 'g' }, 'body');
  console.log(e.head[':status'], e.head['x-compat'], e.body.toString(), e.tr && e.tr['x-t']);
  session.close();
  s2.close();
  server.close(() => console.log('server closed'));
  compat.close();
}));
`

func TestHTTP2ServerInVM(t *testing.T) {
	v := newVM(t, engine(t))
	res := v.node(h2ServerScript)
	want := strings.Join([]string{
		"200 text/plain 1 hello GET yes http 1",
		"201 PING BODY 9",
		"ERR_HTTP2_PUSH_DISABLED",
		"big 1048576 true",
		"reset partial 8",
		"202 yes PUT /c?q=1 2.0 body g trailer",
		"server closed",
	}, "\n") + "\n"
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
}

// A secure server (TLS by the kernel, ALPN h2) with allowHTTP1: node's
// HTTP/2 client gets h2 with the https scheme; an HTTP/1.1 client (https)
// is served by the same 'request' handler; a client without the CA is
// refused by its own check.
func TestHTTP2SecureServer(t *testing.T) {
	certPEM, keyPEM := testcert.New(t, false)
	v := newVM(t, engine(t))
	v.writeFile("/workspace/cert.pem", string(certPEM))
	v.writeFile("/workspace/key.pem", string(keyPEM))
	res := v.node(`
const http2 = require('http2'), https = require('https'), fs = require('fs');
const ca = fs.readFileSync('/workspace/cert.pem');
const server = http2.createSecureServer({ key: fs.readFileSync('/workspace/key.pem'), cert: ca, allowHTTP1: true }, (req, res) => {
  res.setHeader('content-type', 'text/plain');
  res.end(req.httpVersion + ' ' + req.method + ' ' + req.url + ' ' + (req.httpVersion === '2.0' ? req.scheme + ' ' + req.stream.session.alpnProtocol + ' ' + req.stream.session.encrypted : req.socket.alpnProtocol));
});
server.listen(0, async () => {
  const port = server.address().port;
  const session = http2.connect('https://localhost:' + port, { ca });
  await new Promise((res) => session.once('connect', res));
  console.log('client', session.alpnProtocol, session.encrypted);
  const body = await new Promise((resolve, reject) => {
    const s = session.request({ ':path': '/h2?x=1' });
    let b = '';
    s.setEncoding('utf8');
    s.on('data', (d) => { b += d; });
    s.on('end', () => resolve(b));
    s.on('error', reject);
  });
  console.log(body);
  session.close();
  const h1 = await new Promise((resolve, reject) => {
    https.get('https://localhost:' + port + '/h1', { ca }, (res) => {
      let b = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { b += d; });
      res.on('end', () => resolve(res.statusCode + ' ' + b));
    }).on('error', reject);
  });
  console.log(h1);
  const bad = http2.connect('https://localhost:' + port);
  bad.on('error', (e) => {
    console.log('no ca', e.code);
    server.close(() => console.log('closed'));
  });
});
`)
	want := "client h2 true\n2.0 GET /h2?x=1 https h2 true\n200 1.1 GET /h1 false\nno ca DEPTH_ZERO_SELF_SIGNED_CERT\nclosed\n"
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
}
