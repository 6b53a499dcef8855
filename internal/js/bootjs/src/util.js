'use strict';
// util: Node's own inspect/format (node-inspect-extracted) with the rest
// of the module from the util polyfill.
const inspectLib = require('node-inspect-extracted');
const { codedError } = require('./internal/errors.js');
const enc = require('./internal/encoding.js');

const { stripVTControlCharacters } = inspectLib;

// ES module namespaces are objects of getters here (live bindings over
// esbuild's output); inspect shows them as Node does, with their values,
// through a snapshot that is itself a namespace to the inspector.
const kESM = Symbol.for('secexec.esm');
const uninitialized = { [inspectLib.inspect.custom]: () => '<uninitialized>' };
function nsView(v) {
  if (v === null || typeof v !== 'object') return v;
  try {
    if (!Object.prototype.hasOwnProperty.call(v, kESM)) return v;
  } catch {
    return v;
  }
  const o = Object.create(null);
  for (const k of Object.keys(v)) {
    try {
      o[k] = v[k];
    } catch {
      o[k] = uninitialized;
    }
  }
  Object.defineProperty(o, Symbol.toStringTag, { value: 'Module' });
  return o;
}
function inspect(value, ...rest) { return inspectLib.inspect(nsView(value), ...rest); }
for (const k of Reflect.ownKeys(inspectLib.inspect)) {
  if (k !== 'length' && k !== 'name' && k !== 'prototype') {
    Object.defineProperty(inspect, k, Object.getOwnPropertyDescriptor(inspectLib.inspect, k));
  }
}
function format(...args) { return inspectLib.format(...args.map(nsView)); }
function formatWithOptions(opts, ...args) { return inspectLib.formatWithOptions(opts, ...args.map(nsView)); }

const kCustomPromisify = Symbol.for('nodejs.util.promisify.custom');
function promisify(original) {
  if (typeof original !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'original', 'of type function', original);
  if (original[kCustomPromisify]) {
    const fn = original[kCustomPromisify];
    return Object.defineProperty(fn, kCustomPromisify, { value: fn, enumerable: false, writable: false, configurable: true });
  }
  function fn(...args) {
    return new Promise((resolve, reject) => {
      Reflect.apply(original, this, [...args, (err, ...values) => {
        if (err) return reject(err);
        resolve(values.length > 1 && original.__promisifyMany ? values : values[0]);
      }]);
    });
  }
  Object.setPrototypeOf(fn, Object.getPrototypeOf(original));
  Object.defineProperty(fn, kCustomPromisify, { value: fn, enumerable: false, writable: false, configurable: true });
  return Object.defineProperties(fn, Object.getOwnPropertyDescriptors(original));
}
promisify.custom = kCustomPromisify;

function isDeepStrictEqual(a, b) {
  try {
    require('assert').deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}

// styleText colours text as Node 22.13 and 20.18 on do: unless told not to
// validate the stream, no colour goes to a stream that is not a colour
// terminal (FORCE_COLOR decides when set), so a tool's piped output
// (eslint's report) is plain.
function styleText(format, text, { validateStream = true, stream } = {}) {
  if (typeof text !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'text', 'string', text);
  if (typeof validateStream !== 'boolean') throw codedError('ERR_INVALID_ARG_TYPE', 'options.validateStream', 'boolean', validateStream);
  let plain = false;
  if (validateStream) {
    if (stream === undefined) stream = require('./process.js').process.stdout;
    if (!isStream(stream)) throw codedError('ERR_INVALID_ARG_TYPE', 'stream', ['ReadableStream', 'WritableStream', 'Stream'], stream);
    plain = !shouldColorize(stream);
  }
  const formats = Array.isArray(format) ? format : [format];
  let left = '', right = '';
  for (const f of formats) {
    const code = typeof f === 'string' && Object.hasOwn(inspect.colors, f) ? inspect.colors[f] : undefined;
    if (!code) throw codedError('ERR_INVALID_ARG_VALUE', 'format', f);
    left += `\u001b[${code[0]}m`;
    right = `\u001b[${code[1]}m` + right;
  }
  return plain ? text : `${left}${text}${right}`;
}

function isStream(s) {
  if (s === null || typeof s !== 'object') return false;
  if (s._readableState || s._writableState) return true;
  if (typeof s.on === 'function' && (typeof s.write === 'function' || typeof s.pipe === 'function')) return true;
  return s instanceof globalThis.ReadableStream || s instanceof globalThis.WritableStream;
}

function shouldColorize(stream) {
  const { process } = require('./process.js');
  if (process.env.FORCE_COLOR !== undefined) return require('./tty.js').WriteStream.prototype.getColorDepth() > 2;
  return stream?.isTTY === true && (typeof stream.getColorDepth === 'function' ? stream.getColorDepth() > 2 : true);
}

function parseArgs(config = {}) {
  const args = config.args ?? require('./process.js').process.argv.slice(2);
  const options = config.options ?? {};
  const strict = config.strict ?? true;
  const allowPositionals = config.allowPositionals ?? !strict;
  const values = { __proto__: null };
  const positionals = [];
  const tokens = [];
  const short = {};
  for (const [k, o] of Object.entries(options)) if (o.short) short[o.short] = k;
  const store = (name, val) => {
    const o = options[name];
    if (!o) {
      if (strict) { const e = new TypeError(`Unknown option '--${name}'`); e.code = 'ERR_PARSE_ARGS_UNKNOWN_OPTION'; throw e; }
      values[name] = val ?? true;
      return;
    }
    if (o.type === 'boolean') val = true;
    if (o.multiple) (values[name] ||= []).push(val); else values[name] = val;
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') { positionals.push(...args.slice(i + 1)); break; }
    if (a.startsWith('--')) {
      let [name, val] = a.slice(2).split(/=(.*)/s);
      if (options[name]?.type === 'string' && val === undefined) val = args[++i];
      store(name, val);
      tokens.push({ kind: 'option', name, rawName: `--${name}`, index: i, value: val, inlineValue: a.includes('=') });
    } else if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const name = short[a[j]] || a[j];
        let val;
        if (options[name]?.type === 'string') { val = a.slice(j + 1) || args[++i]; j = a.length; }
        store(name, val);
      }
    } else {
      if (!allowPositionals && strict) { const e = new TypeError(`Unexpected argument '${a}'. This command does not take positional arguments`); e.code = 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'; throw e; }
      positionals.push(a);
    }
  }
  for (const [k, o] of Object.entries(options)) if (values[k] === undefined && o.default !== undefined) values[k] = o.default;
  const r = { values, positionals };
  if (config.tokens) r.tokens = tokens;
  return r;
}

function deprecate(fn, msg, code) {
  if (code !== undefined && typeof code !== 'string') {
    throw require('./internal/errors.js').codedError('ERR_INVALID_ARG_TYPE', 'code', 'of type string', code);
  }
  let warned = false;
  function deprecated(...args) {
    if (!warned) {
      warned = true;
      require('./process.js').process.emitWarning(msg, 'DeprecationWarning', code);
    }
    return new.target ? Reflect.construct(fn, args, new.target) : Reflect.apply(fn, this, args);
  }
  Object.setPrototypeOf(deprecated, fn);
  // A deprecated class: new on the wrapper makes instances of fn's
  // prototype, and instanceof holds either way.
  if (fn.prototype) deprecated.prototype = fn.prototype;
  return deprecated;
}

const types = require('./internal/types.js');

// inherits and callbackify as Node defines them (the npm util polyfill,
// which also has them, costs a dozen packages to load).
function inherits(ctor, superCtor) {
  if (ctor === undefined || ctor === null) throw codedError('ERR_INVALID_ARG_TYPE', 'ctor', 'of type function', ctor);
  if (superCtor === undefined || superCtor === null) throw codedError('ERR_INVALID_ARG_TYPE', 'superCtor', 'of type function', superCtor);
  if (superCtor.prototype === undefined) throw codedError('ERR_INVALID_ARG_TYPE', 'superCtor.prototype', 'of type object', superCtor.prototype);
  Object.defineProperty(ctor, 'super_', { value: superCtor, writable: true, configurable: true });
  Object.setPrototypeOf(ctor.prototype, superCtor.prototype);
}

function callbackify(original) {
  if (typeof original !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'original', 'of type function', original);
  function callbackified(...args) {
    const cb = args.pop();
    if (typeof cb !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'last argument', 'of type function', cb);
    const onRejected = (reason) => {
      if (!reason) {
        const err = new Error('Promise was rejected with a falsy value');
        err.code = 'ERR_FALSY_VALUE_REJECTION';
        err.reason = reason;
        reason = err;
      }
      return cb(reason);
    };
    Reflect.apply(original, this, args).then((ret) => process.nextTick(cb, null, ret), (rej) => process.nextTick(onRejected, rej));
  }
  Object.setPrototypeOf(callbackified, Object.getPrototypeOf(original));
  Object.defineProperties(callbackified, Object.getOwnPropertyDescriptors(original));
  return callbackified;
}

// The system error functions answer from libuv's table only, as Node's:
// an errno libuv has no name for is "Unknown system error -N".
function checkSystemError(err) {
  if (typeof err !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', 'err', 'of type number', err);
  if (err >= 0 || !Number.isSafeInteger(err)) throw codedError('ERR_OUT_OF_RANGE', 'err', 'a negative integer', err);
}
function libuvEntry(err) {
  const { libuv } = require('./internal/errors.js');
  for (const k in libuv) if (-libuv[k][0] === err) return [k, libuv[k][1]];
  return undefined;
}
function getSystemErrorName(err) {
  checkSystemError(err);
  const e = libuvEntry(err);
  return e ? e[0] : `Unknown system error ${err}`;
}
function getSystemErrorMessage(err) {
  checkSystemError(err);
  const e = libuvEntry(err);
  return e ? e[1] : `Unknown system error ${err}`;
}
function getSystemErrorMap() {
  const { libuv } = require('./internal/errors.js');
  const m = new Map();
  for (const k in libuv) m.set(-libuv[k][0], [k, libuv[k][1]]);
  return m;
}

// getCallSites is Node 22's: the caller's stack as plain objects, from
// V8's structured stack trace. Neither a guest's Error.prepareStackTrace
// nor its Error.stackTraceLimit may change the answer, so both are set
// for the capture and put back.
const kMaxCallSites = 200;

// util.log (DEP0059, still there in Node 22): the message after a local
// "day month hh:mm:ss" stamp.
const kMonths = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
function pad2(n) { return n < 10 ? `0${n}` : `${n}`; }
const log = deprecate(function log(...args) {
  const d = new Date();
  const time = `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
  console.log('%s - %s', `${d.getDate()} ${kMonths[d.getMonth()]} ${time}`, format(...args));
}, 'The `util.log API is deprecated. Please use console.log() with a custom formatter or a third-party logger instead.', 'DEP0059');
// sourceMapsByDefault: getCallSites maps positions unless told not to
// when source maps are on: the last of --enable-source-maps and
// --no-enable-source-maps, else whether --experimental-transform-types
// (which implies them in Node 22) was given.
// Index loops and primordials: a guest may have replaced the array
// iterator (Node's own tests do, with getCallSites under it).
function sourceMapsByDefault() {
  const P = require('./internal/primordials.js');
  const argv = require('./process.js').process.execArgv || [];
  let on = P.ArrayPrototypeIndexOf(argv, '--experimental-transform-types') !== -1;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--enable-source-maps') on = true;
    else if (argv[i] === '--no-enable-source-maps') on = false;
  }
  return on;
}

// getCallSite is getCallSites' name before Node 22.12, kept with a
// warning. Its name and the frame it adds are node's ('deprecated').
let getCallSiteWarned = false;
const getCallSite = function deprecated(frameCount, options) {
  if (!getCallSiteWarned) {
    getCallSiteWarned = true;
    require('./process.js').process.emitWarning('The `util.getCallSite` API has been renamed to `util.getCallSites()`.', 'ExperimentalWarning');
  }
  return getCallSites(frameCount, options);
};

function getCallSites(frameCount = 10, options) {
  const V = require('./internal/crypto_util.js');
  if (options === undefined) {
    if (typeof frameCount === 'object') {
      options = frameCount;
      frameCount = 10;
      V.validateObject(options, 'options');
    } else {
      options = {};
    }
  } else {
    V.validateObject(options, 'options');
  }
  if (options.sourceMap !== undefined && typeof options.sourceMap !== 'boolean') {
    throw V.invalidType('options.sourceMap', 'of type boolean', options.sourceMap);
  }
  if (typeof frameCount !== 'number') throw V.invalidType('frameCount', 'of type number', frameCount);
  if (!(frameCount >= 1 && frameCount <= kMaxCallSites)) throw V.outOfRange('frameCount', `>= 1 && <= ${kMaxCallSites}`, frameCount);
  const limit = Error.stackTraceLimit;
  const prepare = Error.prepareStackTrace;
  const holder = {};
  let sites;
  try {
    Error.stackTraceLimit = Math.trunc(frameCount);
    Error.prepareStackTrace = (_, frames) => frames;
    Error.captureStackTrace(holder, getCallSites);
    sites = holder.stack;
  } finally {
    Error.stackTraceLimit = limit;
    Error.prepareStackTrace = prepare;
  }
  const P = require('./internal/primordials.js');
  if (!P.ArrayIsArray(sites)) return [];
  const out = [];
  const mapByDefault = options.sourceMap === undefined && sourceMapsByDefault();
  for (let i = 0; i < sites.length; i++) {
    const cs = sites[i];
    let line = cs.getLineNumber() ?? 0;
    let col = cs.getColumnNumber() ?? 0;
    const scriptName = cs.getScriptNameOrSourceURL() || cs.getFileName() || '';
    if (options.sourceMap === true || mapByDefault) {
      const m = require('./internal/module_sourcemap.js').mapLocation(scriptName, line, col);
      if (m) {
        const k = P.StringPrototypeIndexOf(m, ':');
        line = Number(P.StringPrototypeSlice(m, 0, k));
        col = Number(P.StringPrototypeSlice(m, k + 1));
      }
    }
    const scriptId = typeof cs.getScriptId === 'function' ? String(cs.getScriptId()) : '0';
    // Primordials: a guest's Array.prototype.push must not see the frames.
    P.ArrayPrototypePush(out, { functionName: cs.getFunctionName() || '', scriptId, scriptName, lineNumber: line, columnNumber: col, column: col });
  }
  return out;
}

const util = {
  inspect, format, formatWithOptions, stripVTControlCharacters, promisify,
  callbackify, inherits, deprecate, types, isDeepStrictEqual,
  TextEncoder: enc.TextEncoder, TextDecoder: enc.TextDecoder, styleText, parseArgs,
  getSystemErrorName, getSystemErrorMessage, getSystemErrorMap, getCallSites, getCallSite, log,
  toUSVString: (s) => String(s).toWellFormed(),
  isArray: Array.isArray,
  isBoolean: (v) => typeof v === 'boolean', isNull: (v) => v === null, isNullOrUndefined: (v) => v == null,
  isNumber: (v) => typeof v === 'number', isString: (v) => typeof v === 'string', isSymbol: (v) => typeof v === 'symbol',
  isUndefined: (v) => v === undefined, isRegExp: types.isRegExp, isObject: (v) => v !== null && typeof v === 'object',
  isDate: types.isDate, isError: types.isNativeError, isFunction: (v) => typeof v === 'function',
  isPrimitive: (v) => v === null || (typeof v !== 'object' && typeof v !== 'function'),
  isBuffer: (v) => require('./buffer.js').Buffer.isBuffer(v),
  debuglog: (set) => { const f = () => {}; f.enabled = false; return f; },
  aborted: (signal) => new Promise((r) => signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })),
  transferableAbortSignal: (s) => s,
  transferableAbortController: () => new AbortController(),
  MIMEType: undefined,
};
util.debug = util.debuglog;
// _extend copies source's own enumerable keys onto target (DEP0060, still
// used by old code and Node's own tests).
util._extend = deprecate(function _extend(target, source) {
  if (source === null || typeof source !== 'object') return target;
  const keys = Object.keys(source);
  for (let i = keys.length - 1; i >= 0; i--) target[keys[i]] = source[keys[i]];
  return target;
}, 'The `util._extend` API is deprecated. Please use Object.assign() instead.', 'DEP0060');
module.exports = util;
