// tls.convertALPNProtocols and the ALPN options of tls and https servers,
// as Node keeps them (the wire form on server.ALPNProtocols).
const tls = require('tls'), https = require('https');
const o = {};
tls.convertALPNProtocols(['h2', 'http/1.1'], o);
console.log(o.ALPNProtocols.toString('hex'));
try { tls.convertALPNProtocols(['x'.repeat(256)], o); } catch (e) { console.log(e.name, e.code, e.message); }
const p = {};
tls.convertALPNProtocols(Buffer.from('abc'), p);
console.log(p.ALPNProtocols.toString());
const q = {};
tls.convertALPNProtocols('x', q);
console.log(Object.keys(q));
console.log(tls.createServer({ ALPNProtocols: ['a', 'bc'] }).ALPNProtocols.toString('hex'));
console.log(https.createServer().ALPNProtocols.toString('hex'));
const cb = () => {};
const s = https.createServer({ ALPNCallback: cb });
console.log(s.ALPNProtocols, s.ALPNCallback === cb);
try { tls.createServer({ ALPNCallback: cb, ALPNProtocols: ['a'] }); } catch (e) { console.log(e.name, e.code, e.message); }
