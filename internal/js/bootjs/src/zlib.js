'use strict';
// zlib: gzip and deflate (zlib and raw) on pako, one engine for the
// one-shot and the streaming forms; Brotli on Go's andybalholm/brotli,
// one-shot or (streams) a coder per stream that codes each write.
const { B, takeBytes, giveBytes, asU8 } = require('./internal/bridge.js');
const { codedError } = require('./internal/errors.js');

function lazyBuffer() { return require('./buffer.js').Buffer; }
// Node reads buffer.kMaxLength once, when zlib loads.
const kMax = require('./buffer.js').kMaxLength;

const ops = {
  gzip: 'gzip', gunzip: 'gunzip', deflate: 'deflate', inflate: 'inflate', deflateRaw: 'deflateRaw',
  inflateRaw: 'inflateRaw', unzip: 'unzip', brotliCompress: 'brotliCompress', brotliDecompress: 'brotliDecompress',
};

// checkFiniteNumber is Node's: undefined and NaN take the default
// (false), a finite number is checked by the caller (true), anything
// else is an error.
function checkFiniteNumber(number, name) {
  if (number === undefined || Number.isNaN(number)) return false;
  if (Number.isFinite(number)) return true;
  if (typeof number !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type number', number);
  throw codedError('ERR_OUT_OF_RANGE', name, 'a finite number', number);
}

function checkRangesOrGetDefault(number, name, lower, upper, def) {
  if (!checkFiniteNumber(number, name)) return def;
  if (number < lower || number > upper) throw codedError('ERR_OUT_OF_RANGE', name, `>= ${lower} and <= ${upper}`, number);
  return number;
}

const isBrotli = (op) => op.startsWith('brotli');
const isInflate = (op) => op === 'gunzip' || op === 'inflate' || op === 'inflateRaw' || op === 'unzip';

// parseOptions checks a stream's (or a one-shot call's) options as
// Node's ZlibBase, Zlib and Brotli constructors do, and returns them with
// the defaults filled in.
function parseOptions(op, opts) {
  const brotli = isBrotli(op);
  const r = {
    chunkSize: 16384, maxOutputLength: kMax, windowBits: 15, level: -1, memLevel: 8, strategy: 0,
    dictionary: undefined, flush: 0, finishFlush: brotli ? 2 : 4, brotli: { level: 11, lgwin: 0 },
  };
  if (!opts) return r;
  if (checkFiniteNumber(opts.chunkSize, 'options.chunkSize')) {
    if (opts.chunkSize < 64) throw codedError('ERR_OUT_OF_RANGE', 'options.chunkSize', '>= 64', opts.chunkSize);
    r.chunkSize = opts.chunkSize;
  }
  const maxFlush = brotli ? 3 : 5;
  r.flush = checkRangesOrGetDefault(opts.flush, 'options.flush', 0, maxFlush, r.flush);
  r.finishFlush = checkRangesOrGetDefault(opts.finishFlush, 'options.finishFlush', 0, maxFlush, r.finishFlush);
  r.maxOutputLength = checkRangesOrGetDefault(opts.maxOutputLength, 'options.maxOutputLength', 1, kMax, kMax);
  if (brotli) {
    r.brotli = brotliParams(op, opts.params);
    return r;
  }
  // A windowBits of 0 (or none) tells an inflater to take the window
  // size from the stream's header; deflaters need a real one, and gzip's
  // header cannot say 8.
  if ((opts.windowBits == null || opts.windowBits === 0) && (op === 'inflate' || op === 'gunzip' || op === 'unzip')) {
    r.windowBits = 0;
  } else {
    r.windowBits = checkRangesOrGetDefault(opts.windowBits, 'options.windowBits', op === 'gzip' ? 9 : 8, 15, 15);
  }
  r.level = checkRangesOrGetDefault(opts.level, 'options.level', -1, 9, -1);
  r.memLevel = checkRangesOrGetDefault(opts.memLevel, 'options.memLevel', 1, 9, 8);
  r.strategy = checkRangesOrGetDefault(opts.strategy, 'options.strategy', 0, 4, 0);
  const dict = opts.dictionary;
  if (dict !== undefined && !ArrayBuffer.isView(dict)) {
    if (!isAnyArrayBuffer(dict)) {
      throw codedError('ERR_INVALID_ARG_TYPE', 'options.dictionary', ['Buffer', 'TypedArray', 'DataView', 'ArrayBuffer'], dict);
    }
    r.dictionary = new Uint8Array(dict);
  } else if (dict !== undefined) {
    r.dictionary = new Uint8Array(dict.buffer, dict.byteOffset, dict.byteLength);
  }
  return r;
}

function isAnyArrayBuffer(v) {
  return require('./internal/types.js').isAnyArrayBuffer(v);
}

// inputBytes is the data argument of the one-shot functions, as Node
// takes it.
function inputBytes(data) {
  const Buffer = lazyBuffer();
  if (typeof data === 'string') return Buffer.from(data);
  if (ArrayBuffer.isView(data)) return asU8(data);
  if (isAnyArrayBuffer(data)) return new Uint8Array(data);
  throw codedError('ERR_INVALID_ARG_TYPE', 'buffer', ['string', 'Buffer', 'TypedArray', 'DataView', 'ArrayBuffer'], data);
}

function convert(op, data, options) {
  const Buffer = lazyBuffer();
  const u8 = inputBytes(data);
  const o = parseOptions(op, options);
  if (!isBrotli(op)) {
    // One engine for the one-shot and the streaming forms: pako, whose
    // bytes are zlib's for every level, strategy, window and memLevel.
    const one = { _engine: engineFor(op, o), _parsed: o, _maxOutputLength: o.maxOutputLength, _op: op, bytesWritten: 0 };
    const r = Zlib.prototype._run.call(one, u8, o.finishFlush);
    return Buffer.concat(r.outs, r.total);
  }
  const { level, lgwin } = o.brotli;
  try {
    return takeBytes(B.zlib(op, giveBytes(u8), level, o.maxOutputLength, lgwin), (k) => Buffer.allocUnsafe(k));
  } catch (e) {
    throw brotliFailure(e, o.maxOutputLength);
  }
}

// brotliFailure turns the bridge's brotli error ("code\0message\0errno")
// into Node's.
function brotliFailure(e, max) {
  if (e === 'ERR_BUFFER_TOO_LARGE') return codedError('ERR_BUFFER_TOO_LARGE', max);
  if (typeof e !== 'string') return e;
  const [code, msg, errno] = e.split('\u0000');
  const err = new Error(msg || code);
  err.errno = errno !== undefined ? Number(errno) : { Z_DATA_ERROR: -3, Z_BUF_ERROR: -5, Z_NEED_DICT: 2 }[code] ?? -3;
  err.code = code;
  return err;
}

function propertyType(name, expected, v) {
  const { describe } = require('./internal/errors.js');
  const err = new TypeError(`The "${name}" property must be ${expected}. Received ${describe(v)}`);
  err.code = 'ERR_INVALID_ARG_TYPE';
  return err;
}

function initFailed() {
  const err = new Error('Initialization failed');
  err.code = 'ERR_ZLIB_INITIALIZATION_FAILED';
  return err;
}

// brotliParams checks Brotli's params option as Node does and returns
// the ones Go's encoder takes: quality and window size. The others (mode,
// size hint, ...) are accepted and have no effect.
function brotliParams(op, params) {
  let level = 11, lgwin = 0;
  if (params === undefined || params === null) return { level, lgwin };
  if (typeof params !== 'object') throw propertyType('options.params', 'of type object', params);
  const seen = new Set();
  for (const key of Object.keys(params)) {
    const k = +key;
    // Node checks every key against the largest encoder parameter, and
    // a key given twice ('0' and '00'); the native coder refuses the
    // rest when it is set up.
    if (Number.isNaN(k) || k < 0 || k > 8 || seen.has(k)) {
      const err = new RangeError(`${key} is not a valid Brotli parameter`);
      err.code = 'ERR_BROTLI_INVALID_PARAM';
      throw err;
    }
    seen.add(k);
    const v = params[key];
    if (typeof v !== 'number' && typeof v !== 'boolean') throw propertyType('options.params[key]', 'of type number', v);
    if (op !== 'brotliCompress') {
      if (k > 1) throw initFailed();
      continue;
    }
    // Brotli's boolean parameters take 0 or 1 only.
    if ((k === 4 || k === 6) && Number(v) !== 0 && Number(v) !== 1) throw initFailed();
    if (k === 1) level = Math.min(Math.max(Math.trunc(Number(v)), 0), 11);
    if (k === 2) lgwin = Math.trunc(Number(v));
  }
  return { level, lgwin };
}

const out = {};
// The stream classes are function constructors, callable without new and
// from a subclass's constructor (Deflate.call(this, opts)), as Node's:
// Deflate.prototype -> Zlib.prototype -> ZlibBase.prototype ->
// Transform.prototype. stream.js is linked in on first construction.
function ZlibBase() {}
function Zlib() {}
function Brotli() {}
Object.setPrototypeOf(Zlib.prototype, ZlibBase.prototype);
Object.setPrototypeOf(Brotli.prototype, ZlibBase.prototype);
let linked = false;
function linkStream() {
  if (linked) return;
  linked = true;
  const { Transform } = require('./stream.js');
  Object.setPrototypeOf(ZlibBase.prototype, Transform.prototype);
  Object.setPrototypeOf(ZlibBase, Transform);
}

const classes = {};
for (const [name, op] of Object.entries(ops)) {
  const sync = (data, options) => convert(op, data, options);
  out[`${name}Sync`] = sync;
  out[name] = function (data, options, cb) {
    if (typeof options === 'function') { cb = options; options = {}; }
    inputBytes(data);
    if (typeof cb !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'callback', 'of type function', cb);
    let r, e = null;
    try { r = sync(data, options); } catch (x) { e = x; }
    process.nextTick(cb, e, r);
  };
  const cls = name[0].toUpperCase() + name.slice(1);
  const base = isBrotli(op) ? Brotli : Zlib;
  const C = {
    [cls]: function (options) {
      if (!(this instanceof C)) return new C(options);
      initStream(this, op, options);
    },
  }[cls];
  Object.setPrototypeOf(C.prototype, base.prototype);
  classes[op] = C;
  out[cls] = C;
  out[`create${cls}`] = (options) => new C(options);
}

// initStream sets up a new stream: gzip and deflate streams process as
// they go (pako, loaded on first use), as tar and minizlib need; Brotli
// streams too, on a coder made at their first write.
function initStream(self, op, opts) {
  linkStream();
  const o = parseOptions(op, opts);
  let topts = opts || {};
  // The stream takes bytes whatever the caller asked for.
  if (topts.encoding || topts.objectMode || topts.writableObjectMode) {
    topts = { ...topts, encoding: null, objectMode: false, writableObjectMode: false };
  }
  require('./stream.js').Transform.call(self, { autoDestroy: true, ...topts, highWaterMark: o.chunkSize });
  self._op = op;
  self._opts = opts || {};
  self._parsed = o;
  self._chunkSize = o.chunkSize;
  self._defaultFlushFlag = o.flush;
  self._finishFlushFlag = o.finishFlush;
  self._defaultFullFlushFlag = isBrotli(op) ? 1 : C.Z_FULL_FLUSH;
  self._maxOutputLength = o.maxOutputLength;
  self._level = o.level;
  self._strategy = o.strategy;
  self.bytesWritten = 0;
  self._handle = { close() {} };
  if (!isBrotli(op)) self._engine = engineFor(op, o);
}

Object.defineProperty(ZlibBase.prototype, '_closed', {
  configurable: true, enumerable: true, get() { return !this._handle; },
});

ZlibBase.prototype.close = function close(cb) {
  freeBrotli(this);
  this._engine = null;
  this._handle = null;
  if (cb) this.once('close', cb);
  this.destroy();
};

ZlibBase.prototype.reset = function reset() {
  if (isBrotli(this._op)) freeBrotli(this), this._bro = undefined;
  else this._engine = engineFor(this._op, this._parsed);
};

Zlib.prototype.params = function params(level, strategy, cb) {
  checkRangesOrGetDefault(level, 'level', -1, 9);
  checkRangesOrGetDefault(strategy, 'strategy', 0, 4);
  if (cb) process.nextTick(cb);
};

Brotli.prototype.params = function params(level, strategy, cb) { if (cb) process.nextTick(cb); };

// A Brotli stream codes each write as it comes, on a coder of its own on
// the Go side (brotliNew), freed when the stream ends or is destroyed.
function brotliCoder(self) {
  if (self._bro === undefined) {
    const o = self._parsed;
    try {
      self._bro = B.brotliNew(self._op === 'brotliCompress' ? 1 : 0, o.brotli.level, o.brotli.lgwin);
    } catch (e) {
      throw brotliFailure(e, kMax);
    }
  }
  return self._bro;
}

function freeBrotli(self) {
  if (self._bro !== undefined && self._bro !== null) B.brotliFree(self._bro);
  self._bro = null;
}

// _run codes one chunk with a Brotli operation (0 process, 1 flush,
// 2 finish) and returns its output, taken from the coder in bounded
// pieces.
Brotli.prototype._run = function _run(chunk, op) {
  const Buffer = lazyBuffer();
  if (this._bro === null) throw zlibError('zlib binding closed', C.Z_STREAM_ERROR);
  const id = brotliCoder(this);
  const input = typeof chunk === 'string' ? Buffer.from(chunk) : asU8(chunk);
  this.bytesWritten += input.length;
  const outs = [];
  let total = 0;
  let n = giveBytes(input);
  for (;;) {
    let b;
    try {
      b = takeBytes(B.brotliPush(id, n, op, kMax), (k) => Buffer.allocUnsafe(k));
    } catch (e) {
      throw brotliFailure(e, kMax);
    }
    if (b.length) { outs.push(b); total += b.length; }
    if (!B.brotliMore()) break;
    n = giveBytes(new Uint8Array(0));
  }
  if (op === 2) freeBrotli(this);
  return { outs, total };
};

Brotli.prototype._transform = function _transform(chunk, enc, cb) {
  let r;
  try { r = this._run(chunk, this._defaultFlushFlag); } catch (e) { cb(e); return; }
  for (const b of r.outs) this.push(b);
  cb();
};

Brotli.prototype._flush = function _flush(cb) {
  let r;
  try { r = this._run(lazyBuffer().alloc(0), this._finishFlushFlag); } catch (e) { cb(e); return; }
  for (const b of r.outs) this.push(b);
  cb();
};

Brotli.prototype.flush = function flush(kind, cb) {
  if (typeof kind === 'function' || kind === undefined) { cb = kind; kind = 1; }
  try {
    const r = this._run(lazyBuffer().alloc(0), kind);
    for (const b of r.outs) this.push(b);
  } catch (e) { this.destroy(e); }
  if (cb) process.nextTick(cb);
};

ZlibBase.prototype._destroy = function _destroy(err, cb) {
  freeBrotli(this);
  this._engine = null;
  this._handle = null;
  cb(err);
};

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
  const windowBits = o.windowBits;
  const dictionary = o.dictionary;
  if (!isInflate(op)) {
    // zlib itself turns a window of 8 into 9 (its 256-byte window is
    // broken); pako refuses 8 for raw streams instead.
    return new pako.Deflate({ level: o.level, windowBits: windowBits === 8 ? 9 : windowBits, memLevel: o.memLevel, strategy: o.strategy,
      gzip: op === 'gzip', raw: op === 'deflateRaw', chunkSize: 16384, dictionary });
  }
  if (op === 'inflateRaw') return new pako.Inflate({ raw: true, windowBits, chunkSize: 16384, dictionary });
  const bits = op === 'gunzip' ? windowBits + 16 : op === 'unzip' ? windowBits + 32 : windowBits;
  return new pako.Inflate({ windowBits: bits, chunkSize: 16384, dictionary });
}

const C = {};

// _run feeds one chunk to the engine and returns everything it produced,
// as node's zlib does after each write: pako keeps a partial output
// buffer until it fills, so that part is taken here too (the inflate
// window is separate from the output buffer, so a fresh one is safe).
Zlib.prototype._run = function _run(chunk, flushFlag) {
  const Buffer = lazyBuffer();
  const input = typeof chunk === 'string' ? Buffer.from(chunk) : asU8(chunk);
  if (!this._engine) throw zlibError('zlib binding closed', C.Z_STREAM_ERROR);
  if (this._op === 'gunzip' || this._op === 'unzip') {
    // The stream's first two bytes tell unzip's gzip from zlib.
    const head = this._head || (this._head = []);
    for (let i = 0; head.length < 2 && i < input.length; i++) head.push(input[i]);
    // As Node, a gzip stream goes on with its next member when input
    // comes after one ended (pako does so only within one write); zero
    // bytes after a member are padding.
    if (this._engine.ended && !this._engine.err && input.length && input[0] !== 0 &&
        (this._op === 'gunzip' || (head[0] === 0x1f && head[1] === 0x8b))) {
      this._engine = engineFor(this._op, this._parsed);
    }
  }
  const eng = this._engine;
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
  this.bytesWritten += input.length;
  if (!eng.ended) {
    eng.push(input, flushFlag);
    if (eng.err === C.Z_NEED_DICT) {
      // pako reports a dictionary that does not fit as one still needed.
      if (eng.options.dictionary) throw zlibError('Bad dictionary', C.Z_NEED_DICT);
      throw zlibError('Missing dictionary', C.Z_NEED_DICT);
    }
    if (eng.err) throw zlibError(eng.msg || 'zlib error', eng.err);
    const strm = eng.strm;
    if (!eng.ended && strm.next_out > 0) {
      take(strm.output.subarray(0, strm.next_out));
      strm.next_out = 0;
      strm.avail_out = 0;
    }
  }
  if (flushFlag === C.Z_FINISH && !eng.ended && isInflate(this._op)) {
    throw zlibError('unexpected end of file', C.Z_BUF_ERROR);
  }
  return { outs, total };
};

Zlib.prototype._processChunk = function _processChunk(chunk, flushFlag, cb) {
  const Buffer = lazyBuffer();
  if (typeof cb === 'function') {
    let r;
    try { r = this._run(chunk, flushFlag); } catch (e) { process.nextTick(cb, e); return; }
    process.nextTick(cb, null, Buffer.concat(r.outs, r.total));
    return;
  }
  const r = this._run(chunk, flushFlag);
  return Buffer.concat(r.outs, r.total);
};

Zlib.prototype._transform = function _transform(chunk, enc, cb) {
  let r;
  try { r = this._run(chunk, this._defaultFlushFlag); } catch (e) { cb(e); return; }
  for (const b of r.outs) this.push(b);
  cb();
};

Zlib.prototype._flush = function _flush(cb) {
  let r;
  try { r = this._run(lazyBuffer().alloc(0), this._finishFlushFlag); } catch (e) { cb(e); return; }
  for (const b of r.outs) this.push(b);
  cb();
};

Zlib.prototype.flush = function flush(kind, cb) {
  if (typeof kind === 'function' || kind === undefined) { cb = kind; kind = C.Z_FULL_FLUSH; }
  try {
    const r = this._run(lazyBuffer().alloc(0), kind);
    for (const b of r.outs) this.push(b);
  } catch (e) { this.destroy(e); }
  if (cb) process.nextTick(cb);
};

Object.assign(C, {
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
});
Object.freeze(C);
Object.defineProperty(out, 'constants', { configurable: false, enumerable: true, value: C });
// Node copies the zlib constants onto the module, not Brotli's.
for (const [k, v] of Object.entries(C)) if (!k.startsWith('BROTLI_')) out[k] = v;
const codes = { Z_OK: 0, Z_STREAM_END: 1, Z_NEED_DICT: 2, Z_ERRNO: -1, Z_STREAM_ERROR: -2, Z_DATA_ERROR: -3,
  Z_MEM_ERROR: -4, Z_BUF_ERROR: -5, Z_VERSION_ERROR: -6 };
for (const k of Object.keys(codes)) codes[codes[k]] = k;
Object.defineProperty(out, 'codes', { enumerable: true, writable: false, value: Object.freeze(codes) });
out.crc32 = (data, value = 0) => B.crc32(giveBytes(typeof data === 'string' ? lazyBuffer().from(data) : asU8(data)), value);
module.exports = out;
