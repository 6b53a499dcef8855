'use strict';
// Node's old http module names, and checks of http's argument handling.
const http = require('http');

for (const name of ['_http_agent', '_http_client', '_http_common', '_http_incoming', '_http_outgoing', '_http_server']) {
  const m = require(name);
  console.log(name, Object.keys(m).filter((k) => k !== 'kConnectionsCheckingInterval' && k !== 'setupConnectionsTracking').sort().join(','));
}
const common = require('_http_common');
console.log(require('_http_agent').Agent === http.Agent, require('_http_outgoing').OutgoingMessage === http.OutgoingMessage,
  require('_http_server').Server === http.Server, require('_http_common') === common);
console.log(common._checkIsHttpToken('Content-Type'), common._checkIsHttpToken('a b'), common._checkIsHttpToken(''),
  common._checkInvalidHeaderChar('ok\t'), common._checkInvalidHeaderChar('a\r\nb'), common._checkInvalidHeaderChar(1));
console.log(common.chunkExpression.test('gzip, chunked'), common.continueExpression.test('100-continue'), JSON.stringify(common.CRLF));
console.log(common.methods.includes('GET'), typeof common.HTTPParser, typeof common.freeParser, common.isLenient());
const before = common.parsers.max;
http.setMaxIdleHTTPParsers(7);
console.log(before, common.parsers.max);

// _headerNames (deprecated) and writableCorked.
process.on('warning', (w) => console.log('warning', w.code, w.message));
const out = new http.OutgoingMessage();
console.log(out._headerNames);
out.setHeader('X-Flow', '1');
out._headerNames = { 'x-flow': 'X-FLOW' };
console.log(out._headerNames, out.getHeaderNames(), out.writableCorked);
out.cork();
out.cork();
console.log(out.writableCorked);
out.uncork();
console.log(out.writableCorked);

const show = (fn) => { try { fn(); console.log('no error'); } catch (e) { console.log(e.name, e.code, e.message); } };
for (const o of ['foo', 42, true, []]) show(() => new http.Server(o));
show(() => http.request({ hostname: {} }));
show(() => http.request({ host: 5 }));
const res = new http.ServerResponse({ method: 'GET', headers: {}, httpVersionMajor: 1, httpVersionMinor: 1 });
for (const code of [{}, '1000', 99, [], 'abc', 1n]) show(() => res.writeHead(code));
for (const hints of ['bad', [], null]) show(() => res.writeEarlyHints(hints));
for (const link of ['</>; ', 'rel=preload; </scripts.js>', 'invalid string', 5, ['</a>', 'bad']]) show(() => res.writeEarlyHints({ link }));
for (const maxTotalSockets of ['x', -1, 0, NaN, Infinity]) show(() => new http.Agent({ maxTotalSockets }));
