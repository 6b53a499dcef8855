'use strict';
// dgram's argument checks, states and error messages, Node's own; and a
// socket in a forked child and in two cluster workers (one shared port).
const dgram = require('dgram');
const cluster = require('cluster');

function show(what, fn) {
  try {
    const r = fn();
    console.log(what, 'ok', typeof r === 'object' && r !== null ? r.constructor.name : r);
  } catch (e) {
    console.log(what, e.name, e.code, e.message);
  }
}

function checks(done) {
  for (const t of ['test', 1, null, undefined, ['udp4']]) show(`type ${String(t)}`, () => dgram.createSocket(t));
  show('lookup', () => dgram.createSocket({ type: 'udp4', lookup: 'x' }));
  show('recvBufferSize', () => dgram.createSocket({ type: 'udp4', recvBufferSize: 'x' }));
  show('signal', () => dgram.createSocket({ type: 'udp4', signal: {} }));
  const s = dgram.createSocket('udp4');
  show('address unbound', () => s.address());
  show('setBroadcast unbound', () => s.setBroadcast(true));
  show('setTTL unbound', () => s.setTTL(3));
  show('getRecvBufferSize unbound', () => s.getRecvBufferSize());
  show('send nothing', () => s.send());
  show('send number', () => s.send(23, 12345, '127.0.0.1'));
  show('send list', () => s.send(['a', 23], 12345, '127.0.0.1'));
  show('send port 0', () => s.send('a', 1, 1, 0, '127.0.0.1'));
  show('send address', () => s.send('a', 12345, true));
  show('sendto', () => s.sendto('a', 1, 'x', 1, 'h'));
  show('connect port', () => s.connect(0));
  show('disconnect', () => s.disconnect());
  show('remoteAddress', () => s.remoteAddress());
  show('membership', () => s.addMembership());
  s.bind(0, '127.0.0.1', () => {
    show('bind again', () => s.bind());
    show('setTTL 16', () => s.setTTL(16));
    show('setTTL 1000', () => s.setTTL(1000));
    show('setTTL foo', () => s.setTTL('foo'));
    show('setMulticastTTL 1000', () => s.setMulticastTTL(1000));
    show('setMulticastLoopback', () => s.setMulticastLoopback(0));
    show('setMulticastInterface', () => s.setMulticastInterface('224.0.0.2'));
    show('setRecvBufferSize', () => s.setRecvBufferSize(10000));
    show('getRecvBufferSize', () => s.getRecvBufferSize());
    show('addMembership bad', () => s.addMembership('256.256.256.256'));
    show('ssm source', () => s.addSourceSpecificMembership(0, '224.0.0.114'));
    show('slice offset', () => s.send('hello', 6, 0, 1, '127.0.0.1'));
    show('slice length', () => s.send('hello', 3, 4, 1, '127.0.0.1'));
    const port = s.address().port;
    s.once('message', (msg, rinfo) => {
      console.log('message', msg.toString(), rinfo.size, rinfo.family);
      s.connect(port, '127.0.0.1', () => {
        show('connected send with port', () => s.send('x', port));
        console.log('remote', s.remoteAddress().port === port);
        s.close(() => {
          show('closed address', () => s.address());
          show('closed close', () => s.close());
          done();
        });
      });
    });
    s.send(['ab', Buffer.from('cd')], port, '127.0.0.1', (err, n) => console.log('sent', err, n));
  });
}

if (cluster.isWorker) {
  const w = dgram.createSocket('udp4');
  w.bind(0, () => process.send(w.address().port));
} else if (process.argv[2] === 'child') {
  checks(() => {});
} else {
  const child = require('child_process').fork(__filename, ['child']);
  child.on('exit', (code) => {
    console.log('child exit', code);
    const ports = [];
    for (let i = 0; i < 2; i++) {
      cluster.fork().on('message', (port) => {
        ports.push(port);
        if (ports.length === 2) {
          console.log('workers share a port', ports[0] === ports[1]);
          cluster.disconnect();
        }
      });
    }
  });
}
