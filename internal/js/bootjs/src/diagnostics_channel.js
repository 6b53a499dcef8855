'use strict';
// diagnostics_channel: named pub/sub channels.
const channels = new Map();
class Channel {
  constructor(name) { this.name = name; this._subs = []; }
  get hasSubscribers() { return this._subs.length > 0; }
  subscribe(fn) { this._subs.push(fn); }
  unsubscribe(fn) { const i = this._subs.indexOf(fn); if (i >= 0) { this._subs.splice(i, 1); return true; } return false; }
  publish(msg) { for (const fn of [...this._subs]) fn(msg, this.name); }
  bindStore() {}
  unbindStore() {}
  runStores(data, fn, thisArg, ...args) { return Reflect.apply(fn, thisArg, args); }
}
function channel(name) { if (!channels.has(name)) channels.set(name, new Channel(name)); return channels.get(name); }
function tracingChannel(name) {
  const c = (n) => channel(`tracing:${name}:${n}`);
  return {
    start: c('start'), end: c('end'), asyncStart: c('asyncStart'), asyncEnd: c('asyncEnd'), error: c('error'),
    traceSync(fn, ctx, thisArg, ...args) { return Reflect.apply(fn, thisArg, args); },
    tracePromise(fn, ctx, thisArg, ...args) { return Reflect.apply(fn, thisArg, args); },
    traceCallback(fn, pos, ctx, thisArg, ...args) { return Reflect.apply(fn, thisArg, args); },
    subscribe() {}, unsubscribe() {}, get hasSubscribers() { return false; },
  };
}
module.exports = {
  channel, tracingChannel, Channel,
  hasSubscribers: (n) => channels.has(n) && channels.get(n).hasSubscribers,
  subscribe: (n, fn) => channel(n).subscribe(fn),
  unsubscribe: (n, fn) => channel(n).unsubscribe(fn),
};
