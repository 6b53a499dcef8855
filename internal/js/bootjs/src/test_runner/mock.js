'use strict';
const process = require('node:process');
// node:test's mock: function, method, getter and setter mocks with call
// records, and mock.timers (a fake clock for the timer functions and
// Date), as Node 22 documents them.
const { typeError, received } = require('./errors.js');

function rangeError(msg) {
  const e = new RangeError(msg);
  e.code = 'ERR_OUT_OF_RANGE';
  return e;
}

function show(v) {
  return typeof v === 'string' ? `'${v}'` : require('node:util').inspect(v);
}

function validateTimes(times) {
  if (times === undefined) return;
  if (typeof times !== 'number') throw typeError('ERR_INVALID_ARG_TYPE', `The "options.times" property must be of type number. Received ${show(times)}`);
  if (!Number.isInteger(times) || times < 1) throw rangeError(`The value of "options.times" is out of range. It must be >= 1 && <= 9007199254740991. Received ${show(times)}`);
}

class MockFunctionContext {
  #calls = [];
  #impl;
  #original;
  #onces = new Map();
  #restore;
  #times;
  #count = 0;
  constructor(impl, original, restore, times) {
    this.#impl = impl;
    this.#original = original;
    this.#restore = restore;
    this.#times = times;
  }
  get calls() { return this.#calls.slice(); }
  callCount() { return this.#calls.length; }
  mockImplementation(fn) {
    if (typeof fn !== 'function') throw typeError('ERR_INVALID_ARG_TYPE', 'The "implementation" argument must be of type function.');
    this.#impl = fn;
  }
  mockImplementationOnce(fn, onCall) {
    if (typeof fn !== 'function') throw typeError('ERR_INVALID_ARG_TYPE', 'The "implementation" argument must be of type function.');
    const n = onCall === undefined ? this.#count : onCall;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < this.#count) throw rangeError(`The value of "onCall" is out of range. It must be >= ${this.#count}. Received ${show(n)}`);
    this.#onces.set(n, fn);
  }
  resetCalls() { this.#calls = []; }
  // restore brings back the original implementation (and, for a
  // method, the original property); calls are still recorded.
  restore() {
    this.#impl = this.#original;
    if (this.#restore) this.#restore();
  }
  // nextImpl picks the implementation of the next call.
  nextImpl() {
    const n = this.#count++;
    if (this.#onces.has(n)) {
      const f = this.#onces.get(n);
      this.#onces.delete(n);
      return f;
    }
    if (this.#times !== undefined && n >= this.#times) return this.#original;
    return this.#impl;
  }
  record(call) { this.#calls.push(call); }
}

class MockTracker {
  #mocks = [];
  #timers;

  fn(original = function() {}, implementation = original, options = {}) {
    if (original !== null && typeof original === 'object') { options = original; original = function() {}; implementation = original; }
    else if (implementation !== null && typeof implementation === 'object') { options = implementation; implementation = original; }
    validateTimes(options.times);
    const ctx = new MockFunctionContext(implementation, original, undefined, options.times);
    return this.#wrap(ctx, original);
  }

  #wrap(ctx, original) {
    const mock = function(...args) {
      const impl = ctx.nextImpl();
      // new on the mock constructs the implementation with the original
      // as new.target, so the instance is of the original class (Node
      // records that class as target).
      const target = new.target === mock ? original : new.target;
      const call = { arguments: args, error: undefined, result: undefined, stack: new Error(), target, this: new.target ? undefined : this };
      try {
        const result = new.target ? Reflect.construct(impl, args, target) : Reflect.apply(impl, this, args);
        call.result = result;
        if (new.target) call.this = result;
        ctx.record(call);
        return result;
      } catch (e) {
        call.error = e;
        ctx.record(call);
        throw e;
      }
    };
    Object.defineProperty(mock, 'mock', { value: ctx, enumerable: false, configurable: false });
    Object.defineProperty(mock, 'name', { value: original && original.name !== undefined ? original.name : 'mock', configurable: true });
    Object.defineProperty(mock, 'length', { value: original ? original.length : 0, configurable: true });
    this.#mocks.push(ctx);
    return mock;
  }

  method(object, methodName, implementation, options = {}) {
    if (object === null || (typeof object !== 'object' && typeof object !== 'function')) throw typeError('ERR_INVALID_ARG_TYPE', 'The "object" argument must be of type object.');
    if (implementation !== null && typeof implementation === 'object') { options = implementation; implementation = undefined; }
    if (typeof methodName !== 'string' && typeof methodName !== 'symbol') throw typeError('ERR_INVALID_ARG_TYPE', `The "methodName" argument must be one of type string or symbol. Received ${show(methodName)}`);
    const getter = !!options.getter;
    const setter = !!options.setter;
    if (getter && setter) throw typeError('ERR_INVALID_ARG_VALUE', "The property 'options.setter' cannot be used with 'options.getter'. Received true");
    validateTimes(options.times);
    let desc;
    for (let o = object; o; o = Object.getPrototypeOf(o)) {
      desc = Object.getOwnPropertyDescriptor(o, methodName);
      if (desc) break;
    }
    const original = getter ? desc && desc.get : (setter ? desc && desc.set : desc && desc.value);
    if (typeof original !== 'function') throw typeError('ERR_INVALID_ARG_VALUE', `The argument 'methodName' must be a method. Received ${typeof original === 'undefined' ? 'undefined' : String(original)}`);
    // Restoring puts the original property on the object itself, also
    // when it was inherited (as Node does).
    const restore = () => { Object.defineProperty(object, methodName, desc); };
    const ctx = new MockFunctionContext(implementation === undefined ? original : implementation, original, restore, options.times);
    const mock = this.#wrap(ctx, original);
    const nd = { configurable: desc.configurable, enumerable: desc.enumerable };
    if (getter) { nd.get = mock; nd.set = desc.set; }
    else if (setter) { nd.set = mock; nd.get = desc.get; }
    else { nd.value = mock; nd.writable = desc.writable; }
    Object.defineProperty(object, methodName, nd);
    return mock;
  }

  getter(object, methodName, implementation, options = {}) {
    if (implementation !== null && typeof implementation === 'object') { options = implementation; implementation = undefined; }
    if (options.getter === false) throw typeError('ERR_INVALID_ARG_VALUE', "The property 'options.getter' cannot be false. Received false");
    return this.method(object, methodName, implementation, { ...options, getter: true });
  }

  setter(object, methodName, implementation, options = {}) {
    if (implementation !== null && typeof implementation === 'object') { options = implementation; implementation = undefined; }
    if (options.setter === false) throw typeError('ERR_INVALID_ARG_VALUE', "The property 'options.setter' cannot be false. Received false");
    return this.method(object, methodName, implementation, { ...options, setter: true });
  }

  reset() {
    this.restoreAll();
    if (this.#timers) this.#timers.reset();
    this.#mocks = [];
  }

  restoreAll() {
    for (const m of this.#mocks) m.restore();
  }

  get timers() {
    if (!this.#timers) {
      process.emitWarning('The MockTimers API is an experimental feature and might change at any time', 'ExperimentalWarning');
      this.#timers = new MockTimers();
    }
    return this.#timers;
  }
}

const kMockableApis = ['setInterval', 'setTimeout', 'setImmediate', 'Date', 'scheduler.wait'];

// validateApis and validateNow check enable()'s options with Node's
// codes and (odd) messages.
function validateApis(apis) {
  if (!Array.isArray(apis)) throw typeError('ERR_INVALID_ARG_TYPE', `The "options.apis" property must be an instance of Array. Received ${received(apis)}`);
  for (let i = 0; i < apis.length; i++) {
    if (typeof apis[i] !== 'string') throw typeError('ERR_INVALID_ARG_TYPE', `The "options.apis[${i}]" property must be of type string. Received ${received(apis[i])}`);
    if (!kMockableApis.includes(apis[i])) throw typeError('ERR_INVALID_ARG_VALUE', `The property 'options.apis' option ${apis[i]} is not supported. Received ${show(apis[i])}`);
  }
}

function validateNow(now) {
  if (now instanceof Date) now = now.getTime();
  if (typeof now !== 'number') throw typeError('ERR_INVALID_ARG_TYPE', `The "initialTime" argument must be of type number. Received ${received(now)}`);
  if (Number.isNaN(now)) throw typeError('ERR_INVALID_ARG_VALUE', `The argument 'now' epoch must be a positive integer received NaN. Received NaN`);
  if (now < 0) throw typeError('ERR_INVALID_ARG_VALUE', `The argument 'time' ${now}. Received 'positive integer'`);
  return now;
}


function abortError(signal) {
  const e = new Error('The operation was aborted', { cause: signal.reason });
  e.name = 'AbortError';
  e.code = 'ABORT_ERR';
  return e;
}

// MockTimers replaces the timer functions (and Date) with a fake clock
// that moves only when tick() or runAll() says so.
class MockTimers {
  #enabled = false;
  #now = 0;
  #timers = [];
  #seq = 0;
  #saved = null;
  #apis = [];

  enable(opts = {}) {
    if (this.#enabled) {
      const e = new Error('mock.timers is already enabled!');
      e.code = 'ERR_INVALID_STATE';
      throw e;
    }
    const apis = opts.apis === undefined ? ['setInterval', 'setTimeout', 'setImmediate', 'Date', 'scheduler.wait'] : opts.apis;
    validateApis(apis);
    // Another tracker (a parent test's) already replaced Date.
    if (apis.includes('Date') && globalThis.Date.isMock) {
      const e = new Error('Invalid state: Date is already being mocked!');
      e.code = 'ERR_INVALID_STATE';
      throw e;
    }
    const now = opts.now === undefined ? 0 : validateNow(opts.now);
    this.#now = now;
    this.#enabled = true;
    this.#apis = apis;
    const g = globalThis;
    const tp = require('node:timers/promises');
    this.#saved = {
      setTimeout: g.setTimeout, clearTimeout: g.clearTimeout, setInterval: g.setInterval, clearInterval: g.clearInterval, setImmediate: g.setImmediate, clearImmediate: g.clearImmediate, Date: g.Date,
      promises: { setTimeout: tp.setTimeout, setImmediate: tp.setImmediate }, wait: tp.scheduler.wait,
    };
    const add = (fn, delay, args, repeat, immediate) => {
      const t = { id: ++this.#seq, fn, args, at: this.#now + (immediate ? 0 : Math.max(1, delay | 0)), interval: repeat ? Math.max(1, delay | 0) : 0 };
      this.#timers.push(t);
      const handle = { id: t.id, ref() { return handle; }, unref() { return handle; }, hasRef() { return true; }, refresh() { t.at = this.#now + t.interval; return handle; }, [Symbol.toPrimitive]() { return t.id; } };
      return handle;
    };
    const clear = (h) => {
      const id = h && typeof h === 'object' ? h.id : h;
      this.#timers = this.#timers.filter((t) => t.id !== id);
    };
    // timers/promises resolve on the fake clock too, rejecting as the
    // real ones do for a bad or aborted signal.
    const promised = (delay, value, options, immediate) => {
      const signal = options ? options.signal : undefined;
      if (signal !== undefined && (signal === null || typeof signal !== 'object' || !('aborted' in signal))) {
        return Promise.reject(typeError('ERR_INVALID_ARG_TYPE', `The "options.signal" property must be an instance of AbortSignal. Received ${received(signal)}`));
      }
      if (signal && signal.aborted) return Promise.reject(abortError(signal));
      return new Promise((resolve, reject) => {
        const onAbort = () => { clear(h); reject(abortError(signal)); };
        const h = add(() => { if (signal) signal.removeEventListener('abort', onAbort); resolve(value); }, delay, [], false, immediate);
        if (signal) signal.addEventListener('abort', onAbort, { once: true });
      });
    };
    if (apis.includes('setTimeout')) tp.setTimeout = (d, v, o) => promised(d, v, o, false);
    if (apis.includes('setImmediate')) tp.setImmediate = (v, o) => promised(0, v, o, true);
    if (apis.includes('scheduler.wait')) tp.scheduler.wait = (d, o) => promised(d, undefined, o, false);
    if (apis.includes('setTimeout')) { g.setTimeout = (fn, d, ...a) => add(fn, d, a, false); g.clearTimeout = clear; }
    if (apis.includes('setInterval')) { g.setInterval = (fn, d, ...a) => add(fn, d, a, true); g.clearInterval = clear; }
    if (apis.includes('setImmediate')) { g.setImmediate = (fn, ...a) => add(fn, 0, a, false, true); g.clearImmediate = clear; }
    if (apis.includes('Date')) {
      const RealDate = this.#saved.Date;
      const self = this;
      function MockDate(...args) {
        if (!new.target) return new RealDate(self.#now).toString();
        if (args.length === 0) return Reflect.construct(RealDate, [self.#now], new.target);
        return Reflect.construct(RealDate, args, new.target);
      }
      MockDate.prototype = RealDate.prototype;
      MockDate.isMock = true;
      // Code that checks for the real Date by its name or source still
      // finds it, as with Node's mock.
      Object.defineProperty(MockDate, 'name', { value: 'Date', configurable: true });
      Object.defineProperty(MockDate, 'length', { value: 7, configurable: true });
      MockDate.toString = () => 'function Date() { [native code] }';
      MockDate.now = () => this.#now;
      MockDate.parse = RealDate.parse;
      MockDate.UTC = RealDate.UTC;
      g.Date = MockDate;
    }
  }

  #check() {
    if (!this.#enabled) {
      const e = new Error('You should enable MockTimers first by calling the .enable function');
      e.code = 'ERR_INVALID_STATE';
      throw e;
    }
  }

  tick(ms = 1) {
    this.#check();
    const target = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.#now = Math.max(this.#now, due.at);
      if (due.interval > 0) due.at += due.interval;
      else this.#timers = this.#timers.filter((t) => t !== due);
      due.fn(...due.args);
    }
    this.#now = target;
  }

  runAll() {
    this.#check();
    const last = this.#timers.reduce((m, t) => Math.max(m, t.at), this.#now);
    this.tick(last - this.#now);
  }

  setTime(ms) {
    this.#check();
    this.#now = ms;
  }

  reset() {
    if (!this.#enabled) return;
    const { promises, wait, ...globals } = this.#saved;
    Object.assign(globalThis, globals);
    const tp = require('node:timers/promises');
    Object.assign(tp, promises);
    tp.scheduler.wait = wait;
    this.#enabled = false;
    this.#timers = [];
  }

  [Symbol.dispose]() { this.reset(); }
}

module.exports = { MockTracker, MockTimers };
