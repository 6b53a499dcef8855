'use strict';
// os: the VM's values, never the host's.
const { B } = require('./internal/bridge.js');
const c = require('./internal/constants.js');

const { validateInt32 } = require('./internal/validators.js');
const { uv, errnoOf } = require('./internal/errors.js');

// systemError is Node's SystemError for a failed libuv call: code
// ERR_SYSTEM_ERROR, the errno's details in info.
function systemError(code, syscall) {
  if (typeof code !== 'string') return code;
  const message = uv[code] ? uv[code][1] : 'i/o error';
  const info = { errno: errnoOf(code), code, message, syscall };
  const err = new Error(`A system error occurred: ${syscall} returned ${code} (${message})`);
  err.name = 'SystemError';
  err.code = 'ERR_SYSTEM_ERROR';
  err.info = info;
  err.errno = info.errno;
  err.syscall = syscall;
  Error.captureStackTrace(err, systemError);
  return err;
}

let cached = null;
function info() { return cached || (cached = JSON.parse(B.osInfo())); }
function cpus() {
  const n = info().cpus;
  const out = [];
  for (let i = 0; i < n; i++) out.push({ model: 'secexec virtual CPU', speed: 0, times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } });
  return out;
}
module.exports = {
  arch: () => 'x64',
  availableParallelism: () => info().cpus,
  cpus,
  endianness: () => 'LE',
  freemem: () => info().freemem,
  getPriority(pid = 0) {
    validateInt32(pid, 'pid');
    try {
      return B.getPriority(pid);
    } catch (e) {
      throw systemError(e, 'uv_os_getpriority');
    }
  },
  homedir: () => process.env.HOME || info().home,
  hostname: () => info().hostname,
  loadavg: () => [0, 0, 0],
  machine: () => 'x86_64',
  // A VM's network is its private loopback (kernel/netstack): lo with
  // 127.0.0.1/8, as Linux lists it. ::1 is left out: the netstack's IPv6
  // lacks IPV6_V6ONLY and dual-stack binding, so programs that probe for
  // IPv6 this way (Node's common.hasIPv6) see a host without it.
  networkInterfaces: () => ({
    lo: [{ address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal: true, cidr: '127.0.0.1/8' }],
  }),
  platform: () => 'linux',
  release: () => info().release,
  setPriority(pid, priority) {
    if (priority === undefined) {
      priority = pid;
      pid = 0;
    }
    validateInt32(pid, 'pid');
    validateInt32(priority, 'priority', -20, 19);
    try {
      B.setPriority(pid, priority);
    } catch (e) {
      throw systemError(e, 'uv_os_setpriority');
    }
  },
  tmpdir: () => { let t = process.env.TMPDIR || process.env.TMP || process.env.TEMP || '/tmp'; if (t.length > 1 && t.endsWith('/')) t = t.slice(0, -1); return t; },
  totalmem: () => info().totalmem,
  type: () => 'Linux',
  uptime: () => info().uptime,
  userInfo: (o) => {
    const i = info();
    const u = { uid: i.uid, gid: i.gid, username: i.user, homedir: i.home, shell: '/bin/sh' };
    if (o && o.encoding === 'buffer') for (const k of ['username', 'homedir', 'shell']) u[k] = require('./buffer.js').Buffer.from(u[k]);
    return u;
  },
  version: () => info().version,
};

// The getters of plain values turn into their value in a string, as
// Node's do (`${os.hostname}`).
for (const k of ['arch', 'availableParallelism', 'endianness', 'freemem', 'homedir', 'hostname', 'platform', 'release',
  'tmpdir', 'totalmem', 'type', 'uptime', 'version', 'machine']) {
  const fn = module.exports[k];
  fn[Symbol.toPrimitive] = () => fn();
}

// EOL and devNull are read-only and constants is also fixed in place, as
// in Node: assigning to them throws in strict code.
Object.defineProperties(module.exports, {
  EOL: { value: '\n', writable: false, enumerable: true, configurable: true },
  devNull: { value: '/dev/null', writable: false, enumerable: true, configurable: true },
  constants: {
    value: { signals: c.signals, errno: c.errno, priority: c.priority, dlopen: { RTLD_LAZY: 1, RTLD_NOW: 2, RTLD_GLOBAL: 256, RTLD_LOCAL: 0, RTLD_DEEPBIND: 8 }, UV_UDP_REUSEADDR: 4 },
    writable: false, enumerable: true, configurable: false,
  },
});
