'use strict';
// async_hooks: async ids and hooks for the resources this runtime
// schedules (Timeout, Immediate, TickObject, AsyncResource), and
// AsyncLocalStorage on context frames that V8 carries through promise
// reactions (internal/async_context.js). Promises get no async ids and
// no init/before/after hooks: V8's promise hooks are not exposed here.
const AC = require('./internal/async_context.js');
const P = require('./internal/primordials.js');
const { codedError } = require('./internal/errors.js');
const { validateFunction, validateString } = require('./internal/validators.js');

const hookNames = ['init', 'before', 'after', 'destroy', 'promiseResolve'];

class AsyncHook {
  #fns;
  constructor(callbacks = {}) {
    const fns = P.ObjectCreate(null);
    for (const name of hookNames) {
      const fn = callbacks[name];
      if (fn !== undefined && typeof fn !== 'function') throw codedError('ERR_ASYNC_CALLBACK', `hook.${name}`);
      // As Node's, a hook runs with its AsyncHook as this (test/common's
      // onGC keeps its state there).
      fns[name] = fn === undefined ? undefined : hookCall(fn, this);
    }
    this.#fns = fns;
  }

  enable() {
    const lists = AC.hooks();
    const next = { __proto__: null };
    for (const name of hookNames) {
      const fn = this.#fns[name];
      next[name] = lists[name];
      if (fn !== undefined && P.ArrayPrototypeIndexOf(lists[name], fn) < 0) {
        next[name] = P.ArrayPrototypeSlice(lists[name]);
        P.ArrayPrototypePush(next[name], fn);
      }
    }
    AC.setHooks(next);
    return this;
  }

  disable() {
    const lists = AC.hooks();
    const next = { __proto__: null };
    for (const name of hookNames) {
      const fn = this.#fns[name];
      next[name] = lists[name];
      const i = fn === undefined ? -1 : P.ArrayPrototypeIndexOf(lists[name], fn);
      if (i >= 0) {
        next[name] = P.ArrayPrototypeSlice(lists[name]);
        P.ArrayPrototypeSplice(next[name], i, 1);
      }
    }
    AC.setHooks(next);
    return this;
  }
}

function hookCall(fn, hook) {
  return function(a, b, c, d) { return P.ReflectApply(fn, hook, [a, b, c, d]); };
}

function createHook(callbacks) { return new AsyncHook(callbacks); }

// An AsyncResource not destroyed by hand is destroyed when it is
// collected, as Node's registerDestroyHook does, if destroy hooks were
// enabled when it was made; emitDestroy() first makes that a no-op.
const kGcCell = Symbol('gcDestroyCell');
const gcDestroy = new FinalizationRegistry((cell) => {
  if (cell.destroyed) return;
  cell.destroyed = true;
  AC.destroyId(cell.id);
});

function executionAsyncId() { return AC.scope.id; }
function triggerAsyncId() { return AC.scope.trigger; }
function executionAsyncResource() { return AC.scope.resource; }

class AsyncResource {
  constructor(type, opts = {}) {
    validateString(type, 'type');
    let trigger = opts;
    let manualDestroy = false;
    if (typeof opts !== 'number') {
      trigger = opts.triggerAsyncId === undefined ? AC.scope.id : opts.triggerAsyncId;
      manualDestroy = !!opts.requireManualDestroy;
    }
    if (!Number.isSafeInteger(trigger) || trigger < -1) throw codedError('ERR_INVALID_ASYNC_ID', 'triggerAsyncId', trigger);
    if (AC.hooks().init.length > 0 && type.length === 0) throw codedError('ERR_ASYNC_TYPE', type);
    AC.state.used = true;
    AC.init(this, type, trigger);
    if (!manualDestroy && AC.hooks().destroy.length > 0) {
      const cell = { __proto__: null, id: this[AC.kAsyncId], destroyed: false };
      this[kGcCell] = cell;
      gcDestroy.register(this, cell);
    }
  }

  runInAsyncScope(fn, thisArg, ...args) {
    const token = AC.save();
    try {
      AC.enter(this, token);
      return P.ReflectApply(fn, thisArg, args);
    } finally {
      AC.leave(token);
    }
  }

  emitDestroy() {
    const cell = this[kGcCell];
    if (cell !== undefined) {
      if (cell.destroyed) return this;
      cell.destroyed = true;
    }
    AC.destroy(this);
    return this;
  }

  asyncId() { return this[AC.kAsyncId]; }
  triggerAsyncId() { return this[AC.kTriggerId]; }

  bind(fn, thisArg) {
    validateFunction(fn, 'fn');
    const run = this.runInAsyncScope;
    let bound;
    if (thisArg === undefined) {
      const resource = this;
      bound = function(...args) {
        return P.ReflectApply(run, resource, [fn, this, ...args]);
      };
    } else {
      const resource = this;
      bound = (...args) => P.ReflectApply(run, resource, [fn, thisArg, ...args]);
    }
    let self = this;
    P.ObjectDefineProperty(bound, 'length', { configurable: true, enumerable: false, value: fn.length, writable: false });
    P.ObjectDefineProperty(bound, 'asyncResource', {
      configurable: true, enumerable: true, get() { return self; }, set(v) { self = v; },
    });
    return bound;
  }

  static bind(fn, type, thisArg) {
    type = type || fn?.name;
    return (new AsyncResource(type || 'bound-anonymous-fn')).bind(fn, thisArg);
  }
}

// AsyncLocalStorage keeps its store in the context frame: a store set by
// run() or enterWith() is seen by everything that frame reaches (await,
// then(), timers, immediates, ticks, AsyncResource).
class AsyncLocalStorage {
  #enabled = false;

  constructor() { AC.state.used = true; }

  static bind(fn) { return AsyncResource.bind(fn); }

  static snapshot() {
    return AsyncResource.bind(function runInAsyncScope(cb, ...args) {
      return P.ReflectApply(cb, this, args);
    });
  }

  disable() { this.#enabled = false; }

  getStore() {
    if (!this.#enabled) return undefined;
    return AC.lookup(AC.frame(), this);
  }

  enterWith(store) {
    this.#enabled = true;
    AC.setFrame(AC.withStore(AC.frame(), this, store));
  }

  run(store, fn, ...args) {
    this.#enabled = true;
    const prev = AC.frame();
    AC.setFrame(AC.withStore(prev, this, store));
    try {
      return P.ReflectApply(fn, null, args);
    } finally {
      AC.setFrame(prev);
    }
  }

  exit(fn, ...args) {
    if (!this.#enabled) return P.ReflectApply(fn, null, args);
    const prev = AC.frame();
    AC.setFrame(AC.withStore(prev, this, undefined));
    try {
      return P.ReflectApply(fn, null, args);
    } finally {
      AC.setFrame(prev);
    }
  }
}

// The providers Node's native layer names; this runtime makes the
// JavaScript ones (Timeout, Immediate, TickObject) and AsyncResource.
const asyncWrapProviders = P.ObjectFreeze({
  __proto__: null,
  NONE: 0, DIRHANDLE: 1, DNSCHANNEL: 2, ELDHISTOGRAM: 3, FILEHANDLE: 4, FILEHANDLECLOSEREQ: 5,
  BLOBREADER: 6, FSEVENTWRAP: 7, FSREQCALLBACK: 8, FSREQPROMISE: 9, GETADDRINFOREQWRAP: 10,
  GETNAMEINFOREQWRAP: 11, HEAPSNAPSHOT: 12, HTTP2SESSION: 13, HTTP2STREAM: 14, HTTP2PING: 15,
  HTTP2SETTINGS: 16, HTTPINCOMINGMESSAGE: 17, HTTPCLIENTREQUEST: 18, JSSTREAM: 19, JSUDPWRAP: 20,
  MESSAGEPORT: 21, PIPECONNECTWRAP: 22, PIPESERVERWRAP: 23, PIPEWRAP: 24, PROCESSWRAP: 25,
  PROMISE: 26, QUERYWRAP: 27, SHUTDOWNWRAP: 28, SIGNALWRAP: 29, STATWATCHER: 30, STREAMPIPE: 31,
  TCPCONNECTWRAP: 32, TCPSERVERWRAP: 33, TCPWRAP: 34, TTYWRAP: 35, UDPSENDWRAP: 36, UDPWRAP: 37,
  SIGINTWATCHDOG: 38, WORKER: 39, WORKERHEAPSNAPSHOT: 40, WRITEWRAP: 41, ZLIB: 42,
});

module.exports = {
  AsyncLocalStorage, AsyncResource, createHook,
  executionAsyncId, triggerAsyncId, executionAsyncResource, asyncWrapProviders,
};
