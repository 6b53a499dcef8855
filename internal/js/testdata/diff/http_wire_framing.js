'use strict';
// What an http server puts on the wire, and how the client reads it back:
// latin1 header values beside a string body, 204/304 with an app-set
// chunked encoding, uniqueHeaders on a request, repeated fields joined.
const http = require('http');
const net = require('net');

const latin1 = Buffer.from('bår').toString('latin1');
const cases = [
  (req, res) => { res.writeHead(200, ['Content-Length', '5', 'content-disposition', latin1]); res.end('hello'); },
  (req, res) => { res.writeHead(200, ['content-disposition', [latin1]]); res.end('hello'); },
  (req, res) => { res.writeHead(204, { 'Transfer-Encoding': 'chunked' }); res.end(); },
  (req, res) => { res.writeHead(304, { 'Transfer-Encoding': 'chunked' }); res.end(); },
  (req, res) => { res.end(JSON.stringify([req.rawHeaders.map((h, i) => (i % 2 && req.rawHeaders[i - 1] === 'Host' ? 'HOST' : h)), req.headers.cookie, req.headers.authorization, req.headers['x-u']])); },
];

let n = 0;
const srv = http.createServer({ joinDuplicateHeaders: true }, (req, res) => {
  res.sendDate = false;
  cases[n++](req, res);
});

function raw(port) {
  return new Promise((resolve) => {
    const c = net.connect(port, () => c.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    let d = '';
    c.setEncoding('latin1');
    c.on('data', (b) => { d += b; });
    c.on('end', () => resolve(JSON.stringify(d)));
  });
}

srv.listen(0, async () => {
  const port = srv.address().port;
  for (let i = 0; i < 4; i++) console.log(await raw(port));
  await new Promise((resolve) => {
    http.get({
      port,
      headers: { Cookie: ['a=1', 'b=2'], Authorization: ['one', 'two'], 'X-U': ['p', 'q'] },
      uniqueHeaders: ['x-u'],
      joinDuplicateHeaders: true,
    }, (res) => {
      let b = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { b += d; });
      res.on('end', () => { console.log(b); resolve(); });
    });
  });
  srv.close();
});
