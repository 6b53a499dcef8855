// crypto: argument checks of hash, randomBytes, getCipherInfo and hkdf,
// and an Hmac digested twice.
const crypto = require('crypto');
const show = (f) => {
  try { console.log('ok', f()); } catch (e) { console.log('throws', e.name, e.code, e.message); }
};
for (const v of [undefined, null, true, 1, {}]) {
  show(() => crypto.hash(v, 'test'));
  show(() => crypto.hash('sha1', v));
  show(() => crypto.hash('sha1', 'test', v));
  show(() => crypto.randomBytes(v).length);
  show(() => crypto.getCipherInfo('aes-192-cbc', v));
  show(() => crypto.getCipherInfo('aes-192-cbc', { keyLength: v }));
  show(() => crypto.getCipherInfo(v));
}
show(() => crypto.hash('sha1', 'test', 'not an encoding'));
show(() => [crypto.hash('sha1', 'test', 'base64'), crypto.hash('sha1', Buffer.from('test'), 'buffer'), crypto.hash('md5', new DataView(new ArrayBuffer(2)))]);
show(() => crypto.getCipherInfo('aes-192-cbc', { keyLength: 24 }));
show(() => crypto.hkdfSync('sha512', 'a', '', '', 64 * 255 + 1));
show(() => Buffer.from(crypto.hkdfSync('sha512', 'a', '', '', 64 * 255)).length);
show(() => crypto.hkdf('sha256', 'a', '', '', 32 * 255 + 1, () => {}));
const h = crypto.createHmac('sha1', 'key').update('data');
show(() => [h.digest('hex'), h.digest('hex'), h.digest().length, h.digest('base64')]);
const g = crypto.createHash('sha1');
g.digest();
show(() => g.digest());
show(() => [crypto.randomBytes(101.2).length, crypto.randomBytes(0).length]);
show(() => crypto.randomBytes(NaN));
show(() => crypto.randomBytes(-1));
show(() => crypto.randomBytes(1, 5));
