'use strict';
// net's listen and connect argument checks, isIP on non-strings, a
// socket's fd option, bytesWritten of queued writes, a closed socket
// connecting again, and _setSimultaneousAccepts' one warning; Node's own
// results.
const net = require('net');

function show(what, fn) {
  try {
    const r = fn();
    console.log(what, 'ok', r && r.constructor ? r.constructor.name : r);
  } catch (e) {
    console.log(what, e.name, e.code, e.message);
  }
}

process.on('warning', (w) => console.log('warning', w.name, w.code, w.message));
net._setSimultaneousAccepts();
net._setSimultaneousAccepts();
for (const v of [{ toString: () => '127.0.0.1' }, { toString: () => '::1' }, 123, null, {}]) console.log('isIP', net.isIP(v));
for (const ms of ['100', null, -1, Infinity, NaN]) show(`setTimeout ${ms}`, () => new net.Socket().setTimeout(ms, () => {}));
show('setTimeout callback', () => new net.Socket().setTimeout(1, 'x'));
const gone = new net.Socket();
gone.destroy();
show('setTimeout destroyed', () => gone.setTimeout('x') === gone);
show('fd -1', () => new net.Socket({ fd: -1 }));
show('fd foo', () => new net.Socket({ fd: 'foo' }));
show('connect none', () => net.connect());
show('connect {}', () => net.connect({}));
for (const port of [true, null, [], '', ' ', '0x', NaN, -1, 65536]) {
  show(`connect port ${String(port)}`, () => net.connect({ port, family: 4 }));
}
show('connect hints', () => net.connect({ port: 42, hints: 42 + 1024 }));
for (const port of [-1, NaN, 123.456, 65536, -1 >>> 0]) show(`listen port ${port}`, () => net.createServer().listen(port));
show('listen port false', () => net.createServer().listen({ port: false }));
show('listen no port', () => net.createServer().listen({ host: 'x' }));
show('listen signal', () => net.createServer().listen({ port: 0, signal: 'x' }));
const aborted = net.createServer();
aborted.on('close', () => console.log('aborted server closed'));
aborted.listen({ port: 0, signal: AbortSignal.abort() });

const server = net.createServer((s) => s.resume()).listen(0, '127.0.0.1', () => {
  console.log('key', server._connectionKey.replace(/:\d+$/, ':PORT'));
  const port = server.address().port;
  const c = new net.Socket({ highWaterMark: 0 });
  c.connect(port, '127.0.0.1');
  console.log('connecting', c.connecting, c._connecting);
  const r = c.write('héllo');
  console.log('queued', c.bytesWritten, r);
  let round = 0;
  c.on('close', () => {
    console.log('closed', round, c.bytesWritten);
    if (++round === 2) { server.close(); return; }
    c.connect(port, '127.0.0.1', () => c.end('ab'));
  });
  c.end();
});
