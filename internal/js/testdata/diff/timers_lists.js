'use strict';
// Timer behaviours of Node's timer lists: a one-shot refreshed in its
// callback runs again, a timeout given _repeat in its callback goes on as
// an interval, an interval ends on clearTimeout, close(), unenroll(),
// _idleTimeout = -1 or a removed _onTimeout, enrolled items carry their
// list fields, util.promisify(setTimeout) is the promise form, and an
// uncaught error is handled in the callback's async scope.
const timers = require('timers');
const util = require('util');
const { executionAsyncId } = require('async_hooks');
process.removeAllListeners('warning');
process.on('warning', () => {});
const out = [];
let refreshed = 0;
let refreshDone;
const refreshP = new Promise((res) => { refreshDone = res; });
const r = setTimeout(() => { if (++refreshed === 1) r.refresh(); else refreshDone(); }, 1);
let toInterval = 0;
let intervalDone;
const intervalP = new Promise((res) => { intervalDone = res; });
const ti = setTimeout(() => {
  toInterval++;
  if (ti._repeat) {
    clearInterval(ti);
    intervalDone();
  }
  ti._repeat = 1;
}, 1);
const ends = {};
for (const [name, stop] of [
  ['clearTimeout', (i) => clearTimeout(i)],
  ['close', (i) => i.close()],
  ['unenroll', (i) => timers.unenroll(i)],
  ['idleTimeout', (i) => { i._idleTimeout = -1; }],
  ['onTimeout', (i) => { i._onTimeout = null; }],
]) {
  ends[name] = 0;
  const i = setInterval(() => { ends[name]++; stop(i); }, 1);
}
const item = { _idleTimeout: 1, _onTimeout() { out.push(`item fired, idleNext ${item._idleNext}`); } };
timers.active(item);
out.push(`item enrolled: ${Number.isInteger(item._idleStart)} ${!!item._idleNext} ${!!item._idlePrev}`);
let errScope = null;
let timerId = null;
process.on('uncaughtException', (e) => { errScope = executionAsyncId() === timerId; out.push(`uncaught ${e.message}`); });
const thrower = setTimeout(() => { timerId = executionAsyncId(); throw new Error('boom'); }, 2);
void thrower;
Promise.all([util.promisify(setTimeout)(20, 'promised'), refreshP, intervalP]).then(([v]) => {
  out.push(`promisified ${v}`);
  out.push(`refreshed ran ${refreshed}, to-interval ran ${toInterval}`);
  out.push(`intervals ran ${JSON.stringify(ends)}`);
  out.push(`uncaught in timer scope ${errScope}`);
  console.log(out.join('\n'));
});
