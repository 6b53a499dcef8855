'use strict';
// The JavaScript half of the event loop. The loop itself runs in Go: it
// waits for timers, host operations and child-process events and calls
// dispatch() for each. Every macrotask ends by draining process.nextTick
// callbacks before V8 runs the promise microtasks, as Node orders them.
const { B } = require('./bridge.js');
const P = require('./primordials.js');
const DS = require('./domain_state.js');
const AC = require('./async_context.js');

const ticks = [];
let tickScheduled = false;
let fatalHandler = (e) => { throw e; };

function setFatalHandler(fn) { fatalHandler = fn; }

// fatal hands e to the uncaught-exception path (async_context.js reports
// an exception of a promise hook so).
function fatal(e) { fatalHandler(e); }

function runTicks() {
  tickScheduled = false;
  while (ticks.length > 0) {
    const t = P.ArrayPrototypeShift(ticks);
    const token = AC.save();
    try {
      AC.enter(t, token);
      DS.enter(t.domain);
      P.ReflectApply(t.callback, undefined, t.args);
      DS.leave(t.domain);
    } catch (e) {
      // The uncaught-exception path runs in the tick's scope, as Node's
      // (executionAsyncId() there is the tick's).
      try {
        fatalHandler(e);
      } finally {
        AC.leave(token);
        AC.destroy(t);
      }
      continue;
    }
    AC.leave(token);
    AC.destroy(t);
  }
}

// TickObject is a queued tick, the resource async_hooks sees for it.
class TickObject {
  constructor(callback, args, domain) {
    this.callback = callback;
    this.args = args;
    this.domain = domain;
    this[AC.kAsyncId] = 0;
    this[AC.kTriggerId] = 0;
  }
}

function scheduleTicks() { P.PromiseResolve().then(runTicks); }

function nextTick(fn, ...args) {
  if (typeof fn !== 'function') {
    throw require('./errors.js').codedError('ERR_INVALID_ARG_TYPE', 'callback', 'of type function', fn);
  }
  queueTick('TickObject', fn, args);
}

// callbackAs queues fn(...args) as nextTick does, as a resource of type
// for async_hooks: an fs callback is Node's FSREQCALLBACK, not a tick.
function callbackAs(type, fn, ...args) { queueTick(type, fn, args); }

function queueTick(type, fn, args) {
  const t = new TickObject(fn, args, DS.current());
  AC.init(t, type);
  P.ArrayPrototypePush(ticks, t);
  if (!tickScheduled) {
    tickScheduled = true;
    // Ticks queued from a microtask are drained by a microtask.
    AC.quietly(scheduleTicks);
  }
}

// macrotask runs fn as one task of the loop: errors go to the fatal
// handler, and queued ticks run before it returns.
function macrotask(fn, a, b, c, d) {
  try {
    fn(a, b, c, d);
  } catch (e) {
    fatalHandler(e);
  }
  runTicks();
}

// Handlers for events the Go loop dispatches, by kind.
const handlers = new P.MapCtor();
function onEvent(kind, fn) { P.MapPrototypeSet(handlers, kind, fn); }

function dispatch(kind, a, b, c, d) {
  const fn = P.MapPrototypeGet(handlers, kind);
  if (fn) macrotask(fn, a, b, c, d);
}

module.exports = { nextTick, callbackAs, runTicks, macrotask, dispatch, onEvent, setFatalHandler, fatal, B };
