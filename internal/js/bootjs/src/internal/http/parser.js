'use strict';
// The HTTP/1 parser: llhttp, the parser inside Node, as the WebAssembly
// build undici ships (the lazy chunk "llhttp"), behind the shape of
// Node's HTTPParser binding (src/node_http_parser.cc). The WebAssembly
// instance is made once per process, when the first parser is; each
// parser object owns one llhttp_t in its memory, and llhttp's callbacks
// reach the parser through that pointer.
//
// What a parser holds is bounded: input goes through a fixed 64 KiB
// window of the instance's memory however large the chunk, bodies are
// handed out as views of the caller's chunk, and the request line, status
// line, header names and values (and trailers) together are limited to
// maxHeaderSize, as Node limits them (HPE_HEADER_OVERFLOW).
const { Buffer } = require('../../buffer.js');
const { codedError } = require('../errors.js');

const REQUEST = 1;
const RESPONSE = 2;
// Node's callback slots.
const kOnMessageBegin = 0;
const kOnHeaders = 1;
const kOnHeadersComplete = 2;
const kOnBody = 3;
const kOnMessageComplete = 4;
const kOnExecute = 5;
const kOnTimeout = 6;
const kOnStreamAlloc = 7;

const kDefaultMaxHeaderSize = 16 * 1024;
// Node's lenient flags, each a setter of llhttp's.
const lenientSetters = [
  'llhttp_set_lenient_headers', 'llhttp_set_lenient_chunked_length', 'llhttp_set_lenient_keep_alive',
  'llhttp_set_lenient_transfer_encoding', 'llhttp_set_lenient_version', 'llhttp_set_lenient_data_after_close',
  'llhttp_set_lenient_optional_lf_after_cr', 'llhttp_set_lenient_optional_crlf_after_chunk',
  'llhttp_set_lenient_optional_cr_before_lf', 'llhttp_set_lenient_spaces_after_chunk_size',
];
const kLenientNone = 0;
const kLenientAll = (1 << lenientSetters.length) - 1;

// llhttp's error numbers this binding acts on.
const HPE_OK = 0;
const HPE_PAUSED = 21;
const HPE_USER = 24;
const HPE_PAUSED_UPGRADE = 22;

// Input is copied into the instance's memory this many bytes at a time.
const kWindow = 64 * 1024;

// Node's METHODS (llhttp's HTTP methods).
const methods = [
  'ACL', 'BIND', 'CHECKOUT', 'CONNECT', 'COPY', 'DELETE', 'GET', 'HEAD', 'LINK', 'LOCK', 'M-SEARCH', 'MERGE',
  'MKACTIVITY', 'MKCALENDAR', 'MKCOL', 'MOVE', 'NOTIFY', 'OPTIONS', 'PATCH', 'POST', 'PROPFIND', 'PROPPATCH',
  'PURGE', 'PUT', 'QUERY', 'REBIND', 'REPORT', 'SEARCH', 'SOURCE', 'SUBSCRIBE', 'TRACE', 'UNBIND', 'UNLINK',
  'UNLOCK', 'UNSUBSCRIBE',
];

// The process's llhttp: its exports, the parser of each llhttp_t, and
// the input windows (one per nesting level: a callback may run another
// parser, whose input must not overwrite this one's).
let wasm = null;

function instance() {
  if (wasm !== null) return wasm;
  const { lazy } = require('../lazy.js');
  const builds = lazy('llhttp');
  let mod;
  try {
    mod = new WebAssembly.Module(builds.simd());
  } catch {
    mod = new WebAssembly.Module(builds.plain());
  }
  const span = (name) => (p, at, len) => dispatch(p, name, at, len);
  const env = {
    wasm_on_message_begin: (p) => dispatch(p, 'onMessageBegin'),
    wasm_on_url: span('onUrl'),
    wasm_on_status: span('onStatus'),
    wasm_on_header_field: span('onHeaderField'),
    wasm_on_header_value: span('onHeaderValue'),
    wasm_on_headers_complete: (p, status, upgrade, keepAlive) => dispatch(p, 'onHeadersComplete', status, upgrade, keepAlive),
    wasm_on_body: span('onBody'),
    wasm_on_message_complete: (p) => dispatch(p, 'onMessageComplete'),
  };
  const x = new WebAssembly.Instance(mod, { env }).exports;
  if (typeof x._initialize === 'function') x._initialize();
  wasm = {
    x,
    parsers: new Map(), // llhttp_t pointer -> WeakRef of its parser
    windows: [],
    depth: 0,
    // A parser dropped without free() or close() gives its llhttp_t back.
    registry: new FinalizationRegistry((ptr) => {
      wasm.parsers.delete(ptr);
      x.llhttp_free(ptr);
    }),
  };
  return wasm;
}

// dispatch runs llhttp callback name on the parser of llhttp_t p; what it
// returns goes back to llhttp (0: go on, -1 or HPE_USER: error,
// HPE_PAUSED: stop here).
function dispatch(p, name, a, b, c) {
  const ref = wasm.parsers.get(p);
  const parser = ref && ref.deref();
  if (!parser || parser[kState].freed) return HPE_PAUSED;
  const st = parser[kState];
  try {
    const rv = parser[name](a, b, c);
    // Freed by its own callback: it stops here.
    return st.freed ? HPE_PAUSED : rv;
  } catch (err) {
    st.exception = { err };
    return name === 'onBody' ? HPE_USER : -1;
  }
}

function cString(x, ptr) {
  if (!ptr) return '';
  const mem = new Uint8Array(x.memory.buffer);
  let end = ptr;
  while (end < mem.length && mem[end] !== 0) end++;
  return String.fromCharCode.apply(null, mem.subarray(ptr, end));
}

function parseError(code, reason, bytesParsed) {
  const err = new Error('Parse Error');
  err.bytesParsed = bytesParsed;
  err.code = code;
  err.reason = reason;
  return err;
}

function trimOWS(s) {
  let end = s.length;
  while (end > 0 && (s.charCodeAt(end - 1) === 32 || s.charCodeAt(end - 1) === 9)) end--;
  return end === s.length ? s : s.slice(0, end);
}

const kState = Symbol('kState');

class HTTPParser {
  constructor(type) {
    this[kState] = {
      ptr: 0, type: 0, maxHeaderSize: kDefaultMaxHeaderSize, lenient: kLenientNone,
      executing: 0, freed: false, pendingPause: false, exception: null, userError: null,
      chunk: null, base: 0, window: 0,
      headerSize: 0, url: '', status: '', fields: [], values: [], headersDone: false, inMessage: false,
    };
    if (type !== undefined) this.initialize(type);
  }

  // initialize(type, resource, maxHeaderSize, lenientFlags) readies the
  // parser for a connection, as Node's; 0 or no maxHeaderSize is the
  // default (http.maxHeaderSize).
  initialize(type, resource, maxHeaderSize, lenient) {
    const st = this[kState];
    if (type !== REQUEST && type !== RESPONSE) {
      throw codedError('ERR_INVALID_ARG_VALUE', 'type', type);
    }
    if (st.executing) throw codedError('ERR_INVALID_STATE', 'the parser is executing');
    const w = instance();
    this.release();
    st.ptr = w.x.llhttp_alloc(type);
    if (!st.ptr) throw codedError('ERR_MEMORY_ALLOCATION_FAILED');
    w.parsers.set(st.ptr, new WeakRef(this));
    w.registry.register(this, st.ptr, st);
    st.type = type;
    st.maxHeaderSize = maxHeaderSize > 0 ? maxHeaderSize : kDefaultMaxHeaderSize;
    st.lenient = (lenient | 0) & kLenientAll;
    for (let i = 0; i < lenientSetters.length; i++) {
      if (st.lenient & (1 << i)) w.x[lenientSetters[i]](st.ptr, 1);
    }
    st.freed = false;
    st.pendingPause = false;
    st.exception = null;
    st.userError = null;
    st.hadError = false;
    this.resetMessage();
    st.inMessage = false;
  }

  resetMessage() {
    const st = this[kState];
    st.headerSize = 0;
    st.url = '';
    st.status = '';
    st.fields = [];
    st.values = [];
    st.headersDone = false;
  }

  // release gives the llhttp_t back to the instance.
  release() {
    const st = this[kState];
    if (!st.ptr) return;
    wasm.parsers.delete(st.ptr);
    wasm.registry.unregister(st);
    wasm.x.llhttp_free(st.ptr);
    st.ptr = 0;
  }

  // execute(buffer) parses buffer: the number of bytes parsed, or a
  // parse error (code, reason, bytesParsed); an exception thrown by a
  // callback is thrown from here. A callback may execute the same parser
  // again (a socket pushing data from an 'information' listener), as
  // Node's allows: llhttp parses the inner input whole, then this call
  // goes on over its own input (restored here) with the message state the
  // inner call left, exactly as in Node.
  execute(chunk, start, length) {
    const st = this[kState];
    if (!st.ptr) return parseError('HPE_INVALID_EOF_STATE', 'Parser is not initialized', 0);
    if (!Buffer.isBuffer(chunk)) chunk = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    start = start === undefined ? 0 : start;
    length = length === undefined ? chunk.length - start : length;
    const w = wasm;
    const { x } = w;
    const depth = w.depth++;
    if (w.windows.length <= depth) {
      const ptr = x.malloc(kWindow);
      if (!ptr) {
        w.depth--;
        throw codedError('ERR_MEMORY_ALLOCATION_FAILED');
      }
      w.windows.push(ptr);
    }
    const win = w.windows[depth];
    const outer = { chunk: st.chunk, window: st.window, base: st.base };
    st.executing++;
    st.chunk = chunk;
    st.window = win;
    st.exception = null;
    st.userError = null;
    const end = start + length;
    let err = HPE_OK;
    let nread = length;
    try {
      for (let off = start; off < end;) {
        const n = Math.min(kWindow, end - off);
        new Uint8Array(x.memory.buffer, win, n).set(chunk.subarray(off, off + n));
        st.base = off;
        err = x.llhttp_execute(st.ptr, win, n);
        if (err !== HPE_OK) {
          // Where llhttp stopped; a stale position (input before an
          // earlier upgrade) counts as nothing read.
          nread = Math.min(length, Math.max(0, off + (x.llhttp_get_error_pos(st.ptr) - win) - start));
          if (err === HPE_PAUSED_UPGRADE) {
            err = HPE_OK;
            x.llhttp_resume_after_upgrade(st.ptr);
          }
          break;
        }
        off += n;
      }
    } finally {
      w.depth--;
      st.executing--;
      st.chunk = outer.chunk;
      st.window = outer.window;
      st.base = outer.base;
    }
    return this.outcome(err, nread);
  }

  // outcome is what execute and finish return after llhttp stopped with
  // err having read nread bytes.
  outcome(err, nread) {
    const st = this[kState];
    const { x } = wasm;
    if (st.freed) {
      // Freed by one of its own callbacks: the rest is not parsed. An
      // outer execute of it still runs in llhttp_t: the outermost one
      // gives it back.
      if (!st.executing) this.release();
      return nread;
    }
    if (st.pendingPause) {
      st.pendingPause = false;
      x.llhttp_pause(st.ptr);
    }
    if (st.exception) {
      const { err: e } = st.exception;
      st.exception = null;
      throw e;
    }
    if (err === HPE_OK || x.llhttp_get_upgrade(st.ptr)) return nread;
    st.hadError = true;
    if (err === HPE_USER && st.userError) return parseError(st.userError.code, st.userError.reason, nread);
    return parseError(cString(x, x.llhttp_errno_name(err)), cString(x, x.llhttp_get_error_reason(st.ptr)), nread);
  }

  // finish tells the parser the input ended: a parse error when a
  // message was cut short, else undefined.
  finish() {
    const st = this[kState];
    if (!st.ptr || st.executing) return undefined;
    const err = wasm.x.llhttp_finish(st.ptr);
    const ret = this.outcome(err, 0);
    return ret instanceof Error ? ret : undefined;
  }

  // free readies a parser for the free list (Node's emits the async
  // resource's destroy); initialize makes it usable again. Freed from one
  // of its own callbacks, it stops parsing when that callback returns.
  free() { drop(this); }

  // close drops the parser for good. It does not go through free(): a
  // program may replace that (Node's own test-http-server-connection-
  // list-when-close calls close() from its replacement).
  close() { drop(this); }

  // pause makes the next execute stop with HPE_PAUSED (called from a
  // callback, once this execute returns, as Node's); resume undoes it.
  pause() {
    const st = this[kState];
    if (st.executing) st.pendingPause = true;
    else if (st.ptr) wasm.x.llhttp_pause(st.ptr);
  }

  resume() {
    const st = this[kState];
    st.pendingPause = false;
    if (st.ptr && !st.executing) wasm.x.llhttp_resume(st.ptr);
  }

  // The socket is read by JavaScript here: there is no stream to consume.
  consume() {}

  unconsume() {}

  remove() {}

  getCurrentBuffer() {
    const { chunk } = this[kState];
    return chunk ? Buffer.from(chunk) : Buffer.alloc(0);
  }

  headersCompleted() { return this[kState].headersDone; }

  // inMessage: a message has begun and is not complete yet.
  get inMessage() { return this[kState].inMessage; }

  get hadError() { return this[kState].hadError === true; }

  // text returns the latin1 text of the span at..at+len of the input.
  text(at, len) {
    const st = this[kState];
    const from = st.base + (at - st.window);
    return st.chunk.toString('latin1', from, from + len);
  }

  // trackHeader counts len bytes of the head against maxHeaderSize (as
  // Node's TrackHeader).
  trackHeader(len) {
    const st = this[kState];
    st.headerSize += len;
    if (st.headerSize >= st.maxHeaderSize) {
      st.userError = { code: 'HPE_HEADER_OVERFLOW', reason: 'Header overflow' };
      return HPE_USER;
    }
    return 0;
  }

  onMessageBegin() {
    this.resetMessage();
    this[kState].inMessage = true;
    return 0;
  }

  onUrl(at, len) {
    const rv = this.trackHeader(len);
    if (rv === 0) this[kState].url += this.text(at, len);
    return rv;
  }

  onStatus(at, len) {
    const rv = this.trackHeader(len);
    if (rv === 0) this[kState].status += this.text(at, len);
    return rv;
  }

  onHeaderField(at, len) {
    const rv = this.trackHeader(len);
    if (rv !== 0) return rv;
    const st = this[kState];
    if (st.fields.length === st.values.length) st.fields.push(this.text(at, len));
    else st.fields[st.fields.length - 1] += this.text(at, len);
    return 0;
  }

  onHeaderValue(at, len) {
    const rv = this.trackHeader(len);
    if (rv !== 0) return rv;
    const st = this[kState];
    if (st.values.length !== st.fields.length) st.values.push(this.text(at, len));
    else st.values[st.values.length - 1] += this.text(at, len);
    return 0;
  }

  // takeHeaders returns the [name, value, ...] list gathered so far.
  takeHeaders() {
    const st = this[kState];
    const headers = new Array(st.values.length * 2);
    for (let i = 0; i < st.values.length; i++) {
      headers[2 * i] = st.fields[i];
      headers[2 * i + 1] = trimOWS(st.values[i]);
    }
    st.fields = [];
    st.values = [];
    return headers;
  }

  onHeadersComplete(statusCode, upgrade, keepAlive) {
    const st = this[kState];
    const { x } = wasm;
    st.headersDone = true;
    st.headerSize = 0;
    const cb = this[kOnHeadersComplete];
    if (typeof cb !== 'function') return 0;
    const headers = this.takeHeaders();
    const isRequest = st.type === REQUEST;
    const ret = cb.call(this, x.llhttp_get_http_major(st.ptr), x.llhttp_get_http_minor(st.ptr), headers,
      isRequest ? methodName(x, x.llhttp_get_method(st.ptr)) : undefined, isRequest ? st.url : undefined,
      isRequest ? undefined : statusCode, isRequest ? undefined : st.status, upgrade === 1, keepAlive === 1);
    return Number(ret) | 0;
  }

  onBody(at, len) {
    if (len === 0) return 0;
    const cb = this[kOnBody];
    if (typeof cb !== 'function') return 0;
    const st = this[kState];
    const from = st.base + (at - st.window);
    cb.call(this, st.chunk.subarray(from, from + len));
    return 0;
  }

  onMessageComplete() {
    const st = this[kState];
    st.inMessage = false;
    if (st.fields.length) {
      // Trailers (with the request's URL, as Node's).
      const cb = this[kOnHeaders];
      const trailers = this.takeHeaders();
      if (typeof cb === 'function') cb.call(this, trailers, st.url);
    }
    const cb = this[kOnMessageComplete];
    if (typeof cb === 'function') cb.call(this);
    return 0;
  }
}

// drop gives a parser's llhttp_t back, or, when one of its own callbacks
// runs, makes it stop once that callback returns.
function drop(parser) {
  const st = parser[kState];
  if (st.executing) st.freed = true;
  else parser.release();
  parser.resetMessage();
}

const methodNames = [];
function methodName(x, n) {
  if (methodNames[n] === undefined) methodNames[n] = cString(x, x.llhttp_method_name(n));
  return methodNames[n];
}

Object.assign(HTTPParser, {
  REQUEST, RESPONSE, kOnMessageBegin, kOnHeaders, kOnHeadersComplete, kOnBody, kOnMessageComplete,
  kOnExecute, kOnTimeout, kOnStreamAlloc, kLenientNone, kLenientAll,
});

module.exports = { HTTPParser, methods, kDefaultMaxHeaderSize };
