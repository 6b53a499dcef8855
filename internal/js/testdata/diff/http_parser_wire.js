'use strict';
// The server's parser on real sockets: pipelined requests in one write,
// a request handler that destroys the socket while the rest of the chunk
// is still unparsed, smuggling attempts (CL+TE, TE+CL, obs-fold, bare CR,
// bare LF) and an oversized head: which requests the app sees, the
// clientError codes and positions, and what the peer reads back.
const http = require('http');
const net = require('net');

const cases = [
  'GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\nGET /3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  'GET /destroy HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n',
  'POST /clte HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n',
  'POST /tecl HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n',
  'GET /fold HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n',
  'GET /cr HTTP/1.1\r\nHost: x\rX: y\r\n\r\n',
  'GET /lf HTTP/1.1\nHost: x\n\n',
  `GET /big HTTP/1.1\r\nHost: x\r\nCookie: ${'a'.repeat(20000)}\r\n\r\n`,
];

const srv = http.createServer((req, res) => {
  console.log('request', req.method, req.url);
  if (req.url === '/destroy') {
    req.socket.destroy();
    return;
  }
  res.end(`ok ${req.url}`);
});
srv.on('clientError', (err, socket) => {
  console.log('clientError', err.code, err.reason, err.bytesParsed);
  socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
});
srv.listen(0, async () => {
  for (const raw of cases) {
    await new Promise((resolve) => {
      // Written, not ended: every case's server closes the connection.
      const c = net.connect(srv.address().port, () => c.write(raw));
      let got = '';
      c.setEncoding('latin1');
      c.on('data', (d) => { got += d; });
      c.on('error', () => {});
      c.on('close', () => {
        const statuses = got.match(/HTTP\/1\.1 \d{3}[^\r]*/g) || [];
        console.log('peer read', JSON.stringify(statuses));
        resolve();
      });
    });
  }
  srv.close();
});
