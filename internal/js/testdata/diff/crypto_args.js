// crypto: argument checks of createHash/createHmac/pbkdf2/randomUUID, the
// deprecated constructors callable without new, and getFips.
const crypto = require('crypto');
const show = (f) => {
  try { console.log('ok', f()); } catch (e) { console.log('throws', e.name, e.code, e.message); }
};
for (const v of [undefined, null, 5, {}]) {
  show(() => crypto.createHash(v));
  show(() => crypto.createHmac(v, 'k'));
  show(() => crypto.Hash(v));
  show(() => crypto.Hmac(v, 'k'));
  show(() => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID(v === undefined ? 1 : v)));
  show(() => crypto.randomUUID({ disableEntropyCache: v }).length);
  show(() => crypto.pbkdf2('p', 's', 1, 8, v, () => {}));
  show(() => crypto.pbkdf2('p', 's', 1, 8, 'sha256', v));
  show(() => crypto.pbkdf2Sync('p', 's', v, 8, 'sha256'));
}
show(() => crypto.pbkdf2('p', 's', 1, 8, () => {}));
show(() => [crypto.Hash('sha256').update('x').digest('hex'), crypto.Hash('sha1') instanceof crypto.Hash, crypto.Hmac('sha256', 'k').update('x').digest('hex')]);
show(() => [crypto.Sign('SHA256') instanceof crypto.Sign, typeof crypto.Verify('SHA256').verify, crypto.Cipheriv('aes-128-cbc', Buffer.alloc(16), Buffer.alloc(16)) instanceof crypto.Cipheriv]);
// Options that are not an object are ignored: npm's ssri hashes with
// `algorithms.map(crypto.createHash)`, passing the index as options.
show(() => ['sha256', 'sha1'].map(crypto.createHash).map((h) => h.update('x').digest('hex')));
show(() => crypto.createHash('sha256', 'x').update('y').digest('base64'));
show(() => [crypto.getFips(), typeof crypto.setFips]);
show(() => crypto.setFips(false));
crypto.pbkdf2('p', 's', 1, 8, 'sha256', (e, k) => console.log('pbkdf2', e, k.toString('hex')));
