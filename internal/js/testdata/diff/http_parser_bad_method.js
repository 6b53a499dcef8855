'use strict';
// Where llhttp stops in a request line with a method that cannot be:
// bytesParsed and rawPacket of the clientError, whole lines and pieces.
const http = require('http');
const net = require('net');

const cases = [['Oopsie-doopsie\r\n'], ['FOO /\r\n'], ['1'], ['GETX / HTTP/1.1\r\n\r\n'], ['\r\nGEX / HTTP/1.1\r\n\r\n'], ['GE', 'T / HTTP/1.1\r\nHost: x\r\n\r\nXYZ'], ['PO', 'Sx']];
const srv = http.createServer((req, res) => res.end('ok'));
srv.on('clientError', (err, socket) => {
  console.log(err.code, err.bytesParsed, JSON.stringify(String(err.rawPacket)));
  socket.destroy();
});
srv.listen(0, async () => {
  for (const parts of cases) {
    await new Promise((resolve) => {
      const c = net.connect(srv.address().port, async () => {
        c.setNoDelay(true);
        for (const p of parts) {
          c.write(p);
          await new Promise((r) => setTimeout(r, 50));
        }
        c.end();
      });
      c.resume();
      c.on('close', resolve);
    });
  }
  srv.close();
});
