'use strict';
// async_hooks: the init/before/after/destroy events of timers,
// immediates, ticks, promises and AsyncResource, with ids renumbered in
// the order first seen and every trigger checked against the resource
// that was running when the resource was made.
const ah = require('async_hooks');
const events = [];
const names = new Map();
const name = (id) => {
  if (!names.has(id)) names.set(id, `#${names.size}`);
  return names.get(id);
};
const watched = new Set(['Timeout', 'Immediate', 'TickObject', 'PROMISE', 'probe']);
const mine = new Set();
const hook = ah.createHook({
  init(id, type, trigger) {
    if (!watched.has(type)) return;
    mine.add(id);
    events.push(`init ${name(id)} ${type} trigger=${mine.has(trigger) ? name(trigger) : 'outside'} running=${mine.has(ah.executionAsyncId()) ? name(ah.executionAsyncId()) : 'outside'}`);
  },
  before(id) { if (mine.has(id)) events.push(`before ${name(id)} eid=${name(ah.executionAsyncId())}`); },
  after(id) { if (mine.has(id)) events.push(`after ${name(id)}`); },
  destroy(id) { if (mine.has(id)) events.push(`destroy ${name(id)}`); },
  promiseResolve(id) { if (mine.has(id)) events.push(`resolve ${name(id)}`); },
}).enable();

const r = new ah.AsyncResource('probe');
r.runInAsyncScope(() => {
  setTimeout(() => {
    process.nextTick(() => {
      setImmediate(() => {
        const p = Promise.resolve(1);
        p.then(() => {
          hook.disable();
          r.emitDestroy();
          console.log(events.join('\n'));
          console.log('top', ah.executionAsyncId() !== 0, ah.triggerAsyncId() >= 0);
        });
      });
    });
  }, 1);
});
