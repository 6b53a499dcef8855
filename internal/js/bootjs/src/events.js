'use strict';
// events: the npm polyfill, with the helpers newer Node versions added.
const EventEmitter = require('events');
if (!EventEmitter.errorMonitor) EventEmitter.errorMonitor = Symbol('events.errorMonitor');
EventEmitter.setMaxListeners = EventEmitter.setMaxListeners || function setMaxListeners(n, ...targets) {
  for (const t of targets) if (t && typeof t.setMaxListeners === 'function') t.setMaxListeners(n);
};
EventEmitter.getMaxListeners = EventEmitter.getMaxListeners || ((t) => (t && t.getMaxListeners ? t.getMaxListeners() : EventEmitter.defaultMaxListeners));
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
EventEmitter.captureRejections = false;
EventEmitter.captureRejectionSymbol = Symbol.for('nodejs.rejection');
EventEmitter.EventEmitterAsyncResource = EventEmitter;
module.exports = EventEmitter;
