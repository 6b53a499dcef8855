'use strict';
// domain (deprecated in Node, still used by tests and old servers): a
// Domain collects the errors of the emitters, timers, ticks and promise
// reactions created while it is active. Loading the module makes
// EventEmitter domain-aware and takes process's uncaught-exception
// capture, as Node's does. Callbacks carry their domain through
// internal/domain_state.js (Node uses async_hooks for it).
const EventEmitter = require('./events.js');
const { process, domainCapture: capture } = require('./process.js');
const DS = require('./internal/domain_state.js');
const { codedError } = require('./internal/errors.js');
const P = require('./internal/primordials.js');
const { drainForDomain: drainRejections } = require('./internal/rejections.js');

// The guest's capture callback and domains share one slot: whichever
// came first keeps it.
if (process.hasUncaughtExceptionCaptureCallback()) throw codedError('ERR_DOMAIN_CALLBACK_NOT_AVAILABLE');
const requiredAt = new Error('require(`domain`) at this point').stack;
process.setUncaughtExceptionCaptureCallback = function setUncaughtExceptionCaptureCallback() {
  const err = codedError('ERR_DOMAIN_CANNOT_SET_UNCAUGHT_EXCEPTION_CAPTURE');
  Error.captureStackTrace(err, setUncaughtExceptionCaptureCallback);
  err.stack = `Error [${err.code}]${P.StringPrototypeSlice(err.stack, 5)}`;
  err.stack += `\n${'-'.repeat(40)}\n${requiredAt}`;
  throw err;
};

const hidden = (value) => ({ value, writable: true, configurable: true, enumerable: false });

// The domains entered and not yet exited, innermost last.
let stack = [];

function setActive(d) {
  module.exports.active = d;
  process.domain = d;
  DS.state.active = d || null;
}

// The capture callback is set only while some domain on the stack has an
// 'error' listener, so an error no domain handles still reaches
// 'uncaughtException' listeners and the fatal report.
function updateExceptionCapture() {
  let handled = false;
  for (let i = 0; i < stack.length; i++) {
    if (stack[i].listenerCount('error') > 0) { handled = true; break; }
  }
  capture.set(handled ? topLevelHandler : null);
}
function topLevelHandler(er) { return process.domain._errorHandler(er); }

// Leaving an uncaught exception ends every domain: none may stay entered
// into the next callback.
function clearStack() {
  stack.length = 0;
  setActive(null);
  updateExceptionCapture();
}

class Domain extends EventEmitter {
  constructor() {
    super();
    this.members = [];
    this.on('removeListener', updateExceptionCapture);
    this.on('newListener', updateExceptionCapture);
  }
}
Domain.prototype.members = undefined;

// enter pushes the domain even when it is already on top: each enter is
// paired with the exit that pops it.
Domain.prototype.enter = function enter() {
  setActive(this);
  P.ArrayPrototypePush(stack, this);
  updateExceptionCapture();
};

// exit pops this domain and every domain entered after it; a domain not
// on the stack is left alone.
Domain.prototype.exit = function exit() {
  let i = stack.length - 1;
  while (i >= 0 && stack[i] !== this) i--;
  if (i < 0) return;
  // Rejections recorded while this domain was active belong to it.
  drainRejections();
  stack.length = i;
  setActive(stack.length === 0 ? undefined : stack[stack.length - 1]);
  updateExceptionCapture();
};

Domain.prototype.add = function add(ee) {
  if (ee.domain === this) return;
  if (ee.domain) ee.domain.remove(ee);
  // A domain added to a domain it contains would route its errors in a
  // circle forever.
  if (this.domain && ee instanceof Domain) {
    for (let d = this.domain; d; d = d.domain) if (d === ee) return;
  }
  P.ObjectDefineProperty(ee, 'domain', hidden(this));
  P.ArrayPrototypePush(this.members, ee);
};

Domain.prototype.remove = function remove(ee) {
  ee.domain = null;
  const i = P.ArrayPrototypeIndexOf(this.members, ee);
  if (i !== -1) P.ArrayPrototypeSplice(this.members, i, 1);
};

// run, bound and intercepted functions leave the domain only when the
// callback returns: a throw stays in it for the uncaught-exception path.
Domain.prototype.run = function run(fn, ...args) {
  this.enter();
  const ret = P.ReflectApply(fn, this, args);
  this.exit();
  return ret;
};

Domain.prototype.bind = function bind(cb) {
  const self = this;
  function runBound(...args) {
    self.enter();
    const ret = P.ReflectApply(cb, this, args);
    self.exit();
    return ret;
  }
  P.ObjectDefineProperty(runBound, 'domain', hidden(this));
  return runBound;
};

// intercept: a callback whose first argument is an Error goes to the
// domain's 'error' instead; otherwise it gets the arguments after it.
Domain.prototype.intercept = function intercept(cb) {
  const self = this;
  return function runIntercepted(...args) {
    const er = args[0];
    if (er && er instanceof Error) {
      er.domainBound = cb;
      er.domainThrown = false;
      P.ObjectDefineProperty(er, 'domain', hidden(self));
      self.emit('error', er);
      return undefined;
    }
    self.enter();
    const ret = P.ReflectApply(cb, this, P.ArrayPrototypeSlice(args, 1));
    self.exit();
    return ret;
  };
};

// _errorHandler takes an exception nothing caught while this domain was
// active; it returns whether an 'error' listener took it.
Domain.prototype._errorHandler = function _errorHandler(er) {
  let caught = false;
  if ((typeof er === 'object' && er !== null) || typeof er === 'function') {
    P.ObjectDefineProperty(er, 'domain', hidden(this));
    er.domainThrown = true;
  }
  // The handler must not run inside the domain it handles: an error it
  // throws would come back to it forever.
  while (module.exports.active === this) this.exit();
  if (stack.length === 0) {
    // Outermost: with no listener, emitting 'error' would throw and hide
    // the error from 'uncaughtException' listeners.
    if (this.listenerCount('error') > 0) {
      capture.set(null);
      try {
        caught = this.emit('error', er);
      } finally {
        updateExceptionCapture();
      }
    }
  } else {
    try {
      caught = this.emit('error', er);
    } catch (er2) {
      // The handler threw (or there was none): the next domain out may
      // take the new error; with none left it is the process's.
      updateExceptionCapture();
      if (stack.length === 0) throw er2;
      setActive(stack[stack.length - 1]);
      caught = process.domain._errorHandler(er2);
    }
  }
  clearStack();
  return caught;
};

// EventEmitter, domain-aware: an emitter made inside a domain belongs to
// it, its listeners run inside it, and an 'error' it emits with no
// listener goes to the domain.
const eventInit = EventEmitter.init;
EventEmitter.usingDomains = true;
EventEmitter.init = function init(opts) {
  P.ObjectDefineProperty(this, 'domain', hidden(null));
  if (module.exports.active && !(this instanceof Domain)) this.domain = module.exports.active;
  return P.ReflectApply(eventInit, this, [opts]);
};

const eventEmit = EventEmitter.prototype.emit;
EventEmitter.prototype.emit = function emit(...args) {
  const domain = this.domain;
  const type = args[0];
  if ((type === 'error' && this.listenerCount(type) > 0) || domain === null || domain === undefined || this === process) {
    return P.ReflectApply(eventEmit, this, args);
  }
  if (type === 'error') {
    const er = args.length > 1 && args[1] ? args[1] : codedError('ERR_UNHANDLED_ERROR', args[1]);
    if (typeof er === 'object') {
      er.domainEmitter = this;
      P.ObjectDefineProperty(er, 'domain', hidden(domain));
      er.domainThrown = false;
    }
    // The domain's handler runs outside the active domain (and the copies
    // of it on top of the stack), then the stack is put back.
    const savedStack = P.ArrayPrototypeSlice(stack);
    const savedActive = process.domain;
    let i = stack.length - 1;
    while (i > -1 && process.domain === stack[i]) i--;
    stack.length = i + 1;
    setActive(stack.length > 0 ? stack[stack.length - 1] : null);
    updateExceptionCapture();
    domain.emit('error', er);
    stack = savedStack;
    module.exports._stack = stack;
    setActive(savedActive);
    updateExceptionCapture();
    return false;
  }
  domain.enter();
  const ret = P.ReflectApply(eventEmit, this, args);
  domain.exit();
  return ret;
};

// Promise reactions registered inside a domain run inside it. V8's
// promise hooks are not exposed here, so then() records the domain;
// catch() and finally() go through then().
const promiseThen = Promise.prototype.then;
function inDomain(d, fn) {
  if (typeof fn !== 'function') return fn;
  return function domainReaction(v) {
    d.enter();
    try {
      return fn(v);
    } finally {
      d.exit();
    }
  };
}
P.ObjectDefineProperty(Promise.prototype, 'then', {
  value: {
    then(onFulfilled, onRejected) {
      const d = DS.current();
      if (d === null) return P.ReflectApply(promiseThen, this, [onFulfilled, onRejected]);
      return P.ReflectApply(promiseThen, this, [inDomain(d, onFulfilled), inDomain(d, onRejected)]);
    },
  }.then,
  writable: true, configurable: true, enumerable: false,
});

// Uncaught exceptions leave no domain entered when an 'uncaughtException'
// listener runs: the first listener clears the stack.
function domainUncaughtExceptionClear() { clearStack(); }
process.on('newListener', (name, listener) => {
  if (name === 'uncaughtException' && listener !== domainUncaughtExceptionClear) {
    process.removeListener(name, domainUncaughtExceptionClear);
    process.prependListener(name, domainUncaughtExceptionClear);
  }
});
process.on('removeListener', (name, listener) => {
  if (name === 'uncaughtException' && listener !== domainUncaughtExceptionClear) {
    const ls = process.listeners('uncaughtException');
    if (ls.length === 1 && ls[0] === domainUncaughtExceptionClear) process.removeListener(name, domainUncaughtExceptionClear);
  }
});

function createDomain() { return new Domain(); }

module.exports = { Domain, create: createDomain, createDomain, active: null, _stack: stack };
