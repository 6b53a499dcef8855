'use strict';
// HTTP/2 argument and header checks as node makes them: packed settings
// both ways, settings values, goaway, close codes, single-value fields,
// pushStream and respondWithFile/FD options, trailers without
// pseudo-headers, sendDate: false, a NO_ERROR reset that ends the
// client's response, the compatibility request's socket proxy, and a
// session destroyed under a stream.
const http2 = require('http2');
const path = require('path');
const fs = require('fs');

function code(fn) {
  try { fn(); return 'ok'; } catch (e) { return `${e.name} ${e.code} ${e.message}`; }
}

const packed = http2.getPackedSettings({ headerTableSize: 100, enablePush: false, maxFrameSize: 20000, maxHeaderSize: 7, customSettings: { 1011: 1951 } });
console.log('packed', packed.toString('hex'));
console.log('default', http2.getPackedSettings(http2.getDefaultSettings()).toString('hex'));
console.log('unpacked', JSON.stringify(http2.getUnpackedSettings(packed)));
console.log(code(() => http2.getUnpackedSettings(packed.subarray(1))));
console.log(code(() => http2.getUnpackedSettings('x')));
console.log(code(() => http2.getUnpackedSettings(Buffer.from([0, 5, 1, 0, 0, 0]), { validate: true })));
for (const s of [{ maxFrameSize: 100 }, { initialWindowSize: -1 }, { enablePush: 1 }, { customSettings: { 70000: 1 } }]) {
  console.log(JSON.stringify(s), code(() => http2.getPackedSettings(s)));
}
console.log('server settings', code(() => http2.createServer({ settings: { maxConcurrentStreams: -1 } })));
const srv = http2.createServer();
console.log('setTimeout', code(() => srv.setTimeout(10, 'x')), srv.setTimeout(5).timeout);

const file = path.join(__dirname, path.basename(__filename));
const server = http2.createServer();
server.on('stream', (stream, headers) => {
  const p = headers[':path'];
  if (p === '/checks') {
    console.log('close', code(() => stream.close('x')), code(() => stream.close(1.5)), code(() => stream.close(-1)));
    console.log('goaway', code(() => stream.session.goaway('x')), code(() => stream.session.goaway(0, 'x')), code(() => stream.session.goaway(0, 0, 'x')));
    console.log('window', code(() => stream.session.setLocalWindowSize(-1)), code(() => stream.session.setLocalWindowSize('1')));
    console.log('single', code(() => stream.respond({ 'content-type': ['a', 'b'] })), code(() => stream.respond({ 'user-agent': 'a', 'User-Agent': 'b' })));
    console.log('push', code(() => stream.pushStream({ connection: 'x' }, () => {})), code(() => stream.pushStream({}, {}, 'cb')));
    console.log('file', code(() => stream.respondWithFile(file, {}, { offset: 'x' })), code(() => stream.respondWithFile(file, { ':status': 204 })));
    console.log('fd', code(() => stream.respondWithFD('x')), code(() => stream.respondWithFD(0, {}, { statCheck: 1 })));
    stream.respond({ 'x-a': '1' }, { waitForTrailers: true, sendDate: false });
    stream.on('wantTrailers', () => {
      console.log('trailers', code(() => stream.sendTrailers({ ':status': 200 })));
      stream.close();
    });
    stream.end('checked');
  } else if (p === '/drop') {
    // The session ends under an open stream: the client's stream closes
    // without an error.
    stream.session.destroy();
  }
});
const compat = http2.createServer((req, res) => {
  const s = req.socket;
  console.log('socket', s === req.connection, s.readable === req.readable, typeof s.remoteAddress, code(() => s.write('x')), code(() => s.pause()));
  res.end('compat');
});

function get(port, p, method) {
  return new Promise((resolve) => {
    const client = http2.connect(`http://127.0.0.1:${port}`);
    const req = client.request({ ':path': p, ':method': method });
    const out = [];
    req.on('response', (h) => out.push(`response ${h[':status']} date ${'date' in h} x-a ${h['x-a']}`));
    req.on('aborted', () => out.push('aborted'));
    req.on('error', (e) => out.push(`error ${e.code}`));
    req.setEncoding('utf8');
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => out.push(`end ${body}`));
    req.on('close', () => {
      out.push(`close rst ${req.rstCode}`);
      client.close();
      resolve(out.join('\n'));
    });
  });
}

server.listen(0, '127.0.0.1', () => compat.listen(0, '127.0.0.1', async () => {
  const net = require('net');
  const connect = net.connect;
  net.connect = (...args) => {
    net.connect = connect;
    console.log('connect port', typeof args[0].port, args[0].port === String(server.address().port));
    return connect(...args);
  };
  console.log(await get(server.address().port, '/checks', 'POST'));
  console.log(await get(compat.address().port, '/compat', 'GET'));
  console.log(await get(server.address().port, '/drop', 'GET'));
  server.close();
  compat.close();
  fs.closeSync(fs.openSync(file, 'r'));
}));
