'use strict';
// Where a header overflow is reported (bytesParsed): in a line cut by
// the chunk's end (a whole line's overflow is reported at its LF by node
// 22, at its CR by node 20; the host node may be either).
const http = require('http');
const net = require('net');

const big = 'a'.repeat(http.maxHeaderSize);
const cases = [
  `GET /blah HTTP/1.1\r\nCookie: ${big}`,
];
const srv = http.createServer((req, res) => res.end('ok'));
srv.on('connection', (socket) => {
  socket.on('error', (err) => console.log(err.code, err.bytesParsed, err.rawPacket.length));
  socket.push(cases.shift());
});
srv.listen(0, async () => {
  for (let i = 0; i < 1; i++) {
    await new Promise((resolve) => {
      const c = net.connect(srv.address().port);
      let d = '';
      c.on('data', (b) => { d += b; });
      c.on('close', () => { console.log(JSON.stringify(d)); resolve(); });
    });
  }
  srv.close();
});
