// Encrypted private keys: PKCS #8 (PBES2) in PEM and DER and the legacy
// PEM encryption of SEC 1 and PKCS #1 keys, with each CBC cipher,
// exported, read back with the passphrase (string or Buffer), used to
// sign, and refused without it, with a wrong one, an unknown cipher or an
// encoding that cannot be encrypted.
const c = require('crypto');
const ec = c.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsa = c.generateKeyPairSync('rsa', { modulusLength: 1024 });
const plain = (k, type) => k.export({ format: 'der', type }).toString('hex');
const show = (label, f) => {
  try {
    console.log(label, f());
  } catch (e) {
    console.log(label, e.name, e.code, e.message);
  }
};
for (const cipher of ['aes-128-cbc', 'aes-192-cbc', 'AES-256-CBC', 'des-ede3-cbc', 'aes256']) {
  for (const [k, type, format] of [[ec, 'pkcs8', 'pem'], [ec, 'pkcs8', 'der'], [ec, 'sec1', 'pem'], [rsa, 'pkcs1', 'pem'], [rsa, 'pkcs8', 'pem']]) {
    const passphrase = `${cipher} ${type}`;
    const enc = k.privateKey.export({ format, type, cipher, passphrase });
    // The parameters' encoding, without the random salt, IV and lengths.
    const l = format === 'pem' ? enc.split('\n') : [];
    const head = format === 'der' ? `der ${enc.subarray(3, 33).toString('hex')}`
      : l[1].startsWith('Proc-Type') ? `${l[0]} | ${l[1]} | ${l[2].replace(/,[0-9A-F]+$/, ',IV')}` : `${l[0]} | ${l[1].slice(4, 44)}`;
    const opts = format === 'der' ? { format, type } : {};
    show(`${cipher} ${type} ${format}: ${head}`, () => {
      const back = c.createPrivateKey({ key: enc, ...opts, passphrase });
      const again = c.createPrivateKey({ key: enc, ...opts, passphrase: Buffer.from(passphrase) });
      const sig = c.sign('sha256', Buffer.from('m'), { key: enc, ...opts, passphrase });
      return [plain(back, 'pkcs8') === plain(k.privateKey, 'pkcs8'), again.equals(back),
        c.verify('sha256', Buffer.from('m'), k.publicKey, sig),
        c.createPublicKey({ key: enc, ...opts, passphrase }).equals(k.publicKey)].join();
    });
    show('  no passphrase', () => c.createPrivateKey({ key: enc, ...opts }).type);
    // Refused: mostly as ERR_OSSL_BAD_DECRYPT, but one time in 256 the
    // padding looks right and the garbage fails to parse instead.
    show('  wrong passphrase', () => {
      try { return c.createPrivateKey({ key: enc, ...opts, passphrase: 'wrong' }).type; } catch { return 'refused'; }
    });
  }
}
show('empty passphrase', () => c.createPrivateKey({ key: ec.privateKey.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-128-cbc', passphrase: '' }), passphrase: '' }).type);
show('unknown cipher', () => ec.privateKey.export({ format: 'pem', type: 'pkcs8', cipher: 'nope', passphrase: 'x' }));
show('sec1 der', () => ec.privateKey.export({ format: 'der', type: 'sec1', cipher: 'aes-128-cbc', passphrase: 'x' }));
show('no cipher', () => ec.privateKey.export({ format: 'pem', type: 'pkcs8', passphrase: 'x' }));
show('no passphrase to export', () => ec.privateKey.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-128-cbc' }));
show('passphrase a number', () => c.createPrivateKey({ key: 'x', passphrase: 1 }));
show('unencrypted with a passphrase', () => c.createPrivateKey({ key: ec.privateKey.export({ format: 'pem', type: 'sec1' }), passphrase: 'x' }).type);
show('keygen pkcs1 der encrypted', () => c.generateKeyPairSync('rsa', { modulusLength: 1024, privateKeyEncoding: { format: 'der', type: 'pkcs1', cipher: 'aes-128-cbc', passphrase: 'x' } }));
show('keygen encrypted', () => c.createPrivateKey({ key: c.generateKeyPairSync('ec', { namedCurve: 'P-384', privateKeyEncoding: { format: 'pem', type: 'sec1', cipher: 'aes-128-cbc', passphrase: 'top secret' } }).privateKey, passphrase: 'top secret' }).asymmetricKeyDetails.namedCurve);
for (const o of [{ paramEncoding: 'x' }, { publicKeyEncoding: 0 }, { privateKeyEncoding: null },
  { privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 1, passphrase: 'x' } },
  { privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-128-cbc', passphrase: 2 } }]) {
  show(`keygen options ${JSON.stringify(o)}`, () => typeof c.generateKeyPairSync('ec', { namedCurve: 'P-256', ...o }).privateKey);
}
