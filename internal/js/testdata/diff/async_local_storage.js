'use strict';
// AsyncLocalStorage: stores follow await, then(), timers, immediates,
// ticks, queueMicrotask, AsyncResource and snapshot(); run() and exit()
// restore the outer store; two storages do not see each other's stores.
const { AsyncLocalStorage, AsyncResource } = require('async_hooks');
const a = new AsyncLocalStorage();
const b = new AsyncLocalStorage();
const out = [];
const log = (where) => out.push(`${where}: a=${JSON.stringify(a.getStore())} b=${JSON.stringify(b.getStore())}`);

async function chain() {
  log('run start');
  await null;
  log('after await');
  await new Promise((r) => setTimeout(r, 1));
  log('after timer await');
  await new Promise((r) => setImmediate(r));
  log('after immediate await');
  await new Promise((r) => process.nextTick(r));
  log('after tick await');
  await new Promise((r) => queueMicrotask(r));
  log('after microtask await');
}

let snap;
let res;
const done = a.run({ n: 1 }, () => b.run('B', () => {
  snap = AsyncLocalStorage.snapshot();
  res = new AsyncResource('probe');
  a.exit(() => log('inside exit'));
  a.run({ n: 2 }, () => log('nested run'));
  log('after nested run');
  Promise.resolve().then(() => log('then'));
  return chain();
}));
log('outside');
a.enterWith('entered');
log('after enterWith');
done.then(() => {
  log('chain done');
  snap(() => log('in snapshot'));
  res.runInAsyncScope(() => log('in resource'));
  const bound = AsyncLocalStorage.bind(() => log('in bound'));
  a.run('other', bound);
  a.disable();
  log('after disable');
  a.run('again', () => log('run after disable'));
  console.log(out.join('\n'));
});
