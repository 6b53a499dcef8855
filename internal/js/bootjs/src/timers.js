'use strict';
// Timers: the callbacks live here, the deadlines in Go's event loop.
const { B } = require('./internal/bridge.js');
const loop = require('./internal/loop.js');
const { codedError } = require('./internal/errors.js');
const P = require('./internal/primordials.js');
const DS = require('./internal/domain_state.js');
const AC = require('./internal/async_context.js');

const TIMEOUT_MAX = 2 ** 31 - 1;
const active = new P.MapCtor();
let nextId = 1;
const kId = Symbol('timerId');

function checkCallback(cb) {
  if (typeof cb !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'callback', 'of type function', cb);
}

// inDomain marks a timer made inside a domain with it, as Node's
// domain hook marks the resource (hidden, writable: domain.add() moves it).
function inDomain(t) {
  const d = DS.current();
  if (d) P.ObjectDefineProperty(t, 'domain', { value: d, writable: true, configurable: true, enumerable: false });
}

class Timeout {
  constructor(cb, ms, args, repeat) {
    ms = +ms;
    if (!(ms >= 1 && ms <= TIMEOUT_MAX)) ms = 1;
    this._idleTimeout = ms;
    this._onTimeout = cb;
    this._timerArgs = args;
    this._repeat = repeat ? ms : null;
    this._destroyed = false;
    this[kId] = nextId++;
    this._ref = true;
    inDomain(this);
    AC.init(this, 'Timeout');
    P.MapPrototypeSet(active, this[kId], this);
    B.timerStart(this[kId], ms, true);
  }
  ref() { if (!this._destroyed) { this._ref = true; B.timerRef(this[kId], true); } return this; }
  unref() { if (!this._destroyed) { this._ref = false; B.timerRef(this[kId], false); } return this; }
  hasRef() { return this._ref; }
  refresh() {
    if (this._destroyed && firing === this) {
      // A one-shot refreshed from its own callback runs again, as in
      // Node (its callback has not finished with it).
      this._destroyed = false;
      firing = null;
      P.MapPrototypeSet(active, this[kId], this);
    }
    if (!this._destroyed) B.timerStart(this[kId], this._idleTimeout, this._ref);
    return this;
  }
  close() { clearTimeout(this); return this; }
  [Symbol.toPrimitive]() { return this[kId]; }
  [Symbol.dispose]() { clearTimeout(this); }
}

class Immediate {
  constructor(cb, args) {
    this._onImmediate = cb;
    this._argv = args;
    this._destroyed = false;
    this._ref = true;
    this[kId] = nextId++;
    inDomain(this);
    AC.init(this, 'Immediate');
    P.MapPrototypeSet(active, this[kId], this);
    B.timerStart(this[kId], 0, true);
  }
  ref() { if (!this._destroyed) { this._ref = true; B.timerRef(this[kId], true); } return this; }
  unref() { if (!this._destroyed) { this._ref = false; B.timerRef(this[kId], false); } return this; }
  hasRef() { return this._ref; }
  [Symbol.dispose]() { clearImmediate(this); }
}

function setTimeout(cb, ms, ...args) { checkCallback(cb); return new Timeout(cb, ms, args, false); }
function setInterval(cb, ms, ...args) { checkCallback(cb); return new Timeout(cb, ms, args, true); }
function setImmediate(cb, ...args) { checkCallback(cb); return new Immediate(cb, args); }

// firing is the one-shot Timeout whose callback runs: Node counts it as
// active until the callback returns or clears it.
let firing = null;
const mapValues = Map.prototype.values;

function clear(t) {
  if (t == null) return;
  let id = t;
  if (typeof t === 'object') id = t[kId];
  if (typeof id === 'string') id = +id;
  if (firing !== null && firing[kId] === id) firing = null;
  const timer = P.MapPrototypeGet(active, id);
  if (!timer) return;
  timer._destroyed = true;
  P.MapPrototypeDelete(active, id);
  B.timerStop(id);
  AC.destroy(timer);
}

loop.onEvent('timer', (id) => {
  const t = P.MapPrototypeGet(active, id);
  if (!t) return;
  if (t instanceof Immediate) {
    t._destroyed = true;
    P.MapPrototypeDelete(active, id);
    const d = t.domain;
    const token = AC.save();
    try {
      AC.enter(t, token);
      DS.enter(d);
      P.ReflectApply(t._onImmediate, t, t._argv);
      DS.leave(d);
    } catch (e) {
      // In the immediate's scope, as in Node; the domain stays entered
      // for the uncaught-exception path (see domain_state.js).
      loop.fatal(e);
    } finally {
      AC.leave(token);
      AC.destroy(t);
    }
    return;
  }
  if (t._repeat === null) {
    t._destroyed = true;
    P.MapPrototypeDelete(active, id);
  }
  const d = t.domain;
  DS.enter(d);
  const outer = firing;
  const oneShot = t._repeat === null;
  if (oneShot) firing = t;
  const token = AC.save();
  try {
    AC.enter(t, token);
    P.ReflectApply(t._onTimeout, t, t._timerArgs);
  } catch (e) {
    loop.fatal(e);
    return;
  } finally {
    // clear() of the firing one-shot resets firing.
    const kept = oneShot && firing === t;
    firing = outer;
    AC.leave(token);
    if (kept && t._repeat !== null) {
      // A timeout made an interval by its callback (_repeat set) goes on
      // as one, as on Node's lists.
      t._destroyed = false;
      P.MapPrototypeSet(active, id, t);
      t._idleTimeout = t._repeat;
    }
    // An interval starts its next period when the callback returned, as
    // on Node's lists; one whose _idleTimeout was set to -1 or whose
    // _onTimeout was taken away ends instead.
    if ((!oneShot || kept) && t._repeat !== null && !t._destroyed) {
      if (t._idleTimeout === -1 || typeof t._onTimeout !== 'function') clear(t);
      else B.timerStart(id, t._repeat, t._ref);
    }
    if (t._destroyed) AC.destroy(t);
  }
  DS.leave(d);
});

// activeInfo lists the referenced timers and immediates, as
// process.getActiveResourcesInfo() shows them.
function activeInfo() {
  const out = [];
  for (const t of P.ReflectApply(mapValues, active, [])) {
    if (t._ref) out.push(t instanceof Immediate ? 'Immediate' : 'Timeout');
  }
  if (firing !== null && firing._ref) out.push('Timeout');
  return out;
}

// util.promisify(setTimeout) and util.promisify(setImmediate) are the
// promise forms, as in Node.
const kCustomPromisify = Symbol.for('nodejs.util.promisify.custom');
P.ObjectDefineProperty(setTimeout, kCustomPromisify, { enumerable: true, get() { return promises.setTimeout; } });
P.ObjectDefineProperty(setImmediate, kCustomPromisify, { enumerable: true, get() { return promises.setImmediate; } });

const promises = {
  setTimeout(ms, value, options = {}) {
    return new Promise((resolve, reject) => {
      const signal = options.signal;
      if (signal && signal.aborted) return reject(abortError(signal));
      const t = setTimeout(() => resolve(value), ms);
      if (options.ref === false) t.unref();
      if (signal) signal.addEventListener('abort', () => { clearTimeout(t); reject(abortError(signal)); }, { once: true });
    });
  },
  setImmediate(value, options = {}) {
    return new Promise((resolve, reject) => {
      const signal = options.signal;
      if (signal && signal.aborted) return reject(abortError(signal));
      const t = setImmediate(() => resolve(value));
      if (options.ref === false) t.unref();
      if (signal) signal.addEventListener('abort', () => { clearImmediate(t); reject(abortError(signal)); }, { once: true });
    });
  },
  async *setInterval(ms, value, options = {}) {
    let pending = 0;
    let wake = null;
    const t = setInterval(() => { pending++; if (wake) { wake(); wake = null; } }, ms);
    if (options.ref === false) t.unref();
    try {
      for (;;) {
        if (pending === 0) await new Promise((r) => { wake = r; });
        pending--;
        yield value;
      }
    } finally {
      clearInterval(t);
    }
  },
  scheduler: {
    wait(ms, options) { return promises.setTimeout(ms, undefined, options); },
    yield() { return promises.setImmediate(); },
  },
};

function abortError(signal) {
  const err = new Error('The operation was aborted');
  err.name = 'AbortError';
  err.code = 'ABORT_ERR';
  if (signal && signal.reason !== undefined) err.cause = signal.reason;
  return err;
}

// The deprecated item timers (DEP0095, DEP0096, DEP0126, DEP0127): an
// object with _onTimeout is scheduled after its _idleTimeout by a
// Timeout of its own, as Node schedules it on its timer lists.
const kItemTimer = Symbol('itemTimer');
function warnOnce(code, msg) {
  if (warnedItem[code]) return;
  warnedItem[code] = true;
  require('./process.js').process.emitWarning(msg, 'DeprecationWarning', code);
}
const warnedItem = { __proto__: null };
function enroll(item, msecs) {
  warnOnce('DEP0095', 'timers.enroll() is deprecated. Please use setTimeout instead.');
  if (typeof msecs !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', 'msecs', 'of type number', msecs);
  if (!(msecs >= 0 && msecs !== Infinity)) throw require('./internal/crypto_util.js').outOfRange('msecs', 'a non-negative finite number', msecs);
  if (item[kItemTimer]) clear(item[kItemTimer]);
  if (msecs > TIMEOUT_MAX) {
    require('./process.js').process.emitWarning(`${msecs} does not fit into a 32-bit signed integer.` +
      `\nTimer duration was truncated to ${TIMEOUT_MAX}.`, 'TimeoutOverflowWarning');
    msecs = TIMEOUT_MAX;
  }
  item._idleTimeout = msecs;
}
function unenroll(item) {
  warnOnce('DEP0096', 'timers.unenroll() is deprecated. Please use clearTimeout instead.');
  if (item instanceof Timeout) {
    clear(item);
    item._idleTimeout = -1;
    return;
  }
  if (item[kItemTimer]) {
    clear(item[kItemTimer]);
    item._idleNext = item._idlePrev = null;
  }
  item[kItemTimer] = undefined;
  item._idleTimeout = -1;
}
function scheduleItem(item, ref) {
  if (item[kItemTimer]) clear(item[kItemTimer]);
  const ms = item._idleTimeout;
  if (!(ms >= 0)) return;
  const t = new Timeout(function onItemTimeout() {
    item[kItemTimer] = undefined;
    item._idleNext = item._idlePrev = null;
    if (typeof item._onTimeout === 'function') item._onTimeout();
  }, ms, [], false);
  if (!ref) t.unref();
  item[kItemTimer] = t;
  // The fields Node's timer lists set on an item while it waits: when it
  // was scheduled (ms of the loop's clock) and its list neighbours, here
  // the Timeout that stands for it.
  item._idleStart = P.MathFloor(require('./process.js').process.uptime() * 1000);
  item._idleNext = item._idlePrev = t;
}
function activeItem(item) {
  warnOnce('DEP0126', 'timers.active() is deprecated. Please use timeout.refresh() instead.');
  scheduleItem(item, true);
}
function unrefActive(item) {
  warnOnce('DEP0127', 'timers._unrefActive() is deprecated. Please use timeout.refresh() instead.');
  scheduleItem(item, false);
}

module.exports = {
  setTimeout, setInterval, setImmediate,
  clearTimeout: clear, clearInterval: clear, clearImmediate: clear,
  promises, Timeout, Immediate, abortError,
  enroll, unenroll, active: activeItem, _unrefActive: unrefActive,
};
// Not enumerable: the module's own names stay Node's.
Object.defineProperty(module.exports, '_activeInfo', { value: activeInfo });
