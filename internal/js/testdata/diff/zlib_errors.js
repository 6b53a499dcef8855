// zlib's errors on the one engine of its one-shot and streaming forms:
// dictionaries missing or wrong, bad headers, truncation, output bounds,
// trailing garbage after a gzip member.
const zlib = require('zlib');
const show = (what, e) => console.log(what, e ? `${e.code} ${e.errno} ${e.message}` : 'ok');
const dict = Buffer.from('dict');
const packed = zlib.deflateSync('test test test', { dictionary: dict });
const run = (what, make, input) => new Promise((resolve) => {
  const s = make();
  const out = [];
  s.on('data', (d) => out.push(d));
  s.on('error', (e) => { show(what, e); resolve(); });
  s.on('end', () => { console.log(what, 'data', Buffer.concat(out).toString()); resolve(); });
  s.end(input);
});
(async () => {
  await run('missing', () => zlib.createInflate(), packed);
  await run('bad', () => zlib.createInflate({ dictionary: Buffer.from('fail') }), packed);
  await run('good', () => zlib.createInflate({ dictionary: dict }), packed);
  for (const [what, f] of [
    ['sync missing', () => zlib.inflateSync(packed)],
    ['sync bad', () => zlib.inflateSync(packed, { dictionary: Buffer.from('fail') })],
    ['header', () => zlib.inflateSync(Buffer.from('not zlib at all'))],
    ['gunzip header', () => zlib.gunzipSync(Buffer.from('not gzip at all'))],
    ['truncated', () => zlib.gunzipSync(zlib.gzipSync('abc'.repeat(100)).subarray(0, 15))],
    ['max', () => zlib.inflateSync(zlib.deflateSync(Buffer.alloc(1000)), { maxOutputLength: 10 })],
  ]) {
    try { f(); show(what); } catch (e) { show(what, e); }
  }
  const two = Buffer.concat([zlib.gzipSync('abc'), zlib.gzipSync('def')]);
  console.log('members', zlib.gunzipSync(two).toString());
  console.log('zero padding', zlib.gunzipSync(Buffer.concat([zlib.gzipSync('abc'), Buffer.alloc(10)])).toString());
  try { zlib.gunzipSync(Buffer.concat([zlib.gzipSync('abc'), Buffer.from([0x1f, 0x8b, 0xff, 0xff])])); } catch (e) { show('garbage', e); }
  // Members written a byte at a time: the next member starts in a later
  // write than the one where the first ended.
  for (const make of ['createGunzip', 'createUnzip']) {
    for (const pack of ['gzipSync', 'deflateSync']) {
      if (make === 'createGunzip' && pack === 'deflateSync') continue;
      const bytes = Buffer.concat([zlib[pack]('abc'), zlib[pack]('def')]);
      await new Promise((resolve) => {
        const s = zlib[make]();
        const out = [];
        s.on('data', (d) => out.push(d));
        s.on('error', (e) => { show(make + ' ' + pack, e); resolve(); });
        s.on('finish', () => { console.log(make, pack, 'bytewise', Buffer.concat(out).toString()); resolve(); });
        for (const b of bytes) s.write(Buffer.from([b]));
        s.end();
      });
    }
  }
})();
