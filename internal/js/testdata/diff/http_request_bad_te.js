'use strict';
// A request whose Transfer-Encoding does not end in chunked: llhttp
// reports it after the headers, so the server sees the request (never
// its body) and then answers 400.
const http = require('http');
const net = require('net');

const srv = http.createServer((req) => {
  console.log('request', req.method, req.headers['transfer-encoding']);
  req.on('data', () => console.log('data'));
  req.on('end', () => console.log('end'));
});
srv.on('clientError', (err, socket) => {
  console.log('clientError', err.code, err.message);
  socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
});
srv.listen(0, () => {
  const c = net.connect(srv.address().port);
  let d = '';
  c.setEncoding('utf8');
  c.on('data', (b) => { d += b; });
  c.on('end', () => { console.log(JSON.stringify(d)); srv.close(); });
  c.write('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunkedchunked\r\n\r\n1\r\nA\r\n0\r\n\r\n');
});
