// A request handler that calls its socket's 'close' listeners by hand
// (Node's test-http-req-close-robust-from-tampering) frees the parser
// while it is still parsing that request's body: the parser stops
// instead of crashing the process on the chunk it let go.
'use strict';
const { createServer } = require('http');
const { connect } = require('net');

const server = createServer((req, res) => {
  const close = req.client._events.close;
  console.log('close listeners are an array', Array.isArray(close));
  (Array.isArray(close) ? close : [close]).forEach((fn) => { fn.bind(req)(); });
  console.log('handled', req.method, req.url);
});
server.unref();
server.listen(0, () => {
  const client = connect(server.address().port);
  client.end(['POST / HTTP/1.1', 'Host: example.com', 'Content-Length: 11', '', 'hello world'].join('\r\n'));
});
process.on('exit', (code) => console.log('exit', code));
