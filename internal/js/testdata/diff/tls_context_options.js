// The protocol, cipher and SNI options tls checks when a context or a
// server is made, with Node's errors for bad ones.
const tls = require('tls'), net = require('net');
const show = (label, fn) => {
  try { fn(); console.log(label, 'ok'); } catch (e) { console.log(label, e.name, e.code, e.message); }
};
console.log(tls.DEFAULT_MIN_VERSION, tls.DEFAULT_MAX_VERSION);
for (const secureProtocol of ['SSLv2_method', 'SSLv3_method', 'hokey-pokey', '%s_method', 'TLS_method', 'TLSv1_2_method', 'SSLv23_server_method']) {
  show(secureProtocol, () => tls.createSecureContext({ secureProtocol }));
}
show('conflict min', () => tls.createSecureContext({ secureProtocol: 'TLS_method', minVersion: 'TLSv1' }));
show('conflict max', () => tls.createServer({ secureProtocol: 'TLSv1_2_method', maxVersion: 'TLSv1.2' }));
show('bad min', () => tls.createSecureContext({ minVersion: 'TLSv9' }));
show('bad max', () => tls.createSecureContext({ maxVersion: 'SSLv3' }));
for (const ciphers of ['aes256-sha', 'FOOBARBAZ', 'TLS_not_a_cipher', 'AES256-SHA256', 'ALL@SECLEVEL=0', 'HIGH:!aNULL', 'TLS_AES_128_GCM_SHA256', 'AES128-SHA:foo']) {
  show(ciphers, () => tls.createServer({ ciphers }));
}
for (const SNICallback of ['fhqwhgads', 42, {}]) {
  show('server SNICallback ' + typeof SNICallback, () => tls.createServer({ SNICallback }));
  show('socket SNICallback ' + typeof SNICallback, () => new tls.TLSSocket(new net.Socket(), { isServer: true, SNICallback }));
}
show('addContext without a name', () => tls.createServer().addContext('', {}));
const saved = tls.DEFAULT_MAX_VERSION;
tls.DEFAULT_MAX_VERSION = 'TLSv1.5';
show('changed default', () => tls.createSecureContext({}));
tls.DEFAULT_MAX_VERSION = saved;
show('restored default', () => tls.createSecureContext({}));
