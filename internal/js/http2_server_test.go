package js

import (
	"strings"
	"testing"
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
