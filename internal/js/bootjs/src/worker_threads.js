'use strict';
// worker_threads: a sandboxed process is one thread. The module exists
// because packages read its constants and helpers at load time (undici
// marks its classes uncloneable with it); starting a Worker is refused.
const { accessDenied } = require('./internal/errors.js');
const EventEmitter = require('./events.js');

class MessagePort extends EventEmitter {
  postMessage() {}
  start() {}
  close() { this.emit('close'); }
  ref() { return this; }
  unref() { return this; }
  hasRef() { return false; }
}

class MessageChannel {
  constructor() {
    this.port1 = new MessagePort();
    this.port2 = new MessagePort();
  }
}

class BroadcastChannel extends EventEmitter {
  constructor(name) { super(); this.name = String(name); }
  postMessage() {}
  close() {}
  ref() { return this; }
  unref() { return this; }
}

class Worker {
  constructor() { throw accessDenied('worker_threads.Worker (workers are not supported in this sandbox)'); }
}

const environmentData = new Map();

module.exports = {
  isMainThread: true,
  parentPort: null,
  workerData: null,
  threadId: 0,
  resourceLimits: {},
  SHARE_ENV: Symbol.for('nodejs.worker_threads.SHARE_ENV'),
  Worker,
  MessagePort,
  MessageChannel,
  BroadcastChannel,
  markAsUncloneable() {},
  markAsUntransferable() {},
  isMarkedAsUntransferable: () => false,
  moveMessagePortToContext: (port) => port,
  receiveMessageOnPort: () => undefined,
  getEnvironmentData: (key) => environmentData.get(key),
  setEnvironmentData: (key, value) => { if (value === undefined) environmentData.delete(key); else environmentData.set(key, value); },
};
