'use strict';
// insecureHTTPParser (llhttp's lenient flags) as Node applies it per
// request and per server: control characters in values, folded lines;
// and CRLFs before a response.
const http = require('http');
const net = require('net');

const responses = [
  'HTTP/1.1 200 OK\r\nHello: foo\x08foo\r\nContent-Length: 0\r\n\r\n',
  'HTTP/1.1 200 OK\r\nContent-Type: text/plain;\r\n x-unix-mode=0600;\r\n\tname="a"\r\nContent-Length: 0\r\n\r\n',
  '\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n',
  'HTTP/1.1 200 OK\r\nA: 1 \r\n  \t x  \r\n \r\n\ty\r\nContent-Length: 0\r\n\r\n',
];

function get(port, insecureHTTPParser) {
  return new Promise((resolve) => {
    const req = http.get({ port, insecureHTTPParser, agent: false }, (res) => {
      resolve(JSON.stringify(res.rawHeaders));
      res.resume();
    });
    req.on('error', (e) => resolve(`${e.code} ${e.message}`));
  });
}

async function main() {
  let i = 0;
  const raw = net.createServer((c) => { c.end(responses[i]); c.resume(); });
  await new Promise((r) => raw.listen(0, r));
  for (i = 0; i < responses.length; i++) {
    for (const insecure of [true, undefined]) console.log(i, insecure, await get(raw.address().port, insecure));
  }
  raw.close();

  for (const insecureHTTPParser of [true, false]) {
    const srv = http.createServer({ insecureHTTPParser }, (req, res) => res.end(JSON.stringify(req.headers.hello)));
    srv.on('clientError', (e, s) => { console.log('clientError', e.code); s.destroy(); });
    await new Promise((r) => srv.listen(0, r));
    await new Promise((resolve) => {
      const c = net.connect(srv.address().port, () => c.end('GET / HTTP/1.1\r\nHost: x\r\nHello: foo\x01bar\r\nConnection: close\r\n\r\n'));
      let d = '';
      c.on('data', (b) => { d += b; });
      c.on('close', () => { console.log(insecureHTTPParser, JSON.stringify(d.split('\r\n\r\n')[1] || '')); resolve(); });
    });
    srv.close();
  }
}
main();
