'use strict';
// A MessagePort transferred to a worker keeps working; BroadcastChannel
// across threads; environment data copied into workers.
const { Worker, MessageChannel, BroadcastChannel, setEnvironmentData } = require('worker_threads');
setEnvironmentData('k', 'v');
const { port1, port2 } = new MessageChannel();
const bc = new BroadcastChannel('ch');
const w = new Worker(`
  const { workerData, BroadcastChannel, getEnvironmentData } = require('worker_threads');
  const bc = new BroadcastChannel('ch');
  workerData.port.on('message', (m) => {
    workerData.port.postMessage('echo ' + m + ' ' + getEnvironmentData('k'));
    bc.postMessage('broadcast from worker');
    bc.close();
    workerData.port.close();
  });
`, { eval: true, workerData: { port: port2 }, transferList: [port2] });
const seen = [];
bc.onmessage = (e) => { seen.push(e.data); bc.close(); };
port1.on('message', (m) => seen.push(m));
// port1's 'close' (its other end closed in the worker) may come before or
// after the worker's 'exit', in Node as here: the report waits for both.
let exitCode, closed = false;
const report = () => { if (closed && exitCode !== undefined) setTimeout(() => console.log(seen.sort(), 'exit', exitCode), 10); };
port1.on('close', () => { seen.push('port closed'); closed = true; report(); });
port1.postMessage('hi');
w.on('exit', (c) => { exitCode = c; report(); });
