// StringDecoder: Node's encodings, errors, kept bytes (lastNeed), chunked
// output equal to Buffer#toString of the whole, and UTF-8's U+FFFD per
// maximal subpart (Buffer#toString and TextDecoder too).
const { StringDecoder } = require('string_decoder');
const show = (f) => { try { console.log('ok', JSON.stringify(f())); } catch (e) { console.log('throws', e.name, e.code, e.message); } };
show(() => new StringDecoder('nope'));
show(() => new StringDecoder(5));
show(() => new StringDecoder('UTF-8').encoding);
show(() => new StringDecoder().encoding);
show(() => new StringDecoder('binary').encoding);
show(() => new StringDecoder('UCS2').encoding);
show(() => new StringDecoder('utf8').write(5));
show(() => new StringDecoder('utf8').write(null));
show(() => new StringDecoder('utf8').write('str'));
show(() => StringDecoder.prototype.write.call({}, Buffer.from('a')));
for (const enc of ['utf8', 'utf16le', 'base64', 'base64url', 'hex', 'latin1', 'ascii']) {
  let seed = 7;
  const rnd = (m) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % m; };
  for (let t = 0; t < 300; t++) {
    const d = new StringDecoder(enc);
    const bufs = []; let out = '';
    for (let k = rnd(8); k > 0; k--) { const b = Buffer.alloc(rnd(9)); for (let i = 0; i < b.length; i++) b[i] = [0xe2, 0x82, 0xac, 0xf0, 0x9f, 0xd8, 0x3d, 0xdc, 0x41, 0x80, 0xc3][rnd(11)]; bufs.push(b); out += d.write(b); }
    out += d.end();
    if (out !== Buffer.concat(bufs).toString(enc)) console.log('mismatch', enc, bufs.map((b) => b.toString('hex')));
  }
}
const d = new StringDecoder('utf8');
console.log(JSON.stringify([d.write(Buffer.from([0xe2])), d.lastNeed, d.lastTotal, d.write(Buffer.from([0x82])), d.lastNeed, d.end(), d.write(Buffer.from([0x61])), d.end(Buffer.from([0xe2, 0x82, 0xac]))]));
const u = new StringDecoder('utf16le');
console.log(JSON.stringify([u.write(Buffer.from([0x3d])), u.lastNeed, u.write(Buffer.from([0xd8])), u.lastNeed, u.write(Buffer.from([0x4d, 0xdc])), u.end(Buffer.from([0x3d, 0xd8, 0x4d]))]));
const b = new StringDecoder('base64url');
console.log(JSON.stringify([b.write(Buffer.from('ab')), b.lastNeed, b.write(Buffer.from('cd')), b.end(), b.end(Buffer.from('x'))]));
const { Readable } = require('stream');
const r = Readable.from([Buffer.from([0xe2, 0x82]), Buffer.from([0xac, 0x41])], { objectMode: false });
r.setEncoding('base64url');
r.on('data', (c) => console.log('data', c));
const bad = [[0xe2, 0x82], [0xe0, 0x80, 0x41], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98], [0xf4, 0x90, 0x80, 0x80], [0xc0, 0xaf], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80, 0xbf, 0xe2, 0x82, 0xac]];
for (const b of bad) {
  const buf = Buffer.from(b);
  console.log(JSON.stringify([buf.toString(), buf.toString('utf8', 1), buf.toString('utf8', 0, 2), new TextDecoder().decode(buf)]));
}
