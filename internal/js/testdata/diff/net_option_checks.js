// net's argument checks, as Node's: they throw before anything starts.
const net = require('net');
const attempts = [
  () => net.createServer('path'),
  () => net.createServer(0),
  () => net.createServer(null).close(),
  () => new net.Socket({ objectMode: true }),
  () => new net.Socket({ readableObjectMode: 1 }),
  () => net.connect({ port: 80, writableObjectMode: 'yes' }),
  () => net.connect({ host: 'localhost', port: 0, localAddress: 'foobar' }),
  () => net.connect({ host: 'localhost', port: 0, localPort: 'foobar' }),
  () => net.connect({ host: 'localhost', port: 0, lookup: 'foobar' }),
  () => net.connect({ host: 'localhost', port: 0, lookup: {} }),
];
for (const f of attempts) {
  try {
    f();
    console.log('no error');
  } catch (e) {
    console.log(e.name, e.code, e.message);
  }
}
