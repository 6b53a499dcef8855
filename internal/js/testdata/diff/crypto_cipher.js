// Ciphers with fixed keys, IVs and plaintexts: ciphertexts, tags, the
// chunking of update() output, encodings, streams and Node's errors.
const crypto = require('crypto');
const seq = (n, start = 0) => Buffer.from(Array.from({ length: n }, (_, i) => (start + i * 7) & 0xff));
function show(label, f) {
  try { console.log(label, f()); } catch (e) { console.log(label, 'throws', e.name, e.code, e.message); }
}

const specs = [];
for (const b of [128, 192, 256]) for (const m of ['cbc', 'ecb', 'ctr', 'cfb', 'ofb', 'gcm']) specs.push([`aes-${b}-${m}`, b / 8, m === 'ecb' ? 0 : m === 'gcm' ? 12 : 16]);
specs.push(['chacha20', 32, 16], ['chacha20-poly1305', 32, 12], ['aes256', 32, 16], ['id-aes128-GCM', 16, 12], ['AES-128-CBC', 16, 16]);
const aead = (n) => /gcm|poly1305/i.test(n);

for (const [name, kl, il] of specs) {
  const key = seq(kl, 1), iv = il ? seq(il, 100) : null;
  for (const len of [0, 1, 15, 16, 17, 33, 100]) {
    const pt = seq(len, 9);
    const c = crypto.createCipheriv(name, key, iv);
    if (aead(name)) c.setAAD(Buffer.from('header'));
    const parts = [];
    for (const [a, b] of [[0, 1], [1, 8], [8, 24], [24, len]]) if (a < len) parts.push(c.update(pt.subarray(a, Math.min(b, len))));
    parts.push(c.final());
    const ct = Buffer.concat(parts);
    const tag = aead(name) ? c.getAuthTag().toString('hex') : '';
    const d = crypto.createDecipheriv(name, key, iv);
    if (aead(name)) { d.setAAD(Buffer.from('header')); d.setAuthTag(Buffer.from(tag, 'hex')); }
    const back = Buffer.concat([d.update(ct), d.final()]);
    console.log(name, len, parts.map((p) => p.length).join(','), ct.toString('hex'), tag, back.equals(pt));
  }
}

// GCM with IVs that are not 96 bits, and short tags.
for (const ivLen of [1, 8, 16, 60]) {
  for (const tagLen of [4, 8, 12, 16]) {
    const c = crypto.createCipheriv('aes-256-gcm', seq(32), seq(ivLen, 3), { authTagLength: tagLen });
    const ct = Buffer.concat([c.update('gcm with an odd iv', 'utf8'), c.final()]);
    const tag = c.getAuthTag();
    const d = crypto.createDecipheriv('aes-256-gcm', seq(32), seq(ivLen, 3), { authTagLength: tagLen });
    d.setAuthTag(tag);
    console.log('gcm iv', ivLen, tagLen, ct.toString('hex'), tag.toString('hex'), d.update(ct, null, 'utf8') + d.final('utf8'));
  }
}

// No padding, output encodings, update chunking of block modes.
show('nopad', () => { const c = crypto.createCipheriv('aes-128-cbc', seq(16), seq(16)); c.setAutoPadding(false); return c.update(seq(32), null, 'hex') + c.final('hex'); });
show('nopad bad', () => { const c = crypto.createCipheriv('aes-128-cbc', seq(16), seq(16)); c.setAutoPadding(false); c.update(seq(15)); return c.final(); });
show('dec nopad', () => { const d = crypto.createDecipheriv('aes-128-ecb', seq(16), null); d.setAutoPadding(false); return [d.update(seq(16)).length, d.update(seq(16)).length, d.final().length]; });
show('dec chunks', () => { const d = crypto.createDecipheriv('aes-128-cbc', seq(16), seq(16)); return [d.update(seq(16)).length, d.update(seq(16)).length, d.update(seq(5)).length]; });
show('base64 out', () => { const c = crypto.createCipheriv('aes-128-ctr', seq(16), seq(16)); return [c.update('a', 'utf8', 'base64'), c.update('bcd', 'utf8', 'base64'), c.update('efgh', 'utf8', 'base64'), c.final('base64')]; });
show('hex in', () => { const c = crypto.createCipheriv('aes-192-cbc', seq(24), seq(16)); return c.update('00112233', 'hex', 'hex') + c.final('hex'); });
show('latin1', () => { const c = crypto.createCipheriv('aes-128-cbc', 'k'.repeat(16), 'i'.repeat(16)); return c.update('héllo', 'latin1', 'latin1') + c.final('latin1'); });
show('secret key', () => { const c = crypto.createCipheriv('aes-128-cbc', crypto.createSecretKey(seq(16)), seq(16)); return c.update('x', 'utf8', 'hex') + c.final('hex'); });
show('aad twice', () => { const c = crypto.createCipheriv('aes-128-gcm', seq(16), seq(12)); c.setAAD(seq(4)); c.setAAD(seq(4, 28)); c.update('x'); c.final(); return c.getAuthTag().toString('hex'); });
show('chacha counter', () => { const iv = Buffer.concat([Buffer.from([5, 0, 0, 0]), seq(12)]); const c = crypto.createCipheriv('chacha20', seq(32), iv); return c.update(seq(70)).toString('hex') + '|' + c.update(seq(70)).toString('hex'); });

// Errors.
show('keylen', () => crypto.createCipheriv('aes-128-cbc', seq(15), seq(16)));
show('ivlen', () => crypto.createCipheriv('aes-128-cbc', seq(16), seq(15)));
show('ecb iv', () => crypto.createCipheriv('aes-128-ecb', seq(16), seq(16)));
show('gcm empty iv', () => crypto.createCipheriv('aes-128-gcm', seq(16), Buffer.alloc(0)));
show('poly iv', () => crypto.createCipheriv('chacha20-poly1305', seq(32), seq(8)));
show('unknown', () => crypto.createCipheriv('aes-128-xyz', seq(16), seq(16)));
show('key type', () => crypto.createCipheriv('aes-128-cbc', 5, seq(16)));
show('iv type', () => crypto.createCipheriv('aes-128-cbc', seq(16), 5));
show('name type', () => crypto.createCipheriv(5, seq(16), seq(16)));
show('tag len', () => crypto.createCipheriv('aes-128-gcm', seq(16), seq(12), { authTagLength: 5 }));
show('bad decrypt', () => { const d = crypto.createDecipheriv('aes-128-cbc', seq(16), seq(16)); d.update(seq(16)); return d.final(); });
show('final block', () => { const d = crypto.createDecipheriv('aes-128-cbc', seq(16), seq(16)); d.update(seq(15)); return d.final(); });
show('no tag', () => { const d = crypto.createDecipheriv('aes-128-gcm', seq(16), seq(12)); d.update(seq(5)); return d.final(); });
show('wrong tag', () => { const d = crypto.createDecipheriv('aes-128-gcm', seq(16), seq(12)); d.setAuthTag(seq(16)); d.update(seq(5)); return d.final(); });
show('set tag twice', () => { const d = crypto.createDecipheriv('aes-128-gcm', seq(16), seq(12)); d.setAuthTag(seq(16)); d.setAuthTag(seq(16)); });
show('tag size', () => { const d = crypto.createDecipheriv('aes-128-gcm', seq(16), seq(12)); d.setAuthTag(seq(3)); });
show('early tag', () => crypto.createCipheriv('aes-128-gcm', seq(16), seq(12)).getAuthTag());
show('cbc tag', () => crypto.createCipheriv('aes-128-cbc', seq(16), seq(16)).getAuthTag());
show('late aad', () => { const c = crypto.createCipheriv('aes-128-gcm', seq(16), seq(12)); c.update('x'); c.setAAD(seq(2)); });
show('cbc aad', () => crypto.createCipheriv('aes-128-cbc', seq(16), seq(16)).setAAD(seq(2)));
show('final twice', () => { const c = crypto.createCipheriv('aes-128-cbc', seq(16), seq(16)); c.final(); c.final(); });
show('update after final', () => { const c = crypto.createCipheriv('aes-128-cbc', seq(16), seq(16)); c.final(); c.update('x'); });
show('padding after final', () => { const c = crypto.createCipheriv('aes-128-cbc', seq(16), seq(16)); c.final(); c.setAutoPadding(false); });
show('data type', () => crypto.createCipheriv('aes-128-cbc', seq(16), seq(16)).update(5));
show('final enc', () => crypto.createCipheriv('aes-128-cbc', seq(16), seq(16)).final('bogus'));
show('classes', () => [crypto.createCipheriv('aes-128-cbc', seq(16), seq(16)) instanceof require('stream').Transform, crypto.createDecipheriv('aes-128-cbc', seq(16), seq(16)).constructor.name]);
show('lists', () => ['aes-256-gcm', 'aes-128-cbc', 'chacha20-poly1305', 'aes-192-ctr'].map((c) => crypto.getCiphers().includes(c)));
show('curves', () => ['prime256v1', 'secp384r1', 'secp521r1'].map((c) => crypto.getCurves().includes(c)));
show('hashes', () => ['sha256', 'RSA-SHA256', 'sha3-256', 'md5', 'sha512-256'].map((c) => crypto.getHashes().includes(c)));
show('sha3', () => crypto.createHash('sha3-256').update('abc').digest('hex'));

// A cipher as a stream.
const { pipeline, Readable, Writable } = require('stream');
const chunks = [];
pipeline(Readable.from([Buffer.from('stream '), Buffer.from('of data '), Buffer.from('through aes-256-cbc')]),
  crypto.createCipheriv('aes-256-cbc', seq(32), seq(16)),
  crypto.createDecipheriv('aes-256-cbc', seq(32), seq(16)),
  new Writable({ write(c, e, cb) { chunks.push(c); cb(); } }),
  (err) => console.log('pipeline', err, Buffer.concat(chunks).toString()));
show('cipher info', () => ['aes-128-cbc', 'aes-192-ecb', 'aes-256-ctr', 'aes-128-cfb', 'aes-128-ofb', 'aes-192-gcm', 'aes256', 'id-aes128-GCM', 'chacha20', 'chacha20-poly1305', 'nope', 419, 1018].map((n) => JSON.stringify(crypto.getCipherInfo(n))));
show('cipher info options', () => [crypto.getCipherInfo('aes-128-gcm', { ivLength: 16 }), crypto.getCipherInfo('aes-128-cbc', { ivLength: 12 }), crypto.getCipherInfo('aes-128-cbc', { keyLength: 16 })]);
