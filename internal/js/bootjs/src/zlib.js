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
  let lgwin = 0;
  if (op.startsWith('brotli')) {
    ({ level, lgwin } = brotliParams(op, options.params));
  }
  const max = options.maxOutputLength || kMax;
  // A finishFlush other than Z_FINISH decodes a stream that is not
  // complete (what a sync flush emitted): Go's one-shot decoders cannot,
  // the streaming engine can.
  if (!op.startsWith('brotli') && options.finishFlush !== undefined && options.finishFlush !== out.constants.Z_FINISH) {
    return ZlibStream(op, options)._processChunk(u8, options.finishFlush);
  }
  try {
    return takeBytes(B.zlib(op, giveBytes(u8), level, max, lgwin), (k) => Buffer.allocUnsafe(k));
  } catch (e) {
    if (e === 'ERR_BUFFER_TOO_LARGE') throw codedError('ERR_BUFFER_TOO_LARGE', max);
    if (typeof e === 'string') {
      const [code, msg, errno] = e.split('\u0000');
      const err = new Error(msg || code);
      err.errno = errno !== undefined ? Number(errno) : { Z_DATA_ERROR: -3, Z_BUF_ERROR: -5, Z_NEED_DICT: 2 }[code] ?? -3;
      err.code = code;
      throw err;
    }
    throw e;
  }
}

function propertyType(name, expected, v) {
  const { describe } = require('./internal/errors.js');
  const err = new TypeError(`The "${name}" property must be ${expected}. Received ${describe(v)}`);
  err.code = 'ERR_INVALID_ARG_TYPE';
  return err;
}

// brotliParams checks Brotli's params option as Node does and returns
// the ones Go's encoder takes: quality and window size. The others (mode,
// size hint, ...) are accepted and have no effect.
function brotliParams(op, params) {
  let level = 11, lgwin = 0;
  if (params === undefined || params === null) return { level, lgwin };
  if (typeof params !== 'object') throw propertyType('options.params', 'of type object', params);
  const maxKey = op === 'brotliCompress' ? 8 : 1;
  for (const key of Object.keys(params)) {
    const k = Number(key);
    if (!Number.isInteger(k) || k < 0 || k > maxKey) {
      // Node checks the encoder's keys in JavaScript; the decoder's
      // fail when the native decoder is set up.
      const err = op === 'brotliCompress' ? new RangeError(`${key} is not a valid Brotli parameter`) : new Error('Initialization failed');
      err.code = op === 'brotliCompress' ? 'ERR_BROTLI_INVALID_PARAM' : 'ERR_ZLIB_INITIALIZATION_FAILED';
      throw err;
    }
    const v = params[key];
    if (typeof v !== 'number' && typeof v !== 'boolean') throw propertyType('options.params[key]', 'of type number', v);
    if (op === 'brotliCompress' && k === 1) level = Math.min(Math.max(Math.trunc(Number(v)), 0), 11);
    if (op === 'brotliCompress' && k === 2) lgwin = Math.trunc(Number(v));
  }
  return { level, lgwin };
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
  // gzip and deflate streams process as they go (pako, loaded on first
  // use), as tar and minizlib need; Brotli streams buffer their input and
  // convert it at the end.
  const create = op.startsWith('brotli') ? (options) => bufferedStream(op, options) : (options) => new ZlibStream(op, options);
  out[`create${cls}`] = create;
  out[cls] = function (options) { return create(options); };
}

function bufferedStream(op, options) {
  const { Transform } = require('./stream.js');
  const chunks = [];
  const t = new Transform({
    transform(chunk, enc, cb) { chunks.push(chunk); cb(); },
    flush(cb) {
      try { cb(null, convert(op, lazyBuffer().concat(chunks), options)); } catch (e) { cb(e); }
    },
  });
  t.bytesWritten = 0;
  t.close = (cb) => { t.destroy(); if (cb) process.nextTick(cb); };
  t.flush = (kind, cb) => { if (typeof kind === 'function') kind(); else if (cb) cb(); };
  t.params = (l, s, cb) => cb && cb();
  t.reset = () => {};
  return t;
}

// zlibError is the error node's zlib raises for a failed stream.
function zlibError(msg, errno) {
  const codes = { [-2]: 'Z_STREAM_ERROR', [-3]: 'Z_DATA_ERROR', [-5]: 'Z_BUF_ERROR', 2: 'Z_NEED_DICT' };
  const err = new Error(msg);
  err.errno = errno;
  err.code = codes[errno] || 'Z_DATA_ERROR';
  return err;
}

// engineFor returns the pako deflater or inflater for an op, with node's
// window bits: gzip adds 16, unzip detects gzip or zlib (32).
function engineFor(op, o) {
  const pako = require('./internal/lazy.js').lazy('pako');
  const windowBits = o.windowBits || 15;
  if (op === 'gzip' || op === 'deflate' || op === 'deflateRaw') {
    const level = o.level === undefined ? -1 : o.level;
    return new pako.Deflate({ level, windowBits, memLevel: o.memLevel || 8, strategy: o.strategy || 0,
      gzip: op === 'gzip', raw: op === 'deflateRaw', chunkSize: 16384 });
  }
  if (op === 'inflateRaw') return new pako.Inflate({ raw: true, windowBits, chunkSize: 16384 });
  const bits = op === 'gunzip' ? windowBits + 16 : op === 'unzip' ? windowBits + 32 : windowBits;
  return new pako.Inflate({ windowBits: bits, chunkSize: 16384 });
}

let ZlibStreamClass;
function ZlibStream(op, options) {
  if (!ZlibStreamClass) ZlibStreamClass = defineZlibStream();
  return new ZlibStreamClass(op, options);
}

// defineZlibStream defines the stream class on first use, when stream.js
// is loaded. Its _handle and synchronous _processChunk(chunk, flushFlag)
// are the node internals minizlib (tar, npm) drives directly.
function defineZlibStream() {
  const { Transform } = require('./stream.js');
  const C = out.constants;
  return class Zlib extends Transform {
    constructor(op, options) {
      const o = options || {};
      super({ ...o, highWaterMark: o.chunkSize || C.Z_DEFAULT_CHUNK });
      this._op = op;
      this._opts = o;
      this._defaultFlushFlag = typeof o.flush === 'number' ? o.flush : C.Z_NO_FLUSH;
      this._finishFlushFlag = typeof o.finishFlush === 'number' ? o.finishFlush : C.Z_FINISH;
      this._maxOutputLength = o.maxOutputLength || kMax;
      this._engine = engineFor(op, o);
      this.bytesWritten = 0;
      this._handle = { close() {} };
    }

    // _run feeds one chunk to the engine and returns everything it
    // produced, as node's zlib does after each write: pako keeps a partial
    // output buffer until it fills, so that part is taken here too (the
    // inflate window is separate from the output buffer, so a fresh one is
    // safe).
    _run(chunk, flushFlag) {
      const Buffer = lazyBuffer();
      const eng = this._engine;
      if (!eng) throw zlibError('zlib binding closed', C.Z_STREAM_ERROR);
      const outs = [];
      let total = 0;
      const take = (d) => {
        total += d.length;
        if (total > this._maxOutputLength) throw codedError('ERR_BUFFER_TOO_LARGE', this._maxOutputLength);
        outs.push(Buffer.from(d));
      };
      eng.onData = take;
      // pako's own onEnd would collect the output; only its error is kept.
      eng.onEnd = (status) => {
        if (status !== C.Z_OK) { eng.err = status; eng.msg = eng.strm.msg; }
      };
      const input = typeof chunk === 'string' ? Buffer.from(chunk) : asU8(chunk);
      this.bytesWritten += input.length;
      if (!eng.ended) {
        eng.push(input, flushFlag);
        if (eng.err) throw zlibError(eng.msg || 'zlib error', eng.err);
        const strm = eng.strm;
        if (!eng.ended && strm.next_out > 0) {
          take(strm.output.subarray(0, strm.next_out));
          strm.next_out = 0;
          strm.avail_out = 0;
        }
      }
      if (flushFlag === C.Z_FINISH && !eng.ended && this._isInflate()) {
        throw zlibError('unexpected end of file', C.Z_BUF_ERROR);
      }
      return { outs, total };
    }

    _isInflate() { return !(this._op === 'gzip' || this._op === 'deflate' || this._op === 'deflateRaw'); }

    _processChunk(chunk, flushFlag, cb) {
      const Buffer = lazyBuffer();
      if (typeof cb === 'function') {
        let r;
        try { r = this._run(chunk, flushFlag); } catch (e) { process.nextTick(cb, e); return; }
        process.nextTick(cb, null, Buffer.concat(r.outs, r.total));
        return;
      }
      const r = this._run(chunk, flushFlag);
      return Buffer.concat(r.outs, r.total);
    }

    _transform(chunk, enc, cb) {
      let r;
      try { r = this._run(chunk, this._defaultFlushFlag); } catch (e) { cb(e); return; }
      for (const b of r.outs) this.push(b);
      cb();
    }

    _flush(cb) {
      let r;
      try { r = this._run(lazyBuffer().alloc(0), this._finishFlushFlag); } catch (e) { cb(e); return; }
      for (const b of r.outs) this.push(b);
      cb();
    }

    flush(kind, cb) {
      if (typeof kind === 'function' || kind === undefined) { cb = kind; kind = C.Z_FULL_FLUSH; }
      try {
        const r = this._run(lazyBuffer().alloc(0), kind);
        for (const b of r.outs) this.push(b);
      } catch (e) { this.destroy(e); }
      if (cb) process.nextTick(cb);
    }

    params(level, strategy, cb) { if (cb) process.nextTick(cb); }

    reset() {
      this._engine = engineFor(this._op, this._opts);
    }

    close(cb) {
      this._engine = null;
      this._handle = null;
      if (cb) this.once('close', cb);
      this.destroy();
    }
  };
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
  BROTLI_OPERATION_EMIT_METADATA: 3, BROTLI_PARAM_MODE: 0, BROTLI_MODE_GENERIC: 0, BROTLI_MODE_TEXT: 1,
  BROTLI_MODE_FONT: 2, BROTLI_DEFAULT_MODE: 0, BROTLI_PARAM_QUALITY: 1, BROTLI_MIN_QUALITY: 0,
  BROTLI_MAX_QUALITY: 11, BROTLI_DEFAULT_QUALITY: 11, BROTLI_PARAM_LGWIN: 2, BROTLI_MIN_WINDOW_BITS: 10,
  BROTLI_MAX_WINDOW_BITS: 24, BROTLI_LARGE_MAX_WINDOW_BITS: 30, BROTLI_DEFAULT_WINDOW: 22,
  BROTLI_PARAM_LGBLOCK: 3, BROTLI_MIN_INPUT_BLOCK_BITS: 16, BROTLI_MAX_INPUT_BLOCK_BITS: 24,
  BROTLI_PARAM_DISABLE_LITERAL_CONTEXT_MODELING: 4, BROTLI_PARAM_SIZE_HINT: 5, BROTLI_PARAM_LARGE_WINDOW: 6,
  BROTLI_PARAM_NPOSTFIX: 7, BROTLI_PARAM_NDIRECT: 8, BROTLI_DECODER_RESULT_ERROR: 0,
  BROTLI_DECODER_RESULT_SUCCESS: 1, BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT: 2,
  BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: 3, BROTLI_DECODER_PARAM_DISABLE_RING_BUFFER_REALLOCATION: 0,
  BROTLI_DECODER_PARAM_LARGE_WINDOW: 1, BROTLI_DECODER_NO_ERROR: 0, BROTLI_DECODER_SUCCESS: 1,
  BROTLI_DECODER_NEEDS_MORE_INPUT: 2, BROTLI_DECODER_NEEDS_MORE_OUTPUT: 3,
  BROTLI_DECODER_ERROR_FORMAT_EXUBERANT_NIBBLE: -1, BROTLI_DECODER_ERROR_FORMAT_RESERVED: -2,
  BROTLI_DECODER_ERROR_FORMAT_EXUBERANT_META_NIBBLE: -3, BROTLI_DECODER_ERROR_FORMAT_SIMPLE_HUFFMAN_ALPHABET: -4,
  BROTLI_DECODER_ERROR_FORMAT_SIMPLE_HUFFMAN_SAME: -5, BROTLI_DECODER_ERROR_FORMAT_CL_SPACE: -6,
  BROTLI_DECODER_ERROR_FORMAT_HUFFMAN_SPACE: -7, BROTLI_DECODER_ERROR_FORMAT_CONTEXT_MAP_REPEAT: -8,
  BROTLI_DECODER_ERROR_FORMAT_BLOCK_LENGTH_1: -9, BROTLI_DECODER_ERROR_FORMAT_BLOCK_LENGTH_2: -10,
  BROTLI_DECODER_ERROR_FORMAT_TRANSFORM: -11, BROTLI_DECODER_ERROR_FORMAT_DICTIONARY: -12,
  BROTLI_DECODER_ERROR_FORMAT_WINDOW_BITS: -13, BROTLI_DECODER_ERROR_FORMAT_PADDING_1: -14,
  BROTLI_DECODER_ERROR_FORMAT_PADDING_2: -15, BROTLI_DECODER_ERROR_FORMAT_DISTANCE: -16,
  BROTLI_DECODER_ERROR_DICTIONARY_NOT_SET: -19, BROTLI_DECODER_ERROR_INVALID_ARGUMENTS: -20,
  BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MODES: -21, BROTLI_DECODER_ERROR_ALLOC_TREE_GROUPS: -22,
  BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MAP: -25, BROTLI_DECODER_ERROR_ALLOC_RING_BUFFER_1: -26,
  BROTLI_DECODER_ERROR_ALLOC_RING_BUFFER_2: -27, BROTLI_DECODER_ERROR_ALLOC_BLOCK_TYPE_TREES: -30,
  BROTLI_DECODER_ERROR_UNREACHABLE: -31,
};
// Node copies the zlib constants onto the module, not Brotli's.
for (const [k, v] of Object.entries(out.constants)) if (!k.startsWith('BROTLI_')) out[k] = v;
out.crc32 = (data, value = 0) => B.crc32(giveBytes(typeof data === 'string' ? lazyBuffer().from(data) : asU8(data)), value);
module.exports = out;
