// tls.checkServerIdentity as Node decides it (RFC 6125 wildcards, the CN
// only without DNS alt names, IPs canonicalised), and Node's classes that
// construct without new.
const tls = require('tls');
const net = require('net');
const util = require('util');
const cases = [
  ['a.com', { subject: { CN: 'a.com' } }],
  ['a.com', { subject: { CN: 'A.COM' } }],
  ['A.COM', { subject: { CN: 'a.com' } }],
  ['a.com.', { subject: { CN: 'a.com' } }],
  ['a.com', { subject: { CN: 'b.com' } }],
  ['a.com', { subject: { CN: ['x.com', 'a.com'] } }],
  ['a.com', { subject: {} }],
  ['b.a.com', { subject: { CN: '*.a.com' } }],
  ['a.com', { subject: { CN: '*.com' } }],
  ['ba.a.com', { subject: { CN: 'b*.a.com' } }],
  ['ba.a.com', { subject: { CN: '*b*.a.com' } }],
  ['xn--b.a.com', { subject: { CN: 'xn--*.a.com' } }],
  ['a.com', { subject: { CN: 'a.com' }, subjectaltname: 'DNS:b.com' }],
  ['b.com', { subject: { CN: 'a.com' }, subjectaltname: 'DNS:x.com, DNS:b.com' }],
  ['127.0.0.1', { subject: { CN: '127.0.0.1' } }],
  ['127.0.0.1', { subject: {}, subjectaltname: 'IP Address:127.0.0.1' }],
  ['::1', { subject: {}, subjectaltname: 'IP Address:0:0:0:0:0:0:0:1' }],
  ['2001:db8::1', { subject: {}, subjectaltname: 'IP Address:2001:DB8:0:0:0:0:0:2, IP Address:2001:db8:0:0::1' }],
  ['::ffff:10.0.0.1', { subject: {}, subjectaltname: 'IP Address:10.0.0.1' }],
  ['a.b.com', { subject: {}, subjectaltname: 'DNS:"a.b.com, c.d.com", DNS:e.com' }],
  ['e.com', { subject: {}, subjectaltname: 'DNS:"a.b.com, c.d.com", DNS:e.com' }],
  ['a.com', { subject: {}, subjectaltname: 'URI:http://a.com/' }],
  ['a..com', { subject: { CN: 'a..com' } }],
];
for (const [host, cert] of cases) {
  const err = tls.checkServerIdentity(host, cert);
  console.log(host, JSON.stringify(cert), '->', err ? `${err.code} ${err.message} reason=${err.reason} host=${err.host} cert=${err.cert === cert}` : 'ok');
}
try {
  tls.checkServerIdentity('a.com', { subject: {}, subjectaltname: 'DNS:"bad' });
} catch (e) {
  console.log(e.name, e.code, e.message);
}

// Node's net.Server, net.Socket and tls.Server construct without new.
const s = net.Server();
console.log(s instanceof net.Server, typeof s.listen);
console.log(net.Socket() instanceof net.Socket, net.Stream() instanceof net.Socket);
console.log(tls.Server() instanceof tls.Server, tls.Server() instanceof net.Server);
class Sub extends net.Server {}
console.log(new Sub() instanceof Sub, new Sub() instanceof net.Server);

// util._extend copies own enumerable keys (deprecated: it warns on stderr).
const target = { a: 1 };
console.log(util._extend(target, { b: 2, a: 3 }) === target, JSON.stringify(target), util._extend(target, null) === target);
