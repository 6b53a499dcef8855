'use strict';
// Node-style errors: system errors with libuv's messages, and the
// ERR_* codes of Node's internal/errors.
// libuv's error table (uv_err_name, uv_strerror) as Node 22 lists it in
// util.getSystemErrorMap(): name -> [errno, message], errno positive.
// internal/js constants_test.go holds it to host node's.
const libuv = {
  __proto__: null,
  E2BIG: [7, 'argument list too long'], EACCES: [13, 'permission denied'],
  EADDRINUSE: [98, 'address already in use'], EADDRNOTAVAIL: [99, 'address not available'],
  EAFNOSUPPORT: [97, 'address family not supported'], EAGAIN: [11, 'resource temporarily unavailable'],
  EAI_ADDRFAMILY: [3000, 'address family not supported'], EAI_AGAIN: [3001, 'temporary failure'],
  EAI_BADFLAGS: [3002, 'bad ai_flags value'], EAI_BADHINTS: [3013, 'invalid value for hints'],
  EAI_CANCELED: [3003, 'request canceled'], EAI_FAIL: [3004, 'permanent failure'],
  EAI_FAMILY: [3005, 'ai_family not supported'], EAI_MEMORY: [3006, 'out of memory'],
  EAI_NODATA: [3007, 'no address'], EAI_NONAME: [3008, 'unknown node or service'],
  EAI_OVERFLOW: [3009, 'argument buffer overflow'], EAI_PROTOCOL: [3014, 'resolved protocol is unknown'],
  EAI_SERVICE: [3010, 'service not available for socket type'],
  EAI_SOCKTYPE: [3011, 'socket type not supported'], EALREADY: [114, 'connection already in progress'],
  EBADF: [9, 'bad file descriptor'], EBUSY: [16, 'resource busy or locked'],
  ECANCELED: [125, 'operation canceled'], ECHARSET: [4080, 'invalid Unicode character'],
  ECONNABORTED: [103, 'software caused connection abort'], ECONNREFUSED: [111, 'connection refused'],
  ECONNRESET: [104, 'connection reset by peer'], EDESTADDRREQ: [89, 'destination address required'],
  EEXIST: [17, 'file already exists'], EFAULT: [14, 'bad address in system call argument'],
  EFBIG: [27, 'file too large'], EFTYPE: [4028, 'inappropriate file type or format'],
  EHOSTDOWN: [112, 'host is down'], EHOSTUNREACH: [113, 'host is unreachable'],
  EILSEQ: [84, 'illegal byte sequence'], EINTR: [4, 'interrupted system call'],
  EINVAL: [22, 'invalid argument'], EIO: [5, 'i/o error'], EISCONN: [106, 'socket is already connected'],
  EISDIR: [21, 'illegal operation on a directory'], ELOOP: [40, 'too many symbolic links encountered'],
  EMFILE: [24, 'too many open files'], EMLINK: [31, 'too many links'], EMSGSIZE: [90, 'message too long'],
  ENAMETOOLONG: [36, 'name too long'], ENETDOWN: [100, 'network is down'],
  ENETUNREACH: [101, 'network is unreachable'], ENFILE: [23, 'file table overflow'],
  ENOBUFS: [105, 'no buffer space available'], ENODATA: [61, 'no data available'],
  ENODEV: [19, 'no such device'], ENOENT: [2, 'no such file or directory'], ENOMEM: [12, 'not enough memory'],
  ENONET: [64, 'machine is not on the network'], ENOPROTOOPT: [92, 'protocol not available'],
  ENOSPC: [28, 'no space left on device'], ENOSYS: [38, 'function not implemented'],
  ENOTCONN: [107, 'socket is not connected'], ENOTDIR: [20, 'not a directory'],
  ENOTEMPTY: [39, 'directory not empty'], ENOTSOCK: [88, 'socket operation on non-socket'],
  ENOTSUP: [95, 'operation not supported on socket'], ENOTTY: [25, 'inappropriate ioctl for device'],
  ENXIO: [6, 'no such device or address'], EOF: [4095, 'end of file'],
  EOVERFLOW: [75, 'value too large for defined data type'], EPERM: [1, 'operation not permitted'],
  EPIPE: [32, 'broken pipe'], EPROTO: [71, 'protocol error'], EPROTONOSUPPORT: [93, 'protocol not supported'],
  EPROTOTYPE: [91, 'protocol wrong type for socket'], ERANGE: [34, 'result too large'],
  EREMOTEIO: [121, 'remote I/O error'], EROFS: [30, 'read-only file system'],
  ESHUTDOWN: [108, 'cannot send after transport endpoint shutdown'],
  ESOCKTNOSUPPORT: [94, 'socket type not supported'], ESPIPE: [29, 'invalid seek'],
  ESRCH: [3, 'no such process'], ETIMEDOUT: [110, 'connection timed out'], ETXTBSY: [26, 'text file is busy'],
  EUNATCH: [49, 'protocol driver not attached'], EXDEV: [18, 'cross-device link not permitted'],
  UNKNOWN: [4094, 'unknown error'],
};

// The system errors the runtime raises: libuv's, and errno values libuv
// has no name for, which Node reports with the bare errno name.
const uv = {
  __proto__: null,
  ...libuv,
  ECHILD: [10, 'no child processes'], EDEADLK: [35, 'resource deadlock avoided'],
  ENOEXEC: [8, 'exec format error'], EOPNOTSUPP: [95, 'operation not supported on socket'],
};

function errnoOf(code) { return uv[code] ? -uv[code][0] : -5; }

// uvException builds the error a failed system call raises, e.g.
// "ENOENT: no such file or directory, open '/x'".
function uvException(code, syscall, path, dest) {
  const info = uv[code] || [5, 'i/o error'];
  let msg = `${code}: ${info[1]}, ${syscall}`;
  if (path !== undefined) msg += ` '${path}'`;
  if (dest !== undefined) msg += ` -> '${dest}'`;
  const err = new Error(msg);
  err.errno = -info[0];
  err.code = code;
  err.syscall = syscall;
  if (path !== undefined) err.path = path;
  if (dest !== undefined) err.dest = dest;
  Error.captureStackTrace(err, uvException);
  return err;
}

// fromBridge turns what a bridge call threw into a Node error. Go throws
// the errno name (a string); anything else is passed through.
function fromBridge(e, syscall, path, dest) {
  if (typeof e === 'string') {
    if (e.startsWith('E') && !e.startsWith('ERR_')) return uvException(e, syscall, path, dest);
    const err = new Error(e);
    Error.captureStackTrace(err, fromBridge);
    return err;
  }
  return e;
}

const messages = {
  // expected is Node's list of accepted types (['string', 'Buffer']),
  // or the phrase after "must be" ('of type string').
  ERR_INVALID_ARG_TYPE: (name, expected, actual) =>
    `The ${name.endsWith(' argument') ? name : `"${name}" ${name.includes('.') ? 'property' : 'argument'}`} must be ${Array.isArray(expected) ? typeList(expected) : expected}. Received ${describe(actual)}`,
  ERR_INVALID_ARG_VALUE: (name, value, reason = 'is invalid') => {
    let shown = require('../util.js').inspect(value);
    if (shown.length > 128) shown = `${shown.slice(0, 128)}...`;
    return `The ${name.includes('.') ? 'property' : 'argument'} '${name}' ${reason}. Received ${shown}`;
  },
  ERR_AMBIGUOUS_ARGUMENT: (name, reason) => `The "${name}" argument is ambiguous. ${reason}`,
  ERR_SERVER_ALREADY_LISTEN: () => 'Listen method has been called more than once without closing.',
  ERR_SERVER_NOT_RUNNING: () => 'Server is not running.',
  ERR_SOCKET_CLOSED: () => 'Socket is closed',
  ERR_SOCKET_BAD_PORT: (name, port, allowZero = true) => `${name} should be ${allowZero ? '>=' : '>'} 0 and < 65536. Received ${describe(port)}.`,
  ERR_SOCKET_BAD_TYPE: () => 'Bad socket type specified. Valid types are: udp4, udp6',
  ERR_SOCKET_BAD_BUFFER_SIZE: () => 'Buffer size must be a positive integer',
  ERR_SOCKET_ALREADY_BOUND: () => 'Socket is already bound',
  ERR_SOCKET_DGRAM_IS_CONNECTED: () => 'Already connected',
  ERR_SOCKET_DGRAM_NOT_CONNECTED: () => 'Not connected',
  ERR_SOCKET_DGRAM_NOT_RUNNING: () => 'Not running',
  ERR_INVALID_IP_ADDRESS: (addr) => `Invalid IP address: ${addr}`,
  ERR_TLS_ALPN_CALLBACK_WITH_PROTOCOLS: () => 'The ALPNCallback and ALPNProtocols TLS options are mutually exclusive',
  ERR_TLS_REQUIRED_SERVER_NAME: () => '"servername" is required parameter for Server.addContext',
  ERR_SOCKET_CLOSED_BEFORE_CONNECTION: () => 'Socket closed before the connection was established',
  ERR_OUT_OF_RANGE: (name, range, value) => `The value of "${name}" is out of range. It must be ${range}. Received ${received(value)}`,
  ERR_INVALID_RETURN_VALUE: (input, name, value) => `Expected ${input} to be returned from the "${name}" function but got ${describe(value)}.`,
  ERR_BUFFER_OUT_OF_BOUNDS: (name) => (name ? `"${name}" is outside of buffer bounds` : 'Attempt to access memory outside buffer bounds'),
  ERR_UNAVAILABLE_DURING_EXIT: () => 'Cannot call function in process exit handler',
  ERR_UNKNOWN_BUILTIN_MODULE: (m) => `No such built-in module: ${m}`,
  ERR_ACCESS_DENIED: (what) => `Access to this API has been restricted: ${what}`,
  ERR_METHOD_NOT_IMPLEMENTED: (m) => `The ${m} method is not implemented`,
  ERR_FEATURE_UNAVAILABLE_ON_PLATFORM: (f) => `The feature ${f} is unavailable on the current platform, which is being used to run Node.js`,
  ERR_UNKNOWN_SIGNAL: (s) => `Unknown signal: ${s}`,
  ERR_INVALID_URL: () => 'Invalid URL',
  ERR_INVALID_FILE_URL_PATH: (m) => `File URL path ${m}`,
  ERR_INVALID_FILE_URL_HOST: (m) => `File URL host ${m}`,
  ERR_INVALID_URL_SCHEME: (s) => `The URL must be of scheme ${s}`,
  ERR_BUFFER_TOO_LARGE: (max) => `Cannot create a Buffer larger than ${max} bytes`,
  ERR_CHILD_PROCESS_STDIO_MAXBUFFER: (s) => `${s} maxBuffer length exceeded`,
  ERR_UNHANDLED_ERROR: (e) => (e === undefined ? 'Unhandled error.' : `Unhandled error. (${describe(e)})`),
  ERR_UNCAUGHT_EXCEPTION_CAPTURE_ALREADY_SET: () => '`process.setupUncaughtExceptionCapture()` was called while a capture callback was already active',
  ERR_DOMAIN_CALLBACK_NOT_AVAILABLE: () => 'A callback was registered through process.setUncaughtExceptionCaptureCallback(), which is mutually exclusive with using the `domain` module',
  ERR_DOMAIN_CANNOT_SET_UNCAUGHT_EXCEPTION_CAPTURE: () => 'The `domain` module is in use, which is mutually exclusive with calling process.setUncaughtExceptionCaptureCallback()',
  ERR_ASYNC_CALLBACK: (name) => `${name} must be a function`,
  ERR_ASYNC_TYPE: (type) => `Invalid name for async "type": ${type}`,
  ERR_INVALID_ASYNC_ID: (type, id) => `Invalid ${type} value: ${id}`,
  ERR_INVALID_THIS: (t) => `Value of "this" must be of type ${t}`,
  ERR_MISSING_ARGS: (...names) => {
    const q = names.map((n) => (Array.isArray(n) ? n.map((a) => `"${a}"`).join(' or ') : `"${n}"`));
    if (q.length === 1) return `The ${q[0]} argument must be specified`;
    if (q.length === 2) return `The ${q[0]} and ${q[1]} arguments must be specified`;
    return `The ${q.slice(0, -1).join(', ')}, and ${q[q.length - 1]} arguments must be specified`;
  },
  ERR_UNKNOWN_ENCODING: (e) => `Unknown encoding: ${e}`,
  ERR_ARG_NOT_ITERABLE: (what) => `${what} must be iterable`,
  ERR_INVALID_TUPLE: (what, shape) => `${what} must be an iterable ${shape} tuple`,
  ERR_CRYPTO_HASH_FINALIZED: () => 'Digest already called',
  ERR_CRYPTO_TIMING_SAFE_EQUAL_LENGTH: () => 'Input buffers must have the same byte length',
  ERR_REQUIRE_ESM: (f) => `require() of ES Module ${f} not supported.`,
  ERR_MODULE_NOT_FOUND: (m) => m,
  ERR_UNSUPPORTED_DIR_IMPORT: (m) => m,
  ERR_PACKAGE_PATH_NOT_EXPORTED: (m) => m,
  ERR_INVALID_PACKAGE_TARGET: (m) => m,
  ERR_PACKAGE_IMPORT_NOT_DEFINED: (m) => m,
  ERR_UNKNOWN_FILE_EXTENSION: (ext, p) => `Unknown file extension "${ext}" for ${p}`,
  // Node's words for --no-addons, then why and what to use instead (the
  // kernel says the same of a native executable), so that a package
  // whose loader shows the error points at its WebAssembly build.
  ERR_DLOPEN_DISABLED: (file) => `Cannot load native addon${file ? ' ' + file : ''} because loading addons is disabled: native code cannot run in the sandbox (it runs WebAssembly and JavaScript); use a WebAssembly or JavaScript build of the package, e.g. esbuild-wasm or @swc/wasm.`,
  ERR_FS_EISDIR: (p) => `Path is a directory: rm returned EISDIR (is a directory) ${p}`,
  ERR_FS_FILE_TOO_LARGE: (n) => `File size (${n}) is greater than 2 GiB`,
  ERR_STREAM_WRITE_AFTER_END: () => 'write after end',
  ERR_USE_AFTER_CLOSE: (w) => `${w} was closed`,
  ERR_SYSTEM_ERROR: (m) => m,
  ERR_ASSERTION: (m) => m,
  ERR_UNKNOWN_CREDENTIAL: (type, id) => `${type} identifier does not exist: ${id}`,
  ERR_INVALID_STATE: (m) => `Invalid state: ${m}`,
  ERR_INVALID_OBJECT_DEFINE_PROPERTY: (m) => m,
  ERR_DIR_CLOSED: () => 'Directory handle was closed',
  ERR_DIR_CONCURRENT_OPERATION: () => 'Cannot do synchronous work on directory handle with concurrent asynchronous operations',
  ERR_FS_INVALID_SYMLINK_TYPE: (t) => `Symlink type must be one of "dir", "file", or "junction". Received "${t}"`,
  ERR_IMPORT_ATTRIBUTE_MISSING: (url, type) => `Module "${url}" needs an import attribute of "type: ${type}"`,
  ERR_IMPORT_ATTRIBUTE_UNSUPPORTED: (key, value) => `Import attribute "${key}" with value "${value}" is not supported`,
  ERR_IMPORT_ATTRIBUTE_TYPE_INCOMPATIBLE: (url, type) => `Module "${url}" is not of type "${type}"`,
  ERR_UNSUPPORTED_ESM_URL_SCHEME: (u) => `Only URLs with a scheme in: file, data, and node are supported by the default ESM loader. Received protocol '${u}'`,
};

const kinds = {
  ERR_INVALID_ARG_TYPE: TypeError, ERR_INVALID_ARG_VALUE: TypeError, ERR_AMBIGUOUS_ARGUMENT: TypeError, ERR_OUT_OF_RANGE: RangeError,
  ERR_UNKNOWN_SIGNAL: TypeError, ERR_INVALID_URL: TypeError, ERR_INVALID_FILE_URL_PATH: TypeError, ERR_INVALID_FILE_URL_HOST: TypeError,
  ERR_INVALID_URL_SCHEME: TypeError, ERR_BUFFER_TOO_LARGE: RangeError, ERR_CHILD_PROCESS_STDIO_MAXBUFFER: RangeError,
  ERR_ASYNC_CALLBACK: TypeError, ERR_ASYNC_TYPE: TypeError, ERR_INVALID_ASYNC_ID: RangeError,
  ERR_INVALID_THIS: TypeError, ERR_CRYPTO_TIMING_SAFE_EQUAL_LENGTH: RangeError, ERR_UNKNOWN_FILE_EXTENSION: TypeError,
  ERR_INVALID_STATE: Error, ERR_UNSUPPORTED_ESM_URL_SCHEME: Error, ERR_INVALID_IP_ADDRESS: TypeError, ERR_TLS_ALPN_CALLBACK_WITH_PROTOCOLS: TypeError,
  ERR_SOCKET_BAD_PORT: RangeError, ERR_SOCKET_BAD_TYPE: TypeError, ERR_SOCKET_BAD_BUFFER_SIZE: TypeError,
  ERR_MISSING_ARGS: TypeError, ERR_BUFFER_OUT_OF_BOUNDS: RangeError, ERR_INVALID_RETURN_VALUE: TypeError, ERR_UNKNOWN_ENCODING: TypeError, ERR_ARG_NOT_ITERABLE: TypeError, ERR_INVALID_TUPLE: TypeError,
  ERR_IMPORT_ATTRIBUTE_MISSING: TypeError, ERR_IMPORT_ATTRIBUTE_UNSUPPORTED: TypeError,
  ERR_IMPORT_ATTRIBUTE_TYPE_INCOMPATIBLE: TypeError, ERR_INVALID_OBJECT_DEFINE_PROPERTY: TypeError,
};

// primitiveTypes are the names typeList says "of type" before.
const primitiveTypes = ['string', 'function', 'number', 'object', 'Function', 'Object', 'boolean', 'bigint', 'symbol'];

// typeList says which types an argument may have, as Node does: "of
// type string or an instance of Buffer or Uint8Array".
function typeList(expected) {
  const types = [];
  const instances = [];
  const other = [];
  for (const t of expected) {
    if (primitiveTypes.includes(t)) types.push(t.toLowerCase());
    else if (/^([A-Z][a-z0-9]*)+$/.test(t)) instances.push(t);
    else other.push(t);
  }
  // "object" next to classes is listed as the class Object.
  if (instances.length > 0 && types.includes('object')) {
    types.splice(types.indexOf('object'), 1);
    instances.push('Object');
  }
  const list = (xs) => (xs.length > 2 ? `${xs.slice(0, -1).join(', ')}, or ${xs[xs.length - 1]}` : xs.join(' or '));
  const parts = [];
  if (types.length > 0) parts.push(`${types.length > 1 ? 'one of type' : 'of type'} ${list(types)}`);
  if (instances.length > 0) parts.push(`an instance of ${list(instances)}`);
  if (other.length > 0) {
    if (other.length > 1) parts.push(`one of ${list(other)}`);
    else parts.push(`${other[0].toLowerCase() !== other[0] ? 'an ' : ''}${other[0]}`);
  }
  return parts.join(' or ');
}

// received shows an out-of-range value as Node does: large integers
// with digit separators, bigints with "n", anything else inspected.
function received(v) {
  if (Number.isInteger(v) && Math.abs(v) > 2 ** 32) return separated(String(v));
  if (typeof v === 'bigint') {
    const s = String(v);
    return `${v > 2n ** 32n || v < -(2n ** 32n) ? separated(s) : s}n`;
  }
  return require('../util.js').inspect(v);
}

// separated puts an underscore between each group of three digits.
function separated(s) {
  const start = s[0] === '-' ? 1 : 0;
  let out = '';
  let i = s.length;
  for (; i >= start + 4; i -= 3) out = `_${s.slice(i - 3, i)}${out}`;
  return `${s.slice(0, i)}${out}`;
}

// describe is Node's determineSpecificType: how an error message shows
// a value it received.
function describe(v) {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  switch (typeof v) {
    case 'bigint': return `type bigint (${v}n)`;
    case 'number': return `type number (${Object.is(v, -0) ? '-0' : String(v)})`;
    case 'boolean': return `type boolean (${v})`;
    case 'symbol': return `type symbol (${String(v)})`;
    case 'function': return `function ${v.name}`;
    case 'object': {
      if (v.constructor && 'name' in v.constructor) return `an instance of ${v.constructor.name}`;
      return require('../util.js').inspect(v, { depth: -1 });
    }
    case 'string': {
      const s = v.length > 28 ? `${v.slice(0, 25)}...` : v;
      return s.includes("'") ? `type string (${JSON.stringify(s)})` : `type string ('${s}')`;
    }
    default: return `type ${typeof v} (${String(v)})`;
  }
}

function codedToString() { return `${this.name} [${this.code}]: ${this.message}`; }

// codedError returns a Node error with code, e.g.
// TypeError [ERR_INVALID_ARG_TYPE]: The "path" argument must be ...
function codedError(code, ...args) {
  const Kind = kinds[code] || Error;
  const fmt = messages[code];
  const err = new Kind(fmt ? fmt(...args) : code);
  Object.defineProperty(err, 'code', { value: code, enumerable: true, writable: true, configurable: true });
  // String(err) carries the code too, as Node's errors' toString does
  // (assert.throws(fn, /ERR_X/) matches against it).
  Object.defineProperty(err, 'toString', { value: codedToString, enumerable: false, writable: true, configurable: true });
  // Node shows the code in the name part of the stack.
  const name = Kind.name;
  if (typeof err.stack === 'string') err.stack = err.stack.replace(name, `${name} [${code}]`);
  Error.captureStackTrace && void 0;
  return err;
}

function accessDenied(what) {
  return codedError('ERR_ACCESS_DENIED', what);
}

module.exports = { uv, libuv, errnoOf, uvException, fromBridge, codedError, accessDenied, describe };
