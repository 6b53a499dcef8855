'use strict';
// os: the VM's values, never the host's.
const { B } = require('./internal/bridge.js');
const c = require('./internal/constants.js');

let cached = null;
function info() { return cached || (cached = JSON.parse(B.osInfo())); }
function cpus() {
  const n = info().cpus;
  const out = [];
  for (let i = 0; i < n; i++) out.push({ model: 'secexec virtual CPU', speed: 0, times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } });
  return out;
}
module.exports = {
  EOL: '\n',
  arch: () => 'x64',
  availableParallelism: () => info().cpus,
  constants: { signals: c.signals, errno: c.errno, priority: c.priority, dlopen: { RTLD_LAZY: 1, RTLD_NOW: 2, RTLD_GLOBAL: 256, RTLD_LOCAL: 0, RTLD_DEEPBIND: 8 }, UV_UDP_REUSEADDR: 4 },
  cpus,
  devNull: '/dev/null',
  endianness: () => 'LE',
  freemem: () => info().freemem,
  getPriority: () => 0,
  homedir: () => process.env.HOME || info().home,
  hostname: () => info().hostname,
  loadavg: () => [0, 0, 0],
  machine: () => 'x86_64',
  networkInterfaces: () => ({}),
  platform: () => 'linux',
  release: () => info().release,
  setPriority: () => {},
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
