'use strict';
// worker_threads: real workers. Each Worker is a fresh isolate with this
// same bootstrap, on a thread of its own, serving the same kernel process
// (internal/js/worker.go). Threads share nothing: a message is the bytes
// of V8's serialization format (internal/v8_serdes.js), queued in Go on
// the receiving port and delivered by the receiver's event loop, one
// macrotask per message. Transferred ArrayBuffers are copied and
// detached at the sender; transferred MessagePorts move to the receiver.
const P = require('./internal/primordials.js');
const { B, takeBytes, giveBytes } = require('./internal/bridge.js');
const loop = require('./internal/loop.js');
const EventEmitter = require('./events.js');
const { codedError } = require('./internal/errors.js');
const serdes = require('./internal/v8_serdes.js');

const SHARE_ENV = Symbol.for('nodejs.worker_threads.SHARE_ENV');
const kToken = Symbol('kToken');
const kId = Symbol('kId');
const kState = Symbol('kState');
const kHandler = Symbol('kHandler');
const kStdio = Symbol('kStdio');

// ports maps the ids of this thread's live ports to their objects.
const ports = new Map();
const uncloneable = new WeakSet();
const untransferable = new WeakSet();
const environmentData = new Map();

function dataCloneError(message) {
  const { DOMException } = require('./internal/web.js');
  return new DOMException(message, 'DataCloneError');
}

// fromBridge turns a refusal from Go ("CODE:detail") into Node's error.
function fromBridge(e) {
  if (typeof e !== 'string') return e;
  const i = e.indexOf(':');
  const code = i < 0 ? e : e.slice(0, i);
  const detail = i < 0 ? '' : e.slice(i + 1);
  let err;
  switch (code) {
    case 'ERR_WORKER_INIT_FAILED':
      err = new Error(`Worker initialization failure: ${detail}`);
      break;
    case 'ERR_WORKER_INVALID_EXEC_ARGV':
      err = new Error(detail);
      break;
    case 'ERR_WORKER_MESSAGE_QUEUE_FULL':
      err = new RangeError(`postMessage: the messages waiting to be received exceed ${detail} bytes`);
      break;
    case 'ERR_WORKER_MESSAGE_TOO_LARGE':
      err = new RangeError(`postMessage: the message exceeds ${detail} bytes`);
      break;
    case 'ERR_PORT_NOT_TRANSFERABLE':
      return dataCloneError('Cannot transfer object of unsupported type.');
    case 'EAGAIN':
      err = new Error('Worker initialization failure: too many message ports');
      return Object.assign(err, { code: 'ERR_WORKER_INIT_FAILED' });
    default:
      return require('./internal/errors.js').fromBridge(e, 'postMessage');
  }
  Object.defineProperty(err, 'code', { value: code, enumerable: true, writable: true, configurable: true });
  if (typeof err.stack === 'string') err.stack = err.stack.replace(err.name, `${err.name} [${code}]`);
  return err;
}

// MessageSerializer writes a message: MessagePorts in the transfer list
// as host objects (their index), transferred ArrayBuffers by value (the
// sender's copy is detached once the message is written).
class MessageSerializer extends serdes.Serializer {
  constructor(transferPorts) {
    super();
    this._ports = transferPorts;
  }

  _cloneError(message) { return dataCloneError(message); }

  _object(v) {
    if (uncloneable.has(v) && !(v instanceof ArrayBuffer) && !ArrayBuffer.isView(v)) throw dataCloneError('Cannot clone object of unsupported type.');
    if (v instanceof MessagePort) {
      const i = this._ports.indexOf(v);
      if (i < 0) throw dataCloneError('Object that needs transfer was found in message but not listed in transferList');
      this._byte(0x5c);
      this.writeUint32(i);
      return;
    }
    super._object(v);
  }
}

class MessageDeserializer extends serdes.Deserializer {
  constructor(buffer, ports) {
    super(buffer);
    this._ports = ports;
  }

  _readHostObject() {
    const i = this.readUint32();
    if (i >= this._ports.length) throw this._fail();
    return this._ports[i];
  }
}

// serialize writes value with its transfer list; it returns the bytes
// and the ports to transfer, and detaches the transferred buffers.
function serialize(value, transferList, source) {
  const transferPorts = [];
  const buffers = [];
  if (transferList !== undefined && transferList !== null) {
    if (typeof transferList !== 'object' || typeof transferList[Symbol.iterator] !== 'function') {
      throw codedError('ERR_INVALID_ARG_TYPE', 'transferList', 'an Array', transferList);
    }
    for (const t of transferList) {
      if (t instanceof MessagePort) {
        if (t === source) throw dataCloneError('Transfer list contains source port');
        if (t[kState].closed || t[kState].detached) throw dataCloneError('MessagePort in transfer list is already detached');
        if (untransferable.has(t)) throw dataCloneError('Cannot transfer object of unsupported type.');
        if (transferPorts.includes(t)) throw dataCloneError('Transfer list contains duplicate MessagePort');
        transferPorts.push(t);
      } else if (t instanceof ArrayBuffer) {
        if (untransferable.has(t) || t.detached) throw dataCloneError('Cannot transfer object of unsupported type.');
        if (buffers.includes(t)) throw dataCloneError('Transfer list contains duplicate ArrayBuffer');
        buffers.push(t);
      } else if (t === null || (typeof t !== 'object' && typeof t !== 'function')) {
        throw dataCloneError('Found invalid value in transferList.');
      } else {
        // Other transferables of Node (FileHandle, streams) are not
        // supported here.
        throw dataCloneError('Cannot transfer object of unsupported type.');
      }
    }
  }
  const s = new MessageSerializer(transferPorts);
  s.writeHeader();
  s.writeValue(value);
  const bytes = P.TypedArrayPrototypeSubarray(s._buf, 0, s._len);
  for (const b of buffers) {
    try { b.transfer(); } catch { /* not detachable: it stays */ }
  }
  return { bytes, ports: transferPorts };
}

function deserialize(u8, ports) {
  const d = new MessageDeserializer(u8, ports);
  d.readHeader();
  return d.readValue();
}

// adoptPorts makes MessagePort objects for the ids of ports that came
// with a message.
function adoptPorts(ids) {
  if (!ids) return [];
  return P.ArrayPrototypeMap(P.StringPrototypeSplit(ids, ','), (s) => new MessagePort(kToken, +s));
}

function iterableError(what) {
  const err = new TypeError(`Optional ${what} argument must be an iterable`);
  Object.defineProperty(err, 'code', { value: 'ERR_INVALID_ARG_TYPE', enumerable: true, writable: true, configurable: true });
  return err;
}

// transferArg reads postMessage's second argument as Node does: a
// transfer list (any iterable) or options with a transfer list.
function transferArg(arg) {
  if (arg === undefined || arg === null) return undefined;
  let what = 'transferList';
  let list = arg;
  if (typeof arg === 'object' && typeof arg[Symbol.iterator] !== 'function') {
    what = 'options.transfer';
    list = arg.transfer;
    if (list === undefined) return undefined;
  }
  if (list === null || typeof list !== 'object' || typeof list[Symbol.iterator] !== 'function') throw iterableError(what);
  try {
    return [...list];
  } catch {
    throw iterableError(what);
  }
}

function postTo(port, value, transferList) {
  const id = port[kId];
  const { bytes, ports: moved } = serialize(value, transferList, port);
  if (port[kState].closed) return;
  const ids = P.ArrayPrototypeJoin(P.ArrayPrototypeMap(moved, (p) => p[kId]), ',');
  try {
    B.portPost(id, giveBytes(bytes), ids);
  } catch (e) {
    throw fromBridge(e);
  }
  for (const p of moved) detach(p);
}

function detach(p) {
  const st = p[kState];
  st.detached = true;
  st.closed = true;
  ports.delete(p[kId]);
}

// MessageEvent of addEventListener listeners and BroadcastChannel: the
// global class (undici's, loaded at first use, as Node's is).
let MessageEventClass = null;
function messageEvent(data, target, eventPorts) {
  if (MessageEventClass === null) MessageEventClass = require('./internal/lazy.js').lazy('undici').MessageEvent;
  const e = new MessageEventClass('message', { data, ports: eventPorts || [] });
  P.ObjectDefineProperty(e, 'target', { value: target, configurable: true });
  P.ObjectDefineProperty(e, 'currentTarget', { value: target, configurable: true });
  return e;
}

const eventListeners = Symbol('eventListeners');
// eventPorts are the ports that came with the message being emitted
// (MessageEvent.ports).
let eventPorts = [];

// A NodeEventTarget-like surface over EventEmitter: addEventListener
// listeners get a MessageEvent, on('message') listeners the data.
function addEventListener(type, listener, options) {
  if (typeof listener !== 'function' && !(listener && typeof listener.handleEvent === 'function')) return;
  const once = !!(options && (options === true ? false : options.once));
  const map = this[eventListeners] || (this[eventListeners] = new Map());
  const key = `${type}`;
  const list = map.get(key) || [];
  if (list.some((l) => l.listener === listener)) return;
  const self = this;
  const wrapper = function (...args) {
    if (once) self.removeEventListener(type, listener);
    const ev = type === 'message' || type === 'messageerror' ? messageEvent(args[0], self, eventPorts) : { type, detail: args[0], target: self };
    if (typeof listener === 'function') P.ReflectApply(listener, self, [ev]);
    else listener.handleEvent(ev);
  };
  list.push({ listener, wrapper });
  map.set(key, list);
  this.on(type, wrapper);
}

function removeEventListener(type, listener) {
  const map = this[eventListeners];
  const list = map && map.get(`${type}`);
  if (!list) return;
  const i = list.findIndex((l) => l.listener === listener);
  if (i < 0) return;
  const [l] = list.splice(i, 1);
  this.removeListener(type, l.wrapper);
}

function dispatchEvent(ev) {
  this.emit(ev.type, ev);
  return true;
}

// NodeEventTarget's place in Node's MessagePort prototype chain.
class NodeEventTarget extends EventEmitter {}
NodeEventTarget.prototype.addEventListener = addEventListener;
NodeEventTarget.prototype.removeEventListener = removeEventListener;
NodeEventTarget.prototype.dispatchEvent = dispatchEvent;

class MessagePort extends NodeEventTarget {
  constructor(token, id) {
    if (token !== kToken) throw new TypeError('Illegal constructor');
    super();
    this[kId] = id;
    this[kState] = { started: false, closed: false, detached: false, refed: true, onmessage: null };
    ports.set(id, this);
    this.on('newListener', (name) => {
      if (name === 'message' || name === 'messageerror') {
        // As Node: a 'message' listener starts the port and refs it.
        queueStart(this);
      }
    });
    this.on('removeListener', (name) => {
      if ((name === 'message' || name === 'messageerror') && this.listenerCount('message') === 0 && this.listenerCount('messageerror') === 0) {
        // As Node: without listeners the port stops; messages wait.
        updateRef(this, false);
        const st = this[kState];
        if (st.started && !st.closed) {
          st.started = false;
          B.portStop(this[kId]);
        }
      }
    });
  }

  postMessage(value, transferList) {
    if (arguments.length === 0) throw codedError('ERR_MISSING_ARGS', 'message');
    postTo(this, value, transferArg(transferList));
  }

  start() {
    const st = this[kState];
    if (st.closed || st.started) return;
    st.started = true;
    B.portStart(this[kId]);
  }

  close(callback) {
    const st = this[kState];
    if (typeof callback === 'function') this.once('close', callback);
    if (st.closed) return;
    const peer = B.portClose(this[kId]);
    const other = peer > 0 ? ports.get(peer) : undefined;
    if (other !== undefined && !other[kState].closed) {
      // This thread holds the other end: both 'close' events come when
      // it receives the close, after the messages it still has.
      st.closed = true;
      ports.delete(this[kId]);
      other[kState].closesToo = this;
      return;
    }
    closed(this);
  }

  ref() {
    this[kState].refed = true;
    updateRef(this);
    return this;
  }

  unref() {
    this[kState].refed = false;
    updateRef(this);
    return this;
  }

  hasRef() {
    const st = this[kState];
    return !st.closed && st.refed && this.listenerCount('message') > 0;
  }

  get onmessage() { return this[kState].onmessage; }

  set onmessage(fn) {
    const st = this[kState];
    if (st.onmessageWrapper) this.removeListener('message', st.onmessageWrapper);
    st.onmessage = typeof fn === 'function' ? fn : null;
    st.onmessageWrapper = null;
    if (st.onmessage) {
      st.onmessageWrapper = (data) => P.ReflectApply(st.onmessage, this, [messageEvent(data, this, eventPorts)]);
      this.on('message', st.onmessageWrapper);
    }
  }

  get onmessageerror() { return this[kState].onmessageerror || null; }

  set onmessageerror(fn) {
    const st = this[kState];
    if (st.onmessageerrorWrapper) this.removeListener('messageerror', st.onmessageerrorWrapper);
    st.onmessageerror = typeof fn === 'function' ? fn : null;
    st.onmessageerrorWrapper = null;
    if (st.onmessageerror) {
      st.onmessageerrorWrapper = (err) => P.ReflectApply(st.onmessageerror, this, [messageEvent(err, this, [])]);
      this.on('messageerror', st.onmessageerrorWrapper);
    }
  }
}
P.ObjectDefineProperty(MessagePort.prototype, Symbol.toStringTag, { value: 'MessagePort', configurable: true });

function queueStart(port) {
  const st = port[kState];
  if (st.closed) return;
  // The listener is added after this runs: start and ref on a tick.
  if (!st.started) {
    st.started = true;
    B.portStart(port[kId]);
  }
  updateRef(port, true);
}

function updateRef(port, listening) {
  const st = port[kState];
  if (st.closed) return;
  const on = listening === undefined ? port.listenerCount('message') > 0 : listening;
  B.portRef(port[kId], st.refed && on);
}

// closed marks a port closed and emits 'close' after the messages
// already waiting, as Node's handle close callback runs.
function closed(port) {
  const st = port[kState];
  if (st.closed) return;
  st.closed = true;
  ports.delete(port[kId]);
  const first = st.closesToo;
  require('./timers.js').setImmediate(() => {
    if (first) first.emit('close');
    port.emit('close');
  });
}

// The MessagePort that guests see: not constructible, with the class's
// prototype (so instanceof and .constructor hold).
function constructError(code, message) {
  const err = new TypeError(message);
  Object.defineProperty(err, 'code', { value: code, enumerable: true, writable: true, configurable: true });
  return err;
}
const PublicMessagePort = function MessagePort() {
  throw constructError('ERR_CONSTRUCT_CALL_INVALID', 'Constructor cannot be called');
};
PublicMessagePort.prototype = MessagePort.prototype;
P.ObjectDefineProperty(MessagePort.prototype, 'constructor', { value: PublicMessagePort, writable: true, configurable: true });
P.ObjectDefineProperty(PublicMessagePort, Symbol.hasInstance, { value: (v) => v instanceof MessagePort });

function MessageChannel() {
  if (!new.target) throw constructError('ERR_CONSTRUCT_CALL_REQUIRED', "Class constructor MessageChannel cannot be invoked without 'new'");
  return new MessageChannelImpl();
}

class MessageChannelImpl {
  constructor() {
    let id;
    try { id = B.portNew(); } catch (e) { throw fromBridge(e); }
    this.port1 = new MessagePort(kToken, id);
    this.port2 = new MessagePort(kToken, id + 1);
  }
}
MessageChannel.prototype = MessageChannelImpl.prototype;
P.ObjectDefineProperty(MessageChannelImpl.prototype, 'constructor', { value: MessageChannel, writable: true, configurable: true });

// The loop's "port" event: a message (kind 0), the other end's close
// (1), a worker's exit code (2), a message too large to receive (3), or
// what a worker wrote to its stdout or stderr (4, control ports).
loop.onEvent('port', (id, kind, n, ids) => {
  const port = ports.get(id);
  if (kind === 0) {
    const u8 = takeBytes(n);
    if (port === undefined) return;
    const moved = adoptPorts(ids);
    if (port[kHandler]) { port[kHandler](u8, moved); return; }
    let value;
    try {
      value = deserialize(u8, moved);
    } catch (e) {
      port.emit('messageerror', e);
      return;
    }
    eventPorts = moved;
    try {
      port.emit('message', value);
    } finally {
      eventPorts = [];
    }
    return;
  }
  if (port === undefined) return;
  if (kind === 1) { closed(port); return; }
  if (kind === 2) { if (port[kHandler]) port[kHandler](null, ids, n); return; }
  if (kind === 4) {
    const u8 = takeBytes(n);
    if (port[kStdio]) port[kStdio](+ids, u8);
    return;
  }
  port.emit('messageerror', new RangeError('the message is larger than this thread may receive'));
});

function receiveMessageOnPort(port) {
  if (!(port instanceof MessagePort)) {
    const err = new TypeError('The "port" argument must be a MessagePort instance');
    Object.defineProperty(err, 'code', { value: 'ERR_INVALID_ARG_TYPE', enumerable: true, writable: true, configurable: true });
    throw err;
  }
  if (port[kState].closed) return undefined;
  const r = B.portRecv(port[kId]);
  if (r === '') return undefined;
  const i = r.indexOf(';');
  const u8 = takeBytes(+r.slice(0, i));
  const moved = adoptPorts(r.slice(i + 1));
  return { message: deserialize(u8, moved) };
}

class BroadcastChannel extends EventEmitter {
  constructor(name) {
    if (arguments.length === 0) throw codedError('ERR_MISSING_ARGS', 'name');
    super();
    this.name = `${name}`;
    const id = B.bcNew(this.name);
    const port = new MessagePort(kToken, id);
    port[kState].started = true;
    this[kId] = port;
    this._onmessage = null;
    port[kHandler] = (u8) => {
      let value;
      try { value = deserialize(u8, []); } catch (e) { this.emit('messageerror', messageEvent(e, this)); return; }
      this.emit('message', messageEvent(value, this));
    };
    this.on('newListener', (ev) => { if (ev === 'message') B.portRef(id, port[kState].refed); });
    this.on('removeListener', (ev) => { if (ev === 'message' && this.listenerCount('message') === 0) B.portRef(id, false); });
  }

  postMessage(message) {
    if (arguments.length === 0) throw codedError('ERR_MISSING_ARGS', 'message');
    const port = this[kId];
    if (port[kState].closed) throw new (require('./internal/web.js').DOMException)('BroadcastChannel is closed.', 'InvalidStateError');
    postTo(port, message, undefined);
  }

  close() {
    const port = this[kId];
    if (port[kState].closed) return;
    B.portClose(port[kId]);
    port[kState].closed = true;
    ports.delete(port[kId]);
  }

  ref() { const port = this[kId]; port[kState].refed = true; if (!port[kState].closed) B.portRef(port[kId], this.listenerCount('message') > 0); return this; }

  unref() { const port = this[kId]; port[kState].refed = false; if (!port[kState].closed) B.portRef(port[kId], false); return this; }

  get onmessage() { return this._onmessage; }

  set onmessage(fn) {
    if (this._onmessage) this.removeListener('message', this._onmessageWrapper);
    this._onmessage = typeof fn === 'function' ? fn : null;
    if (this._onmessage) {
      this._onmessageWrapper = (ev) => P.ReflectApply(this._onmessage, this, [ev]);
      this.on('message', this._onmessageWrapper);
    }
  }

  addEventListener(type, listener) {
    if (typeof listener === 'function') this.on(type, listener);
    else if (listener && typeof listener.handleEvent === 'function') this.on(type, (ev) => listener.handleEvent(ev));
  }

  removeEventListener(type, listener) { this.removeListener(type, listener); }

  get [Symbol.toStringTag]() { return 'BroadcastChannel'; }
}

// --- workers ---

let threadId = 0;
let isMainThread = true;
let parentPort = null;
let workerData = null;
let resourceLimits = {};

const kPort = Symbol('kPort');
const kControl = Symbol('kControl');
const kExited = Symbol('kExited');

function validateString(v, name) {
  if (typeof v !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type string', v);
}

function workerPath(filename) {
  const path = require('./path.js');
  const { URL, fileURLToPath } = require('./url.js');
  if (filename instanceof URL || (filename && typeof filename === 'object' && typeof filename.href === 'string' && typeof filename.protocol === 'string')) {
    if (filename.protocol === 'data:') return { mode: 'data', url: `${filename.href}` };
    if (filename.protocol !== 'file:') throw codedError('ERR_INVALID_URL_SCHEME', ['file', 'data']);
    return { mode: 'file', file: fileURLToPath(filename) };
  }
  if (typeof filename !== 'string') {
    throw codedError('ERR_INVALID_ARG_TYPE', 'filename', ['string', 'URL'], filename);
  }
  if (!path.isAbsolute(filename) && !/^\.\.?[\\/]/.test(filename)) {
    let hint = '';
    if (/^file:\/\//i.test(filename)) hint = ' Wrap file:// URLs with `new URL`.';
    else if (/^data:/i.test(filename)) hint = ' Wrap data: URLs with `new URL`.';
    const err = new TypeError(`The worker script or module filename must be an absolute path or a relative path starting with './' or '../'.${hint} Received "${filename}"`);
    Object.defineProperty(err, 'code', { value: 'ERR_WORKER_PATH', enumerable: true, writable: true, configurable: true });
    if (typeof err.stack === 'string') err.stack = err.stack.replace('TypeError', 'TypeError [ERR_WORKER_PATH]');
    throw err;
  }
  return { mode: 'file', file: path.resolve(filename) };
}

// serializeError turns a worker's uncaught exception into something the
// parent rebuilds as an Error of the same class, with its own fields.
function serializeError(e) {
  if (e === null || typeof e !== 'object' || !(e instanceof Error || typeof e.stack === 'string')) {
    try { serialize(e); return { value: e }; } catch { return { value: String(e) }; }
  }
  const out = { error: true, name: undefined, message: undefined, stack: undefined, props: {} };
  try { out.name = e.name; } catch { /* a getter threw */ }
  try { out.message = e.message; } catch { /* a getter threw */ }
  try { out.stack = e.stack; } catch { /* a getter threw */ }
  try {
    for (const k of Object.keys(e)) {
      try {
        const v = e[k];
        serialize(v);
        out.props[k] = v;
      } catch { /* not cloneable: left out */ }
    }
  } catch { /* a proxy */ }
  return out;
}

function deserializeError(rec) {
  if (!rec || !rec.error) return rec ? rec.value : undefined;
  const Ctors = { Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };
  const Ctor = Ctors[rec.name] || Error;
  const e = new Ctor(rec.message);
  if (!Ctors[rec.name] && rec.name !== undefined) P.ObjectDefineProperty(e, 'name', { value: rec.name, writable: true, configurable: true });
  P.ObjectDefineProperty(e, 'stack', { value: rec.stack, writable: true, configurable: true });
  for (const k of Object.keys(rec.props)) e[k] = rec.props[k];
  return e;
}

class Worker extends EventEmitter {
  constructor(filename, options = {}) {
    super();
    if (options === null || typeof options !== 'object') {
      throw codedError('ERR_INVALID_ARG_TYPE', 'options', 'of type object', options);
    }
    const { process } = require('./process.js');
    let where;
    if (options.eval) {
      if (typeof filename !== 'string') {
        throw codedError('ERR_INVALID_ARG_VALUE', 'options.eval', options.eval, 'must be false when \'filename\' is not a string');
      }
      where = { mode: 'eval', code: filename };
    } else {
      where = workerPath(filename);
    }
    if (where.mode === 'data') {
      // A data: URL is an ES module given inline.
      const u = where.url;
      const comma = u.indexOf(',');
      const meta = u.slice(5, comma);
      let body = u.slice(comma + 1);
      body = /;base64$/.test(meta) ? require('./buffer.js').Buffer.from(body, 'base64').toString() : decodeURIComponent(body);
      where = { mode: 'eval', code: body, module: true };
    }
    let argv = [];
    if (options.argv !== undefined) {
      if (!P.ArrayIsArray(options.argv)) throw codedError('ERR_INVALID_ARG_TYPE', 'options.argv', 'an instance of Array', options.argv);
      argv = P.ArrayPrototypeMap(options.argv, String);
    }
    let execArgv = process.execArgv;
    if (options.execArgv !== undefined) {
      if (!P.ArrayIsArray(options.execArgv)) throw codedError('ERR_INVALID_ARG_TYPE', 'options.execArgv', 'an instance of Array', options.execArgv);
      // A '--' ends the options, as on a command line: it is not one of
      // the worker's execArgv.
      execArgv = P.ArrayPrototypeFilter(P.ArrayPrototypeMap(options.execArgv, String), (a) => a !== '--');
    }
    let env;
    if (options.env === undefined || options.env === null || options.env === SHARE_ENV) {
      env = {};
      for (const k of Object.keys(process.env)) env[k] = `${process.env[k]}`;
    } else if (typeof options.env === 'object') {
      env = {};
      for (const k of Object.keys(options.env)) env[k] = `${options.env[k]}`;
    } else {
      throw codedError('ERR_INVALID_ARG_TYPE', 'options.env', 'of type object or one of undefined, null, or worker_threads.SHARE_ENV', options.env);
    }
    let name = '';
    if (options.name !== undefined) {
      validateString(options.name, 'options.name');
      name = options.name;
    }
    const limits = {};
    const rl = options.resourceLimits;
    if (rl !== undefined && rl !== null) {
      for (const k of ['maxYoungGenerationSizeMb', 'maxOldGenerationSizeMb', 'codeRangeSizeMb', 'stackSizeMb']) {
        if (typeof rl[k] === 'number' && rl[k] > 0) limits[k] = rl[k];
      }
    }
    const init = serialize({
      workerData: options.workerData,
      environmentData,
      stdout: !!options.stdout,
      stderr: !!options.stderr,
      stdin: !!options.stdin,
      module: !!where.module,
      limits,
    }, options.transferList);
    const spec = {
      mode: where.mode, file: where.file || '', code: where.code || '', argv, execArgv, env, name,
      heapMb: limits.maxOldGenerationSizeMb || 0,
      ports: P.ArrayPrototypeMap(init.ports, (p) => p[kId]),
    };
    let res;
    try {
      res = B.workerStart(P.JSONStringify(spec), giveBytes(init.bytes));
    } catch (e) {
      const err = fromBridge(e);
      throw err;
    }
    for (const p of init.ports) detach(p);
    const [tid, pub, ctl] = P.ArrayPrototypeMap(P.StringPrototypeSplit(res, ','), Number);
    this.threadId = tid;
    this[kExited] = false;
    this._limits = limits;
    this._terminating = [];
    const port = new MessagePort(kToken, pub);
    this[kPort] = port;
    port.on('message', (v) => this.emit('message', v));
    port.on('messageerror', (e) => this.emit('messageerror', e));
    port.unref();
    const control = new MessagePort(kToken, ctl);
    this[kControl] = control;
    control[kHandler] = (u8, moved, code) => {
      if (u8 === null) {
        if (moved === 'oom') {
          const err = new Error('Worker terminated due to reaching memory limit: JS heap out of memory');
          Object.defineProperty(err, 'code', { value: 'ERR_WORKER_OUT_OF_MEMORY', enumerable: true, writable: true, configurable: true });
          if (typeof err.stack === 'string') err.stack = err.stack.replace('Error', 'Error [ERR_WORKER_OUT_OF_MEMORY]');
          this.emit('error', err);
        }
        this._onExit(code);
        return;
      }
      let msg;
      try { msg = deserialize(u8, moved); } catch { return; }
      if (!msg || typeof msg !== 'object') return;
      switch (msg.type) {
        case 'online': this.emit('online'); break;
        case 'error': this.emit('error', deserializeError(msg.error)); break;
        default:
      }
    };
    control.start();
    const { Readable, Writable } = require('./stream.js');
    // What the worker writes to its stdout and stderr arrives here; unless
    // asked for (stdout: true, stderr: true) it goes on to this thread's.
    const mk = (fd) => {
      const r = new Readable({ read() {} });
      if (!options[fd === 1 ? 'stdout' : 'stderr']) {
        // A data listener rather than pipe(): many workers would each add
        // listeners to process.stdout.
        r.on('data', (chunk) => (fd === 1 ? process.stdout : process.stderr).write(chunk));
      }
      return r;
    };
    this.stdout = mk(1);
    this.stderr = mk(2);
    control[kStdio] = (fd, u8) => {
      const { Buffer } = require('./buffer.js');
      (fd === 2 ? this.stderr : this.stdout).push(Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength));
    };
    // stdin: true gives the worker a stdin fed by this stream, over the
    // control port.
    this.stdin = options.stdin ? new Writable({
      write: (chunk, enc, cb) => {
        try {
          const { Buffer } = require('./buffer.js');
          const bytes = typeof chunk === 'string' ? Buffer.from(chunk, enc) : chunk;
          if (!this[kExited]) postTo(control, { type: 'stdin', chunk: bytes });
          cb();
        } catch (e) { cb(e); }
      },
      final: (cb) => {
        try { if (!this[kExited]) postTo(control, { type: 'stdin-end' }); } catch { /* the worker is gone */ }
        cb();
      },
    }) : null;
    this.performance = { eventLoopUtilization: () => ({ idle: 0, active: 0, utilization: 0 }) };
    process.emit('worker', this);
  }

  _onExit(code) {
    if (this[kExited]) return;
    // Messages the worker posted before it ended come first.
    const port = this[kPort];
    for (;;) {
      let m;
      try { m = receiveMessageOnPort(port); } catch { break; }
      if (m === undefined) break;
      this.emit('message', m.message);
    }
    this[kExited] = true;
    port.close();
    this[kControl].close();
    if (this.stdout.readable && !this.stdout.readableEnded) this.stdout.push(null);
    if (this.stderr.readable && !this.stderr.readableEnded) this.stderr.push(null);
    this.threadId = -1;
    this.emit('exit', code);
    const waiting = this._terminating;
    this._terminating = [];
    for (const fn of waiting) fn(code);
  }

  postMessage(...args) {
    if (this[kExited]) return;
    this[kPort].postMessage(...args);
  }

  terminate(callback) {
    if (typeof callback === 'function') {
      require('./process.js').process.emitWarning('Passing a callback to worker.terminate() is deprecated. It returns a Promise instead.', 'DeprecationWarning', 'DEP0132');
      this.once('exit', (code) => callback(null, code));
    }
    if (this[kExited]) return P.PromiseResolve();
    return new Promise((resolve) => {
      this._terminating.push(resolve);
      // The exit is awaited even by an unref'd worker.
      this.ref();
      B.workerTerminate(this.threadId);
    });
  }

  // The control port holds the parent's loop open while the worker
  // runs, unless unref'd.
  ref() { if (!this[kExited]) B.portRef(this[kControl][kId], true); }

  unref() { if (!this[kExited]) B.portRef(this[kControl][kId], false); }

  get resourceLimits() {
    if (this[kExited]) return {};
    return workerLimits(this._limits);
  }

  getHeapSnapshot() {
    return Promise.reject(Object.assign(new Error('Heap snapshots of workers are not supported here'), { code: 'ERR_WORKER_NOT_RUNNING' }));
  }
}

function workerLimits(l) {
  return {
    maxYoungGenerationSizeMb: l.maxYoungGenerationSizeMb || 0,
    maxOldGenerationSizeMb: l.maxOldGenerationSizeMb || 0,
    codeRangeSizeMb: l.codeRangeSizeMb || 0,
    stackSizeMb: l.stackSizeMb || 4,
  };
}

// setupWorker runs in a worker before its main script: the module's
// view of the thread, the init message, 'online', and uncaught errors
// sent to the parent instead of printed.
function setupWorker(info) {
  const { process, setWorkerFatal } = require('./process.js');
  isMainThread = false;
  threadId = info.threadId;
  const initBytes = takeBytes(B.workerInit());
  const init = deserialize(initBytes, adoptPorts(info.ports));
  workerData = init.workerData;
  resourceLimits = workerLimits(init.limits || {});
  if (init.environmentData instanceof Map) {
    for (const [k, v] of init.environmentData) environmentData.set(k, v);
  }
  parentPort = new MessagePort(kToken, info.port);
  const control = new MessagePort(kToken, info.control);
  control.start();
  control.unref();
  const send = (msg) => { try { postTo(control, msg); } catch { /* the parent is gone */ } };
  setWorkerFatal((err) => send({ type: 'error', error: serializeError(err) }));
  {
    const { Readable } = require('./stream.js');
    let ended = !init.stdin;
    // Reading stdin keeps the worker alive until the parent ends it.
    const stdin = new Readable({ read() { if (!ended) B.portRef(info.control, true); } });
    if (ended) stdin.push(null);
    control[kHandler] = (u8, moved) => {
      let msg;
      try { msg = deserialize(u8, moved); } catch { return; }
      if (!msg || ended) return;
      if (msg.type === 'stdin') {
        const { Buffer } = require('./buffer.js');
        if (!stdin.push(Buffer.from(msg.chunk.buffer, msg.chunk.byteOffset, msg.chunk.byteLength))) B.portRef(info.control, false);
      } else if (msg.type === 'stdin-end') {
        ended = true;
        B.portRef(info.control, false);
        stdin.push(null);
      }
    };
    P.ObjectDefineProperty(process, 'stdin', { configurable: true, enumerable: true, value: stdin });
  }
  // Process-wide operations Node refuses in workers.
  const unsupported = (what) => {
    const err = new TypeError(`${what} is not supported in workers`);
    Object.defineProperty(err, 'code', { value: 'ERR_WORKER_UNSUPPORTED_OPERATION', enumerable: true, writable: true, configurable: true });
    return err;
  };
  for (const name of ['abort', 'chdir', 'send', 'disconnect', 'setuid', 'seteuid', 'setgid', 'setegid', 'setgroups', 'initgroups']) {
    const stub = function unsupportedOperation() { throw unsupported(`process.${name}()`); };
    stub.disabled = true;
    process[name] = stub;
  }
  for (const name of ['channel', 'connected']) {
    P.ObjectDefineProperty(process, name, { configurable: true, enumerable: false, get() { throw unsupported(`process.${name}`); } });
  }
  const umask = process.umask;
  process.umask = function umaskInWorker(mask) {
    if (mask !== undefined) throw unsupported('Setting process.umask()');
    return umask();
  };
  for (const name of ['title', 'debugPort']) {
    const v = process[name];
    P.ObjectDefineProperty(process, name, { configurable: true, enumerable: true, get: () => v, set() {} });
  }
  for (const name of ['_startProfilerIdleNotifier', '_stopProfilerIdleNotifier', '_debugProcess', '_debugPause', '_debugEnd']) delete process[name];
  const exp = module.exports;
  exp.isMainThread = false;
  exp.threadId = threadId;
  exp.parentPort = parentPort;
  exp.workerData = workerData;
  exp.resourceLimits = resourceLimits;
  send({ type: 'online' });
  return init;
}

module.exports = {
  isMainThread,
  parentPort,
  workerData,
  threadId,
  resourceLimits,
  SHARE_ENV,
  Worker,
  MessagePort: PublicMessagePort,
  MessageChannel,
  BroadcastChannel,
  markAsUncloneable(obj) {
    if ((typeof obj === 'object' && obj !== null) || typeof obj === 'function') uncloneable.add(obj);
  },
  markAsUntransferable(obj) {
    if ((typeof obj === 'object' && obj !== null) || typeof obj === 'function') untransferable.add(obj);
  },
  isMarkedAsUntransferable: (obj) => (typeof obj === 'object' && obj !== null) && untransferable.has(obj),
  moveMessagePortToContext(port) {
    if (!(port instanceof MessagePort)) throw codedError('ERR_INVALID_ARG_TYPE', 'port', 'an instance of MessagePort', port);
    if (port[kState].closed) {
      const err = new Error('Cannot send data on closed MessagePort');
      Object.defineProperty(err, 'code', { value: 'ERR_CLOSED_MESSAGE_PORT', enumerable: true, writable: true, configurable: true });
      throw err;
    }
    return port;
  },
  receiveMessageOnPort,
  getEnvironmentData: (key) => environmentData.get(key),
  setEnvironmentData: (key, value) => { if (value === undefined) environmentData.delete(key); else environmentData.set(key, value); },
  _setupWorker: setupWorker,
  _isUncloneable: (v) => uncloneable.has(v),
};
