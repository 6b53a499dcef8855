'use strict';
// WHATWG URL and URLSearchParams with Node's shape: private state (so a
// guest sees no own symbols and a wrong receiver gets V8's brand-check
// errors, as in Node), Node's argument checks and ERR_* codes, and its
// inspect output. Parsing and serialising are whatwg-url's; a URL keeps a
// whatwg-url URL as its record and its URLSearchParams keeps the query's
// name/value list, each updating the other as the URL Standard says.
const P = require('./primordials.js');
const whatwg = require('whatwg-url');
const { parseUrlencodedString, serializeUrlencoded } = require('whatwg-url/lib/urlencoded.js');
const { codedError } = require('./errors.js');

const { ArrayPrototypePush, ArrayPrototypeSplice, ArrayPrototypeSlice, ArrayPrototypeJoin, ReflectApply } = P;
const toWellFormed = P.uncurry(String.prototype.toWellFormed);
const ArrayPrototypeSort = P.uncurry(Array.prototype.sort);
const IteratorPrototype = P.ObjectGetPrototypeOf(P.ObjectGetPrototypeOf([][Symbol.iterator]()));
const inspectCustom = Symbol.for('nodejs.util.inspect.custom');
const lazyInspect = () => require('../util.js').inspect;

// toUSV converts as Node does (`${v}`: a Symbol throws), then replaces
// lone surrogates.
const toUSV = (v) => toWellFormed(`${v}`);

function invalidURL(input, base) {
  const err = codedError('ERR_INVALID_URL');
  err.input = input;
  if (base !== undefined) err.base = base;
  return err;
}

// record parses input (against base) into a whatwg-url URL, or null.
function record(input, base) {
  try {
    return base === undefined ? new whatwg.URL(input) : new whatwg.URL(input, base);
  } catch {
    return null;
  }
}

// Links between a URL and its URLSearchParams; set in the classes'
// static blocks, so only this module can reach the private state.
let paramsList; // (URLSearchParams) -> its list [name, value, name, value, ...]
let paramsReplace; // (URLSearchParams, query string) -> void
let paramsAttach; // (URLSearchParams, URL) -> void
let urlSetQuery; // (URL, serialized query) -> void
let isParams; // (any) -> whether it is a URLSearchParams
let isIterator; // (any) -> whether it is a URLSearchParams iterator

class URLSearchParams {
  #list = [];
  #url = null;

  static {
    paramsList = (p) => p.#list;
    paramsReplace = (p, query) => { p.#list = parseQuery(query); };
    paramsAttach = (p, url) => { p.#url = url; };
    isParams = (v) => typeof v === 'object' && v !== null && #list in v;
  }

  constructor(init = undefined) {
    if (init == null) return;
    if (typeof init === 'object' || typeof init === 'function') {
      const method = init[Symbol.iterator];
      if (method === this[Symbol.iterator] && #list in init) {
        this.#list = ArrayPrototypeSlice(init.#list);
      } else if (method != null) {
        if (typeof method !== 'function') throw codedError('ERR_ARG_NOT_ITERABLE', 'Query pairs');
        // Bounded by the guest's own iterator and heap, as in Node.
        for (const pair of init) {
          if (pair == null || (typeof pair !== 'object' && typeof pair !== 'function') ||
              typeof pair[Symbol.iterator] !== 'function') {
            throw codedError('ERR_INVALID_TUPLE', 'Each query pair', '[name, value]');
          }
          let n = 0;
          for (const element of pair) {
            n++;
            ArrayPrototypePush(this.#list, toUSV(element));
          }
          if (n !== 2) throw codedError('ERR_INVALID_TUPLE', 'Each query pair', '[name, value]');
        }
      } else {
        // A record: own enumerable keys, later duplicates (after USV
        // conversion) overwrite the earlier value in place.
        const seen = new P.MapCtor();
        for (const key of Reflect.ownKeys(init)) {
          const desc = Reflect.getOwnPropertyDescriptor(init, key);
          if (desc === undefined || !desc.enumerable) continue;
          const name = toUSV(key);
          const value = toUSV(init[key]);
          if (P.MapPrototypeHas(seen, name)) {
            this.#list[P.MapPrototypeGet(seen, name)] = value;
          } else {
            P.MapPrototypeSet(seen, name, this.#list.length + 1);
            ArrayPrototypePush(this.#list, name, value);
          }
        }
      }
      return;
    }
    let s = toUSV(init);
    if (s[0] === '?') s = P.StringPrototypeSlice(s, 1);
    this.#list = parseQuery(s);
  }

  get size() {
    checkParams(this);
    return this.#list.length / 2;
  }

  append(name, value) {
    checkParams(this);
    if (arguments.length < 2) throw codedError('ERR_MISSING_ARGS', 'name', 'value');
    ArrayPrototypePush(this.#list, toUSV(name), toUSV(value));
    this.#update();
  }

  delete(name, value = undefined) {
    checkParams(this);
    if (arguments.length < 1) throw codedError('ERR_MISSING_ARGS', 'name');
    name = toUSV(name);
    if (value !== undefined) value = toUSV(value);
    const list = this.#list;
    for (let i = 0; i < list.length;) {
      if (list[i] === name && (value === undefined || list[i + 1] === value)) ArrayPrototypeSplice(list, i, 2);
      else i += 2;
    }
    this.#update();
  }

  get(name) {
    checkParams(this);
    if (arguments.length < 1) throw codedError('ERR_MISSING_ARGS', 'name');
    name = toUSV(name);
    const list = this.#list;
    for (let i = 0; i < list.length; i += 2) if (list[i] === name) return list[i + 1];
    return null;
  }

  getAll(name) {
    checkParams(this);
    if (arguments.length < 1) throw codedError('ERR_MISSING_ARGS', 'name');
    name = toUSV(name);
    const list = this.#list;
    const out = [];
    for (let i = 0; i < list.length; i += 2) if (list[i] === name) ArrayPrototypePush(out, list[i + 1]);
    return out;
  }

  has(name, value = undefined) {
    checkParams(this);
    if (arguments.length < 1) throw codedError('ERR_MISSING_ARGS', 'name');
    name = toUSV(name);
    if (value !== undefined) value = toUSV(value);
    const list = this.#list;
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] === name && (value === undefined || list[i + 1] === value)) return true;
    }
    return false;
  }

  set(name, value) {
    checkParams(this);
    if (arguments.length < 2) throw codedError('ERR_MISSING_ARGS', 'name', 'value');
    name = toUSV(name);
    value = toUSV(value);
    const list = this.#list;
    let found = false;
    for (let i = 0; i < list.length;) {
      if (list[i] !== name) i += 2;
      else if (!found) { list[i + 1] = value; found = true; i += 2; } else ArrayPrototypeSplice(list, i, 2);
    }
    if (!found) ArrayPrototypePush(list, name, value);
    this.#update();
  }

  sort() {
    checkParams(this);
    // Stable (V8's sort is), by UTF-16 code units, in O(n log n): the
    // list may be long.
    const list = this.#list;
    const pairs = [];
    for (let i = 0; i < list.length; i += 2) ArrayPrototypePush(pairs, [list[i], list[i + 1]]);
    ArrayPrototypeSort(pairs, (a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (let i = 0; i < pairs.length; i++) {
      list[2 * i] = pairs[i][0];
      list[2 * i + 1] = pairs[i][1];
    }
    this.#update();
  }

  entries() {
    checkParams(this);
    return new URLSearchParamsIterator(this, 'key+value');
  }

  forEach(callback, thisArg = undefined) {
    checkParams(this);
    if (typeof callback !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'callback', 'of type function', callback);
    // The list is re-read each step: the callback may change it.
    for (let i = 0; i < this.#list.length; i += 2) {
      ReflectApply(callback, thisArg, [this.#list[i + 1], this.#list[i], this]);
    }
  }

  keys() {
    checkParams(this);
    return new URLSearchParamsIterator(this, 'key');
  }

  values() {
    checkParams(this);
    return new URLSearchParamsIterator(this, 'value');
  }

  toString() {
    checkParams(this);
    return serializeQuery(this.#list);
  }

  [inspectCustom](depth, ctx) {
    checkParams(this);
    if (typeof depth === 'number' && depth < 0) return ctx.stylize('[Object]', 'special');
    const inspect = lazyInspect();
    const opts = { ...ctx };
    if (depth !== null) opts.depth = depth - 1;
    const list = this.#list;
    const parts = [];
    let width = -2;
    for (let i = 0; i < list.length; i += 2) {
      const s = `${inspect(list[i], opts)} => ${inspect(list[i + 1], opts)}`;
      ArrayPrototypePush(parts, s);
      width += plainLength(s) + 2;
    }
    const name = this.constructor.name;
    if (width > ctx.breakLength) return `${name} {\n  ${ArrayPrototypeJoin(parts, ',\n  ')} }`;
    if (parts.length) return `${name} { ${ArrayPrototypeJoin(parts, ', ')} }`;
    return `${name} {}`;
  }

  // #update writes the list back into the URL it belongs to, if any.
  #update() {
    if (this.#url !== null) urlSetQuery(this.#url, serializeQuery(this.#list));
  }
}

function checkParams(p) {
  if (!isParams(p)) throw codedError('ERR_INVALID_THIS', 'URLSearchParams');
}

function parseQuery(s) {
  const list = [];
  for (const [name, value] of parseUrlencodedString(s)) ArrayPrototypePush(list, name, value);
  return list;
}

function serializeQuery(list) {
  const pairs = [];
  for (let i = 0; i < list.length; i += 2) ArrayPrototypePush(pairs, [list[i], list[i + 1]]);
  return serializeUrlencoded(pairs);
}

// plainLength is a string's length without its ANSI colour codes.
function plainLength(s) {
  return s.replace(/\u001b\[\d\d?m/g, '').length;
}

class URLSearchParamsIterator {
  #params;
  #kind;
  #index = 0;

  static {
    isIterator = (v) => typeof v === 'object' && v !== null && #params in v;
  }

  constructor(params, kind) {
    this.#params = params;
    this.#kind = kind;
  }

  next() {
    if (!isIterator(this)) throw codedError('ERR_INVALID_THIS', 'URLSearchParamsIterator');
    const list = paramsList(this.#params);
    const i = this.#index;
    if (i >= list.length) return { value: undefined, done: true };
    this.#index = i + 2;
    if (this.#kind === 'key') return { value: list[i], done: false };
    if (this.#kind === 'value') return { value: list[i + 1], done: false };
    return { value: [list[i], list[i + 1]], done: false };
  }

  [inspectCustom](depth, ctx) {
    if (!isIterator(this)) throw codedError('ERR_INVALID_THIS', 'URLSearchParamsIterator');
    if (typeof depth === 'number' && depth < 0) return ctx.stylize('[Object]', 'special');
    const inspect = lazyInspect();
    const opts = { ...ctx };
    if (depth !== null) opts.depth = depth - 1;
    const list = paramsList(this.#params);
    const items = [];
    for (let i = this.#index; i < list.length; i += 2) {
      if (this.#kind === 'key') ArrayPrototypePush(items, list[i]);
      else if (this.#kind === 'value') ArrayPrototypePush(items, list[i + 1]);
      else ArrayPrototypePush(items, [list[i], list[i + 1]]);
    }
    const multiline = inspect(items, opts).includes('\n');
    const strs = [];
    for (const item of items) ArrayPrototypePush(strs, inspect(item, opts));
    const body = multiline ? `\n  ${ArrayPrototypeJoin(strs, ',\n  ')}` : ` ${ArrayPrototypeJoin(strs, ', ')}`;
    return `URLSearchParams Iterator {${body} }`;
  }
}
P.ObjectDefineProperty(URLSearchParamsIterator.prototype, Symbol.toStringTag, { value: 'URLSearchParams Iterator', configurable: true });
Object.setPrototypeOf(URLSearchParamsIterator.prototype, IteratorPrototype);
delete URLSearchParamsIterator.prototype.constructor;

// Node defines @@iterator as the same function as entries.
P.ObjectDefineProperty(URLSearchParams.prototype, Symbol.iterator, {
  value: URLSearchParams.prototype.entries, writable: true, configurable: true,
});

const kParse = Symbol('parse');

class URL {
  // The whatwg-url URL holding the parsed record. Named as in Node, so a
  // wrong receiver gets the same "Cannot read private member #context".
  #context;
  #searchParams = null;

  static {
    urlSetQuery = (u, query) => { u.#context.search = query; };
  }

  constructor(input, base = undefined) {
    if (arguments.length === 0) throw codedError('ERR_MISSING_ARGS', 'url');
    const parseOnly = input === kParse;
    if (parseOnly) {
      input = base;
      base = arguments[2];
    }
    input = `${input}`;
    if (base !== undefined) base = `${base}`;
    const rec = record(input, base);
    if (rec === null) {
      if (parseOnly) return;
      throw invalidURL(input, base);
    }
    this.#context = rec;
  }

  // #href is the serialisation. toString, toJSON and the href and
  // search getters check the receiver first, as Node's private method
  // does (V8's brand-check message, spelled out: the bundler renames
  // the class).
  #href() { return this.#context.href; }

  static #check(u) {
    if (typeof u !== 'object' || u === null || !(#context in u)) throw new P.TypeError('Receiver must be an instance of class URL');
  }

  // #changed re-reads the query into the URL's URLSearchParams after a
  // setter that can change it.
  #changed() {
    if (this.#searchParams !== null) paramsReplace(this.#searchParams, P.StringPrototypeSlice(this.#context.search, 1));
  }

  [inspectCustom](depth, opts) {
    if (typeof depth === 'number' && depth < 0) return this;
    const ctor = constructorOf(this) || URL;
    const obj = { __proto__: { constructor: ctor } };
    obj.href = this.href;
    obj.origin = this.origin;
    obj.protocol = this.protocol;
    obj.username = this.username;
    obj.password = this.password;
    obj.host = this.host;
    obj.hostname = this.hostname;
    obj.port = this.port;
    obj.pathname = this.pathname;
    obj.search = this.search;
    obj.searchParams = this.searchParams;
    obj.hash = this.hash;
    return `${ctor.name} ${lazyInspect()(obj, opts)}`;
  }

  toString() {
    URL.#check(this);
    return this.#href();
  }

  get href() {
    URL.#check(this);
    return this.#href();
  }

  set href(value) {
    const ctx = this.#context;
    value = `${value}`;
    try {
      ctx.href = value;
    } catch {
      throw invalidURL(value);
    }
    this.#changed();
  }

  get origin() { return this.#context.origin; }

  get protocol() { return this.#context.protocol; }

  set protocol(value) { this.#context.protocol = `${value}`; }

  get username() { return this.#context.username; }

  set username(value) { this.#context.username = `${value}`; }

  get password() { return this.#context.password; }

  set password(value) { this.#context.password = `${value}`; }

  get host() { return this.#context.host; }

  set host(value) { this.#context.host = `${value}`; }

  get hostname() { return this.#context.hostname; }

  set hostname(value) { this.#context.hostname = `${value}`; }

  get port() { return this.#context.port; }

  set port(value) { this.#context.port = `${value}`; }

  get pathname() { return this.#context.pathname; }

  set pathname(value) { this.#context.pathname = `${value}`; }

  get search() {
    URL.#check(this);
    return this.#context.search;
  }

  set search(value) {
    this.#context.search = `${value}`;
    this.#changed();
  }

  get searchParams() {
    if (this.#searchParams === null) {
      const p = new URLSearchParams(this.#context.search);
      paramsAttach(p, this);
      this.#searchParams = p;
    }
    return this.#searchParams;
  }

  get hash() { return this.#context.hash; }

  set hash(value) { this.#context.hash = `${value}`; }

  toJSON() {
    URL.#check(this);
    return this.#href();
  }

  static parse(input, base = undefined) {
    if (arguments.length === 0) throw codedError('ERR_MISSING_ARGS', 'url');
    const u = new URL(kParse, input, base);
    return #context in u && u.#context !== undefined ? u : null;
  }

  static canParse(input, base = undefined) {
    if (arguments.length === 0) throw codedError('ERR_MISSING_ARGS', 'url');
    input = `${input}`;
    if (base !== undefined) base = `${base}`;
    return record(input, base) !== null;
  }

  static createObjectURL(obj) {
    const { Blob } = globalThis;
    if (typeof Blob !== 'function' || !(obj instanceof Blob)) throw codedError('ERR_INVALID_ARG_TYPE', 'obj', 'an instance of Blob', obj);
    const id = globalThis.crypto.randomUUID();
    P.MapPrototypeSet(blobURLs, id, obj);
    return `blob:nodedata:${id}`;
  }

  static revokeObjectURL(url) {
    if (arguments.length === 0) throw codedError('ERR_MISSING_ARGS', 'url');
    const id = blobID(`${url}`);
    if (id !== null) P.MapPrototypeDelete(blobURLs, id);
  }
}

// Blobs registered with URL.createObjectURL, by id; freed by
// revokeObjectURL (guest heap, as in Node).
const blobURLs = new P.MapCtor();

function blobID(url) {
  const prefix = 'blob:nodedata:';
  if (!P.StringPrototypeStartsWith(url, prefix)) return null;
  const id = P.StringPrototypeSlice(url, prefix.length);
  const hash = P.StringPrototypeIndexOf(id, '#');
  return hash === -1 ? id : P.StringPrototypeSlice(id, 0, hash);
}

// resolveObjectURL is buffer.resolveObjectURL: the Blob a blob URL names.
function resolveObjectURL(url) {
  const id = blobID(`${url}`);
  return id === null ? undefined : P.MapPrototypeGet(blobURLs, id);
}

function constructorOf(obj) {
  for (let o = obj; o !== null; o = P.ObjectGetPrototypeOf(o)) {
    const d = P.ObjectGetOwnPropertyDescriptor(o, 'constructor');
    if (d !== undefined && typeof d.value === 'function' && d.value.name !== '') return d.value;
  }
  return null;
}

// Node's property attributes: string-named members are enumerable,
// the tags are not.
function enumerable(proto, names) {
  for (const name of names) {
    const d = P.ObjectGetOwnPropertyDescriptor(proto, name);
    d.enumerable = true;
    P.ObjectDefineProperty(proto, name, d);
  }
}
enumerable(URL.prototype, ['toString', 'href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname',
  'port', 'pathname', 'search', 'searchParams', 'hash', 'toJSON']);
enumerable(URL, ['parse', 'canParse', 'createObjectURL', 'revokeObjectURL']);
enumerable(URLSearchParams.prototype, ['size', 'append', 'delete', 'get', 'getAll', 'has', 'set', 'sort', 'entries',
  'forEach', 'keys', 'values', 'toString']);
P.ObjectDefineProperty(URL.prototype, Symbol.toStringTag, { value: 'URL', configurable: true });
P.ObjectDefineProperty(URLSearchParams.prototype, Symbol.toStringTag, { value: 'URLSearchParams', configurable: true });

module.exports = { URL, URLSearchParams, resolveObjectURL };
