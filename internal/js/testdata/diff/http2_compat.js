'use strict';
// The HTTP/2 compatibility API: status code and header checks, header
// names trimmed and lower-cased, array headers in writeHead, trailers
// (setTrailer), the once-a-process status message warning, early hints,
// 'finish' when the stream closes, destroy(), and a server's own
// Http2ServerRequest/Http2ServerResponse classes.
const http2 = require('http2');

process.on('warning', (w) => console.log('warning', w.name, w.message));

function code(fn) {
  try { fn(); return 'ok'; } catch (e) { return `${e.name} ${e.code}`; }
}

class MyRequest extends http2.Http2ServerRequest {
  agent() { return this.headers['user-agent']; }
}
class MyResponse extends http2.Http2ServerResponse {
  status(n) { this.statusCode = n; return this; }
}

const server = http2.createServer({ Http2ServerRequest: MyRequest, Http2ServerResponse: MyResponse }, (req, res) => {
  const path = req.url;
  console.log('request', path, req.agent(), req.authority !== undefined, res instanceof MyResponse);
  if (path === '/checks') {
    console.log('status 99', code(() => { res.statusCode = 99; }));
    console.log('status 150', code(() => { res.statusCode = 150; }));
    console.log('status 600', code(() => { res.statusCode = 600; }));
    console.log('name number', code(() => res.setHeader(1, 'x')));
    console.log('name empty', code(() => res.setHeader('', 'x')));
    console.log('pseudo', code(() => res.setHeader(':path', 'x')));
    console.log('undefined value', code(() => res.setHeader('x-a', undefined)));
    console.log('connection', code(() => res.setHeader('connection', 'close')), res.hasHeader('connection'));
    res.setHeader(' X-Trim ', 'v');
    console.log('trimmed', res.getHeader('x-trim'), res.hasHeader(' x-trim'), res.getHeaderNames().join());
    res.removeHeader('date');
    console.log('sendDate', res.sendDate);
    console.log('message', JSON.stringify(res.statusMessage), JSON.stringify(res.statusMessage));
    console.log('hints', code(() => res.writeEarlyHints({ link: 5 })), code(() => res.writeEarlyHints('x')));
    console.log('early', res.writeEarlyHints({ link: ['</a.css>; rel=preload', '</b.js>; rel=preload'] }), res.writeEarlyHints({ link: [] }));
    res.setTrailer('X-Tr', 'end');
    console.log('odd array', code(() => res.writeHead(200, ['a', 'b', 'c'])));
    res.writeHead(201, 'Created', [['x-arr', '1'], ['x-arr', '2']]);
    console.log('after send', code(() => res.setHeader('x-late', '1')), code(() => res.writeHead(200)));
    res.on('finish', () => console.log('finish', res.finished, res.writableEnded));
    res.end('checked');
  } else if (path === '/destroy') {
    res.on('finish', () => console.log('destroyed finish'));
    res.on('close', () => console.log('destroyed close', res.headersSent));
    res.destroy();
    console.log('write after destroy', res.write('x'));
  } else {
    res.status(204).end();
  }
});

function get(session, path) {
  return new Promise((resolve) => {
    const s = session.request({ ':path': path, 'user-agent': 'probe' });
    const out = [];
    let body = '';
    s.on('headers', (h) => out.push(`info ${h[':status']} ${h.link}`));
    s.on('response', (h) => out.push(`response ${h[':status']} ${h['x-arr']} ${h['x-trim']} ${h.connection}`));
    s.on('trailers', (t) => out.push(`trailers ${t['x-tr']}`));
    s.setEncoding('utf8');
    s.on('data', (d) => { body += d; });
    s.on('close', () => { out.push(`body ${JSON.stringify(body)} rst ${s.rstCode}`); resolve(out.join('\n')); });
    s.on('error', () => {});
  });
}

server.listen(0, '127.0.0.1', async () => {
  const session = http2.connect(`http://127.0.0.1:${server.address().port}`);
  console.log(await get(session, '/checks'));
  console.log(await get(session, '/destroy'));
  console.log(await get(session, '/other'));
  session.close();
  server.close();
});
