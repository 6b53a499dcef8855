'use strict';
// An HTTP/2 server and its client in one process: the core stream API
// (respond, write, end, trailers, HEAD, 204, informational headers,
// errors thrown for misuse) and the compatibility API.
const http2 = require('http2');
const { constants } = http2;

const server = http2.createServer();
server.on('stream', (stream, headers, flags) => {
  const path = headers[':path'];
  console.log('server stream', stream.id, headers[':method'], path, flags, headers['x-n'], typeof stream.session);
  if (path === '/hello') {
    stream.additionalHeaders({ ':status': 103, link: '</a.css>; rel=preload' });
    stream.respond({ ':status': 200, 'content-type': 'text/plain', 'x-multi': ['a', 'b'] });
    try { stream.respond(); } catch (e) { console.log('respond twice', e.code); }
    stream.write('hel');
    stream.end('lo');
  } else if (path === '/post') {
    const chunks = [];
    stream.on('data', (d) => chunks.push(d));
    stream.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      stream.respond({ ':status': 201 }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'x-len': String(body.length) }));
      stream.end(body.split('').reverse().join(''));
    });
  } else if (path === '/nocontent') {
    stream.respond({ ':status': 204 });
  } else if (path === '/bad') {
    for (const h of [{ ':status': 99 }, { ':status': 101 }, { ':foo': 'x' }, { connection: 'close' }]) {
      try { stream.respond(h); } catch (e) { console.log('bad', JSON.stringify(h), e.code, e.name); }
    }
    try { stream.sendTrailers({}); } catch (e) { console.log('trailers early', e.code); }
    stream.respond({ ':status': 404 }, { endStream: true });
  } else if (path === '/head') {
    stream.respond({ ':status': 200, 'content-length': '5' });
    stream.end();
  }
});

const compat = http2.createServer((req, res) => {
  console.log('compat', req.method, req.url, req.httpVersion, req.authority === req.headers[':authority'], req.headers['x-n']);
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    res.setHeader('x-compat', 'yes');
    console.log('compat headers', JSON.stringify(res.getHeaders()), res.hasHeader('X-Compat'), res.headersSent);
    res.writeHead(202, { 'x-more': '1' });
    console.log('compat sent', res.headersSent, res.statusCode);
    res.end('got ' + body);
  });
});

function request(session, headers, body) {
  return new Promise((resolve) => {
    const s = session.request(headers);
    const out = { info: [] };
    s.on('headers', (h) => out.info.push(h[':status']));
    s.on('response', (h, flags) => { out.status = h[':status']; out.flags = flags; out.type = h['content-type']; out.multi = h['x-multi']; out.compat = h['x-compat']; out.more = h['x-more']; out.cl = h['content-length']; });
    s.on('trailers', (t) => { out.trailer = t['x-len']; });
    const chunks = [];
    s.on('data', (d) => chunks.push(d));
    s.on('end', () => { out.body = Buffer.concat(chunks).toString(); });
    s.on('close', () => { out.rst = s.rstCode; resolve(out); });
    if (body !== undefined) s.end(body);
  });
}

server.listen(0, '127.0.0.1', () => compat.listen(0, '127.0.0.1', async () => {
  const session = http2.connect(`http://127.0.0.1:${server.address().port}`);
  session.on('connect', (s) => console.log('connected', s === session, session.alpnProtocol, session.encrypted));
  for (const [headers, body] of [
    [{ ':path': '/hello', 'x-n': '1' }],
    [{ ':path': '/post', ':method': 'POST', 'x-n': '2' }, 'stressed'],
    [{ ':path': '/nocontent', 'x-n': '3' }],
    [{ ':path': '/bad', 'x-n': '4' }],
    [{ ':path': '/head', ':method': 'HEAD', 'x-n': '5' }],
  ]) {
    console.log('client', JSON.stringify(await request(session, headers, body)));
  }
  const s2 = http2.connect(`http://127.0.0.1:${compat.address().port}`);
  console.log('client', JSON.stringify(await request(s2, { ':path': '/c?q=1', ':method': 'PUT', 'x-n': '6' }, 'body')));
  // One after the other: the two closes race otherwise.
  await new Promise((resolve) => session.close(resolve));
  console.log('session closed');
  s2.close();
  server.close(() => console.log('server closed'));
  compat.close();
}));
