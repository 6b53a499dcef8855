// CryptoKey, Crypto and SubtleCrypto as objects (inspect, prototypes,
// receivers), DOMException's tag, zero-length derivations and argument
// type errors of crypto.subtle.
const util = require('util');
(async () => {
  const k = await crypto.subtle.importKey('raw', new Uint8Array(16), 'AES-GCM', true, ['encrypt']);
  console.log(util.inspect(k));
  console.log(util.inspect(crypto.subtle));
  console.log(Object.keys(k), Object.getOwnPropertyNames(CryptoKey.prototype));
  console.log(String(k), JSON.stringify(k));
  console.log(typeof SubtleCrypto, typeof Crypto, crypto instanceof Crypto, crypto.subtle instanceof SubtleCrypto);
  try { Object.getOwnPropertyDescriptor(CryptoKey.prototype, 'type').get.call({}); } catch (e) { console.log(e.name, e.code, e.message); }
  const e = await crypto.subtle.importKey('raw', new Uint8Array(16), 'FOO', true, ['encrypt']).catch((e) => e);
  console.log(e instanceof DOMException, e.code, Object.prototype.toString.call(e));
  console.log(k.algorithm === k.algorithm);
  console.log(await crypto.subtle.deriveBits({name:'PBKDF2', hash: 'SHA-256', salt: new Uint8Array(1), iterations: 1}, await crypto.subtle.importKey('raw', new Uint8Array(1), 'PBKDF2', false, ['deriveBits']), 0).then((b) => b.byteLength));
  console.log(await crypto.subtle.importKey('raw', new Uint8Array(16), {name: 'HMAC', hash: 'SHA-256', length: 100}, true, ['sign']).catch((e)=>e.name+' '+e.message));
  console.log(await crypto.subtle.digest('SHA-256', 'x').catch((e)=>e.name+' '+e.code+' '+e.message));
  console.log(await crypto.subtle.sign('HMAC', {}, new Uint8Array(1)).catch((e)=>e.name+' '+e.code+' '+e.message));
  console.log(await crypto.subtle.encrypt({name:'AES-GCM', iv: new Uint8Array(12)}, k, 'str').catch((e)=>e.name+' '+e.code+' '+e.message));
  console.log(await crypto.subtle.generateKey({name:'RSA-OAEP', modulusLength: 1024, publicExponent: new Uint8Array([1,0,1]), hash:'SHA-256'}, true, ['encrypt']).then(k=>k.publicKey.usages, (e)=>e.name+' '+e.code+' '+e.message));
  console.log(await crypto.subtle.importKey('raw', new Uint8Array(16), {name:'HMAC', hash:'MD5'}, true, ['sign']).catch((e)=>e.name+' '+e.code+' '+e.message));
  console.log(await crypto.subtle.importKey('jwk', {kty:'oct', k: 'AAAAAAAAAAAAAAAAAAAAAA'}, 'AES-KW', true, ['wrapKey']).then(k=>crypto.subtle.exportKey('jwk', k)));
  const { digest } = crypto.subtle; // unbound: Node refuses it
  await digest('SHA-256', new Uint8Array(1)).then(() => console.log('ok'), (e) => console.log(e.name, e.code, e.message));
  await crypto.subtle.digest.call({}, 'SHA-256', new Uint8Array(1)).then(() => console.log('ok'), (e) => console.log(e.name, e.code, e.message));
  try { const g = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(crypto), 'subtle').get; console.log(typeof g.call({})); } catch (e) { console.log(e.name, e.code, e.message); }
  try { crypto.getRandomValues.call({}, new Uint8Array(1)); console.log('grv ok'); } catch (e) { console.log(e.name, e.code, e.message); }
  try { new SubtleCrypto(); } catch (e) { console.log(e.name, e.code, e.message); }
  try { new Crypto(); } catch (e) { console.log(e.name, e.code, e.message); }
  console.log(Object.keys(Object.getPrototypeOf(crypto)), Object.getOwnPropertyNames(Object.getPrototypeOf(crypto.subtle)).join());
  const rk = await crypto.subtle.generateKey({ name: 'RSA-PSS', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign']);
  for (const key of [k, rk.privateKey]) {
    const c = structuredClone(key);
    console.log('clone', c instanceof CryptoKey, c === key, c.type, c.extractable, c.algorithm, c.usages, c.algorithm === key.algorithm);
  }
  const cs = await crypto.subtle.sign({ name: 'RSA-PSS', saltLength: 0 }, structuredClone(rk.privateKey), new Uint8Array(1));
  console.log('clone signs', Buffer.from(cs).equals(Buffer.from(await crypto.subtle.sign({ name: 'RSA-PSS', saltLength: 0 }, rk.privateKey, new Uint8Array(1)))));
})();
