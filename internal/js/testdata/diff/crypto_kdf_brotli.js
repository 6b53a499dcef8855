// scrypt and HKDF with fixed inputs, and zlib's Brotli: decompression of
// data node compressed, round trips, parameters, streams and errors.
const crypto = require('crypto');
const zlib = require('zlib');
const util = require('util');
function show(label, f) {
  try { console.log(label, f()); } catch (e) { console.log(label, 'throws', e.name, e.code, e.errno, e.message); }
}

show('scrypt default', () => crypto.scryptSync('password', 'salt', 32).toString('hex'));
show('scrypt N r p', () => crypto.scryptSync(Buffer.from('pw'), Buffer.from('NaCl'), 64, { N: 1024, r: 8, p: 16 }).toString('hex'));
show('scrypt aliases', () => crypto.scryptSync('pw', 'salt', 16, { cost: 256, blockSize: 4, parallelization: 2 }).toString('hex'));
show('scrypt empty', () => crypto.scryptSync('', '', 16, { N: 16, r: 1, p: 1 }).toString('hex'));
show('scrypt N not pow2', () => crypto.scryptSync('pw', 'salt', 16, { N: 1000 }));
show('scrypt maxmem', () => crypto.scryptSync('pw', 'salt', 16, { N: 2 ** 20 }));
show('scrypt maxmem r', () => crypto.scryptSync('pw', 'salt', 16, { N: 16, r: 2 ** 20 }));
show('scrypt both', () => crypto.scryptSync('pw', 'salt', 16, { N: 1024, cost: 2048 }));
show('scrypt keylen', () => crypto.scryptSync('pw', 'salt', -1));
show('scrypt maxmem neg', () => crypto.scryptSync('pw', 'salt', 16, { maxmem: -1 }));
show('scrypt N type', () => crypto.scryptSync('pw', 'salt', 16, { N: 'x' }));
show('scrypt pw type', () => crypto.scryptSync(5, 'salt', 16));
show('scrypt no callback', () => crypto.scrypt('pw', 'salt', 16));

show('hkdf', () => Buffer.from(crypto.hkdfSync('sha256', 'key', 'salt', 'info', 42)).toString('hex'));
show('hkdf sha512', () => Buffer.from(crypto.hkdfSync('sha512', Buffer.alloc(20, 1), Buffer.alloc(0), Buffer.alloc(0), 100)).toString('hex'));
show('hkdf secret key', () => Buffer.from(crypto.hkdfSync('sha1', crypto.createSecretKey(Buffer.from('ikm')), 'salt', 'info', 20)).toString('base64'));
show('hkdf arraybuffer', () => crypto.hkdfSync('sha256', 'key', 'salt', 'info', 16) instanceof ArrayBuffer);
show('hkdf too long', () => crypto.hkdfSync('sha256', 'key', 'salt', 'info', 255 * 32 + 1));
show('hkdf info', () => crypto.hkdfSync('sha256', 'key', 'salt', 'x'.repeat(1025), 16));
show('hkdf digest', () => crypto.hkdfSync('foo', 'key', 'salt', 'info', 16));
show('hkdf ikm', () => crypto.hkdfSync('sha256', 5, 'salt', 'info', 16));

// Brotli: made by node 20 (quality 11, window 22).
const fromNode = Buffer.from('G68E+I2Ubt5EVYaWIGxvNYtjtUAGVNsLAA==', 'base64');
show('brotli node data', () => zlib.brotliDecompressSync(fromNode).toString().slice(0, 30));
show('brotli compress', () => ['hello', '', 'hello world '.repeat(100)].map((s) => zlib.brotliCompressSync(s).toString('base64')));
show('brotli quality', () => [0, 1, 4, 9].map((q) => zlib.brotliCompressSync('abcabcabc', { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: q } }).toString('hex')));
const big = Buffer.alloc(300000);
for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 7)) & 0xff;
show('brotli round trip', () => [zlib.brotliDecompressSync(zlib.brotliCompressSync(big)).equals(big), zlib.brotliDecompressSync(zlib.brotliCompressSync(big, { params: { 1: 5, 2: 16, 0: 1, 5: big.length } })).equals(big)]);
show('brotli garbage', () => zlib.brotliDecompressSync(Buffer.from('garbage')));
show('brotli empty', () => zlib.brotliDecompressSync(Buffer.alloc(0)));
show('brotli truncated', () => zlib.brotliDecompressSync(fromNode.subarray(0, 10)));
show('brotli max output', () => zlib.brotliDecompressSync(fromNode, { maxOutputLength: 100 }));
show('brotli bad param', () => zlib.brotliCompressSync('x', { params: { 99: 4 } }));
show('brotli param type', () => zlib.brotliCompressSync('x', { params: { 1: 'a' } }));
show('brotli decoder param', () => zlib.brotliDecompressSync(fromNode, { params: { 5: 1 } }));
show('brotli constants', () => [zlib.constants.BROTLI_PARAM_QUALITY, zlib.constants.BROTLI_DEFAULT_WINDOW, zlib.constants.BROTLI_DECODER_ERROR_FORMAT_PADDING_1, zlib.BROTLI_MAX_QUALITY]);
// The asynchronous forms, one after the other (their order in node
// depends on its thread pool).
const step = (f) => new Promise((resolve) => f(resolve));
(async () => {
  await step((done) => crypto.scrypt('pw', 'salt', 16, { N: 16 }, (err, key) => { console.log('scrypt cb', err, key.toString('hex')); done(); }));
  console.log('scrypt promisified', (await util.promisify(crypto.scrypt)('pw', 'salt', 8)).toString('hex'));
  await step((done) => crypto.hkdf('sha384', 'key', 'salt', 'info', 8, (err, k) => { console.log('hkdf cb', err, Buffer.from(k).toString('hex')); done(); }));
  await step((done) => zlib.brotliCompress('callback data', (err, c) => zlib.brotliDecompress(c, (err2, r) => { console.log('brotli callbacks', err, err2, r.toString()); done(); })));
  const r = await util.promisify(zlib.brotliDecompress)(await util.promisify(zlib.brotliCompress)('promised'));
  console.log('brotli promisified', r.toString());
  const s = zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 6 } });
  const d = zlib.createBrotliDecompress();
  const got = [];
  d.on('data', (c) => got.push(c));
  d.on('end', () => console.log('brotli stream', Buffer.concat(got).toString()));
  s.pipe(d);
  s.write('streamed ');
  s.end('brotli data');
})();
