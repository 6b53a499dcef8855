'use strict';
// events: the npm polyfill, with the helpers newer Node versions added.
const EventEmitter = require('events');
if (!EventEmitter.errorMonitor) EventEmitter.errorMonitor = Symbol('events.errorMonitor');
EventEmitter.listenerCount = EventEmitter.listenerCount || ((e, n) => e.listenerCount(n));
EventEmitter.addAbortListener = (signal, fn) => {
  signal.addEventListener('abort', fn, { once: true });
  return { [Symbol.dispose || Symbol.for('dispose')]() { signal.removeEventListener('abort', fn); } };
};
EventEmitter.getEventListeners = (e, n) => (typeof e.listeners === 'function' ? e.listeners(n) : []);
EventEmitter.on = EventEmitter.on || async function* on(emitter, event) {
  const queue = [];
  let wake = null;
  const h = (...args) => { queue.push(args); if (wake) { wake(); wake = null; } };
  emitter.on(event, h);
  try {
    for (;;) {
      if (!queue.length) await new Promise((r) => { wake = r; });
      yield queue.shift();
    }
  } finally {
    emitter.removeListener(event, h);
  }
};

// The core methods follow Node 22 rather than the polyfill (Node ~11):
// typed argument errors, errorMonitor, ERR_UNHANDLED_ERROR, the leak
// warning's text and fields, symbol-named events in removeAllListeners
// and listenerCount(type, listener). They keep the polyfill's fields
// (_events, _eventsCount, _maxListeners; once wrappers carry .listener),
// so emitters built by its constructor (every stream) work unchanged.
const { codedError } = require('./internal/errors.js');
const proto = EventEmitter.prototype;
const kErrorMonitor = EventEmitter.errorMonitor;

function checkListener(listener) {
  if (typeof listener !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'listener', 'of type function', listener);
}
function validateCount(n, name) {
  if (typeof n !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type number', n);
  if (n < 0 || Number.isNaN(n)) throw codedError('ERR_OUT_OF_RANGE', name, '>= 0', n);
}
// defaultMaxListeners stays the polyfill's (a non-configurable accessor).
const maxOf = (target) => (target._maxListeners === undefined ? EventEmitter.defaultMaxListeners : target._maxListeners);

proto.setMaxListeners = function setMaxListeners(n) {
  validateCount(n, 'setMaxListeners');
  this._maxListeners = n;
  return this;
};
proto.getMaxListeners = function getMaxListeners() { return maxOf(this); };

function _addListener(target, type, listener, prepend) {
  checkListener(listener);
  let events = target._events;
  let existing;
  if (events === undefined) {
    events = target._events = Object.create(null);
    target._eventsCount = 0;
  } else {
    if (events.newListener !== undefined) {
      target.emit('newListener', type, listener.listener ?? listener);
      events = target._events;
    }
    existing = events[type];
  }
  if (existing === undefined) {
    events[type] = listener;
    ++target._eventsCount;
    return target;
  }
  if (typeof existing === 'function') {
    existing = events[type] = prepend ? [listener, existing] : [existing, listener];
  } else if (prepend) {
    existing.unshift(listener);
  } else {
    existing.push(listener);
  }
  const m = maxOf(target);
  if (m > 0 && existing.length > m && !existing.warned) {
    existing.warned = true;
    const shown = require('./util.js').inspect(target, { depth: -1 });
    const w = new Error(`Possible EventEmitter memory leak detected. ${existing.length} ${String(type)} listeners ` +
      `added to ${shown}. MaxListeners is ${m}. Use emitter.setMaxListeners() to increase limit`);
    w.name = 'MaxListenersExceededWarning';
    w.emitter = target;
    w.type = type;
    w.count = existing.length;
    require('./process.js').process.emitWarning(w);
  }
  return target;
}
proto.addListener = function addListener(type, listener) { return _addListener(this, type, listener, false); };
proto.on = proto.addListener;
proto.prependListener = function prependListener(type, listener) { return _addListener(this, type, listener, true); };

function onceWrapper(target, type, listener) {
  const state = { fired: false, target, type, listener };
  function wrapped(...args) {
    if (state.fired) return undefined;
    state.target.removeListener(state.type, wrapped);
    state.fired = true;
    return Reflect.apply(state.listener, state.target, args);
  }
  wrapped.listener = listener;
  return wrapped;
}
proto.once = function once(type, listener) {
  checkListener(listener);
  return this.on(type, onceWrapper(this, type, listener));
};
proto.prependOnceListener = function prependOnceListener(type, listener) {
  checkListener(listener);
  return this.prependListener(type, onceWrapper(this, type, listener));
};

proto.removeListener = function removeListener(type, listener) {
  checkListener(listener);
  const events = this._events;
  if (events === undefined) return this;
  const list = events[type];
  if (list === undefined) return this;
  if (list === listener || list.listener === listener) {
    this._eventsCount -= 1;
    if (this._eventsCount === 0) {
      this._events = Object.create(null);
    } else {
      delete events[type];
      if (events.removeListener) this.emit('removeListener', type, list.listener || listener);
    }
  } else if (typeof list !== 'function') {
    let position = -1;
    for (let i = list.length - 1; i >= 0; i--) {
      if (list[i] === listener || list[i].listener === listener) { position = i; break; }
    }
    if (position < 0) return this;
    list.splice(position, 1);
    if (list.length === 1) events[type] = list[0];
    if (events.removeListener !== undefined) this.emit('removeListener', type, listener);
  }
  return this;
};
proto.off = proto.removeListener;

proto.removeAllListeners = function removeAllListeners(type) {
  const events = this._events;
  if (events === undefined) return this;
  if (events.removeListener === undefined) {
    if (arguments.length === 0) {
      this._events = Object.create(null);
      this._eventsCount = 0;
    } else if (events[type] !== undefined) {
      if (--this._eventsCount === 0) this._events = Object.create(null);
      else delete events[type];
    }
    return this;
  }
  if (arguments.length === 0) {
    for (const key of Reflect.ownKeys(events)) {
      if (key !== 'removeListener') this.removeAllListeners(key);
    }
    this.removeAllListeners('removeListener');
    this._events = Object.create(null);
    this._eventsCount = 0;
    return this;
  }
  const listeners = events[type];
  if (typeof listeners === 'function') {
    this.removeListener(type, listeners);
  } else if (listeners !== undefined) {
    for (let i = listeners.length - 1; i >= 0; i--) this.removeListener(type, listeners[i]);
  }
  return this;
};

proto.emit = function emit(type, ...args) {
  let doError = type === 'error';
  const events = this._events;
  if (events !== undefined) {
    if (doError && events[kErrorMonitor] !== undefined) this.emit(kErrorMonitor, ...args);
    doError = doError && events.error === undefined;
  } else if (!doError) {
    return false;
  }
  if (doError) {
    const er = args.length > 0 ? args[0] : undefined;
    if (er instanceof Error) throw er; // Unhandled 'error' event
    let shown;
    try { shown = require('./util.js').inspect(er); } catch { shown = er; }
    const err = codedError('ERR_UNHANDLED_ERROR');
    const message = `Unhandled error. (${shown})`;
    if (typeof err.stack === 'string') err.stack = err.stack.replace(err.message, message);
    err.message = message;
    err.context = er;
    throw err;
  }
  const handler = events[type];
  if (handler === undefined) return false;
  if (typeof handler === 'function') {
    Reflect.apply(handler, this, args);
  } else {
    const listeners = handler.slice();
    for (let i = 0; i < listeners.length; i++) Reflect.apply(listeners[i], this, args);
  }
  return true;
};

proto.listenerCount = function listenerCount(type, listener) {
  const events = this._events;
  if (events === undefined) return 0;
  const list = events[type];
  if (typeof list === 'function') {
    if (listener != null) return listener === list || listener === list.listener ? 1 : 0;
    return 1;
  }
  if (list === undefined) return 0;
  if (listener == null) return list.length;
  let matching = 0;
  for (const l of list) if (l === listener || l.listener === listener) matching++;
  return matching;
};

// An EventTarget's own limit (EventEmitter.setMaxListeners(n, target)).
const targetMax = new WeakMap();
const isEventTarget = (t) => typeof EventTarget === 'function' && t instanceof EventTarget;
EventEmitter.setMaxListeners = function setMaxListeners(n = EventEmitter.defaultMaxListeners, ...targets) {
  validateCount(n, 'setMaxListeners');
  if (targets.length === 0) {
    EventEmitter.defaultMaxListeners = n;
    return;
  }
  for (const t of targets) {
    if (isEventTarget(t)) targetMax.set(t, n);
    else if (t && typeof t.setMaxListeners === 'function') t.setMaxListeners(n);
    else throw codedError('ERR_INVALID_ARG_TYPE', 'eventTargets', ['EventEmitter', 'EventTarget'], t);
  }
};
EventEmitter.getMaxListeners = function getMaxListeners(target) {
  if (target && typeof target.getMaxListeners === 'function') return maxOf(target);
  if (isEventTarget(target)) return targetMax.has(target) ? targetMax.get(target) : EventEmitter.defaultMaxListeners;
  throw codedError('ERR_INVALID_ARG_TYPE', 'emitter', ['EventEmitter', 'EventTarget'], target);
};
EventEmitter.captureRejections = false;
EventEmitter.captureRejectionSymbol = Symbol.for('nodejs.rejection');
// EventEmitterAsyncResource runs its listeners in the async scope of
// the resource it made (async_hooks), so they see the ids and the
// AsyncLocalStorage stores of where the emitter was made. It is built on
// first use: async_hooks stays out of a program that never asks.
let eeAsyncResource;
function makeEventEmitterAsyncResource() {
  const { AsyncResource } = require('./async_hooks.js');
  const { validateString } = require('./internal/validators.js');
  const invalidThis = (t) => codedError('ERR_INVALID_THIS', t);
  class EventEmitterReferencingAsyncResource extends AsyncResource {
    #eventEmitter;
    constructor(ee, type, options) {
      super(type, options);
      this.#eventEmitter = ee;
    }
    get eventEmitter() {
      if (!(#eventEmitter in this)) throw invalidThis('EventEmitterReferencingAsyncResource');
      return this.#eventEmitter;
    }
  }
  class EventEmitterAsyncResource extends EventEmitter {
    #asyncResource;
    constructor(options = undefined) {
      let name;
      if (typeof options === 'string') {
        name = options;
        options = undefined;
      } else {
        if (new.target === EventEmitterAsyncResource) validateString(options?.name, 'options.name');
        name = options?.name || new.target.name;
      }
      super(options);
      this.#asyncResource = new EventEmitterReferencingAsyncResource(this, name, options);
    }
    emit(event, ...args) {
      if (!(#asyncResource in this)) throw invalidThis('EventEmitterAsyncResource');
      const res = this.#asyncResource;
      return Reflect.apply(res.runInAsyncScope, res, [super.emit, this, event, ...args]);
    }
    emitDestroy() {
      if (!(#asyncResource in this)) throw invalidThis('EventEmitterAsyncResource');
      this.#asyncResource.emitDestroy();
    }
    get asyncId() {
      if (!(#asyncResource in this)) throw invalidThis('EventEmitterAsyncResource');
      return this.#asyncResource.asyncId();
    }
    get triggerAsyncId() {
      if (!(#asyncResource in this)) throw invalidThis('EventEmitterAsyncResource');
      return this.#asyncResource.triggerAsyncId();
    }
    get asyncResource() {
      if (!(#asyncResource in this)) throw invalidThis('EventEmitterAsyncResource');
      return this.#asyncResource;
    }
  }
  return EventEmitterAsyncResource;
}
Object.defineProperty(EventEmitter, 'EventEmitterAsyncResource', {
  enumerable: true,
  configurable: true,
  get() {
    if (eeAsyncResource === undefined) eeAsyncResource = makeEventEmitterAsyncResource();
    return eeAsyncResource;
  },
  set(v) { eeAsyncResource = v; },
});
module.exports = EventEmitter;
