'use strict';
// cluster: a primary and its workers, each a node process of the VM
// forked with an IPC channel (child_process.fork), speaking Node's
// internal NODE_CLUSTER messages.
//
// Listening in a worker: the primary holds the port (a socket bound with
// SO_REUSEPORT that never listens, like Node's shared handle keyed by
// address, port and index), and each worker binds the same port with
// SO_REUSEPORT and listens; the kernel deals incoming connections to the
// listening workers in turn (kernel/netstack, reuseGroup). Every
// listener is the worker's own kernel socket, so a connection never
// passes through the primary, and no descriptor crosses the channel.
const EventEmitter = require('./events.js');
const { B } = require('./internal/bridge.js');
const { codedError } = require('./internal/errors.js');

const SCHED_NONE = 1;
const SCHED_RR = 2;

// --- messages (Node's internal/cluster/utils) ---
const callbacks = new Map();
let seq = 0;

function sendHelper(proc, message, cb) {
  if (!proc.connected) return false;
  message = { cmd: 'NODE_CLUSTER', ...message, seq };
  if (typeof cb === 'function') callbacks.set(seq, cb);
  seq += 1;
  return proc.send(message);
}

// internal returns an internalMessage listener: acks go to the callback
// waiting for them, other cluster messages to cb.
function internal(worker, cb) {
  return function onInternalMessage(message) {
    if (message.cmd !== 'NODE_CLUSTER') return;
    let fn = cb;
    if (message.ack !== undefined) {
      const callback = callbacks.get(message.ack);
      if (callback !== undefined) {
        fn = callback;
        callbacks.delete(message.ack);
      }
    }
    fn.call(worker, message);
  };
}

// --- Worker (Node's internal/cluster/worker) ---
// A function, not a class: Node's may be called without new.
function Worker(options) {
  if (!(this instanceof Worker)) return new Worker(options);
  EventEmitter.call(this);
  if (options === null || typeof options !== 'object') options = {};
  this.exitedAfterDisconnect = undefined;
  this.state = options.state || 'none';
  this.id = options.id | 0;
  if (options.process) {
    this.process = options.process;
    this.process.on('error', (code, signal) => this.emit('error', code, signal));
    this.process.on('message', (message, handle) => this.emit('message', message, handle));
  }
}
Object.setPrototypeOf(Worker.prototype, EventEmitter.prototype);
Object.setPrototypeOf(Worker, EventEmitter);
Worker.prototype.kill = function kill(...args) { return this.destroy(...args); };
Worker.prototype.send = function send(...args) { return this.process.send(...args); };
Worker.prototype.isDead = function isDead() { return this.process.exitCode != null || this.process.signalCode != null; };
Worker.prototype.isConnected = function isConnected() { return this.process.connected; };

const cluster = new EventEmitter();
// intercom tells cluster.disconnect's callback that no worker is left.
const intercom = new EventEmitter();
cluster.Worker = Worker;
cluster.SCHED_NONE = SCHED_NONE;
cluster.SCHED_RR = SCHED_RR;

function setupPrimary() {
  cluster.isWorker = false;
  cluster.isMaster = true;
  cluster.isPrimary = true;
  cluster.workers = {};
  cluster.settings = {};
  const policy = process.env.NODE_CLUSTER_SCHED_POLICY;
  cluster.schedulingPolicy = policy === 'none' ? SCHED_NONE : SCHED_RR;
  let ids = 0;
  let initialized = false;
  // handles: the ports the primary holds for its workers, by key.
  const handles = new Map();

  cluster.setupPrimary = function setupPrimary(options) {
    const settings = {
      args: process.argv.slice(2),
      exec: process.argv[1],
      execArgv: process.execArgv,
      silent: false,
      ...cluster.settings,
      ...options,
    };
    cluster.settings = settings;
    if (!initialized) {
      initialized = true;
      const p = cluster.schedulingPolicy;
      if (p !== SCHED_NONE && p !== SCHED_RR) throw codedError('ERR_INVALID_ARG_VALUE', 'cluster.schedulingPolicy', p);
    }
    process.nextTick(() => cluster.emit('setup', settings));
  };
  cluster.setupMaster = cluster.setupPrimary;

  function removeWorker(worker) {
    delete cluster.workers[worker.id];
    if (Object.keys(cluster.workers).length === 0) intercom.emit('disconnect');
  }
  function removeHandlesForWorker(worker) {
    for (const [key, h] of handles) if (h.remove(worker)) handles.delete(key);
  }
  const send = (worker, message, cb) => sendHelper(worker.process, message, cb);

  const methods = {
    online(worker) {
      worker.state = 'online';
      worker.emit('online');
      cluster.emit('online', worker);
    },
    exitedAfterDisconnect(worker, message) {
      worker.exitedAfterDisconnect = true;
      send(worker, { ack: message.seq });
    },
    queryServer(worker, message) {
      if (worker.exitedAfterDisconnect) return;
      const key = `${message.address}:${message.port}:${message.addressType}:${message.fd}:${message.index}`;
      let h = handles.get(key);
      if (h === undefined) {
        h = new SharedPort(message);
        handles.set(key, h);
      }
      if (!h.data) h.data = message.data;
      h.add(worker);
      const { data } = h;
      if (h.errno) handles.delete(key); // others may retry
      send(worker, { errno: h.errno, key, ack: message.seq, data, port: h.port });
    },
    listening(worker, message) {
      const info = { addressType: message.addressType, address: message.address, port: message.port, fd: message.fd };
      worker.state = 'listening';
      worker.emit('listening', info);
      cluster.emit('listening', worker, info);
    },
    close(worker, message) {
      const h = handles.get(message.key);
      if (h && h.remove(worker)) handles.delete(message.key);
    },
  };
  function onmessage(message) {
    const fn = methods[message.act];
    if (typeof fn === 'function') fn(this, message);
  }

  cluster.fork = function fork(env) {
    cluster.setupPrimary();
    const id = ++ids;
    const s = cluster.settings;
    const proc = require('./child_process.js').fork(s.exec, s.args, {
      cwd: s.cwd,
      env: { ...process.env, ...env, NODE_UNIQUE_ID: `${id}` },
      serialization: s.serialization,
      silent: s.silent,
      execArgv: [...s.execArgv],
      stdio: s.stdio,
    });
    const worker = new Worker({ id, process: proc });
    worker.on('message', function onMessage(message, handle) { cluster.emit('message', this, message, handle); });
    proc.once('exit', (exitCode, signalCode) => {
      // A worker still connected may yet be wanted: it leaves the list
      // when its channel ends too.
      if (!worker.isConnected()) {
        removeHandlesForWorker(worker);
        removeWorker(worker);
      }
      worker.exitedAfterDisconnect = !!worker.exitedAfterDisconnect;
      worker.state = 'dead';
      worker.emit('exit', exitCode, signalCode);
      cluster.emit('exit', worker, exitCode, signalCode);
    });
    proc.once('disconnect', () => {
      removeHandlesForWorker(worker);
      if (worker.isDead()) removeWorker(worker);
      worker.exitedAfterDisconnect = !!worker.exitedAfterDisconnect;
      worker.state = 'disconnected';
      worker.emit('disconnect');
      cluster.emit('disconnect', worker);
    });
    proc.on('internalMessage', internal(worker, onmessage));
    process.nextTick(() => cluster.emit('fork', worker));
    cluster.workers[worker.id] = worker;
    return worker;
  };

  cluster.disconnect = function disconnect(cb) {
    const workers = Object.values(cluster.workers);
    if (workers.length === 0) process.nextTick(() => intercom.emit('disconnect'));
    else for (const w of workers) if (w.isConnected()) w.disconnect();
    if (typeof cb === 'function') intercom.once('disconnect', cb);
  };

  Worker.prototype.disconnect = function disconnect() {
    this.exitedAfterDisconnect = true;
    send(this, { act: 'disconnect' });
    removeHandlesForWorker(this);
    removeWorker(this);
    return this;
  };
  // destroy (kill) only signals: the exit is not one after disconnect.
  Worker.prototype.destroy = function destroy(signo) {
    this.process.kill(signo || 'SIGTERM');
  };
}

// SharedPort is the primary's hold on a port its workers listen on: a
// socket bound with SO_REUSEPORT that never listens, so the port (an
// ephemeral one for port 0) is the same for every worker and stays taken
// until the last worker using it is gone. A bind error is every asking
// worker's error, as Node's shared handle reports it.
class SharedPort {
  constructor(message) {
    this.workers = new Set();
    this.errno = 0;
    this.port = message.port;
    this.data = null;
    this.fd = -1;
    // A dgram socket's addressType is 'udp4' or 'udp6'.
    const udp = message.addressType === 'udp4' || message.addressType === 'udp6';
    const family = message.addressType === 4 || message.addressType === 'udp4' ? 4 : 6;
    const host = message.address === null || message.address === undefined ? '' : String(message.address);
    try {
      this.fd = B.netSocket(family === 4 && host === '' && !udp ? 6 : family, udp ? 2 : 1);
      B.netSetOpt(this.fd, 'reuseport', 1);
      B.netBind(this.fd, host, message.port | 0);
      this.port = JSON.parse(B.netName(this.fd, false)).port;
      // A UDP member of the group gets its share of the datagrams: the
      // primary, which never reads, only picks the port and lets it go.
      if (udp) this.close();
    } catch (e) {
      this.errno = typeof e === 'string' ? e : 'EINVAL';
      this.close();
    }
  }
  add(worker) { this.workers.add(worker); }
  // remove reports whether the port is no longer used by anyone.
  remove(worker) {
    if (!this.workers.delete(worker)) return false;
    if (this.workers.size !== 0) return false;
    this.close();
    return true;
  }
  close() {
    if (this.fd >= 0) { try { B.close(this.fd); } catch { /* closed */ } this.fd = -1; }
  }
}

function setupChild() {
  cluster.isWorker = true;
  cluster.isMaster = false;
  cluster.isPrimary = false;
  cluster.worker = null;
  // servers listening through the primary, by key, and the next index
  // per address (two servers on port 0 get two ports).
  const servers = new Map();
  const indexes = new Map();
  const send = (message, cb) => sendHelper(process, message, cb);

  cluster._setupWorker = function _setupWorker() {
    const worker = new Worker({ id: +process.env.NODE_UNIQUE_ID | 0, process, state: 'online' });
    cluster.worker = worker;
    process.once('disconnect', () => {
      worker.emit('disconnect');
      // The primary went away without asking: nothing is left to do.
      if (!worker.exitedAfterDisconnect) process.exit(0);
    });
    process.on('internalMessage', internal(worker, (message) => {
      if (message.act === 'disconnect') disconnectWorker.call(worker, true);
    }));
    process._sendFirst({ cmd: 'NODE_CLUSTER', act: 'online', seq: seq++ });
  };

  // _getServer asks the primary for the port a server is to listen on;
  // cb(errCode, port).
  cluster._getServer = function _getServer(server, options, cb) {
    const address = options.address;
    const iKey = `${address}:${options.port}:${options.addressType}:${options.fd}`;
    const index = indexes.has(iKey) ? indexes.get(iKey) + 1 : 0;
    indexes.set(iKey, index);
    const message = { act: 'queryServer', index, data: null, ...options };
    send(message, (reply) => {
      if (reply.errno) { indexes.delete(iKey); cb(reply.errno); return; }
      servers.set(reply.key, server);
      server.once('listening', () => {
        if (!indexes.has(iKey)) return;
        // A dgram socket an earlier 'listening' listener closed has no
        // address, and nothing to report (Node's closed handle has left
        // the index by then).
        let a;
        try { a = server.address(); } catch { return; }
        cluster.worker.state = 'listening';
        send({ ...message, act: 'listening', port: (a && a.port) || options.port });
      });
      server.once('close', () => {
        if (servers.get(reply.key) !== server) return;
        servers.delete(reply.key);
        indexes.delete(iKey);
        send({ act: 'close', key: reply.key });
      });
      cb(0, reply.port);
    });
  };

  function disconnectWorker(primaryInitiated) {
    this.exitedAfterDisconnect = true;
    let waiting = 1;
    const check = () => {
      if (--waiting !== 0) return;
      // A worker that asks first waits for the ack, so that the primary
      // knows the exit is wanted.
      if (primaryInitiated) process.disconnect();
      else send({ act: 'exitedAfterDisconnect' }, () => process.disconnect());
    };
    for (const server of servers.values()) {
      waiting++;
      server.close(check);
    }
    servers.clear();
    check();
  }

  Worker.prototype.disconnect = function disconnect() {
    if (this.state !== 'disconnecting' && this.state !== 'destroying') {
      this.state = 'disconnecting';
      disconnectWorker.call(this, false);
    }
    return this;
  };
  Worker.prototype.destroy = function destroy() {
    if (this.state === 'destroying') return;
    this.exitedAfterDisconnect = true;
    if (!this.isConnected()) {
      process.exit(0);
    } else {
      this.state = 'destroying';
      send({ act: 'exitedAfterDisconnect' }, () => process.disconnect());
      process.once('disconnect', () => process.exit(0));
    }
  };
}

// Only the process's own variable makes a worker (Node's env ignores
// the prototype).
if (Object.prototype.hasOwnProperty.call(process.env, 'NODE_UNIQUE_ID')) setupChild();
else setupPrimary();

module.exports = cluster;
