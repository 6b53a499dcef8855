'use strict';
// EventEmitter's core methods against Node 22: argument errors, the
// errorMonitor, unhandled 'error' values, the leak warning's fields,
// symbol-named events in removeAllListeners, listenerCount with a
// listener, and the static max-listener helpers.
const EventEmitter = require('events');

const show = (f) => { try { console.log('ok', f()); } catch (e) { console.log(String(e)); } };
const ee = new EventEmitter();
show(() => ee.on('x', null));
show(() => ee.once('x', 'nope'));
show(() => ee.removeListener('x', 1));
show(() => ee.setMaxListeners(-1));
show(() => ee.setMaxListeners('1'));
show(() => EventEmitter.setMaxListeners(1, {}));
for (const v of [undefined, 's', { a: 1 }, 42]) show(() => new EventEmitter().emit('error', v));

const monitored = new EventEmitter();
monitored.on(EventEmitter.errorMonitor, (e) => console.log('monitor', e.message));
show(() => monitored.emit('error', new Error('boom')));
monitored.once('error', (e) => console.log('handled', e.message));
monitored.emit('error', new Error('boom2'));

class Fake extends EventEmitter {}
const f = new Fake();
f.setMaxListeners(1);
process.on('warning', (w) => console.log('warning', w.name, w.message, w.emitter === f, w.type, w.count));
f.on('evt', () => {});
f.on('evt', () => {});
f.on('evt', () => {});

const s = Symbol('sym');
const r = new EventEmitter();
const noop = () => {};
r.on(s, noop);
r.on('plain', noop);
r.on('removeListener', (name, fn) => console.log('removed', String(name), fn === noop));
r.removeAllListeners();
console.log(r.eventNames());

const c = new EventEmitter();
const h = () => {};
c.once('e', h);
c.on('e', h);
c.on('e', () => {});
console.log(c.listenerCount('e'), c.listenerCount('e', h), c.listenerCount('none', h));

const et = new EventTarget();
console.log(EventEmitter.getMaxListeners(et), EventEmitter.getMaxListeners(c));
EventEmitter.setMaxListeners(7, et, c);
console.log(EventEmitter.getMaxListeners(et), EventEmitter.getMaxListeners(c));
console.log(Object.getOwnPropertyNames(EventEmitter.prototype)
  .filter((n) => typeof EventEmitter.prototype[n] === 'function' && n !== 'constructor' && n !== 'on' && n !== 'off')
  .every((n) => EventEmitter.prototype[n].name === n));
