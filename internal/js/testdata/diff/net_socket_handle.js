// net.Socket's handle and the states before a connection, as Node's: one
// handle object per socket, socket options remembered until connected and
// passed on only when they change, writes on a socket that never connected
// or closed before connecting fail.
const net = require('net');

const idle = new net.Socket();
console.log('handle before connect', idle._handle, idle.bufferSize);
idle.timeout = 5;
console.log('timeout field', idle.timeout);

const unconnected = new net.Socket();
unconnected.on('error', (e) => console.log('unconnected error', e.code, e.message));
unconnected.write('x', (e) => console.log('write without connect:', e.code, e.message));

const server = net.createServer((s) => s.end());
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const calls = [];
  const c = net.connect({ port, host: '127.0.0.1', noDelay: true, keepAlive: true, keepAliveInitialDelay: -5000 }, () => {
    console.log('same handle', c._handle === c._handle, typeof c._handle.setNoDelay, typeof c._handle.setKeepAlive);
    console.log('bufferSize', c.bufferSize);
    c.setNoDelay(true); // unchanged: not passed on
    c.setNoDelay(false);
    c.setNoDelay();
    c.setKeepAlive(true, 0); // unchanged
    c.setKeepAlive(true, 2500);
    c.setKeepAlive(false);
    console.log(calls.join(' '));
    c.end();
  });
  const h = c._handle;
  const noDelay = h.setNoDelay.bind(h);
  const keepAlive = h.setKeepAlive.bind(h);
  h.setNoDelay = (on) => { calls.push(`noDelay(${on})`); return noDelay(on); };
  h.setKeepAlive = (on, d) => { calls.push(`keepAlive(${on},${d})`); return keepAlive(on, d); };
  c.on('close', () => {
    const early = net.connect({ port, host: '127.0.0.1' });
    early.on('connect', () => console.log('early connected (unexpected)'));
    early.write('foo', (e) => console.log('write before destroy:', e.code, e.message));
    early.on('error', () => {});
    early.on('close', () => server.close());
    early.destroy();
  });
});
