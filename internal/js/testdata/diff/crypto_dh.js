'use strict';
// Classic Diffie-Hellman: the MODP groups' primes, agreement, fixed keys
// (the secret padded to the prime's length), OpenSSL's verifyError and
// Node's errors (those that Node 20 and 22 agree on).
const crypto = require('crypto');
const show = (f) => {
  try { const r = f(); return r === undefined ? 'ok' : String(r); } catch (e) { return `${e.name} ${e.code} ${e.message}`; }
};
for (const g of ['modp1', 'modp2', 'modp5', 'modp14', 'modp15', 'modp16', 'modp17', 'modp18']) {
  const dh = crypto.getDiffieHellman(g);
  console.log(g, dh.getPrime().length, dh.getGenerator('hex'), dh.verifyError,
    crypto.createHash('sha256').update(dh.getPrime()).digest('hex'));
}
const a = crypto.createDiffieHellmanGroup('modp5');
const b = crypto.createDiffieHellman(a.getPrime(), 'buffer', Buffer.from([2]));
a.generateKeys();
b.generateKeys('hex');
console.log(a.computeSecret(b.getPublicKey()).equals(b.computeSecret(a.getPublicKey('hex'), 'hex')));
console.log(a instanceof crypto.DiffieHellmanGroup, crypto.DiffieHellman(a.getPrime()) instanceof crypto.DiffieHellman);
console.log(a.setPrivateKey, typeof b.setPrivateKey, Object.keys(crypto.DiffieHellman.prototype).join());

const p = crypto.createDiffieHellman(crypto.getDiffieHellman('modp14').getPrime());
p.setPrivateKey('0102030405', 'hex');
console.log(p.getPrivateKey('hex'), p.generateKeys('hex').slice(0, 32));
const q = crypto.createDiffieHellman(p.getPrime(), p.getGenerator());
q.setPrivateKey(Buffer.from([0, 0, 9, 8, 7]));
q.generateKeys();
const s = q.computeSecret(p.getPublicKey(), null, 'hex');
console.log(s.length, s === p.computeSecret(q.getPublicKey()).toString('hex'), q.getPrivateKey('hex'));
const fresh = crypto.createDiffieHellman(p.getPrime());
console.log(show(() => fresh.getPublicKey()), show(() => fresh.getPrivateKey()));
console.log(show(() => p.computeSecret(Buffer.from([1]))), show(() => p.computeSecret(Buffer.from([0]))));
console.log(show(() => p.computeSecret({})));
for (const args of [[{}], [1], [0], [-1], [Buffer.from('17', 'hex')], [Buffer.from('17', 'hex'), 23],
  [Buffer.from('17', 'hex'), 5], [Buffer.from('ff', 'hex')], ['ff', 'hex'],
  [p.getPrime(), 1], [p.getPrime(), Buffer.from([1])], [p.getPrime(), 5], [1.5], [p.getPrime(), {}]]) {
  console.log(show(() => crypto.createDiffieHellman(...args).verifyError));
}
console.log(show(() => crypto.getDiffieHellman('modp3')), show(() => crypto.getDiffieHellman(1)));
const gen = crypto.createDiffieHellman(512);
console.log(gen.getPrime().length, gen.verifyError, gen.getGenerator('hex'));
