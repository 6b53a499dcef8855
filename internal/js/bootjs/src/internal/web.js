'use strict';
// Web platform globals V8 does not provide: EventTarget, AbortController,
// structuredClone, atob/btoa, DOMException, Blob.
const { EventTarget, Event } = require('event-target-shim');
const structured = require('@ungap/structured-clone');

class DOMException extends Error {
  constructor(message = '', options = 'Error') {
    super(message);
    const name = typeof options === 'string' ? options : options.name || 'Error';
    Object.defineProperty(this, 'name', { value: name, configurable: true, writable: true });
    // WebIDL's legacy codes (names without one have 0).
    const codes = {
      IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5, NoModificationAllowedError: 7,
      NotFoundError: 8, NotSupportedError: 9, InUseAttributeError: 10, InvalidStateError: 11, SyntaxError: 12, InvalidModificationError: 13,
      NamespaceError: 14, InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20,
      URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
    };
    Object.defineProperty(this, 'code', { value: codes[name] || 0, configurable: true });
    if (typeof options === 'object' && options && 'cause' in options) this.cause = options.cause;
  }

  get [Symbol.toStringTag]() { return 'DOMException'; }
}

class CustomEvent extends Event {
  #detail;
  constructor(type, init = {}) { super(type, init); this.#detail = init.detail ?? null; }
  get detail() { return this.#detail; }
}

const kAborted = Symbol('aborted');
class AbortSignal extends EventTarget {
  constructor(key) {
    if (key !== kAborted) throw new TypeError('Illegal constructor');
    super();
    this._aborted = false;
    this._reason = undefined;
    this.onabort = null;
  }
  get aborted() { return this._aborted; }
  get reason() { return this._reason; }
  throwIfAborted() { if (this._aborted) throw this._reason; }
  static abort(reason) { const s = new AbortSignal(kAborted); abortSignal(s, reason); return s; }
  static timeout(ms) {
    const s = new AbortSignal(kAborted);
    setTimeout(() => abortSignal(s, new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms).unref();
    return s;
  }
  static any(signals) {
    const s = new AbortSignal(kAborted);
    for (const x of signals) {
      if (x.aborted) { abortSignal(s, x.reason); return s; }
      x.addEventListener('abort', () => abortSignal(s, x.reason), { once: true });
    }
    return s;
  }
  get [Symbol.toStringTag]() { return 'AbortSignal'; }
}
function abortSignal(s, reason) {
  if (s._aborted) return;
  s._aborted = true;
  s._reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
  const ev = new Event('abort');
  if (typeof s.onabort === 'function') s.onabort(ev);
  s.dispatchEvent(ev);
}
class AbortController {
  #signal = new AbortSignal(kAborted);
  get signal() { return this.#signal; }
  abort(reason) { abortSignal(this.#signal, reason); }
  get [Symbol.toStringTag]() { return 'AbortController'; }
}

const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function btoa(s) {
  s = `${s}`;
  let out = '';
  for (let i = 0; i < s.length; i += 3) {
    const a = s.charCodeAt(i), b = s.charCodeAt(i + 1), c = s.charCodeAt(i + 2);
    if (a > 255 || b > 255 || c > 255) throw new DOMException('Invalid character', 'InvalidCharacterError');
    const n = (a << 16) | ((b || 0) << 8) | (c || 0);
    out += b64[n >> 18] + b64[(n >> 12) & 63] + (i + 1 < s.length ? b64[(n >> 6) & 63] : '=') + (i + 2 < s.length ? b64[n & 63] : '=');
  }
  return out;
}
function atob(s) {
  s = `${s}`.replace(/[\t\n\f\r ]/g, '');
  if (s.length % 4 === 0) s = s.replace(/==?$/, '');
  if (s.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(s)) throw new DOMException('The string to be decoded is not correctly encoded.', 'InvalidCharacterError');
  let out = '';
  let bits = 0, acc = 0;
  for (const ch of s) {
    acc = (acc << 6) | b64.indexOf(ch);
    bits += 6;
    if (bits >= 8) { bits -= 8; out += String.fromCharCode((acc >> bits) & 255); }
  }
  return out;
}

// cloneKey copies a CryptoKey; webcrypto.js sets it when it loads (no
// CryptoKey exists before).
let cloneKey = null;
function setCloneKey(f) { cloneKey = f; }

function structuredClone(value, options) {
  if (arguments.length === 0) throw new TypeError("The \"value\" argument must be specified");
  if (cloneKey !== null && value !== null && typeof value === 'object') {
    const k = cloneKey(value);
    if (k !== null) return k;
  }
  if (value !== null && typeof value === 'object' && require('../worker_threads.js')._isUncloneable(value)) {
    throw new DOMException('Cannot clone object of unsupported type.', 'DataCloneError');
  }
  if (typeof value === 'function' || typeof value === 'symbol') {
    throw new DOMException(`${typeof value === 'function' ? value.toString().slice(0, 40) : String(value)} could not be cloned.`, 'DataCloneError');
  }
  return structured.default ? structured.default(value, options) : structured(value, options);
}

class Blob {
  #parts; #type;
  constructor(parts = [], options = {}) {
    const { Buffer } = require('../buffer.js');
    // A part that is neither a Blob nor bytes is its string (the File
    // API's USVString), as an object from an objectMode stream.
    const bytes = (p) => {
      if (p instanceof Blob) return p._bytes();
      if (ArrayBuffer.isView(p)) return Buffer.from(new Uint8Array(p.buffer, p.byteOffset, p.byteLength));
      if (require('./types.js').isAnyArrayBuffer(p)) return Buffer.from(p);
      return Buffer.from(String(p));
    };
    this.#parts = Buffer.concat(Array.from(parts, bytes));
    this.#type = options.type ? `${options.type}`.toLowerCase() : '';
  }
  _bytes() { return this.#parts; }
  get size() { return this.#parts.length; }
  get type() { return this.#type; }
  async text() { return this.#parts.toString('utf8'); }
  async arrayBuffer() { const b = this.#parts; return b.buffer.slice(b.byteOffset, b.byteOffset + b.length); }
  async bytes() { return new Uint8Array(this.#parts); }
  slice(start, end, type) { return new Blob([this.#parts.subarray(start, end)], { type }); }
  get [Symbol.toStringTag]() { return 'Blob'; }
}

module.exports = { EventTarget, Event, CustomEvent, AbortController, AbortSignal, DOMException, structuredClone, setCloneKey, atob, btoa, Blob };
