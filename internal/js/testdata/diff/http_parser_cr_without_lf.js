// How the parser names a CR that is not followed by LF (llhttp's codes).
const http = require('http'); const net = require('net');
const reqs = ['GET / HTTP/1.1\r\nDummy: Header\rContent-Length: 1\r\n\r\n', 'GET / HTTP/1.1\r\nDummy: Header\r\r\n\r\n', 'GET / HTTP/1.1\r\nDummy: Hea\rder\r\n\r\n', 'GET / HTTP/1.1\rHost: x\r\n\r\n', 'GET / HTTP/1.1\r\nHost: x\r\n\rX\r\n', 'GET / HTTP/1.1\r\nDum\rmy: x\r\n\r\n'];
const out = [];
const srv = http.createServer((req, res) => res.end());
srv.on('clientError', (err, sock) => { out.push(err.code + ' ' + err.message); sock.destroy(); });
srv.listen(0, async () => {
  for (const r of reqs) await new Promise((res) => { const c = net.connect(srv.address().port, () => c.end(r)); c.resume(); c.on('close', res); });
  console.log(out.join('\n')); srv.close();
});
