'use strict';
// Node's HTTPParser binding (require('_http_common').HTTPParser) driven by
// hand on raw input: what each callback receives, bytes parsed, error
// codes, reasons and positions, for well-formed, pipelined, smuggling
// (CL+TE, duplicate CL, bad chunk sizes), obs-fold, bare CR/LF, control
// characters and oversized heads, whole and split byte by byte; with and
// without the lenient flags; pause/resume and a callback that throws.
const { HTTPParser, methods } = require('_http_common');

function run(type, parts, opts = {}) {
  const out = [];
  const p = new HTTPParser();
  p.initialize(type, {}, opts.max || 0, opts.lenient ? HTTPParser.kLenientAll : HTTPParser.kLenientNone);
  p[HTTPParser.kOnHeaders] = (h, u) => out.push(['trailers', h, u]);
  p[HTTPParser.kOnHeadersComplete] = (maj, min, h, m, u, sc, sm, up, ka) => {
    // Node passes the method's number, the sandbox its name.
    out.push(['head', maj, min, h, typeof m === 'number' ? methods[m] || m : m, u, sc, sm, up, ka]);
    return opts.skip || 0;
  };
  p[HTTPParser.kOnBody] = (b) => out.push(['body', b.toString('latin1')]);
  p[HTTPParser.kOnMessageComplete] = () => out.push(['done']);
  for (const part of parts) {
    const r = p.execute(Buffer.from(part, 'latin1'));
    if (r instanceof Error) {
      out.push(['error', r.code, r.reason, r.bytesParsed, r.message]);
      return out;
    }
    out.push(['n', r]);
  }
  const f = p.finish();
  if (f instanceof Error) out.push(['finish', f.code, f.reason]);
  return out;
}

const big = 'a'.repeat(16 * 1024);
const requests = [
  ['GET / HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['GET /a?b HTTP/1.1\r\nHost: x\r\nX-E:\r\nX-T: v \t \r\n\r\n'],
  ['POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /2 HTTP/1.1\r\n\r\nGET /3 HTTP/1.0\r\n\r\n'],
  ['POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\nT: 1\r\n\r\n'],
  ['POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
  ['POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n'],
  ['POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n'],
  ['POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nabc'],
  ['POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n'],
  ['POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n'],
  ['POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1x\r\n'],
  ['POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n'],
  ['GET / HTTP/1.1\r\nFoo: a\r\n b\r\n\r\n'],
  ['GET / HTTP/1.1\nHost: x\n\n'],
  ['GET / HTTP/1.1\r\nHost: x\rY: z\r\n\r\n'],
  ['GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n'],
  ['GET / HTTP/1.1\r\nX Y: z\r\n\r\n'],
  ['GET /a b HTTP/1.1\r\n\r\n'],
  ['GET / HTTP/1.2\r\n\r\n'],
  ['FOO / HTTP/1.1\r\n\r\n'],
  ['GE', 'T / HTTP/1.1\r\nA: 1\r\n', 'B: 2\r\n\r\nXYZ'],
  ['GET / HTTP/1.1\r\nCookie: ' + big + '\r\n\r\n'],
  ['GET / HTTP/1.1\r\nCookie: ' + big],
  ['POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc'],
  ['GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nraw'],
];
const responses = [
  ['HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi'],
  ['HTTP/1.1 200 OK\r\n\r\nuntil the connection ends'],
  ['HTTP/1.1 204 No Content\r\n\r\n'],
  ['HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'],
  ['HTTP/1.1 2000 OK\r\n\r\n'],
  ['HTTP/1.1 200 O\x01K\r\n\r\n'],
  ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n'],
];
for (const r of requests) {
  console.log(JSON.stringify(run(HTTPParser.REQUEST, r)));
  console.log(JSON.stringify(run(HTTPParser.REQUEST, r, { lenient: true })));
  if (!r.join('').includes('Upgrade')) console.log(JSON.stringify(run(HTTPParser.REQUEST, [...r.join('')])));
}
for (const r of responses) console.log(JSON.stringify(run(HTTPParser.RESPONSE, r)));
console.log(JSON.stringify(run(HTTPParser.RESPONSE, responses[0], { skip: 1 })));
console.log(JSON.stringify(run(HTTPParser.REQUEST, ['GET / HTTP/1.1\r\nA: 12345\r\n\r\n'], { max: 10 })));

// pause() from a callback takes effect once execute returns.
{
  const out = [];
  const p = new HTTPParser();
  p.initialize(HTTPParser.REQUEST, {});
  p[HTTPParser.kOnHeadersComplete] = () => { out.push('head'); p.pause(); return 0; };
  p[HTTPParser.kOnMessageComplete] = () => out.push('done');
  const show = (r) => out.push(r instanceof Error ? r.code : r);
  show(p.execute(Buffer.from('GET / HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n')));
  show(p.execute(Buffer.from('GET /3 HTTP/1.1\r\n\r\n')));
  p.resume();
  show(p.execute(Buffer.from('GET /4 HTTP/1.1\r\n\r\n')));
  console.log('pause', JSON.stringify(out));
}
// An exception in a callback comes out of execute; the parser is then
// in error.
{
  const p = new HTTPParser();
  p.initialize(HTTPParser.REQUEST, {});
  p[HTTPParser.kOnHeadersComplete] = () => { throw new Error('boom'); };
  let msg;
  try { p.execute(Buffer.from('GET / HTTP/1.1\r\n\r\n')); } catch (err) { msg = err.message; }
  const again = p.execute(Buffer.from('GET / HTTP/1.1\r\n\r\n'));
  console.log('throw', msg, again.code, again.reason);
}
// A callback executes the same parser again (Node's client does when a
// socket pushes data from an 'information' listener): the inner message
// is parsed whole, then the outer call goes on over its own input with
// the message state the inner one left (in Node too: the rest is body).
for (const tail of ['', 'HTTP/1.1 204 No Content\r\nX-After: 1\r\n\r\n']) {
  const out = [];
  const p = new HTTPParser();
  p.initialize(HTTPParser.RESPONSE, {});
  let nested = false;
  p[HTTPParser.kOnHeadersComplete] = (maj, min, h, m, u, sc, sm) => {
    out.push(['head', sc, sm, h]);
    if (sc === 100 && !nested) {
      nested = true;
      const r = p.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi'));
      out.push(['inner', r instanceof Error ? r.code : r]);
    }
    return 0;
  };
  p[HTTPParser.kOnBody] = (b) => out.push(['body', b.toString('latin1')]);
  p[HTTPParser.kOnMessageComplete] = () => out.push(['done']);
  const r = p.execute(Buffer.from('HTTP/1.1 100 Continue\r\n\r\n' + tail));
  out.push(['outer', r instanceof Error ? [r.code, r.reason, r.bytesParsed] : r]);
  console.log('reentrant', JSON.stringify(out));
}
// close() is not free(): a program's replacement of free is not called.
{
  const p = new HTTPParser();
  p.initialize(HTTPParser.REQUEST, {});
  let frees = 0;
  p.free = () => { frees++; };
  p.close();
  console.log('close', frees);
}
