'use strict';
// net: a connection to a name starts after what the program does next; a
// custom lookup's answers ('lookup' events, bad address or family); a
// server closed before it listened, or before its host was looked up,
// never reports listening.
const net = require('net');

net.createServer().listen(0, () => console.log('closed server listened')).close();
net.createServer().listen(0, 'localhost', () => console.log('closed lookup listened')).close();

const server = net.createServer();
server.listen(0, '127.0.0.1', () => {
  const port = server.address().port;
  server.close(() => {
    const c = net.createConnection(port, '127.0.0.1');
    c.on('error', (e) => console.log('refused', e.code));
  });
  const lookup = (host, opts, cb) => {
    console.log('lookup asked', host, opts.family, opts.all);
    process.nextTick(() => (opts.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4)));
  };
  const s = net.connect({ host: 'example.invalid', port, lookup });
  s.on('lookup', (err, ip, type, host) => console.log('lookup event', err, ip, type, host));
  s.on('error', () => {});
  const bad = net.connect({ host: 'example.invalid', port: 1, lookup: (h, o, cb) => (o.all ? cb(null, [{ address: '127.0.0.1', family: 100 }]) : cb(null, '127.0.0.1', 100)) });
  bad.on('error', (e) => console.log('bad family', e.name, e.code, e.message));
  const bad2 = net.connect({ host: 'example.invalid', port: 1, family: 4, lookup: (h, o, cb) => cb(null, undefined, 4) });
  bad2.on('error', (e) => console.log('bad address', e.code, e.message));
});
