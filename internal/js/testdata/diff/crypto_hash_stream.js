'use strict';
// Hash and Hmac are streams, as Node's: piped, written and read, their
// digest pushed at the end, one digest() call after the end still works.
const crypto = require('crypto');
const { PassThrough, Writable, Transform } = require('stream');

console.log(crypto.createHash('sha256') instanceof Transform, typeof crypto.createHash('md5').pipe);
const h1 = crypto.createHash('sha256');
h1.write('hello ');
h1.end('world');
console.log(h1.read().toString('hex'));

const src = new PassThrough();
const h2 = crypto.createHash('sha512');
src.pipe(h2).setEncoding('hex');
h2.on('data', (d) => {
  console.log('data', d);
  console.log('digest after end', h2.digest('hex'));
  try { h2.digest('hex'); } catch (e) { console.log(e.code); }
});
src.end('piped');

const bufs = [];
const hm = crypto.createHmac('sha1', 'key');
hm.pipe(new Writable({
  write(c, e, cb) { bufs.push(c); cb(); },
  final(cb) { console.log('hmac', Buffer.concat(bufs).toString('hex')); cb(); },
}));
hm.end('message');
console.log(crypto.createHash('md5').update('x').digest('hex'));
