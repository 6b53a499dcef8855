'use strict';
// zlib: gzip, deflate (zlib and raw) and brotli on Go's compressors.
// Streams buffer their input and convert it at the end.
const { B, takeBytes, giveBytes, asU8 } = require('./internal/bridge.js');
const { codedError } = require('./internal/errors.js');

function lazyBuffer() { return require('./buffer.js').Buffer; }
const kMax = 2 ** 31 - 1;

const ops = {
  gzip: 'gzip', gunzip: 'gunzip', deflate: 'deflate', inflate: 'inflate', deflateRaw: 'deflateRaw',
  inflateRaw: 'inflateRaw', unzip: 'unzip', brotliCompress: 'brotliCompress', brotliDecompress: 'brotliDecompress',
};

function convert(op, data, options = {}) {
  const Buffer = lazyBuffer();
  const u8 = typeof data === 'string' ? Buffer.from(data) : asU8(data);
  let level = options.level === undefined ? -1 : options.level;
  if (op.startsWith('brotli')) {
    const p = options.params || {};
    level = p[1] !== undefined ? p[1] : 11;
  }
  const max = options.maxOutputLength || kMax;
  try {
    return takeBytes(B.zlib(op, giveBytes(u8), level, max), (k) => Buffer.allocUnsafe(k));
  } catch (e) {
    if (e === 'ERR_BUFFER_TOO_LARGE') throw codedError('ERR_BUFFER_TOO_LARGE', max);
    if (typeof e === 'string') {
      const [code, msg] = e.split('\u0000');
      const err = new Error(msg || code);
      err.code = code;
      err.errno = { Z_DATA_ERROR: -3, Z_BUF_ERROR: -5, Z_NEED_DICT: 2 }[code] ?? -3;
      throw err;
    }
    throw e;
  }
}

const out = {};
for (const [name, op] of Object.entries(ops)) {
  const sync = (data, options) => convert(op, data, options);
  out[`${name}Sync`] = sync;
  out[name] = function (data, options, cb) {
    if (typeof options === 'function') { cb = options; options = {}; }
    let r, e = null;
    try { r = sync(data, options); } catch (x) { e = x; }
    process.nextTick(cb, e, r);
  };
  const cls = name[0].toUpperCase() + name.slice(1);
  const create = (options) => {
    const { Transform } = require('./stream.js');
    const chunks = [];
    const t = new Transform({
      transform(chunk, enc, cb) { chunks.push(chunk); cb(); },
      flush(cb) {
        try { cb(null, sync(lazyBuffer().concat(chunks), options)); } catch (e) { cb(e); }
      },
    });
    t.bytesWritten = 0;
    t.close = (cb) => { t.destroy(); if (cb) process.nextTick(cb); };
    t.flush = (kind, cb) => { if (typeof kind === 'function') kind(); else if (cb) cb(); };
    t.params = (l, s, cb) => cb && cb();
    t.reset = () => {};
    return t;
  };
  out[`create${cls}`] = create;
  out[cls] = function (options) { return create(options); };
}

out.constants = {
  Z_NO_FLUSH: 0, Z_PARTIAL_FLUSH: 1, Z_SYNC_FLUSH: 2, Z_FULL_FLUSH: 3, Z_FINISH: 4, Z_BLOCK: 5, Z_OK: 0,
  Z_STREAM_END: 1, Z_NEED_DICT: 2, Z_ERRNO: -1, Z_STREAM_ERROR: -2, Z_DATA_ERROR: -3, Z_MEM_ERROR: -4,
  Z_BUF_ERROR: -5, Z_VERSION_ERROR: -6, Z_NO_COMPRESSION: 0, Z_BEST_SPEED: 1, Z_BEST_COMPRESSION: 9,
  Z_DEFAULT_COMPRESSION: -1, Z_FILTERED: 1, Z_HUFFMAN_ONLY: 2, Z_RLE: 3, Z_FIXED: 4, Z_DEFAULT_STRATEGY: 0,
  ZLIB_VERNUM: 4865, DEFLATE: 1, INFLATE: 2, GZIP: 3, GUNZIP: 4, DEFLATERAW: 5, INFLATERAW: 6, UNZIP: 7,
  BROTLI_DECODE: 8, BROTLI_ENCODE: 9, Z_MIN_WINDOWBITS: 8, Z_MAX_WINDOWBITS: 15, Z_DEFAULT_WINDOWBITS: 15,
  Z_MIN_CHUNK: 64, Z_MAX_CHUNK: Infinity, Z_DEFAULT_CHUNK: 16384, Z_MIN_MEMLEVEL: 1, Z_MAX_MEMLEVEL: 9,
  Z_DEFAULT_MEMLEVEL: 8, Z_MIN_LEVEL: -1, Z_MAX_LEVEL: 9, Z_DEFAULT_LEVEL: -1,
  BROTLI_OPERATION_PROCESS: 0, BROTLI_OPERATION_FLUSH: 1, BROTLI_OPERATION_FINISH: 2,
  BROTLI_PARAM_MODE: 0, BROTLI_MODE_GENERIC: 0, BROTLI_MODE_TEXT: 1, BROTLI_MODE_FONT: 2,
  BROTLI_PARAM_QUALITY: 1, BROTLI_MIN_QUALITY: 0, BROTLI_MAX_QUALITY: 11, BROTLI_DEFAULT_QUALITY: 11,
  BROTLI_PARAM_LGWIN: 2, BROTLI_PARAM_SIZE_HINT: 5,
};
Object.assign(out, out.constants);
out.crc32 = (data, value = 0) => B.crc32(giveBytes(typeof data === 'string' ? lazyBuffer().from(data) : asU8(data)), value);
module.exports = out;
