'use strict';
// AES key wrap (RFC 3394, RFC 5649 with padding) as OpenSSL's id-aes*-wrap
// ciphers: each update wraps its whole input, getCipherInfo, errors.
const c = require('crypto');
for (const n of ['id-aes128-wrap', 'aes128-wrap', 'id-aes192-wrap', 'id-aes256-wrap', 'id-aes128-wrap-pad', 'aes128-wrap-pad', 'id-aes256-wrap-pad']) console.log(n, JSON.stringify(c.getCipherInfo(n)));
console.log(c.getCiphers().filter((n) => /aes.*wrap/.test(n)).join(' '));
const k = Buffer.alloc(16, 1);
const w = c.createCipheriv('id-aes128-wrap', k, Buffer.from('a6a6a6a6a6a6a6a6', 'hex')); const u = w.update(Buffer.alloc(24, 7)); const f = w.final(); console.log(u.toString('hex'), f.length);
// RFC 3394 4.1
const kek = Buffer.from('000102030405060708090A0B0C0D0E0F', 'hex');
console.log(c.createCipheriv('id-aes128-wrap', kek, Buffer.from('A6A6A6A6A6A6A6A6', 'hex')).update(Buffer.from('00112233445566778899AABBCCDDEEFF', 'hex')).toString('hex'));
try { const w2 = c.createCipheriv('id-aes128-wrap', k, null); console.log(Buffer.concat([w2.update(Buffer.alloc(16, 7)), w2.final()]).toString('hex')); } catch (e) { console.log(e.code, e.message); }
try { const w2 = c.createCipheriv('id-aes128-wrap', k, Buffer.alloc(8)); console.log(w2.update(Buffer.alloc(12, 7)).toString('hex')); } catch (e) { console.log('12:', e.code, e.message); }
try { const w2 = c.createCipheriv('id-aes128-wrap', k, Buffer.alloc(8)); console.log(w2.update(Buffer.alloc(8, 7)).toString('hex')); } catch (e) { console.log('8:', e.code, e.message); }
try { const d = c.createDecipheriv('id-aes128-wrap', Buffer.alloc(16, 2), Buffer.from('a6a6a6a6a6a6a6a6', 'hex')); console.log(d.update(u).toString('hex')); d.final(); } catch (e) { console.log('bad:', e.code, e.message); }
const d = c.createDecipheriv('id-aes128-wrap', k, Buffer.from('a6a6a6a6a6a6a6a6', 'hex')); console.log(d.update(u).toString('hex'), d.final().length);
const p = c.createCipheriv('id-aes128-wrap-pad', k, Buffer.from('a65959a6', 'hex')); const p1 = p.update('abc'), p2 = p.update('12345678901'); console.log(p1.toString('hex'), p2.toString('hex'));
const dp = c.createDecipheriv('id-aes128-wrap-pad', k, Buffer.from('a65959a6', 'hex')); console.log(dp.update(p1).toString(), dp.update(p2).toString());
try { const p3 = c.createCipheriv('id-aes128-wrap-pad', k, null); console.log(p3.update('abc').toString('hex')); } catch (e) { console.log(e.code, e.message); }
try { const p4 = c.createDecipheriv('id-aes128-wrap-pad', k, Buffer.from('a65959a6', 'hex')); console.log(p4.update(Buffer.alloc(16, 1)).toString('hex')); } catch (e) { console.log('padbad', e.code, e.message); }
