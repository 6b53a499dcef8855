'use strict';
// Worker lifecycle: online, messages both ways in order, workerData,
// argv, errors, exit codes, terminate of a busy worker, nested workers.
const { Worker, isMainThread, threadId, parentPort, workerData } = require('worker_threads');
if (!isMainThread) {
  if (workerData && workerData.mode === 'echo') {
    parentPort.postMessage({ threadId, isMainThread, argv: process.argv.slice(2), data: workerData.payload, env: process.env.WORKER_FLAG });
    parentPort.on('message', (m) => {
      if (m === 'bye') { parentPort.close(); return; }
      parentPort.postMessage(m * 2);
    });
  }
  return;
}
const run = (code, opts = {}) => new Promise((resolve) => {
  const w = new Worker(code, { eval: true, ...opts });
  const ev = [];
  w.on('online', () => ev.push('online'));
  w.on('error', (e) => ev.push(`error ${e.constructor.name} ${e.message} ${e.code || ''}`));
  w.on('message', (m) => ev.push(`message ${JSON.stringify(m)}`));
  w.on('exit', (c) => { ev.push(`exit ${c}`); resolve(ev.join('; ')); });
  if (opts.terminate) w.on('message', () => w.terminate().then((c) => console.log('terminate resolved', c)));
});
(async () => {
  console.log(isMainThread, threadId);
  const w = new Worker(__filename, {
    workerData: { mode: 'echo', payload: { a: [1, 2n, null, undefined], m: new Map([[1, 'x']]), s: new Set([1]) } },
    argv: ['x', 1], env: { WORKER_FLAG: 'on' },
  });
  const got = [];
  w.on('online', () => got.push('online'));
  w.on('message', (m) => got.push(m));
  for (let i = 1; i <= 3; i++) w.postMessage(i);
  w.postMessage('bye');
  await new Promise((resolve) => w.on('exit', (c) => { got.push(`exit ${c}`); resolve(); }));
  console.log(require('util').inspect(got, { depth: 5 }));
  console.log(w.threadId);
  for (let i = 1; i <= 3; i++) w.postMessage(i); // after exit: dropped
  console.log(await run('throw new TypeError("boom")'));
  console.log(await run('process.exit(7)'));
  console.log(await run('process.exitCode = 3'));
  console.log(await run('require("worker_threads").parentPort.postMessage("up"); while (true) {}', { terminate: true }));
  console.log(await run('require("worker_threads").parentPort.postMessage("up"); (function(){ let x; while(1){ x = new Array(1e3).fill(0) } })()', { terminate: true }));
  console.log(await run('const { Worker, parentPort, threadId } = require("worker_threads"); new Worker("require(\'worker_threads\').parentPort.postMessage(require(\'worker_threads\').threadId)", { eval: true }).on("message", (m) => parentPort.postMessage([threadId, m]))'));
  console.log(await run('require("worker_threads").parentPort.postMessage(require("worker_threads").workerData)', { workerData: 'wd' }));
  console.log(await run('setTimeout(() => { throw new Error("late") }, 1)'));
  console.log(await run('process.on("exit", (c) => require("worker_threads").parentPort.postMessage("exiting " + c))'));
  try { new Worker('x.js'); } catch (e) { console.log(e.name, e.code, e.message); }
  try { new Worker(1); } catch (e) { console.log(e.name, e.code); }
  console.log('main done');
})();
