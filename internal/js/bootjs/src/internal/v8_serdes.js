'use strict';
// v8.Serializer and v8.Deserializer: V8's ValueSerializer wire format
// (version 15), written in JavaScript because the isolate's own
// serializer is not reachable through the bridge. Node programs store
// this format on disk (jest's haste map and transform caches) and send
// it between processes, so the bytes follow V8's: the same tags, varints,
// zigzag integers, one- and two-byte strings (two-byte ones aligned by a
// padding tag), object back-references, dense and sparse arrays, Map,
// Set, Date, RegExp, BigInt, ArrayBuffer and views, errors, and Node's
// host objects for Buffers and typed arrays (DefaultSerializer).
const P = require('./primordials.js');

const StringPrototypeCharCodeAt = P.uncurry(String.prototype.charCodeAt);
const StringPrototypeIncludes = P.uncurry(String.prototype.includes);

const ObjectGetPrototypeOf = Object.getPrototypeOf;
const ObjectKeys = Object.keys;
const ObjectPrototypeToString = Object.prototype.toString;
const ObjectHasOwn = Object.hasOwn;
const ArrayIsArray = Array.isArray;
const ArrayBufferIsView = ArrayBuffer.isView;
const FunctionPrototypeToString = Function.prototype.toString;
const MapPrototypeForEach = Map.prototype.forEach;
const MapPrototypeGetSize = Object.getOwnPropertyDescriptor(Map.prototype, 'size').get;
const SetPrototypeForEach = Set.prototype.forEach;
const SetPrototypeGetSize = Object.getOwnPropertyDescriptor(Set.prototype, 'size').get;
const MapCtor = Map;
const SetCtor = Set;
const MapPrototypeSet = Map.prototype.set;
const MapPrototypeGet = Map.prototype.get;
const SetPrototypeAdd = Set.prototype.add;
const DatePrototypeGetTime = Date.prototype.getTime;
const RegExpPrototypeGetSource = Object.getOwnPropertyDescriptor(RegExp.prototype, 'source').get;
const RegExpPrototypeGetFlags = Object.getOwnPropertyDescriptor(RegExp.prototype, 'flags').get;
const ArrayBufferPrototypeGetByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
const TypedArrayPrototypeGetBuffer = Object.getOwnPropertyDescriptor(TypedArrayPrototype, 'buffer').get;
const TypedArrayPrototypeGetByteOffset = Object.getOwnPropertyDescriptor(TypedArrayPrototype, 'byteOffset').get;
const TypedArrayPrototypeGetByteLength = Object.getOwnPropertyDescriptor(TypedArrayPrototype, 'byteLength').get;
const DataViewPrototypeGetBuffer = Object.getOwnPropertyDescriptor(DataView.prototype, 'buffer').get;
const DataViewPrototypeGetByteOffset = Object.getOwnPropertyDescriptor(DataView.prototype, 'byteOffset').get;
const DataViewPrototypeGetByteLength = Object.getOwnPropertyDescriptor(DataView.prototype, 'byteLength').get;
const StringFromCharCode = String.fromCharCode;
const Uint8ArrayCtor = Uint8Array;
const Float64ArrayCtor = Float64Array;
const MathFloor = Math.floor;
const NumberIsInteger = Number.isInteger;
const BigIntAsUintN = BigInt.asUintN;

// Tags (v8/src/objects/value-serializer.cc).
const T = {
  version: 0xff, padding: 0x00, verifyCount: 0x3f /* ? */, theHole: 0x2d /* - */,
  undefined: 0x5f /* _ */, null: 0x30 /* 0 */, true: 0x54 /* T */, false: 0x46 /* F */,
  int32: 0x49 /* I */, uint32: 0x55 /* U */, double: 0x4e /* N */, bigint: 0x5a /* Z */,
  utf8: 0x53 /* S */, oneByte: 0x22 /* " */, twoByte: 0x63 /* c */, objectRef: 0x5e /* ^ */,
  beginObject: 0x6f /* o */, endObject: 0x7b /* { */, beginSparse: 0x61 /* a */, endSparse: 0x40 /* @ */,
  beginDense: 0x41 /* A */, endDense: 0x24 /* $ */, date: 0x44 /* D */, trueObject: 0x79 /* y */,
  falseObject: 0x78 /* x */, numberObject: 0x6e /* n */, bigintObject: 0x7a /* z */, stringObject: 0x73 /* s */,
  regexp: 0x52 /* R */, beginMap: 0x3b /* ; */, endMap: 0x3a /* : */, beginSet: 0x27 /* ' */, endSet: 0x2c /* , */,
  arrayBuffer: 0x42 /* B */, resizableArrayBuffer: 0x7e /* ~ */, arrayBufferTransfer: 0x74 /* t */,
  view: 0x56 /* V */, sharedArrayBuffer: 0x75 /* u */, error: 0x72 /* r */, hostObject: 0x5c /* \ */,
};
const FORMAT_VERSION = 15;

// ArrayBufferView subtags of the 'V' tag.
const viewTags = [
  [Int8Array, 0x62], [Uint8Array, 0x42], [Uint8ClampedArray, 0x43], [Int16Array, 0x77], [Uint16Array, 0x57],
  [Int32Array, 0x64], [Uint32Array, 0x44], [Float32Array, 0x66], [Float64Array, 0x46], [BigInt64Array, 0x71],
  [BigUint64Array, 0x51], [DataView, 0x3f],
];

// Node's host-object indexes of ArrayBufferViews (lib/v8.js); 10 is Buffer.
const hostViewTypes = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
  Float32Array, Float64Array, DataView, null, BigInt64Array, BigUint64Array];

// Error prototype subtags and fields of the 'r' tag.
const errorProtos = [[EvalError, 0x45], [RangeError, 0x52], [ReferenceError, 0x46], [SyntaxError, 0x53],
  [TypeError, 0x54], [URIError, 0x55]];
const E_MESSAGE = 0x6d; // m
const E_STACK = 0x73; // s
const E_CAUSE = 0x63; // c
const E_END = 0x2e; // .

// RegExp flag bits (JSRegExp::Flags).
const regexpFlags = [['g', 1], ['i', 2], ['m', 4], ['y', 8], ['u', 16], ['s', 32], ['d', 128], ['v', 256]];

const f64 = new Float64ArrayCtor(1);
const f64Bytes = new Uint8ArrayCtor(f64.buffer);

function describe(v) {
  if (typeof v === 'function') return P.FunctionPrototypeCall(FunctionPrototypeToString, v);
  if (typeof v === 'symbol') return P.SymbolPrototypeToString ? P.SymbolPrototypeToString(v) : String(v);
  const tag = P.FunctionPrototypeCall(ObjectPrototypeToString, v);
  let name = P.StringPrototypeSlice(tag, 8, -1);
  try {
    const proto = ObjectGetPrototypeOf(v);
    if (proto && typeof proto.constructor === 'function' && proto.constructor.name) name = proto.constructor.name;
  } catch { /* a hostile prototype: the tag's name */ }
  return `#<${name}>`;
}

// V8 on x64 without pointer compression (Node's build) has 32-bit Smis.
function isSmi(n) { return NumberIsInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 && !(n === 0 && 1 / n < 0); }

function isArrayIndex(key) {
  if (key.length === 0 || key.length > 10) return false;
  const n = +key;
  return n >= 0 && n < 4294967295 && `${n}` === key;
}

function brand(v, getter) {
  try {
    P.FunctionPrototypeCall(getter, v);
    return true;
  } catch {
    return false;
  }
}

class Serializer {
  constructor() {
    this._buf = new Uint8ArrayCtor(64);
    this._len = 0;
    this._ids = new MapCtor();
    this._nextId = 0;
    this._hostViews = false;
  }

  _ensure(n) {
    if (this._len + n <= this._buf.length) return;
    let size = this._buf.length * 2;
    while (size < this._len + n) size *= 2;
    const b = new Uint8ArrayCtor(size);
    P.TypedArrayPrototypeSet(b, P.TypedArrayPrototypeSubarray(this._buf, 0, this._len));
    this._buf = b;
  }

  _byte(b) { this._ensure(1); this._buf[this._len++] = b; }

  _varint(n) {
    // n is a non-negative integer below 2^53.
    this._ensure(10);
    do {
      let b = n % 128;
      n = MathFloor(n / 128);
      if (n > 0) b |= 0x80;
      this._buf[this._len++] = b;
    } while (n > 0);
  }

  _raw(u8) {
    this._ensure(u8.length);
    P.TypedArrayPrototypeSet(this._buf, u8, this._len);
    this._len += u8.length;
  }

  _double(d) {
    f64[0] = d;
    this._raw(f64Bytes);
  }

  writeHeader() {
    this._byte(T.version);
    this._varint(FORMAT_VERSION);
  }

  writeUint32(v) { this._varint(v >>> 0); }

  writeUint64(hi, lo) { this._varint((hi >>> 0) * 4294967296 + (lo >>> 0)); }

  writeDouble(d) { this._double(+d); }

  writeRawBytes(source) {
    if (!ArrayBufferIsView(source)) {
      throw require('./errors.js').codedError('ERR_INVALID_ARG_TYPE', 'source', 'an instance of Buffer, TypedArray, or DataView', source);
    }
    this._raw(new Uint8ArrayCtor(source.buffer, source.byteOffset, source.byteLength));
  }

  releaseBuffer() {
    const out = require('../buffer.js').Buffer.from(P.TypedArrayPrototypeSubarray(this._buf, 0, this._len));
    this._buf = new Uint8ArrayCtor(64);
    this._len = 0;
    return out;
  }

  transferArrayBuffer() {
    throw this._cloneError('transferring ArrayBuffers is not supported here');
  }

  _setTreatArrayBufferViewsAsHostObjects(flag) { this._hostViews = !!flag; }

  _cloneError(message) {
    const Ctor = this._getDataCloneError;
    try {
      return new Ctor(message);
    } catch {
      return new Error(message);
    }
  }

  _writeHostObject(object) {
    throw this._cloneError(`Unserializable host object: ${describe(object)}`);
  }

  _string(s) {
    let oneByte = true;
    for (let i = 0; i < s.length; i++) {
      if (StringPrototypeCharCodeAt(s, i) > 0xff) { oneByte = false; break; }
    }
    if (oneByte) {
      this._byte(T.oneByte);
      this._varint(s.length);
      this._ensure(s.length);
      for (let i = 0; i < s.length; i++) this._buf[this._len++] = StringPrototypeCharCodeAt(s, i);
      return;
    }
    const bytes = s.length * 2;
    let varintLen = 1;
    for (let n = bytes; n >= 128; n = MathFloor(n / 128)) varintLen++;
    // V8 aligns the UTF-16 data: a padding tag when it would be odd.
    if ((this._len + 1 + varintLen) & 1) this._byte(T.padding);
    this._byte(T.twoByte);
    this._varint(bytes);
    this._ensure(bytes);
    for (let i = 0; i < s.length; i++) {
      const c = StringPrototypeCharCodeAt(s, i);
      this._buf[this._len++] = c & 0xff;
      this._buf[this._len++] = c >> 8;
    }
  }

  _number(n) {
    if (isSmi(n)) {
      this._byte(T.int32);
      this._varint(n >= 0 ? n * 2 : -n * 2 - 1);
    } else {
      this._byte(T.double);
      this._double(n);
    }
  }

  _bigint(n) {
    const neg = n < 0n;
    let mag = neg ? -n : n;
    const digits = [];
    while (mag > 0n) {
      digits[digits.length] = BigIntAsUintN(64, mag);
      mag >>= 64n;
    }
    const byteLength = digits.length * 8;
    this._varint(byteLength * 2 + (neg ? 1 : 0));
    this._ensure(byteLength);
    for (let i = 0; i < digits.length; i++) {
      let d = digits[i];
      for (let j = 0; j < 8; j++) {
        this._buf[this._len++] = Number(d & 0xffn);
        d >>= 8n;
      }
    }
  }

  writeValue(v) {
    switch (typeof v) {
      case 'undefined': this._byte(T.undefined); return true;
      case 'boolean': this._byte(v ? T.true : T.false); return true;
      case 'number': this._number(v); return true;
      case 'bigint': this._byte(T.bigint); this._bigint(v); return true;
      case 'string': this._string(v); return true;
      case 'symbol':
      case 'function':
        throw this._cloneError(`${describe(v)} could not be cloned.`);
      default:
    }
    if (v === null) { this._byte(T.null); return true; }
    const id = P.FunctionPrototypeCall(MapPrototypeGet, this._ids, v);
    if (id !== undefined) {
      this._byte(T.objectRef);
      this._varint(id);
      return true;
    }
    // Every object gets the next id before its contents are written.
    P.FunctionPrototypeCall(MapPrototypeSet, this._ids, v, this._nextId++);
    this._object(v);
    return true;
  }

  _object(v) {
    if (ArrayBufferIsView(v)) {
      if (this._hostViews) {
        this._byte(T.hostObject);
        this._writeHostObject(v);
        return;
      }
      this._view(v);
      return;
    }
    if (ArrayIsArray(v)) { this._array(v); return; }
    const tag = P.FunctionPrototypeCall(ObjectPrototypeToString, v);
    switch (tag) {
      case '[object Date]':
        if (brand(v, DatePrototypeGetTime)) {
          this._byte(T.date);
          this._double(P.FunctionPrototypeCall(DatePrototypeGetTime, v));
          return;
        }
        break;
      case '[object RegExp]':
        if (brand(v, RegExpPrototypeGetSource)) {
          this._byte(T.regexp);
          this._string(P.FunctionPrototypeCall(RegExpPrototypeGetSource, v));
          const flags = P.FunctionPrototypeCall(RegExpPrototypeGetFlags, v);
          let bits = 0;
          for (let i = 0; i < regexpFlags.length; i++) {
            if (StringPrototypeIncludes(flags, regexpFlags[i][0])) bits |= regexpFlags[i][1];
          }
          this._varint(bits);
          return;
        }
        break;
      case '[object Map]':
        if (brand(v, MapPrototypeGetSize)) {
          const entries = [];
          P.FunctionPrototypeCall(MapPrototypeForEach, v, (val, key) => { entries[entries.length] = key; entries[entries.length] = val; });
          this._byte(T.beginMap);
          for (let i = 0; i < entries.length; i++) this.writeValue(entries[i]);
          this._byte(T.endMap);
          this._varint(entries.length);
          return;
        }
        break;
      case '[object Set]':
        if (brand(v, SetPrototypeGetSize)) {
          const values = [];
          P.FunctionPrototypeCall(SetPrototypeForEach, v, (val) => { values[values.length] = val; });
          this._byte(T.beginSet);
          for (let i = 0; i < values.length; i++) this.writeValue(values[i]);
          this._byte(T.endSet);
          this._varint(values.length);
          return;
        }
        break;
      case '[object ArrayBuffer]':
        if (brand(v, ArrayBufferPrototypeGetByteLength)) {
          const n = P.FunctionPrototypeCall(ArrayBufferPrototypeGetByteLength, v);
          this._byte(T.arrayBuffer);
          this._varint(n);
          this._raw(new Uint8ArrayCtor(v, 0, n));
          return;
        }
        break;
      case '[object Boolean]':
        this._byte(P.FunctionPrototypeCall(Boolean.prototype.valueOf, v) ? T.trueObject : T.falseObject);
        return;
      case '[object Number]':
        this._byte(T.numberObject);
        this._double(P.FunctionPrototypeCall(Number.prototype.valueOf, v));
        return;
      case '[object BigInt]':
        this._byte(T.bigintObject);
        this._bigint(P.FunctionPrototypeCall(BigInt.prototype.valueOf, v));
        return;
      case '[object String]':
        this._byte(T.stringObject);
        this._string(P.FunctionPrototypeCall(String.prototype.valueOf, v));
        return;
      case '[object Error]':
        this._error(v);
        return;
      default:
    }
    if (tag !== '[object Object]' && tag !== '[object Arguments]') {
      throw this._cloneError(`${describe(v)} could not be cloned.`);
    }
    if (typeof v === 'function') throw this._cloneError(`${describe(v)} could not be cloned.`);
    this._byte(T.beginObject);
    const n = this._properties(v, ObjectKeys(v));
    this._byte(T.endObject);
    this._varint(n);
  }

  // _properties writes the own enumerable properties of v named by keys
  // (read one at a time: a getter may delete a later one) and returns how
  // many it wrote.
  _properties(v, keys) {
    let n = 0;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (!ObjectHasOwn(v, key)) continue;
      const value = v[key];
      if (isArrayIndex(key)) this._number(+key);
      else this._string(key);
      this.writeValue(value);
      n++;
    }
    return n;
  }

  _array(v) {
    const length = v.length;
    let holey = false;
    for (let i = 0; i < length; i++) {
      if (!(i in v)) { holey = true; break; }
    }
    const keys = ObjectKeys(v);
    if (!holey) {
      this._byte(T.beginDense);
      this._varint(length);
      for (let i = 0; i < length; i++) this.writeValue(v[i]);
      const extra = [];
      for (let i = 0; i < keys.length; i++) if (!isArrayIndex(keys[i])) extra[extra.length] = keys[i];
      const n = this._properties(v, extra);
      this._byte(T.endDense);
      this._varint(n);
      this._varint(length);
      return;
    }
    this._byte(T.beginSparse);
    this._varint(length);
    const n = this._properties(v, keys);
    this._byte(T.endSparse);
    this._varint(n);
    this._varint(length);
  }

  _view(v) {
    let buffer, offset, length;
    if (v instanceof DataView) {
      buffer = P.FunctionPrototypeCall(DataViewPrototypeGetBuffer, v);
      offset = P.FunctionPrototypeCall(DataViewPrototypeGetByteOffset, v);
      length = P.FunctionPrototypeCall(DataViewPrototypeGetByteLength, v);
    } else {
      buffer = P.FunctionPrototypeCall(TypedArrayPrototypeGetBuffer, v);
      offset = P.FunctionPrototypeCall(TypedArrayPrototypeGetByteOffset, v);
      length = P.FunctionPrototypeCall(TypedArrayPrototypeGetByteLength, v);
    }
    let sub = -1;
    for (let i = 0; i < viewTags.length; i++) {
      if (v instanceof viewTags[i][0]) { sub = viewTags[i][1]; break; }
    }
    if (sub < 0) throw this._cloneError(`${describe(v)} could not be cloned.`);
    // The buffer first (an object of its own, with its id), then the view.
    this.writeValue(buffer);
    this._byte(T.view);
    this._byte(sub);
    this._varint(offset);
    this._varint(length);
    this._varint(0);
  }

  _error(v) {
    this._byte(T.error);
    const proto = ObjectGetPrototypeOf(v);
    for (let i = 0; i < errorProtos.length; i++) {
      if (proto === errorProtos[i][0].prototype) { this._byte(errorProtos[i][1]); break; }
    }
    const msg = ObjectHasOwn(v, 'message') ? Object.getOwnPropertyDescriptor(v, 'message') : undefined;
    if (msg && 'value' in msg) {
      this._byte(E_MESSAGE);
      this._string(`${msg.value}`);
    }
    let stack;
    try { stack = v.stack; } catch { stack = undefined; }
    if (typeof stack === 'string') {
      this._byte(E_STACK);
      this._string(stack);
    }
    this._byte(E_END);
  }
}

// Node: the error class of clone failures, replaceable by subclasses.
Serializer.prototype._getDataCloneError = Error;

class Deserializer {
  constructor(buffer) {
    if (!ArrayBufferIsView(buffer)) {
      throw require('./errors.js').codedError('ERR_INVALID_ARG_TYPE', 'buffer', 'an instance of Buffer, TypedArray, or DataView', buffer);
    }
    this.buffer = buffer;
    this._u8 = new Uint8ArrayCtor(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    this._pos = 0;
    this._version = 0;
    this._objects = [];
    this._depth = 0;
  }

  _fail() { return new Error('Unable to deserialize cloned data.'); }

  _byte() {
    if (this._pos >= this._u8.length) throw this._fail();
    return this._u8[this._pos++];
  }

  _peek() { return this._pos < this._u8.length ? this._u8[this._pos] : -1; }

  _varint() {
    let n = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      const b = this._byte();
      n += (b & 0x7f) * mul;
      if (!(b & 0x80)) return n;
      mul *= 128;
    }
    throw this._fail();
  }

  _bytes(n) {
    if (n > this._u8.length - this._pos) throw this._fail();
    const start = this._pos;
    this._pos += n;
    return start;
  }

  _double() {
    const at = this._bytes(8);
    for (let i = 0; i < 8; i++) f64Bytes[i] = this._u8[at + i];
    return f64[0];
  }

  readHeader() {
    if (this._peek() === T.version) {
      this._pos++;
      this._version = this._varint();
    }
    if (this._version < 13 || this._version > FORMAT_VERSION) {
      throw new Error('Unable to deserialize cloned data due to invalid or unsupported version.');
    }
    return true;
  }

  getWireFormatVersion() { return this._version; }

  readUint32() { return this._varint() >>> 0; }

  readUint64() {
    const n = this._varint();
    return [MathFloor(n / 4294967296) >>> 0, n >>> 0];
  }

  readDouble() { return this._double(); }

  _readRawBytes(length) { return this._bytes(length); }

  readRawBytes(length) {
    const at = this._bytes(length);
    return require('../buffer.js').Buffer.from(P.TypedArrayPrototypeSlice(this._u8, at, at + length));
  }

  transferArrayBuffer() {
    throw new Error('transferring ArrayBuffers is not supported here');
  }

  _readHostObject() { throw this._fail(); }

  _oneByte(n) {
    const at = this._bytes(n);
    let s = '';
    for (let i = 0; i < n; i += 8192) {
      s += P.ReflectApply(StringFromCharCode, null, P.TypedArrayPrototypeSubarray(this._u8, at + i, at + Math.min(n, i + 8192)));
    }
    return s;
  }

  _twoByte(n) {
    if (n & 1) throw this._fail();
    const at = this._bytes(n);
    let s = '';
    const codes = [];
    for (let i = 0; i < n; i += 2) {
      codes[codes.length] = this._u8[at + i] | (this._u8[at + i + 1] << 8);
      if (codes.length === 8192) { s += P.ReflectApply(StringFromCharCode, null, codes); codes.length = 0; }
    }
    return s + P.ReflectApply(StringFromCharCode, null, codes);
  }

  _utf8(n) {
    const at = this._bytes(n);
    return require('../buffer.js').Buffer.from(this._u8.buffer, this._u8.byteOffset + at, n).toString('utf8');
  }

  _bigint() {
    const bits = this._varint();
    const byteLength = MathFloor(bits / 2);
    const at = this._bytes(byteLength);
    let n = 0n;
    for (let i = byteLength - 1; i >= 0; i--) n = (n << 8n) | BigInt(this._u8[at + i]);
    return bits & 1 ? -n : n;
  }

  _string() {
    const tag = this._tag();
    switch (tag) {
      case T.oneByte: return this._oneByte(this._varint());
      case T.twoByte: return this._twoByte(this._varint());
      case T.utf8: return this._utf8(this._varint());
      default: throw this._fail();
    }
  }

  _tag() {
    let t;
    do { t = this._byte(); } while (t === T.padding);
    return t;
  }

  _keep(v) {
    this._objects[this._objects.length] = v;
    return v;
  }

  readValue() {
    // A nesting bound: hostile input cannot overflow the stack.
    if (++this._depth > 4096) throw this._fail();
    try {
      return this._value();
    } finally {
      this._depth--;
    }
  }

  _value() {
    let tag = this._tag();
    if (tag === T.verifyCount) {
      this._varint();
      tag = this._tag();
    }
    switch (tag) {
      case T.undefined: return undefined;
      case T.null: return null;
      case T.true: return true;
      case T.false: return false;
      case T.int32: {
        const z = this._varint();
        return z % 2 ? -(z + 1) / 2 : z / 2;
      }
      case T.uint32: return this._varint();
      case T.double: return this._double();
      case T.bigint: return this._bigint();
      case T.oneByte: return this._oneByte(this._varint());
      case T.twoByte: return this._twoByte(this._varint());
      case T.utf8: return this._utf8(this._varint());
      case T.objectRef: {
        const id = this._varint();
        if (id >= this._objects.length) throw this._fail();
        return this._objects[id];
      }
      case T.beginObject: {
        const o = this._keep({});
        const n = this._props(o, T.endObject);
        if (this._varint() !== n) throw this._fail();
        return o;
      }
      case T.beginDense: {
        const length = this._varint();
        if (length > this._u8.length - this._pos) throw this._fail();
        const a = this._keep(new Array(length));
        for (let i = 0; i < length; i++) {
          if (this._peek() === T.theHole) { this._pos++; continue; }
          a[i] = this.readValue();
        }
        const n = this._props(a, T.endDense);
        if (this._varint() !== n || this._varint() !== length) throw this._fail();
        return a;
      }
      case T.beginSparse: {
        const length = this._varint();
        if (length > 4294967295) throw this._fail();
        const a = this._keep([]);
        a.length = length;
        const n = this._props(a, T.endSparse);
        if (this._varint() !== n || this._varint() !== length) throw this._fail();
        return a;
      }
      case T.date: {
        return this._keep(new Date(this._double()));
      }
      case T.trueObject: return this._keep(Object(true));
      case T.falseObject: return this._keep(Object(false));
      case T.numberObject: return this._keep(Object(this._double()));
      case T.bigintObject: return this._keep(Object(this._bigint()));
      case T.stringObject: {
        const o = Object(this._string());
        return this._keep(o);
      }
      case T.regexp: {
        const at = this._objects.length;
        this._objects[at] = undefined;
        const source = this._string();
        const bits = this._varint();
        let flags = '';
        for (let i = 0; i < regexpFlags.length; i++) if (bits & regexpFlags[i][1]) flags += regexpFlags[i][0];
        let re;
        try { re = new RegExp(source, flags); } catch { throw this._fail(); }
        this._objects[at] = re;
        return re;
      }
      case T.beginMap: {
        const m = this._keep(new MapCtor());
        let n = 0;
        while (this._peek() !== T.endMap) {
          if (this._peek() < 0) throw this._fail();
          const k = this.readValue();
          const val = this.readValue();
          P.FunctionPrototypeCall(MapPrototypeSet, m, k, val);
          n += 2;
        }
        this._pos++;
        if (this._varint() !== n) throw this._fail();
        return m;
      }
      case T.beginSet: {
        const s = this._keep(new SetCtor());
        let n = 0;
        while (this._peek() !== T.endSet) {
          if (this._peek() < 0) throw this._fail();
          P.FunctionPrototypeCall(SetPrototypeAdd, s, this.readValue());
          n++;
        }
        this._pos++;
        if (this._varint() !== n) throw this._fail();
        return s;
      }
      case T.arrayBuffer: {
        const n = this._varint();
        const at = this._bytes(n);
        const ab = new ArrayBuffer(n);
        new Uint8ArrayCtor(ab).set(P.TypedArrayPrototypeSubarray(this._u8, at, at + n));
        this._keep(ab);
        if (this._peek() === T.view) {
          this._pos++;
          return this._viewOf(ab);
        }
        return ab;
      }
      case T.hostObject: {
        const at = this._objects.length;
        this._objects[at] = undefined;
        const o = this._readHostObject();
        this._objects[at] = o;
        return o;
      }
      case T.error: return this._errorValue();
      default:
        throw this._fail();
    }
  }

  _viewOf(ab) {
    const sub = this._byte();
    const offset = this._varint();
    const length = this._varint();
    if (this._version >= 14) this._varint();
    let Ctor = null;
    for (let i = 0; i < viewTags.length; i++) if (viewTags[i][1] === sub) Ctor = viewTags[i][0];
    if (Ctor === null || offset + length > ab.byteLength) throw this._fail();
    const size = Ctor.BYTES_PER_ELEMENT || 1;
    if (offset % size || length % size) throw this._fail();
    return this._keep(new Ctor(ab, offset, length / size));
  }

  _errorValue() {
    let Ctor = Error;
    let message;
    let stack;
    for (;;) {
      const t = this._byte();
      if (t === E_END) break;
      if (t === E_MESSAGE) { message = this._string(); continue; }
      if (t === E_STACK) { stack = this._string(); continue; }
      if (t === E_CAUSE) { this.readValue(); continue; }
      let found = false;
      for (let i = 0; i < errorProtos.length; i++) {
        if (errorProtos[i][1] === t) { Ctor = errorProtos[i][0]; found = true; }
      }
      if (!found) throw this._fail();
    }
    const e = message === undefined ? new Ctor() : new Ctor(message);
    if (stack !== undefined) Object.defineProperty(e, 'stack', { value: stack, writable: true, configurable: true, enumerable: false });
    return this._keep(e);
  }

  // _props reads key/value pairs until end and returns their count.
  _props(o, end) {
    let n = 0;
    while (this._peek() !== end) {
      if (this._peek() < 0) throw this._fail();
      const key = this.readValue();
      if (typeof key !== 'string' && typeof key !== 'number') throw this._fail();
      const value = this.readValue();
      Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
      n++;
    }
    this._pos++;
    return n;
  }
}

// Node's defaults: Buffers and typed arrays as host objects, their bytes
// only (not the whole, possibly pooled, ArrayBuffer).
class DefaultSerializer extends Serializer {
  constructor() {
    super();
    this._setTreatArrayBufferViewsAsHostObjects(true);
  }

  _writeHostObject(view) {
    const { Buffer } = require('../buffer.js');
    let i = 10;
    if (!(view instanceof Buffer)) {
      i = -1;
      for (let k = 0; k < hostViewTypes.length; k++) {
        if (hostViewTypes[k] !== null && view.constructor === hostViewTypes[k]) { i = k; break; }
      }
      if (i === -1) throw this._cloneError(`Unserializable host object: ${describe(view)}`);
    }
    this.writeUint32(i);
    this.writeUint32(view.byteLength);
    this.writeRawBytes(new Uint8ArrayCtor(view.buffer, view.byteOffset, view.byteLength));
  }
}

class DefaultDeserializer extends Deserializer {
  _readHostObject() {
    const { Buffer } = require('../buffer.js');
    const index = this.readUint32();
    const Ctor = index === 10 ? Buffer : hostViewTypes[index];
    if (!Ctor) throw this._fail();
    const byteLength = this.readUint32();
    const at = this._readRawBytes(byteLength);
    const size = Ctor.BYTES_PER_ELEMENT || 1;
    if (byteLength % size) throw this._fail();
    // As Node: a view of the input's own memory when aligned, else a copy.
    const offset = this.buffer.byteOffset + at;
    if (offset % size === 0) {
      if (Ctor === Buffer) return Buffer.from(this.buffer.buffer, offset, byteLength);
      return new Ctor(this.buffer.buffer, offset, byteLength / size);
    }
    const copy = Buffer.allocUnsafe(byteLength);
    copy.set(P.TypedArrayPrototypeSubarray(this._u8, at, at + byteLength));
    if (Ctor === Buffer) return copy;
    return new Ctor(copy.buffer, copy.byteOffset, byteLength / size);
  }
}

function serialize(value) {
  const s = new DefaultSerializer();
  s.writeHeader();
  s.writeValue(value);
  return s.releaseBuffer();
}

function deserialize(buffer) {
  const d = new DefaultDeserializer(buffer);
  d.readHeader();
  return d.readValue();
}

module.exports = { Serializer, Deserializer, DefaultSerializer, DefaultDeserializer, serialize, deserialize };
