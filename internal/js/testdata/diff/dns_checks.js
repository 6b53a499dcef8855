'use strict';
// dns: setServers' checks and the list getServers shows, the
// Resolver's setLocalAddress checks, resolve's argument checks (thrown,
// by the promise API too) and the promise API's error codes; Node's own.
const dns = require('dns');

function show(what, fn) {
  try {
    const r = fn();
    console.log(what, 'ok', r instanceof Promise ? 'Promise' : r);
  } catch (e) {
    console.log(what, e.name, e.code, e.message);
  }
}

for (const v of [null, '8.8.8.8', ['foobar'], ['127.0.0.1:va'], [1], [' '], [':'.repeat(1000)]]) show(`setServers ${JSON.stringify(v)}`, () => dns.setServers(v));
const holes = [];
holes[0] = '127.0.0.1';
holes[2] = '4.4.4.4:53';
holes[3] = '[fe80::1]:666';
holes[4] = '103.238.225.181:666';
holes[5] = '[::1]';
dns.setServers(holes);
console.log(dns.getServers());
const r = new dns.Resolver();
for (const args of [['127.0.0.1'], ['::1'], ['127.0.0.1', '::1'], ['127.0.0.1', '127.0.0.1'], ['::1', '::1'], ['bad'], [123], ['127.0.0.1', 42], []]) {
  show(`setLocalAddress ${JSON.stringify(args)}`, () => r.setLocalAddress(...args));
}
show('resolveNs name', () => dns.resolveNs([]));
show('resolveNs callback', () => dns.resolveNs(''));
show('promises resolveNs name', () => dns.promises.resolveNs([]));
show('promises resolve', () => dns.promises.resolve());
show('resolve rrtype', () => dns.resolve('example.com', [], () => {}));
console.log('codes', dns.promises.NODATA === dns.NODATA, dns.promises.CANCELLED);
