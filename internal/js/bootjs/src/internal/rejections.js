'use strict';
// Unhandled promise rejections, handled as Node's default mode ('throw')
// does. Go installs V8's PromiseRejectCallback (rejections_shim.cc), which
// records each rejection with no handler and each handler attached later.
// After every macrotask (once the ticks and microtasks ran) Go calls
// settle() if anything was recorded: the records are drained in order,
// and promises still unhandled then are reported through
// 'unhandledRejection' or, with no listener, as an uncaught error; a
// handler attached after that report emits 'rejectionHandled'.
const P = require('./primordials.js');
const { B } = require('./bridge.js');
const DS = require('./domain_state.js');

// The shim writes records here: box[2i] is a promise, box[2i+1] its
// reason, or box itself when a handler was attached later.
const box = P.ObjectCreate(null);

// promise -> { reason, warned }: rejected and not (yet) handled.
const maybeUnhandled = new P.WeakMapCtor();
// Promises in rejection order, waiting for the next settle().
let pending = [];
// Promises that got a handler after they were reported.
let handledLate = [];

function drain() {
  const n = B.rejectTake(box);
  for (let i = 0; i < n; i++) {
    const promise = box[2 * i];
    const reason = box[2 * i + 1];
    delete box[2 * i];
    delete box[2 * i + 1];
    if (reason === box) onReject(promise);
    else onReject(promise, reason);
  }
}

function onReject(promise, reason) {
  if (arguments.length >= 2) {
    // The domain active when the records are drained: the domain module
    // drains them as each domain exits, so a rejection made inside
    // one is reported inside it, as Node reports it in its promise's.
    P.WeakMapPrototypeSet(maybeUnhandled, promise, { reason, warned: false, domain: DS.current() });
    P.ArrayPrototypePush(pending, promise);
    return;
  }
  const info = P.WeakMapPrototypeGet(maybeUnhandled, promise);
  if (info === undefined) return;
  P.WeakMapPrototypeDelete(maybeUnhandled, promise);
  if (info.warned) P.ArrayPrototypePush(handledLate, promise);
}

// UnhandledPromiseRejection is what Node throws for a rejection whose
// reason is not an error: the reason is shown, but without side effects.
class UnhandledPromiseRejection extends Error {
  constructor(reason) {
    super('This error originated either by throwing inside of an async function without a catch block, ' +
      'or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason ' +
      `"${describe(reason)}".`);
    this.code = 'ERR_UNHANDLED_REJECTION';
  }
}
P.ObjectDefineProperty(UnhandledPromiseRejection.prototype, 'name', {
  value: 'UnhandledPromiseRejection', writable: true, configurable: true, enumerable: false,
});

// describe renders a value as V8's NoSideEffectsToString does: no
// getters, no toString of the guest's.
function describe(v) {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string': return v;
    case 'symbol': return P.SymbolPrototypeToString(v);
    case 'object': case 'function': {
      let name = 'Object';
      try {
        const proto = P.ObjectGetPrototypeOf(v);
        const d = proto && P.ObjectGetOwnPropertyDescriptor(proto, 'constructor');
        if (d && typeof d.value === 'function' && typeof d.value.name === 'string' && d.value.name) name = d.value.name;
      } catch { /* a proxy */ }
      return typeof v === 'function' ? `[Function: ${name}]` : `#<${name}>`;
    }
    default: return `${v}`;
  }
}

function isErrorLike(v) {
  return typeof v === 'object' && v !== null && P.ObjectPrototypeHasOwnProperty(v, 'stack');
}

let process;
let fatal;
function init(proc, fatalFn) { process = proc; fatal = fatalFn; }

function settle() {
  const loop = require('./loop.js');
  loop.macrotask(settleNow);
}

function settleNow() {
  drain();
  while (handledLate.length > 0 || pending.length > 0) {
    const late = handledLate;
    handledLate = [];
    for (let i = 0; i < late.length; i++) process.emit('rejectionHandled', late[i]);
    const list = pending;
    pending = [];
    for (let i = 0; i < list.length; i++) {
      const promise = list[i];
      const info = P.WeakMapPrototypeGet(maybeUnhandled, promise);
      if (info === undefined) continue; // handled in the meantime
      info.warned = true;
      const { reason, domain } = info;
      // Node hands a rejection made inside a domain to that domain's
      // 'error' listeners instead of 'unhandledRejection'.
      const handled = domain ? domain.emit('error', reason) : process.emit('unhandledRejection', reason, promise);
      if (!handled) {
        const err = isErrorLike(reason) ? reason : new UnhandledPromiseRejection(reason);
        if (err instanceof UnhandledPromiseRejection) {
          // Node hides its internal frames: only the message shows.
          P.ObjectDefineProperty(err, 'stack', { value: `${err.name}: ${err.message}`, writable: true, configurable: true });
        }
        fatal(err, 'unhandledRejection');
      }
    }
  }
}

// drainForDomain takes the records now, while the domain that is about
// to exit is still active. Go settles only when the hook holds records,
// so what this takes is settled by an immediate of its own.
let settleQueued = false;
function drainForDomain() {
  drain();
  if (pending.length === 0 || settleQueued) return;
  settleQueued = true;
  // The settling is the runtime's, not the exiting domain's callback.
  const active = DS.state.active;
  DS.state.active = null;
  try {
    require('../timers.js').setImmediate(() => {
      settleQueued = false;
      settleNow();
    });
  } finally {
    DS.state.active = active;
  }
}

module.exports = { settle, init, drainForDomain, UnhandledPromiseRejection };
