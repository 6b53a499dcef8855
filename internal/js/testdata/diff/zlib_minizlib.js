// zlib streams as minizlib (tar, npm) drives them: the synchronous
// _processChunk with a flush flag on the _handle-carrying stream, output
// after every write, gzip/deflate/raw/unzip round trips, and the errors
// of bad and truncated input.
const zlib = require('zlib');
const { Z_SYNC_FLUSH, Z_FINISH, Z_NO_FLUSH } = zlib.constants;

const text = Buffer.from('hello tarball '.repeat(5000) + [...Array(3000).keys()].join(','));
const gz = zlib.gzipSync(text);

// process is minizlib's write: _processChunk with the native handle's
// close (and the stream's) made no-ops, then put back.
function process1(z, chunk, flag) {
  const handle = z._handle;
  const nativeClose = handle.close;
  handle.close = () => {};
  const close = z.close;
  z.close = () => {};
  try {
    return z._processChunk(chunk, flag);
  } finally {
    z._handle = handle;
    handle.close = nativeClose;
    z.close = close;
    z.removeAllListeners("error");
  }
}
function minizlib(z, input, step) {
  const out = [];
  for (let i = 0; i < input.length; i += step) {
    const r = process1(z, input.subarray(i, i + step), Z_SYNC_FLUSH);
    out.push(Buffer.from(r)); // the first buffer is reused by the next call
  }
  return Buffer.concat(out);
}
console.log('handle', typeof new zlib.Gunzip()._handle.close);
console.log('processChunk gunzip', minizlib(new zlib.Gunzip(), gz, 7).equals(text));
console.log('processChunk unzip', minizlib(new zlib.Unzip(), gz, 1000).equals(text));
console.log('processChunk inflate', minizlib(new zlib.Inflate(), zlib.deflateSync(text), 333).equals(text));

// Sync flush: what was written so far comes out at once.
const def = new zlib.Deflate();
const part = Buffer.from(process1(def, text.subarray(0, 1000), Z_SYNC_FLUSH));
console.log('sync flush decodes', zlib.inflateSync(part, { finishFlush: Z_SYNC_FLUSH }).equals(text.subarray(0, 1000)));
const rest = process1(def, text.subarray(1000), Z_FINISH);
console.log('finish completes', zlib.inflateSync(Buffer.concat([part, rest])).equals(text));

// Streams, piped in small chunks.
function pipeThrough(z, input, step) {
  return new Promise((resolve, reject) => {
    const out = [];
    z.on('data', (d) => out.push(d));
    z.on('end', () => resolve(Buffer.concat(out)));
    z.on('error', (e) => reject(e));
    for (let i = 0; i < input.length; i += step) z.write(input.subarray(i, i + step));
    z.end();
  });
}

(async () => {
  for (const [name, c, d] of [['gzip', 'createGzip', 'gunzipSync'], ['deflate', 'createDeflate', 'inflateSync'],
    ['deflateRaw', 'createDeflateRaw', 'inflateRawSync']]) {
    const packed = await pipeThrough(zlib[c]({ level: 6 }), text, 4096);
    console.log('stream', name, zlib[d](packed).equals(text));
  }
  console.log('stream gunzip', (await pipeThrough(zlib.createGunzip(), gz, 13)).equals(text));
  console.log('stream unzip deflate', (await pipeThrough(zlib.createUnzip(), zlib.deflateSync(text), 99)).equals(text));
  console.log('stream inflateRaw', (await pipeThrough(zlib.createInflateRaw(), zlib.deflateRawSync(text), 512)).equals(text));
  for (const [name, input] of [['garbage', Buffer.from('this is not gzip data at all')], ['truncated', gz.subarray(0, gz.length - 20)]]) {
    try {
      await pipeThrough(zlib.createGunzip(), input, 8);
      console.log(name, 'no error');
    } catch (e) {
      console.log(name, e.code, e.errno, e.message);
    }
  }
  // A flush() in the middle of a stream emits what was written.
  const g = zlib.createGzip();
  const got = [];
  g.on('data', (d) => got.push(d));
  g.write(text.subarray(0, 500));
  g.flush(() => {
    const sofar = zlib.gunzipSync(Buffer.concat(got), { finishFlush: Z_SYNC_FLUSH });
    console.log('flush emits', sofar.equals(text.subarray(0, 500)));
    g.end();
  });
  console.log('no flush const', Z_NO_FLUSH);
})();

// A bomb stops at maxOutputLength, in a synchronous chunk as in a stream.
const bomb = zlib.gzipSync(Buffer.alloc(8 << 20));
try {
  new zlib.Gunzip({ maxOutputLength: 1 << 20 })._processChunk(bomb, Z_FINISH);
  console.log('bomb no error');
} catch (e) {
  console.log('bomb', e.name, e.code, e.message);
}
