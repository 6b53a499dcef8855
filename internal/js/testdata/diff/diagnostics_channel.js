'use strict';
// diagnostics_channel: argument checks, a throwing subscriber that does
// not stop the others (its error arrives as uncaught later), subscribing
// during a publish, stores, and the tracing channel's event order.
const dc = require('diagnostics_channel');
const { AsyncLocalStorage } = require('async_hooks');

const show = (f) => { try { console.log('ok', f()); } catch (e) { console.log(String(e)); } };
show(() => dc.channel(null));
show(() => dc.channel(Symbol('s')).name.toString());
show(() => dc.subscribe('x', null));
show(() => dc.tracingChannel(0));
show(() => dc.tracingChannel({ start: '' }));
show(() => dc.tracingChannel({}));
show(() => dc.unsubscribe('never', () => {}));
show(() => dc.hasSubscribers('never'));

process.on('uncaughtException', (e) => console.log('uncaught', e.message));
const ch = dc.channel('demo');
console.log(ch instanceof dc.Channel, ch === dc.channel('demo'), ch.hasSubscribers);
const late = (m) => console.log('late', m.n);
ch.subscribe(() => { throw new Error('first fails'); });
ch.subscribe((m, name) => { console.log('second', m.n, name); ch.subscribe(late); });
ch.publish({ n: 1 });
ch.publish({ n: 2 });
console.log(ch.unsubscribe(late), ch.unsubscribe(late));

const store = new AsyncLocalStorage();
const sc = dc.channel('stores');
sc.bindStore(store, (d) => ({ wrapped: d.v }));
console.log(sc.runStores({ v: 7 }, function (a) { return [this.t, a, store.getStore()]; }, { t: 't' }, 'arg'));
console.log(sc.unbindStore(store), sc.unbindStore(store), sc.hasSubscribers);

const tc = dc.tracingChannel('op');
const events = [];
const handlers = {};
for (const e of ['start', 'end', 'asyncStart', 'asyncEnd', 'error']) {
  handlers[e] = (ctx) => events.push(`${e}:${ctx.result ?? ''}:${ctx.error ? ctx.error.message : ''}`);
}
console.log(tc.hasSubscribers);
tc.subscribe(handlers);
console.log(tc.hasSubscribers, tc.traceSync((a, b) => a + b, {}, null, 2, 3));
show(() => tc.traceSync(() => { throw new Error('sync boom'); }));
tc.traceCallback((cb) => cb(null, 'cbres'), 0, {}, null, (err, res) => events.push(`callback:${res}`));
tc.tracePromise(async () => 'pres', {}).then((v) => {
  events.push(`then:${v}`);
  return tc.tracePromise(async () => { throw new Error('async boom'); }).catch(() => {});
}).then(() => {
  console.log(events.join('\n'));
  console.log(tc.unsubscribe(handlers), tc.unsubscribe(handlers), tc.hasSubscribers);
});
